"""experience stage: base + sft adapter + training intents + last run's store → store, experience adapter, pairs.

`python -m worldagent.pipeline run experience` is the command dvc.yaml runs, with paths from the stage table. The store
(``--store``) is a persistent DVC out (``persist: true``): DVC leaves last run's store in place, this
run reads it and writes it back with its own samples merged in.
"""

from __future__ import annotations

import logging
from pathlib import Path

from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.lm.training import LoraSetup
from worldagent.world_agent.experience_loop import run_experience
from worldagent.world_agent.rewards import RewardSetup

log = logging.getLogger("experience")


def run(
    params: Params,
    *,
    base: Path,
    sft: Path,
    trajectories: Path,
    stories_dir: Path,
    store: Path,
    out: Path,
    pairs: Path,
    metrics: Path,
    live: Path,
) -> None:
    result = run_experience(
        params.experience,
        LoraSetup(params.seed, params.model, params.lora),
        RewardSetup(params.reward, params.storytest),
        base,
        sft,
        trajectories,
        stories_dir,
        store,
        out,
        pairs,
        assistant_only_loss=params.sft.assistant_only_loss,
        live_dir=live,
    )
    atomic_write_text(metrics, pretty_json(result))
    if result.get("skipped"):
        log.warning("experience: skipped, the sft adapter written through: %s", result["reason"])
        return
    log.info(
        "experience: %d completions, pass rate %.3f, store %d samples (%d runs), %.1f tok/s",
        result["completions"],
        result["pass_rate"],
        result["store"]["total"],
        result["store"]["runs"],
        result["generation"]["tokens_per_second"],
    )
