"""intervention_embed stage: every screenshot through the frozen open_clip visual tower once → data/generated/intervention/embeddings/.

`python -m tasks.intervention_embed` is the command in dvc.yaml; `intervention_embed_task` is the
Prefect task that runs the same stage through DVC.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent.config import Params
from worldagent.intervention.stages import embed as stage

STAGE = "intervention_embed"


def run(params: Params, root: Path) -> None:
    stage.run(params, root)


@task(name=STAGE, retries=0)
def intervention_embed_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro(STAGE, root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
