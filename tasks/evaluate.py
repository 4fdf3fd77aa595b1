"""evaluate stage: the eval split + base/sft/dpo/grpo/champion/reference → reports/world_agent/ eval files.

`python -m tasks.evaluate` is the command in dvc.yaml; `evaluate_task` is the Prefect task that
runs the same stage through DVC.

Models: ``base`` is models/world_agent/base alone, ``sft``/``dpo``/``grpo`` are that stage's adapter
(``load_policy`` merges the adapter's parent chain), ``champion`` is the registry's champion
alias re-evaluated on the same intents (skipped with a note when there is none: the first run),
``reference`` is the generate stage's solutions (the upper bound). Models load one at a time.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from tasks.discover import STORIES_OUT
from worldagent import paths
from worldagent.config import Params
from worldagent.evaluation.stages import Loader, evaluate_stage
from worldagent.registry.champion import refresh_champion_reference
from worldagent.registry.deploy import resolve_registry_url


def run(params: Params, root: Path, loader: Loader | None = None) -> None:
    # Until the stage table declares champion.json as this stage's input, refresh it from the registry here.
    registry_url = resolve_registry_url(params.registry.url, root)
    refresh_champion_reference(registry_url, params.registry.family, root / paths.WORLD_AGENT_CHAMPION)
    models = root / paths.WORLD_AGENT_MODELS
    evaluate_stage(
        params,
        eval_trajectories=root / paths.WORLD_AGENT_EVAL_ROWS,
        stories=root / STORIES_OUT,
        stories_dir=root / params.discover.stories_dir,
        base=models / "base",
        sft=models / "sft",
        dpo=models / "dpo",
        grpo=models / "grpo",
        champion=root / paths.WORLD_AGENT_CHAMPION,
        summary=root / paths.WORLD_AGENT_EVAL,
        intents=root / paths.WORLD_AGENT_EVAL_INTENTS,
        root=root,
        loader=loader,
    )


@task(name="evaluate", retries=0)
def evaluate_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("evaluate", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
