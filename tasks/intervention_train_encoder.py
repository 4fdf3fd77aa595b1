"""intervention_train_encoder stage: the fused experience encoder, supervised-contrastive.

`python -m tasks.intervention_train_encoder` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

from worldagent.intervention.stages.train_encoder import train_encoder_stage as run
from worldagent.pipeline.entry import stage_main


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
