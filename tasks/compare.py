"""compare stage: reports/world_agent/eval.json → compare.json (candidate − champion/base, bootstrap CIs).

`python -m tasks.compare` is the command in dvc.yaml; `compare_task` is the Prefect task that
runs the same stage through DVC.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent.config import Params
from worldagent.evaluation.report import COMPARE_JSON, REPORT_DIR
from worldagent.evaluation.stages import compare_stage


def run(params: Params, root: Path) -> None:
    compare_stage(params, eval_dir=root / REPORT_DIR, out_json=root / REPORT_DIR / COMPARE_JSON)


@task(name="compare", retries=0)
def compare_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("compare", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
