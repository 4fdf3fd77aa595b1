"""grpo stage: base + dpo adapter (its chain) + story tests → the GRPO LoRA adapter (models/world_agent/grpo).

`python -m worldagent.pipeline run grpo` is the command dvc.yaml runs, with paths from the stage table.
An interrupted run resumes from models/world_agent/checkpoints/grpo.
"""

from __future__ import annotations

import logging
from pathlib import Path

from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.lm.training import LoraSetup
from worldagent.world_agent.grpo import train_grpo
from worldagent.world_agent.rewards import RewardSetup

log = logging.getLogger("grpo")


def run(
    params: Params,
    *,
    base: Path,
    dpo: Path,
    trajectories: Path,
    stories_dir: Path,
    out: Path,
    metrics: Path,
    live: Path,
) -> None:
    result = train_grpo(
        params.grpo,
        LoraSetup(params.seed, params.model, params.lora),
        RewardSetup(params.reward, params.storytest),
        base,
        dpo,
        trajectories,
        stories_dir,
        out,
        live_dir=live,
    )
    atomic_write_text(metrics, pretty_json(result))
    if result.get("skipped"):
        log.warning("grpo: skipped, the dpo adapter written through: %s", result["reason"])
        return
    log.info(
        "grpo: %d steps, reward %s → %s, %.1f s",
        result["global_step"],
        result.get("reward_first"),
        result.get("reward_last"),
        result["wall_s"],
    )
