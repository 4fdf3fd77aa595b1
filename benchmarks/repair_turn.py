"""A trained repair turn, measured: the agent is told which quoted words its page left out and answers again.

    python -m benchmarks.repair_turn --out /tmp/repair                 # relabelled copies (~15 min)
    python -m benchmarks.repair_turn --source own --out /tmp/repair    # its own wrong answers (~35 min)

``benchmarks.self_check_intent --feedback`` showed that the candidate, never trained on a second
turn, breaks more answers than it fixes when told which quoted phrases its page did not show. This
benchmark trains that turn and measures it again. Repair rows are trl prompt-completion rows: the
prompt is the request, a wrong answer and the note (``self_check_intent.FEEDBACK``, the repair-turn
form), the completion the reference answer, so only the fixed answer is trained. The wrong answers
come from ``--source``:

- ``relabelled``: a relabelled copy's prompt with its original story's answer (the old labels),
  and an original's prompt with its first copy's answer: every quoted word is missing;
- ``own``: the candidate's greedy answers to ``--prompts`` training prompts that pass its own check
  and leave out a quoted phrase (what it really gets wrong).

A new LoRA is trained on top of the stage's adapter (the experience loop's trainer) on the repair
rows and the reference rows, and the repair turn is then given to the stage's kept held-out answers
that pass the own check and miss a quoted phrase (``self_check_intent.feedback_targets``). It is not
in the pipeline, because it did not help (docs/profiles.md, "Levers measured and left out").
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.paths import EVAL_DIR, EVAL_TRAJECTORIES, MODELS, STORIES, STORIES_DIR, TRAJECTORIES
from benchmarks.self_check_intent import (
    feedback_prompts,
    feedback_stage,
    greedy_policy,
    quoted_check,
    quoted_phrases,
)
from worldagent.config import Params, load_params
from worldagent.errors import InputError, clean_errors
from worldagent.evaluation.compare import TRAINED_STAGES
from worldagent.evaluation.model_eval import read_model_eval
from worldagent.io import read_jsonl
from worldagent.world_agent.evaluate import Scorer, load_eval_rows, prompts_of
from worldagent.world_agent.policies import Prompt
from worldagent.world_agent.relabel import RELABEL_SUFFIX, is_original_single_turn, is_relabelled
from worldagent.world_agent.self_check import row_check
from worldagent.world_agent.stages import evaluate_model as evaluate_stage


def _answer(row: Mapping[str, Any]) -> str:
    return next(str(m["content"]) for m in row["messages"] if m["role"] == "assistant")


def _story_id(row: Mapping[str, Any]) -> str:
    """The id of the story a row was written from (a relabelled copy's original)."""
    return str(row["id"]).split(RELABEL_SUFFIX)[0]


def reference_row(prompt: Prompt, answer: str) -> dict[str, Any]:
    """A prompt-completion row whose completion is ``answer``."""
    return {"prompt": [dict(m) for m in prompt], "completion": [{"role": "assistant", "content": answer}]}


def repair_row(prompt: Prompt, wrong: str, intent: str, fixed: str) -> dict[str, Any]:
    """``fixed`` as the completion of the repair turn after ``wrong`` (the note names ``intent``'s
    quoted phrases), so that the loss never sees the wrong answer."""
    return reference_row(feedback_prompts(prompt, wrong, intent)["repair turn"], fixed)


def relabelled_repairs(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Repair rows from the relabelled copies: a copy's prompt answered with its original's answer,
    an original's prompt with its first copy's; pairs whose wrong answer already has every quoted
    phrase of the intent (or that quote nothing) are left out."""
    originals = {str(row["id"]): row for row in rows if is_original_single_turn(row)}
    copies = [row for row in rows if is_relabelled(row)]
    first_copy: dict[str, Mapping[str, Any]] = {}
    for copy in copies:
        first_copy.setdefault(_story_id(copy), copy)
    repairs = []
    for row in [*copies, *originals.values()]:
        source = (originals if is_relabelled(row) else first_copy).get(_story_id(row))
        phrases = quoted_phrases(str(row["intent"]))
        if source is None or not phrases:
            continue
        wrong = _answer(source)
        if all(phrase in wrong for phrase in phrases):
            continue
        repairs.append(repair_row(prompts_of([row])[0], wrong, str(row["intent"]), _answer(row)))
    return repairs


def own_repairs(
    rows: Sequence[Mapping[str, Any]], answers: Sequence[str], own: Any, stricter: Any
) -> list[dict[str, Any]]:
    """Repair rows from a model's ``answers`` to ``rows``: those that pass ``own`` (its own check)
    and fail ``stricter`` (a quoted phrase missing), fixed by the reference answer."""
    return [
        repair_row(prompts_of([row])[0], answer, str(row["intent"]), _answer(row))
        for i, (row, answer) in enumerate(zip(rows, answers, strict=True))
        if own(i, answer) and not stricter(i, answer)
    ]


def quoting_training_rows(trajectories: Path, count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` single-turn training rows (copies included) whose intent quotes a phrase, drawn
    reproducibly; a copy keeps its original's id, the export its prompt asks for (the story runner
    renders the export the id names)."""
    rows = [
        row for row in read_jsonl(trajectories, "the training trajectories") if row.get("turns", "single") == "single"
    ]
    rows = [row for row in rows if quoted_phrases(str(row["intent"]))]
    random.Random(seed).shuffle(rows)
    return [{**row, "id": _story_id(row)} for row in rows[:count]]


def repair_params(params: Params, steps: int, max_length: int) -> Params:
    """``params`` with the experience trainer set to ``steps`` and room for two answers a row."""
    experience = params.experience.model_copy(update={"max_steps": steps, "max_length": max_length})
    return params.model_copy(update={"experience": experience})


def train_repair(params: Params, stage: str, rows: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """A new LoRA on ``stage``'s merged model over ``rows`` (the experience loop's trainer)."""
    from worldagent.world_agent.experience_loop import train_experience_adapter

    return train_experience_adapter(params, MODELS / "base", MODELS / stage, rows, out)


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="the parameters file")
    parser.add_argument("--stage", choices=TRAINED_STAGES, default="experience", help="the model to train the turn on")
    parser.add_argument(
        "--source", choices=("relabelled", "own"), default="relabelled", help="where wrong answers come from"
    )
    parser.add_argument("--repair-rows", type=int, default=200, help="repair rows trained on (relabelled source)")
    parser.add_argument("--prompts", type=int, default=200, help="training prompts answered (own source)")
    parser.add_argument("--steps", type=int, default=64, help="optimizer steps of the repair LoRA")
    parser.add_argument("--max-length", type=int, default=3072, help="tokens per training row (two answers)")
    parser.add_argument("--out", type=Path, required=True, help="a scratch directory for the adapter and results")
    args = parser.parse_args(argv)
    params = load_params(args.params)
    scorer: Scorer = evaluate_stage.make_scorer(params, STORIES, STORIES_DIR)
    if args.source == "relabelled":
        repairs = relabelled_repairs(read_jsonl(TRAJECTORIES, "the training trajectories"))
        random.Random(params.seed).shuffle(repairs)
        repairs = repairs[: args.repair_rows]
    else:
        rows = quoting_training_rows(TRAJECTORIES, args.prompts, params.seed)
        answers = greedy_policy(params, args.stage, MODELS / args.stage).complete(prompts_of(rows))
        repairs = own_repairs(rows, answers, row_check(scorer, rows), quoted_check(scorer, rows))
    if not repairs:
        raise InputError(f"{TRAJECTORIES}: no repair rows from source {args.source!r}")
    references = [
        reference_row(prompts_of([row])[0], _answer(row))
        for row in read_jsonl(TRAJECTORIES, "the training trajectories")
        if is_original_single_turn(row)
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    adapter = args.out / "adapter"
    training = train_repair(
        repair_params(params, args.steps, args.max_length), args.stage, repairs + references, adapter
    )
    eval_rows = load_eval_rows(EVAL_TRAJECTORIES, params.evaluate.max_intents)
    kept = read_model_eval(EVAL_DIR / f"{args.stage}.json", args.stage)
    by_id = {str(row["id"]): row for row in eval_rows}
    ordered = [by_id[intent] for intent in kept.intents]
    result = {
        "stage": args.stage,
        "source": args.source,
        "repair_rows": len(repairs),
        "reference_rows": len(references),
        "training": {key: training.get(key) for key in ("global_step", "loss_first", "loss_last", "wall_s")},
        "feedback": feedback_stage(params, args.stage, ordered, scorer, kept.rows[0], adapter, ("repair turn",)),
    }
    (args.out / "repair_turn.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
