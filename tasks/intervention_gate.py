"""intervention_gate stage: thresholds + non-inferiority → reports/intervention/gate.json and report.md.

`python -m tasks.intervention_gate` is the command in dvc.yaml; `intervention_gate_task` is the
Prefect task that runs the same stage through DVC.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent.config import Params
from worldagent.intervention.stages import gate as stage

STAGE = "intervention_gate"


def run(params: Params, root: Path) -> None:
    stage.run(params, root)


@task(name=STAGE, retries=0)
def intervention_gate_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro(STAGE, root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
