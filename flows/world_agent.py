"""The world-agent DAG as a Prefect flow, in the order of its stage table
(``worldagent/pipeline/world_agent.py``): discover → generate → upload → base → sft → dpo → grpo →
evaluate → compare → gate → deploy.

Every file-to-file stage runs through DVC (`dvc repro <stage>`), so after a flow run `dvc status`
is clean and a second run recomputes nothing. upload and deploy are Prefect-only side effects.

    python -m flows.world_agent            # run once (a temporary local Prefect server if none is set)
    prefect deploy --all                   # the weekly deployment declared in prefect.yaml
"""

from __future__ import annotations

from flows._stages import family_flow, flow_main
from worldagent.pipeline.world_agent import PIPELINE

world_agent_pipeline = family_flow(PIPELINE)


def main(argv: list[str] | None = None) -> int:
    return flow_main("Run the world-agent pipeline under Prefect.", world_agent_pipeline, [PIPELINE], argv)


if __name__ == "__main__":
    raise SystemExit(main())
