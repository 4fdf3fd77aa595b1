"""base stage: the training split → models/world_agent/base/ (model, tokenizer, base.json).

`python -m worldagent.pipeline run base` is the command dvc.yaml runs, with paths from the stage table.
With `model.base: builtin:tiny` it trains the tokenizer and pre-trains the
tiny Gemma-3 model; with a hub id or a local path it loads that model (offline: cached copies only).
"""

from __future__ import annotations

import logging
from pathlib import Path

from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.lm.base import build_base

log = logging.getLogger("base")


def metrics(metadata: dict) -> dict:
    """The stage's DVC metrics: flat numbers only (the full record is base.json in the model directory)."""
    out = {
        "kind": metadata["kind"],
        "parameters": metadata["parameters"],
        "vocab_size": metadata["vocab_size"],
        "seconds": metadata["seconds"],
    }
    if "peak_rss_mib" in metadata:  # a converted GGUF: the conversion's memory (not kept in the model directory)
        out["peak_rss_mib"] = metadata["peak_rss_mib"]
    pretrain = metadata.get("pretrain")
    if pretrain:
        for key in ("initial_loss", "final_loss", "train_loss", "steps", "tokens", "blocks"):
            out[f"pretrain_{key}"] = pretrain[key]
    return out


def run(params: Params, *, trajectories: Path, out: Path, report: Path) -> None:
    metadata = build_base(params.model, params.seed, trajectories, out)
    summary = metrics(metadata)
    atomic_write_text(report, pretty_json(summary))
    if "pretrain_final_loss" in summary:
        log.info(
            "built %s base: %d parameters, vocab %d, pre-training loss %.3f → %.3f in %d steps (%.1f s)",
            summary["kind"],
            summary["parameters"],
            summary["vocab_size"],
            summary["pretrain_initial_loss"],
            summary["pretrain_final_loss"],
            summary["pretrain_steps"],
            summary["seconds"],
        )
    else:
        log.info(
            "loaded %s base %s: %d parameters (%.1f s)",
            summary["kind"],
            params.model.base,
            summary["parameters"],
            summary["seconds"],
        )
