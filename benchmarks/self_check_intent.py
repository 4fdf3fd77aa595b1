"""A stricter own check, measured: the page must also show every phrase the intent quotes.

    python -m benchmarks.self_check_intent                     # after `make pipeline`: seconds
    python -m benchmarks.self_check_intent --rerun experience  # one stage re-evaluated with it (~20 min)
    python -m benchmarks.self_check_intent --feedback experience  # its missing words told back (~4 min)
    python -m benchmarks.self_check_intent --rerun sft --tiered --out tmp/sft-tiered.json  # (~12 min)

The evaluation answers again while an answer fails the agent's own check
(``worldagent.world_agent.self_check``: it renders and passes the accessibility and pattern rules).
Most held-out intents also quote the user's own words (``a submit control reading "Create
account"``), and an answer that renders other words passes that check and fails the hidden story
test. The agent is given the intent, so asking its page to show every quoted phrase is still its own
check. Alone, choosing the retries, it did not help (docs/profiles.md, "Levers measured and left
out"); as the top of two ranks it is the evaluation's check (``evaluate.self_check_words``, on by
default since session 49; docs/profiles.md, "The own check in two tiers"). This benchmark measures
both.

By default the kept answers of every evaluated model (``reports/world_agent/eval/<model>.json``)
are replayed through both checks and counted next to the hidden story test: answers the own check
passes and the hidden test fails (what the stricter check should catch), and answers the hidden
test passes (what it should leave alone). ``--rerun STAGE`` evaluates one trained stage as its
evaluate stage does, the stricter check choosing which answers to retry, and prints its story pass
rate and mean reward next to the stage's own evaluation. With ``--tiered`` the two checks are ranks
(:class:`~worldagent.world_agent.self_check.TieredSelfCheckingPolicy`, as the evaluation ranks them):
an answer that shows the quoted words is kept, else the first that passes the own check, else the
first answer; with ``--attempts N`` or ``--adapter DIR`` that measures more retries or another
adapter trained as the stage. ``--feedback STAGE`` takes the stage's kept
answers that pass the own check and leave out a quoted phrase, tells the model which phrases its
page did not show, and scores its greedy answer again, the note given two ways: appended to the
request (one turn, the form the model was trained on) and as a second user turn after its answer (a
repair turn, never trained).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks.intent_copy import paired_line
from benchmarks.paths import EVAL_DIR, EVAL_TRAJECTORIES, MODELS, STORIES, STORIES_DIR
from worldagent.config import Params, load_params
from worldagent.errors import clean_errors
from worldagent.evaluation.compare import TRAINED_STAGES
from worldagent.evaluation.model_eval import EvalRow, ModelEvalFile, read_model_eval, write_model_eval
from worldagent.world_agent.evaluate import Scorer, load_eval_rows, prompts_of
from worldagent.world_agent.policies import Policy, Prompt, evaluation_policy
from worldagent.world_agent.self_check import quoted_check, quoted_phrases, row_check
from worldagent.world_agent.stages import evaluate_model as evaluate_stage

REPLAYED = ("nearest", *TRAINED_STAGES)


def replay_counts(evaluation: ModelEvalFile, rows: Sequence[dict[str, Any]], scorer: Scorer) -> list[dict[str, Any]]:
    """Per row of ``evaluation``: its kept answers through the own check and the stricter one."""
    by_id = {str(row["id"]): row for row in rows}
    ordered = [by_id[intent] for intent in evaluation.intents]
    own, stricter = row_check(scorer, ordered), quoted_check(scorer, ordered)
    counts = []
    for row in evaluation.rows:
        count = {"row": row.name, "n": len(ordered), "hidden_passed": 0, "own_passed": 0}
        count |= {"own_passed_hidden_failed": 0, "caught": 0, "false_alarms": 0}
        for i, (result, answer) in enumerate(zip(row.per_intent, row.outputs, strict=True)):
            passed_own = own(i, answer)
            passed_stricter = passed_own and stricter(i, answer)
            count["hidden_passed"] += result.story_passed
            count["own_passed"] += passed_own
            count["own_passed_hidden_failed"] += passed_own and not result.story_passed
            count["caught"] += passed_own and not result.story_passed and not passed_stricter
            count["false_alarms"] += result.story_passed and not passed_stricter
        counts.append(count)
    return counts


def rerun_stage(
    params: Params,
    stage: str,
    rows: Sequence[dict[str, Any]],
    scorer: Scorer,
    *,
    tiered: bool = False,
    adapter: Path | None = None,
) -> ModelEvalFile:
    """``stage`` (or ``adapter``, a model trained as it) evaluated as its evaluate stage does, the
    stricter check choosing the retries: as the top of the evaluation's two ranks
    (``evaluate.self_check_words``) when ``tiered``, else alone (swapped in for this process only)."""
    settings = params.evaluate.model_copy(update={"self_check_words": tiered})
    params = params.model_copy(update={"evaluate": settings})
    with ExitStack() as patches:
        if not tiered:
            patches.enter_context(mock.patch.object(evaluate_stage, "row_check", quoted_check))
        evaluation, _ = evaluate_stage.evaluate_model(
            params, stage, rows, scorer, base=MODELS / "base", adapter=adapter or MODELS / stage
        )
    return evaluation


FEEDBACK = (
    "Your last story rendered, but its page did not show every phrase the request quotes ({phrases})."
    " Write the story again so that the page shows each of them exactly."
)


def feedback_prompts(prompt: Prompt, answer: str, intent: str) -> dict[str, Prompt]:
    """The prompt again with the note that the page left out the intent's quoted phrases: ``appended``
    to the request (one turn), or as a ``repair turn`` after ``answer``."""
    note = FEEDBACK.format(phrases=", ".join(f'"{phrase}"' for phrase in quoted_phrases(intent)))
    system, request = dict(prompt[0]), dict(prompt[1])
    appended = {**request, "content": f"{request['content']}\n\n{note}"}
    repair = [system, request, {"role": "assistant", "content": answer}, {"role": "user", "content": note}]
    return {"appended": [system, appended], "repair turn": repair}


def feedback_targets(row: EvalRow, rows: Sequence[dict[str, Any]], scorer: Scorer) -> list[int]:
    """Positions of ``row``'s kept answers that pass the own check and fail the stricter one."""
    own, stricter = row_check(scorer, rows), quoted_check(scorer, rows)
    return [i for i, answer in enumerate(row.outputs) if own(i, answer) and not stricter(i, answer)]


