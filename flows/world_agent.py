"""The world-agent DAG as a Prefect flow: discover → generate → upload → base → sft → dpo → grpo
→ evaluate → compare → gate → deploy.

Every file-to-file stage runs through DVC (`dvc repro <stage>`), so after a flow run `dvc status`
is clean and a second run recomputes nothing. upload and deploy are Prefect-only side effects.

    python -m flows.world_agent            # run once (a temporary local Prefect server if none is set)
    prefect deploy --all                   # the weekly deployment declared in prefect.yaml
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow

from flows._finish import finish_run, flow_main

from tasks.base import base_task
from tasks.compare import compare_task
from tasks.deploy import deploy_task
from tasks.discover import discover_task
from tasks.dpo import dpo_task
from tasks.evaluate import evaluate_task
from tasks.gate import gate_task
from tasks.generate import generate_task
from tasks.grpo import grpo_task
from tasks.sft import sft_task
from tasks.upload import upload_task

REPORT = Path("reports/world_agent/report.md")
GATE = Path("reports/world_agent/gate.json")


@flow(name="world-agent", log_prints=True)
def world_agent_pipeline(root: str = ".", deploy: bool = True) -> dict[str, Any]:
    """Run the DAG in order; each stage is a task so the Prefect UI shows logs, retries and timing."""
    project = Path(root)
    ran: dict[str, list[str]] = {}
    for name, stage in (("discover", discover_task), ("generate", generate_task)):
        ran[name] = stage(project)
    upload_task(project)
    for name, stage in (
        ("base", base_task),
        ("sft", sft_task),
        ("dpo", dpo_task),
        ("grpo", grpo_task),
        ("evaluate", evaluate_task),
        ("compare", compare_task),
        ("gate", gate_task),
    ):
        ran[name] = stage(project)
    return finish_run(project, ran, REPORT, GATE, "world-agent-report", "Evaluation, comparison and gate", deploy_task if deploy else None)


def main(argv: list[str] | None = None) -> int:
    return flow_main("Run the world-agent pipeline under Prefect.", world_agent_pipeline, argv)


if __name__ == "__main__":
    raise SystemExit(main())
