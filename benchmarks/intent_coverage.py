"""How many held-out intents say what their story test checks, and how each model scores on them.

    python -m benchmarks.intent_coverage           # after `make pipeline`: reads its eval files
    python -m benchmarks.intent_coverage --json

A story test asserts every accessible name in the reference story's accessibility tree. An intent
*determines* its test when every word of each asserted name and description is a word of the intent
or of a file the task gives (the held-out rule, :mod:`worldagent.world_agent.heldout`, which generate
applies to every eval story); otherwise a model passes only by guessing the name the reference happened to use ("Dismiss
cookie notice" for "a labelled close button"). Printed: how
many held-out intents determine their test, the names the others leave open, and each evaluated
model's story pass rate and mean reward on both groups. The share of determined intents bounds the
pass rate a model that never guesses can reach.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.paths import EVAL_TRAJECTORIES, STORIES, STORIES_DIR
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.evaluation.metrics import EvalReport, summarize
from worldagent.io import read_jsonl
from worldagent.storytest.runner import reference_assertions
from worldagent.world_agent.evaluate import load_eval_rows
from worldagent.world_agent.heldout import unstated_names

EVAL_SUMMARY = Path("reports/world_agent/eval.json")
EVAL_INTENTS = Path("reports/world_agent/eval_intents.jsonl")


def open_names(eval_trajectories: Path, stories: Path, stories_dir: Path) -> dict[str, list[str]]:
    """Held-out intent id → the asserted names its intent and given files leave open."""
    records = {row["id"]: row for row in read_jsonl(stories, "stories")}
    result: dict[str, list[str]] = {}
    for row in load_eval_rows(eval_trajectories):
        record = records[row["id"]]
        assertions = reference_assertions(stories_dir / record["file"], record["export"], stories_dir)
        given = [str(file["content"]) for file in row.get("given_files") or []]
        result[row["id"]] = list(unstated_names(assertions, row["intent"], given))
    return result


def group_scores(report: EvalReport, determined: set[str]) -> list[dict[str, Any]]:
    """Per evaluated model: story pass rate and mean reward on the determined intents and the rest."""
    scores = []
    for name, evaluation in report.models.items():
        score: dict[str, Any] = {"model": name}
        for group, wanted in (("determined", True), ("open", False)):
            metrics = summarize([r for r in evaluation.per_intent if (r.id in determined) == wanted])
            empty = metrics.n == 0
            score[group] = {
                "n": metrics.n,
                "story_pass_rate": None if empty else metrics.story_pass_rate,
                "mean_reward": None if empty else metrics.mean_reward,
            }
        scores.append(score)
    return scores


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-trajectories", type=Path, default=EVAL_TRAJECTORIES)
    parser.add_argument("--stories", type=Path, default=STORIES, help="discover's stories.jsonl")
    parser.add_argument("--stories-dir", type=Path, default=STORIES_DIR)
    parser.add_argument("--eval-summary", type=Path, default=EVAL_SUMMARY, help="the evaluate stage's summary")
    parser.add_argument("--eval-intents", type=Path, default=EVAL_INTENTS, help="its per-intent results")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    names = open_names(args.eval_trajectories, args.stories, args.stories_dir)
    determined = {intent for intent, missing in names.items() if not missing}
    scores = group_scores(read_eval_report(args.eval_summary, args.eval_intents), determined)
    if args.json:
        print(json.dumps({"intents": len(names), "determined": len(determined), "open": names, "scores": scores}))
        return 0
    print(
        f"{len(determined)} of {len(names)} held-out intents state every asserted name and description ({len(determined) / len(names):.2f})"
    )
    for intent, missing in names.items():
        if missing:
            print(f"  {intent}: {', '.join(missing)}")
    print(
        f"\n| model | pass, determined ({len(determined)}) | reward | pass, open ({len(names) - len(determined)}) | reward |"
    )
    print("|---|---:|---:|---:|---:|")
    for score in scores:
        d, o = score["determined"], score["open"]
        print(
            f"| {score['model']} | {_rate(d['story_pass_rate'])} | {_rate(d['mean_reward'])} "
            f"| {_rate(o['story_pass_rate'])} | {_rate(o['mean_reward'])} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
