"""The intervention-predictor DAG as a Prefect flow, in the order of its stage table
(``worldagent/pipeline/intervention.py``): simulate → export → embed → train_encoder →
train_predictor → evaluate → compare → gate → deploy.

Every file-to-file stage runs through DVC, so after a flow run `dvc status` is clean and a second
run recomputes nothing. deploy is a Prefect-only side effect.

    python -m flows.intervention               # run once (a temporary local Prefect server if none is set)
    python -m flows.intervention --no-deploy   # stop after the gate
"""

from __future__ import annotations

from flows._stages import family_flow, flow_main
from worldagent.pipeline.intervention import PIPELINE

intervention_pipeline = family_flow(PIPELINE)


def main(argv: list[str] | None = None) -> int:
    return flow_main("Run the intervention-predictor pipeline under Prefect.", intervention_pipeline, [PIPELINE], argv)


if __name__ == "__main__":
    raise SystemExit(main())
