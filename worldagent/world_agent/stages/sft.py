"""sft stage: base + trajectories.jsonl → the SFT LoRA adapter (models/world_agent/sft).

`python -m worldagent.pipeline run sft` is the command dvc.yaml runs, with paths from the stage table.
An interrupted run resumes from models/world_agent/checkpoints/sft.
"""

from __future__ import annotations

import logging
from pathlib import Path

from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.lm.sft import train_sft
from worldagent.lm.training import LoraSetup

log = logging.getLogger("sft")


def run(params: Params, *, base: Path, trajectories: Path, out: Path, metrics: Path, live: Path) -> None:
    result = train_sft(
        params.sft, LoraSetup(params.seed, params.model, params.lora), base, trajectories, out, live_dir=live
    )
    atomic_write_text(metrics, pretty_json(result))
    log.info(
        "sft: %d steps, loss %s → %s, %.1f s",
        result["global_step"],
        result.get("loss_first"),
        result.get("loss_last"),
        result["wall_s"],
    )
