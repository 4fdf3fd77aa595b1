"""intervention_evaluate stage: held-out sessions: accuracy, precision, recall, F1, ROC/PR AUC, baselines.

`python -m tasks.intervention_evaluate` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from pathlib import Path

from tasks._stage import stage_main
from worldagent.config import Params
from worldagent.intervention import pipeline


def run(params: Params, *, steps: Path, embeddings: Path, predictor: Path, predictions: Path, metrics: Path, confusion_matrix: Path, roc_curve: Path, pr_curve: Path) -> None:
    pipeline.evaluate(params, Path("."))


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
