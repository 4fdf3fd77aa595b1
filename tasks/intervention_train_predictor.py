"""intervention_train_predictor stage: the intervention classifier on the frozen encoder.

`python -m tasks.intervention_train_predictor` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from pathlib import Path

from tasks._stage import stage_main
from worldagent.config import Params
from worldagent.intervention import pipeline


def run(params: Params, *, steps: Path, embeddings: Path, encoder: Path, predictor: Path, curves: Path) -> None:
    pipeline.train_predictor(params, Path("."))


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
