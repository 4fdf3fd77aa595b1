"""compare stage: eval.json + eval_intents.jsonl → compare.json (candidate − champion and − base, bootstrap CIs).

`python -m tasks.compare` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

import logging
from pathlib import Path

from tasks._stage import stage_main
from worldagent.config import Params
from worldagent.evaluation.compare import compare
from worldagent.evaluation.report import read_eval_report
from worldagent.io import atomic_write_text, pretty_json

log = logging.getLogger("compare")


def run(params: Params, *, summary: Path, intents: Path, comparison: Path) -> None:
    result = compare(
        read_eval_report(summary, intents),
        candidate=params.compare.candidate,
        samples=params.compare.bootstrap_samples,
        confidence=params.compare.confidence,
        seed=params.seed,
    )
    atomic_write_text(comparison, pretty_json(result))
    for name, versus in result["comparisons"].items():
        if versus is None:
            log.info("%s vs %s: not evaluated", result["candidate"], name)
            continue
        diff = versus["metrics"]["mean_reward"]["diff"]
        log.info(
            "%s − %s mean reward %+.3f [%+.3f, %+.3f]",
            *(result["candidate"], name, diff["mean"], diff["low"], diff["high"]),
        )
    for note in result["notes"]:
        log.info("%s", note)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
