"""dpo stage: base + sft adapter + dpo-preferences.jsonl → the DPO LoRA adapter (models/world_agent/dpo).

`python -m tasks.dpo` is the command in dvc.yaml; `dpo_task` is the Prefect task that runs the
same stage through DVC. An interrupted run resumes from models/world_agent/checkpoints/dpo.
"""

from __future__ import annotations

import logging
from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from tasks.sft import BASE_DIR, SFT_OUT
from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.policy.dpo import train_dpo

PREFERENCES = Path("data/generated/world_agent/dpo-preferences.jsonl")
DPO_OUT = Path("models/world_agent/dpo")
CURVE_OUT = Path("reports/world_agent/training/dpo.json")
METRICS_OUT = Path("reports/world_agent/training/dpo-metrics.json")
log = logging.getLogger("dpo")


def run(params: Params, root: Path) -> None:
    metrics = train_dpo(params, root / BASE_DIR, root / SFT_OUT, root / PREFERENCES, root / DPO_OUT, curves_path=root / CURVE_OUT)
    atomic_write_text(root / METRICS_OUT, pretty_json(metrics))
    log.info("dpo: %d steps, margin %s, accuracy %s, %.1f s", metrics["global_step"], metrics.get("rewards_margins_last"), metrics.get("rewards_accuracies_last"), metrics["wall_s"])


@task(name="dpo", retries=0)
def dpo_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("dpo", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
