"""Browser specialists as a Prefect flow: for each agent with enough new feedback, generate data,
train through the local trainer service, evaluate, and register when the gate passes.

    worldagent trainer serve &                 # the trainer (or LOCAL_TRAINER_URL points at one)
    python -m flows.specialists                # one cycle (a temporary local Prefect server if none is set)

Thin: every task calls one function of :mod:`worldagent.specialists.cycle` / the service.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE

from worldagent.config import load_params
from worldagent.specialists import cycle
from worldagent.specialists.service import SpecialistsService


@task(cache_policy=NONE)
def due_task(service: SpecialistsService, min_new_feedback: int | None) -> list[dict[str, Any]]:
    return cycle.agents_due(service, min_new_feedback)


@task(cache_policy=NONE, retries=1, retry_delay_seconds=5)
def improve_task(service: SpecialistsService, job: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    return cycle.improve_agent(service, job, timeout_s=timeout_s)


@flow(name="specialists", log_prints=True)
def specialists_pipeline(
    params_path: str = "params.yaml", root: str = ".", min_new_feedback: int | None = None, timeout_s: float = 600.0
) -> list[dict[str, Any]]:
    logger = get_run_logger()
    service = SpecialistsService.from_params(load_params(Path(root) / params_path), root=Path(root))
    try:
        jobs = due_task(service, min_new_feedback)
        logger.info("agents with enough new feedback: %s", ", ".join(j["scopeId"] for j in jobs) or "none")
        results = [improve_task(service, job, timeout_s) for job in jobs]
    finally:
        service.close()
    rows = "\n".join(
        f"| {r['agentId']} | {r['status']} | {r.get('metrics', {}).get('action_accuracy')} | {r.get('registered')} | {r.get('reason', '')} |"
        for r in results
    )
    create_markdown_artifact(
        markdown="| agent | run | action accuracy | registered | reason |\n|---|---|---|---|---|\n" + rows,
        key="specialists-cycle",
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one specialists improvement cycle under Prefect.")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--root", default=".")
    parser.add_argument("--min-new-feedback", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each training run")
    args = parser.parse_args(argv)
    print(
        json.dumps(
            specialists_pipeline(args.params, args.root, args.min_new_feedback, args.timeout), indent=2, default=str
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
