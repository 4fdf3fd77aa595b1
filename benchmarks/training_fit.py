"""How well a trained stage fits its own training stories: greedy answers, no retries.

    python -m benchmarks.training_fit                          # after `make pipeline`: sft, 60 stories (~7 min)
    python -m benchmarks.training_fit --adapter DIR --max-intents 20 --out fit.json --json
    python -m benchmarks.training_fit --trajectories data/generated/world_agent/trajectories.eval.jsonl \
        --max-intents 0                                        # the same measure on the held-out intents
    python -m benchmarks.training_fit --trajectories data/generated/world_agent/trajectories.eval.jsonl \
        --max-intents 0 --temperature 0.7 --seed 101 --out tmp/samples/seed-101.json   # one sampled answer each

A model that cannot write the stories it was trained on will not write unseen ones: the held-out
pass rate is bounded by this fit. Each training story's prompt (the same single-turn prompt SFT saw)
is answered once, greedily, with the evaluation's decoding and scored by the same story runner and
hidden assertions. Relabelled copies (ids with ``~relabel-``) are left out: their originals are the stories.
Failures are split into answers that render accessibly and fail an assertion, and answers that do
not render or fail an accessibility rule. docs/profiles.md ("Where the gap is") records the figures.
With ``--temperature`` every answer is sampled instead (seeded by ``--seed``): a few such files are
what ``benchmarks.pass_sets --agreement`` chooses among.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.paths import MODELS, STORIES, STORIES_DIR, TRAJECTORIES
from worldagent.config import Params, load_params
from worldagent.errors import InputError, clean_errors
from worldagent.evaluation.compare import TRAINED_STAGES
from worldagent.evaluation.model_eval import EvalRow, ModelEvalFile, write_model_eval
from worldagent.io import read_jsonl
from worldagent.world_agent.evaluate import Scorer, select_eval_rows
from worldagent.world_agent.policies import evaluation_policy
from worldagent.world_agent.relabel import RELABEL_SUFFIX
from worldagent.world_agent.stages import evaluate_model as evaluate_stage


def training_rows(trajectories: Path, max_intents: int | None) -> list[dict[str, Any]]:
    """The single-turn training rows, one per original story, spread over the components as the
    evaluation orders them (a ``max_intents`` prefix covers every component)."""
    rows = read_jsonl(trajectories, "the training trajectories", hint="run the generate stage first")
    originals = [row for row in rows if RELABEL_SUFFIX not in str(row["id"])]
    selected = select_eval_rows(originals, max_intents)
    if not selected:
        raise InputError(f"{trajectories}: no single-turn training rows (generate.single_turn: true)")
    return selected


def fit_params(params: Params, max_intents: int | None) -> Params:
    """``params`` with the evaluation decoding every answer once: no self-check retries, no
    unconstrained second row."""
    evaluate = params.evaluate.model_copy(
        update={"max_intents": max_intents, "self_check_attempts": 0, "unconstrained_models": []}
    )
    return params.model_copy(update={"evaluate": evaluate})


def fit_summary(row: EvalRow, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Pass rate, mean reward and the kinds of failure of ``row``'s answers to ``rows``; how many
    answers repeat the training answer exactly (memorised)."""
    results = row.per_intent
    references = [str(r["messages"][2]["content"]).strip() for r in rows]
    return {
        "model": row.name,
        "n": len(results),
        "passed": sum(r.story_passed for r in results),
        "story_pass_rate": row.metrics.story_pass_rate,
        "mean_reward": row.metrics.mean_reward,
        "assertion_failed": sum(not r.story_passed and r.a11y_passed for r in results),
        "render_or_a11y_failed": sum(not r.a11y_passed for r in results),
        "repeats_training_answer": sum(a.strip() == ref for a, ref in zip(row.outputs, references, strict=True)),
    }


def measure_fit(
    params: Params,
    stage: str,
    rows: Sequence[dict[str, Any]],
    scorer: Scorer,
    base: Path,
    adapter: Path,
    loader: evaluate_stage.Loader | None = None,
    sampling: tuple[float, int] | None = None,
) -> ModelEvalFile:
    """``adapter`` (decoded as ``stage`` is) answering ``rows`` once each, scored as the evaluation does;
    ``sampling`` (temperature, seed): each answer sampled so, with the evaluation's decoding otherwise."""
    if sampling is None:
        evaluation, _ = evaluate_stage.evaluate_model(
            fit_params(params, len(rows)), stage, rows, scorer, base=base, adapter=adapter, loader=loader
        )
        return evaluation
    settings, (temperature, seed) = params.evaluate, sampling
    dtype = settings.decode_dtype(params.model.dtype)
    model, tokenizer = (loader or partial(evaluate_stage.default_loader, dtype=dtype))(base, adapter)
    policy = evaluation_policy(model, tokenizer, settings, stage, temperature=temperature, seed=seed)
    row = evaluate_stage.score_policy_row(f"{stage} (sampled at {temperature}, seed {seed})", policy, rows, scorer)
    components = sorted({str(r["component"]) for r in rows})
    return ModelEvalFile(model=stage, intents=[str(r["id"]) for r in rows], components=components, rows=[row])


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--stage", choices=TRAINED_STAGES, default="sft", help="which stage's decoding to use")
    parser.add_argument("--adapter", type=Path, help="the adapter to measure (default: models/world_agent/STAGE)")
    parser.add_argument("--base", type=Path, default=MODELS / "base")
    parser.add_argument(
        "--trajectories",
        type=Path,
        default=TRAJECTORIES,
        help="the training split (the eval split: the same greedy measure on held-out intents)",
    )
    parser.add_argument("--stories", type=Path, default=STORIES, help="the stories the rows test (stories.jsonl)")
    parser.add_argument("--stories-dir", type=Path, default=STORIES_DIR, help="the folder of their story files")
    parser.add_argument("--max-intents", type=int, default=60, help="training stories answered (0: all)")
    parser.add_argument("--out", type=Path, help="also write every answer and its score here (an eval file)")
    parser.add_argument(
        "--temperature", type=float, help="sample every answer at this temperature instead of decoding greedily"
    )
    parser.add_argument("--seed", type=int, help="the sampling seed (default: params.yaml's seed)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a line")
    args = parser.parse_args(argv)
    if args.seed is not None and args.temperature is None:
        parser.error("--seed seeds the sampling: give --temperature too")
    params = load_params(args.params)
    rows = training_rows(args.trajectories, args.max_intents or None)
    scorer = evaluate_stage.make_scorer(params, args.stories, args.stories_dir)
    adapter = args.adapter or MODELS / args.stage
    sampling = None if args.temperature is None else (args.temperature, params.seed if args.seed is None else args.seed)
    evaluation = measure_fit(params, args.stage, rows, scorer, args.base, adapter, sampling=sampling)
    if args.out:
        write_model_eval(args.out, evaluation)
    summary = fit_summary(evaluation.rows[0], rows) | {"adapter": str(adapter)}
    if args.json:
        print(json.dumps(summary))
        return 0
    print(
        f"{adapter} on {summary['n']} stories of {args.trajectories}: {summary['passed']} pass"
        f" ({summary['story_pass_rate']:.3f}), mean reward {summary['mean_reward']:.3f};"
        f" {summary['assertion_failed']} render and fail an assertion, {summary['render_or_a11y_failed']}"
        f" do not render or fail an accessibility rule; {summary['repeats_training_answer']} repeat the"
        " reference answer"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
