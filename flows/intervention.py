"""The intervention-predictor DAG as a Prefect flow: simulate → export → embed → train_encoder →
train_predictor → evaluate → compare → gate → deploy.

Every file-to-file stage runs through DVC (`dvc repro intervention_<stage>`), so after a flow run
`dvc status` is clean and a second run recomputes nothing. deploy is a Prefect-only side effect.

    python -m flows.intervention               # run once (a temporary local Prefect server if none is set)
    python -m flows.intervention --no-deploy   # stop after the gate
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow

from flows._finish import finish_run, flow_main

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
    project = Path(root)
    ran = {name: stage(project) for name, stage in STAGES}
    return finish_run(project, ran, REPORT, GATE, "intervention-report", "Intervention predictor: evaluation and gate", intervention_deploy_task if deploy else None)


def main(argv: list[str] | None = None) -> int:
    return flow_main("Run the intervention-predictor pipeline under Prefect.", intervention_pipeline, argv)


if __name__ == "__main__":
    raise SystemExit(main())
