"""Every family's DAG in one Prefect flow: the world agent and the intervention predictor at once,
each stage after the stages it reads (``orchestrate.task_runner: dask`` runs independent stages in
parallel; ``sequential`` one at a time).

    python -m flows.all_families               # both families, then each one's deploy
    python -m flows.all_families --no-deploy  # stop after the gates
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow

from flows._stages import SEQUENTIAL, flow_main, run_pipelines
from worldagent.pipeline.families import PIPELINES


@flow(name="all-families", log_prints=True, task_runner=SEQUENTIAL)
def all_families_pipeline(root: str = ".", deploy: bool = True) -> dict[str, Any]:
    return run_pipelines(PIPELINES, Path(root), deploy)


def main(argv: list[str] | None = None) -> int:
    return flow_main("Run every model family's pipeline under Prefect.", all_families_pipeline, PIPELINES, argv)


if __name__ == "__main__":
    raise SystemExit(main())
