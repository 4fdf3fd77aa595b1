"""A point of the learning curve: SFT on a share of the training stories, paired with the committed SFT.

Is the held-out pass rate limited by how many stories the project has, or by the model and its
compute? Every lever on the 166 training stories moved held-out by less than one seed does
(docs/profiles.md, "Levers measured and left out"); this measures what the stories themselves are
worth at the profile's own budget. It keeps ``--share`` of each component's training stories (evenly
spaced in discovery order, at least one a component; every held-out story stays), runs the generate
stage's command on them, so that the training rows, their relabelled copies and the example stories
every prompt shows (the held-out prompts' too) come from the kept stories only, trains SFT with the
stage's command and params (the same steps, so each row is seen more often), evaluates it on the same
held-out intents with ``tasks.evaluate_sft`` and pairs it with the committed run's SFT rows of
``reports/world_agent/eval_intents.jsonl`` (git's, so a machine that never ran the DAG can pair).

    python -m benchmarks.learning_curve --share 0.5 --out tmp/half-stories        # ~2 h 10 min here
    python -m benchmarks.learning_curve --share 0.5 --out tmp/half-stories --data-only
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.intent_last import paired_scores, run_module, seeded_params, sft_benchmark_parser, train_and_evaluate
from benchmarks.paths import EVAL_TRAJECTORIES, STORIES, STORIES_DIR
from benchmarks.seeds import stage_command, written
from benchmarks.state_wording import split_stories
from worldagent.config import load_params
from worldagent.errors import InputError, clean_errors
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.evaluation.metrics import IntentResult
from worldagent.evaluation.model_eval import read_model_eval
from worldagent.io import atomic_write_text, jsonl, pretty_json, read_jsonl
from worldagent.pipeline.table import interpolate
from worldagent.pipeline.world_agent import EVAL, EVAL_INTENTS, PIPELINE


def evenly_kept(count: int, share: float) -> list[int]:
    """The indices of ``count`` items to keep for ``share`` of them (rounded half to even, at least
    one), spread evenly.

    Why evenly: a component's stories are written in groups (the first ones, then the 87 added for
    templates and states), so the first half would keep one era of them and leave out the other.
    """
    if not 0 < share <= 1:
        raise InputError(f"--share {share}: give a share in (0, 1]")
    if count == 0:
        return []
    keep = max(1, round(count * share))
    return sorted({math.floor(i * count / keep) for i in range(keep)})


def kept_stories(stories: Sequence[Mapping[str, Any]], held_out: set[str], share: float) -> list[dict[str, Any]]:
    """``stories`` (discovery's records) with ``share`` of each component's training stories and
    every held-out story, in their order."""
    training: dict[str, list[str]] = defaultdict(list)
    for story in stories:
        if str(story["id"]) not in held_out:
            training[str(story["component"])].append(str(story["id"]))
    kept = set(held_out)
    for ids in training.values():
        kept |= {ids[i] for i in evenly_kept(len(ids), share)}
    return [dict(story) for story in stories if str(story["id"]) in kept]


def generate_command(params_path: Path, stories: Path, data: Path) -> list[str]:
    """The generate stage's command as dvc.yaml runs it, reading ``stories`` and writing every file
    under ``data`` by its own name."""
    params = load_params(params_path)
    stage = PIPELINE.stage("generate")
    moved = {interpolate(stage.inputs["stories"], params): stories}
    moved |= {interpolate(path, params): data / Path(path).name for _, path in written(stage)}
    return stage_command(stage, params, params_path, moved)[2:]  # run_module adds `python -m`


def committed_sft(summary: Path = Path(EVAL), rows: Path = Path(EVAL_INTENTS)) -> list[IntentResult]:
    """The committed run's SFT scores per held-out intent (the evaluate stage's git-tracked files)."""
    report = read_eval_report(summary, rows)
    if "sft" not in report.models:
        raise InputError(f"{summary}: the committed evaluation has no sft row")
    return report.models["sft"].per_intent


def paired_with(baseline: Sequence[IntentResult], measured: Sequence[IntentResult], name: str) -> dict[str, Any]:
    """``measured`` (labelled ``name``) against ``baseline`` on the intents both scored
    (:func:`paired_scores`), and which intents it newly passes and no longer passes."""
    before, after = {r.id: r for r in baseline}, {r.id: r for r in measured}
    ids, result = paired_scores(before, after, name, f"{name} and the committed SFT")
    return {
        **result,
        "newly_passed": [i for i in ids if after[i].story_passed and not before[i].story_passed],
        "no_longer_passed": [i for i in ids if before[i].story_passed and not after[i].story_passed],
    }


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = sft_benchmark_parser(__doc__.splitlines()[0], "write the kept stories and their datasets and stop")
    parser.add_argument("--share", type=float, default=0.5, help="share of each component's training stories kept")
    parser.add_argument("--seed", type=int, help="train with this seed instead of params.yaml's")
    args = parser.parse_args(argv)
    for source in (STORIES, EVAL_TRAJECTORIES):
        if not source.is_file():
            raise InputError(f"{source}: not found; run `dvc repro generate` (or `make pipeline`) first")
    baseline = committed_sft()  # before any work: a missing committed evaluation fails at once
    params = seeded_params(args.params, args.seed, args.out)
    data = args.out / "data"
    training, held_out = split_stories(STORIES, EVAL_TRAJECTORIES)
    stories = read_jsonl(STORIES, "stories")
    kept = kept_stories(stories, {str(s["id"]) for s in held_out}, args.share)
    atomic_write_text(data / "stories.jsonl", jsonl(kept))
    print(f"kept {len(kept) - len(held_out)} of {len(training)} training stories and all {len(held_out)} held out")
    run_module(generate_command(params, data / "stories.jsonl", data))
    if args.data_only:
        return 0
    evaluation = train_and_evaluate(
        params,
        args.out,
        data / "trajectories.jsonl",
        data / "trajectories.eval.jsonl",
        data / "stories.jsonl",
        STORIES_DIR,
    )
    measured = read_model_eval(evaluation, "sft").rows[0].per_intent
    result = {"share": args.share, **paired_with(baseline, measured, f"share_{args.share:g}")}
    atomic_write_text(args.out / "result.json", pretty_json(result))
    print(pretty_json(result), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
