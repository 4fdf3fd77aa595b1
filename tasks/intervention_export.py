"""intervention_export stage: the store's finished tasks → steps, interventions and successes, split by session.

`python -m tasks.intervention_export` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from worldagent.intervention.stages.export import export_stage as run
from worldagent.pipeline.entry import stage_main


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
