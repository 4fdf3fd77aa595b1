"""intervention_export stage: the store's finished tasks → steps, interventions and successes, split by session.

`python -m tasks.intervention_export` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from pathlib import Path

from tasks._stage import stage_main
from worldagent.config import Params
from worldagent.intervention import pipeline


def run(params: Params, *, store: Path, steps: Path, interventions: Path, successes: Path, manifest: Path) -> None:
    pipeline.export(params, Path("."))


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
