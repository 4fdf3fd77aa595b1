"""The intervention-predictor DAG as a Prefect flow: simulate → export → embed → train_encoder →
train_predictor → evaluate → compare → gate → deploy.

Every file-to-file stage runs through DVC (`dvc repro intervention_<stage>`), so after a flow run
`dvc status` is clean and a second run recomputes nothing. deploy is a Prefect-only side effect.

    python -m flows.intervention               # run once (a temporary local Prefect server if none is set)
    python -m flows.intervention --no-deploy   # stop after the gate
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from tasks.intervention_compare import intervention_compare_task
from tasks.intervention_deploy import intervention_deploy_task
from tasks.intervention_embed import intervention_embed_task
from tasks.intervention_evaluate import intervention_evaluate_task
from tasks.intervention_export import intervention_export_task
from tasks.intervention_gate import intervention_gate_task
from tasks.intervention_simulate import intervention_simulate_task
from tasks.intervention_train_encoder import intervention_train_encoder_task
from tasks.intervention_train_predictor import intervention_train_predictor_task

REPORT = Path("reports/intervention/report.md")
GATE = Path("reports/intervention/gate.json")
STAGES = (
    ("intervention_simulate", intervention_simulate_task),
    ("intervention_export", intervention_export_task),
    ("intervention_embed", intervention_embed_task),
    ("intervention_train_encoder", intervention_train_encoder_task),
    ("intervention_train_predictor", intervention_train_predictor_task),
    ("intervention_evaluate", intervention_evaluate_task),
    ("intervention_compare", intervention_compare_task),
    ("intervention_gate", intervention_gate_task),
)


@flow(name="intervention-predictor", log_prints=True)
def intervention_pipeline(root: str = ".", deploy: bool = True) -> dict[str, Any]:
    """Run the stages in order; each is a task, so the Prefect UI shows its logs, retries and timing."""
    logger = get_run_logger()
    project = Path(root)
    ran = {name: stage(project) for name, stage in STAGES}
    recomputed = sorted({s for stages in ran.values() for s in stages})
    logger.info("stages recomputed: %s", ", ".join(recomputed) or "none (everything up to date)")
    report = project / REPORT
    if report.exists():
        create_markdown_artifact(markdown=report.read_text(encoding="utf-8"), key="intervention-report", description="Intervention predictor: evaluation and gate")
    gate = json.loads((project / GATE).read_text(encoding="utf-8"))
    deployed = intervention_deploy_task(project) if deploy else {"skipped": "deploy=False"}
    return {"recomputed": recomputed, "gate": gate, "deploy": deployed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the intervention-predictor pipeline under Prefect.")
    parser.add_argument("--root", default=".", help="project root (default: .)")
    parser.add_argument("--no-deploy", action="store_true", help="stop after the gate")
    args = parser.parse_args(argv)
    result = intervention_pipeline(root=args.root, deploy=not args.no_deploy)
    print(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
