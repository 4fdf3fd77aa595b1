"""sft stage: base + trajectories.jsonl → the SFT LoRA adapter (models/world_agent/sft).

`python -m tasks.sft` is the command in dvc.yaml; `sft_task` is the Prefect task that runs the
same stage through DVC. An interrupted run resumes from models/world_agent/checkpoints/sft.
"""

from __future__ import annotations

import logging
from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from tasks.base import BASE_OUT, TRAJECTORIES
from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.policy.sft import train_sft

BASE_DIR = BASE_OUT
SFT_OUT = Path("models/world_agent/sft")
CURVE_OUT = Path("reports/world_agent/training/sft.json")
METRICS_OUT = Path("reports/world_agent/training/sft-metrics.json")
log = logging.getLogger("sft")


def run(params: Params, root: Path) -> None:
    metrics = train_sft(params, root / BASE_DIR, root / TRAJECTORIES, root / SFT_OUT, curves_path=root / CURVE_OUT)
    atomic_write_text(root / METRICS_OUT, pretty_json(metrics))
    log.info("sft: %d steps, loss %s → %s, %.1f s", metrics["global_step"], metrics.get("loss_first"), metrics.get("loss_last"), metrics["wall_s"])


@task(name="sft", retries=0)
def sft_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("sft", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
