"""compare stage: reports/world_agent/eval.json → compare.json (candidate − champion/base, bootstrap CIs).

`python -m tasks.compare` is the command in dvc.yaml; `compare_task` is the Prefect task that
runs the same stage through DVC.
"""

from __future__ import annotations

import logging
from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent.config import Params
from worldagent.evaluation.compare import compare
from worldagent.evaluation.report import COMPARE_JSON, REPORT_DIR, read_eval_report
from worldagent.io import atomic_write_text, pretty_json

log = logging.getLogger("compare")


def run(params: Params, root: Path) -> None:
    report = read_eval_report(root / REPORT_DIR)
    result = compare(
        report,
        candidate=params.compare.candidate,
        samples=params.compare.bootstrap_samples,
        confidence=params.compare.confidence,
        seed=params.seed,
    )
    atomic_write_text(root / REPORT_DIR / COMPARE_JSON, pretty_json(result))
    for name, versus in result["comparisons"].items():
        if versus is None:
            log.info("%s vs %s: not evaluated", result["candidate"], name)
            continue
        diff = versus["metrics"]["mean_reward"]["diff"]
        log.info("%s − %s mean reward %+.3f [%+.3f, %+.3f]", result["candidate"], name, diff["mean"], diff["low"], diff["high"])
    for note in result["notes"]:
        log.info("%s", note)


@task(name="compare", retries=0)
def compare_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("compare", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
