"""intervention_simulate stage: deterministic browser-agent episodes with screenshots into the experience store.

`python -m tasks.intervention_simulate` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from worldagent.intervention.stages.simulate import simulate_stage as run
from worldagent.pipeline.entry import stage_main


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
