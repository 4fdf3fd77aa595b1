"""dpo stage: base + experience adapter + rule and on-policy pairs → the DPO LoRA adapter (models/world_agent/dpo).

`python -m worldagent.pipeline run dpo` is the command dvc.yaml runs, with paths from the stage table.
An interrupted run resumes from models/world_agent/checkpoints/dpo.
"""

from __future__ import annotations

import logging
from pathlib import Path

from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.lm.training import LoraSetup
from worldagent.world_agent.dpo import train_dpo

log = logging.getLogger("dpo")


def run(
    params: Params,
    *,
    base: Path,
    experience: Path,
    preferences: Path,
    experience_pairs: Path,
    out: Path,
    metrics: Path,
    live: Path,
) -> None:
    result = train_dpo(
        params.dpo,
        LoraSetup(params.seed, params.model, params.lora),
        base,
        experience,
        preferences,
        out,
        experience_pairs=experience_pairs,
        live_dir=live,
    )
    atomic_write_text(metrics, pretty_json(result))
    if result.get("skipped"):
        log.warning("dpo: skipped, the %s adapter written through: %s", result["parent"], result["reason"])
        return
    log.info(
        "dpo: %d steps, margin %s, accuracy %s, %.1f s",
        result["global_step"],
        result.get("rewards_margins_last"),
        result.get("rewards_accuracies_last"),
        result["wall_s"],
    )
