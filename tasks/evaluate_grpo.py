"""evaluate_grpo stage: grpo on the held-out intents → reports/world_agent/eval/grpo.json.

`python -m tasks.evaluate_grpo` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from worldagent.pipeline.entry import stage_main
from worldagent.world_agent.stages.evaluate_model import MODEL_STAGES

run = MODEL_STAGES["grpo"]


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
