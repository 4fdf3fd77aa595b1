"""grpo stage: base + sft + dpo adapters + story tests → the GRPO LoRA adapter (models/world_agent/grpo).

`python -m tasks.grpo` is the command in dvc.yaml; `grpo_task` is the Prefect task that runs the
same stage through DVC. An interrupted run resumes from models/world_agent/checkpoints/grpo.
"""

from __future__ import annotations

import logging
from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from tasks.dpo import DPO_OUT
from tasks.sft import BASE_DIR, TRAJECTORIES
from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.policy.grpo import train_grpo

GRPO_OUT = Path("models/world_agent/grpo")
CURVE_OUT = Path("reports/world_agent/training/grpo.json")
METRICS_OUT = Path("reports/world_agent/training/grpo-metrics.json")
log = logging.getLogger("grpo")


def run(params: Params, root: Path) -> None:
    metrics = train_grpo(
        params,
        root / BASE_DIR,
        root / DPO_OUT,
        root / TRAJECTORIES,
        root / params.discover.stories_dir,
        root / GRPO_OUT,
        curves_path=root / CURVE_OUT,
    )
    atomic_write_text(root / METRICS_OUT, pretty_json(metrics))
    log.info("grpo: %d steps, reward %s → %s, %.1f s", metrics["global_step"], metrics.get("reward_first"), metrics.get("reward_last"), metrics["wall_s"])


@task(name="grpo", retries=0)
def grpo_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("grpo", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
