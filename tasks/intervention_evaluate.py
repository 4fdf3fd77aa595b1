"""intervention_evaluate stage: held-out sessions: accuracy, precision, recall, F1, ROC/PR AUC, baselines.

`python -m tasks.intervention_evaluate` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from worldagent.intervention.stages.evaluate import evaluate_stage as run
from worldagent.pipeline.entry import stage_main


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
