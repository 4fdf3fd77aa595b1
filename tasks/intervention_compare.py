"""intervention_compare stage: candidate − champion on the same held-out steps, paired bootstrap CIs.

`python -m tasks.intervention_compare` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from worldagent.intervention.stages.compare import compare_stage as run
from worldagent.pipeline.entry import stage_main


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