def greedy_policy(params: Params, stage: str, adapter: Path) -> Policy:
    """The base with ``adapter``, decoding greedily as the evaluation decodes ``stage`` (no retries)."""
    model, tokenizer = evaluate_stage.default_loader(
        MODELS / "base", adapter, dtype=params.evaluate.decode_dtype(params.model.dtype)
    )
    return evaluation_policy(model, tokenizer, params.evaluate, stage)


def feedback_stage(
    params: Params,
    stage: str,
    rows: Sequence[dict[str, Any]],
    scorer: Scorer,
    row: EvalRow,
    adapter: Path | None = None,
    forms: Sequence[str] = ("appended", "repair turn"),
) -> dict:
    """``stage``'s greedy answers (or those of ``adapter``, a model trained for it) to
    :func:`feedback_prompts` for :func:`feedback_targets`, scored; ``selected`` keeps a new answer only
    where it passes the stricter check (what an agent that checks its page again would do)."""
    targets = feedback_targets(row, rows, scorer)
    own, stricter = row_check(scorer, rows), quoted_check(scorer, rows)
    result: dict[str, Any] = {"stage": stage, "targets": len(targets)}
    result["kept"] = {
        "story_passed": sum(row.per_intent[i].story_passed for i in targets),
        "reward": round(sum(row.per_intent[i].reward for i in targets), 3),
    }
    if not targets:
        return result
    policy = greedy_policy(params, stage, adapter or MODELS / stage)
    prompts = prompts_of([rows[i] for i in targets])
    prompted = [feedback_prompts(prompts[k], row.outputs[i], str(rows[i]["intent"])) for k, i in enumerate(targets)]
    for form in forms:
        answers = policy.complete([prompt[form] for prompt in prompted])
        scored = [scorer.score(rows[i], answer) for i, answer in zip(targets, answers, strict=True)]
        passed_own = [own(i, answer) for i, answer in zip(targets, answers, strict=True)]  # each story run once
        shown = [ok and stricter(i, answer) for ok, i, answer in zip(passed_own, targets, answers, strict=True)]
        chosen = [new if ok else row.per_intent[i] for new, ok, i in zip(scored, shown, targets, strict=True)]
        result[form] = {
            "story_passed": sum(intent.story_passed for intent in scored),
            "reward": round(sum(intent.reward for intent in scored), 3),
            "own_check_passed": sum(passed_own),
            "stricter_check_passed": sum(shown),
            "selected": {
                "story_passed": sum(intent.story_passed for intent in chosen),
                "reward": round(sum(intent.reward for intent in chosen), 3),
            },
        }
    return result


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--eval-dir", type=Path, default=EVAL_DIR, help="the evaluate stages' files")
    parser.add_argument("--rerun", choices=TRAINED_STAGES, help="re-evaluate this stage with the stricter check")
    parser.add_argument(
        "--tiered",
        action="store_true",
        help="with --rerun: the two checks as ranks, as the evaluation does (evaluate.self_check_words)",
    )
    parser.add_argument("--attempts", type=int, help="with --rerun: retries (default: evaluate.self_check_attempts)")
    parser.add_argument("--adapter", type=Path, help="with --rerun: this adapter instead of the stage's own")
    parser.add_argument("--out", type=Path, help="with --rerun: write its evaluation file here")
    parser.add_argument("--feedback", choices=TRAINED_STAGES, help="tell this stage which quoted words it left out")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    rerun_only = [
        f"--{name}" for name in ("tiered", "attempts", "adapter", "out") if getattr(args, name) not in (None, False)
    ]
    if rerun_only and not args.rerun:
        parser.error(f"{', '.join(rerun_only)} go only with --rerun STAGE")
    params = load_params(args.params)
    rows = load_eval_rows(EVAL_TRAJECTORIES, params.evaluate.max_intents)
    scorer = evaluate_stage.make_scorer(params, STORIES, STORIES_DIR)
    if args.feedback:
        kept = read_model_eval(args.eval_dir / f"{args.feedback}.json", args.feedback).rows[0]
        print(json.dumps(feedback_stage(params, args.feedback, rows, scorer, kept), indent=None if args.json else 1))
        return 0
    if args.rerun:
        committed = read_model_eval(args.eval_dir / f"{args.rerun}.json", args.rerun).rows[0]
        if args.attempts is not None:
            params = params.model_copy(
                update={"evaluate": params.evaluate.model_copy(update={"self_check_attempts": args.attempts})}
            )
        evaluation = rerun_stage(params, args.rerun, rows, scorer, tiered=args.tiered, adapter=args.adapter)
        if args.out:
            write_model_eval(args.out, evaluation)
        rerun = evaluation.rows[0]
        result = {
            "stage": args.rerun,
            "committed": committed.metrics.model_dump(),
            "stricter_check": rerun.metrics.model_dump(),
            "self_check": rerun.self_check.model_dump() if rerun.self_check else None,
        }
        if args.json:
            print(json.dumps(result))
            return 0
        for label, row in (("committed evaluation", committed), ("stricter check", rerun)):
            passed = sum(intent.story_passed for intent in row.per_intent)
            print(
                f"{args.rerun}, {label}: {passed} of {len(row.per_intent)} stories pass"
                f" ({row.metrics.story_pass_rate:.3f}), mean reward {row.metrics.mean_reward:.3f}"
            )
        if rerun.self_check:
            print(rerun.self_check.note(f"{args.rerun}, stricter check"))
        print(paired_line(f"{args.rerun}, stricter check", rerun, committed))
        return 0
    counts = []
    for model in REPLAYED:
        path = args.eval_dir / f"{model}.json"
        if path.is_file():
            counts += replay_counts(read_model_eval(path, model), rows, scorer)
    if args.json:
        print(json.dumps(counts))
        return 0
    print("| row | n | hidden test passed | own check passed | own passed, hidden failed | caught | false alarms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for count in counts:
        print("| " + " | ".join(str(value) for value in count.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
