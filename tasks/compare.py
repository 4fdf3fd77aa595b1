"""compare stage: reports/world_agent/eval.json → compare.json (candidate − champion/base, bootstrap CIs).

`python -m tasks.compare` is the command in dvc.yaml; `compare_task` is the Prefect task that
runs the same stage through DVC.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent import paths
from worldagent.config import Params
from worldagent.evaluation.stages import compare_stage


def run(params: Params, root: Path) -> None:
    summary, intents = root / paths.WORLD_AGENT_EVAL, root / paths.WORLD_AGENT_EVAL_INTENTS
    compare_stage(params, summary=summary, intents=intents, comparison=root / paths.WORLD_AGENT_COMPARE)


@task(name="compare", retries=0)
def compare_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("compare", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
