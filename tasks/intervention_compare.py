"""intervention_compare stage: candidate − champion on the same held-out steps, paired bootstrap CIs.

`python -m tasks.intervention_compare` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from pathlib import Path

from tasks._stage import stage_main
from worldagent.config import Params
from worldagent.intervention import pipeline


def run(params: Params, *, metrics: Path, predictions: Path, steps: Path, champion: Path, comparison: Path) -> None:
    pipeline.compare(params, Path("."))


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
