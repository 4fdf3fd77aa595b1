"""intervention_train_predictor: the predictor head on the frozen encoder, and its decision threshold."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from worldagent.config import Params
from worldagent.intervention import train as training
from worldagent.intervention.metrics import classification_metrics
from worldagent.intervention.serve import _load_state, write_bundle
from worldagent.intervention.stages.common import inputs_for, load_embeddings, load_encoder, read_steps
from worldagent.live import write_curve
from worldagent.lm.device import select_device

log = logging.getLogger("worldagent.intervention")


def train_predictor_stage(
    params: Params, *, steps: Path, embeddings: Path, encoder: Path, predictor: Path, live: Path
) -> dict[str, Any]:
    """Train the head on the frozen ``encoder`` over the training split, pick the threshold on
    validation → the bundle in ``predictor`` (encoder, head, visual tower, predictor.json) and the
    curve → the DVCLive folder ``live``."""
    train_params = params.intervention.train
    rows = read_steps(steps)
    visual, mask, _info = load_embeddings(embeddings)
    model, meta = load_encoder(encoder)
    training.seed_everything(params.seed, train_params.threads)
    train, _ = inputs_for(rows, "train", meta, visual, mask)
    val, _ = inputs_for(rows, "validation", meta, visual, mask)
    z_train, z_val = training.encode(model, train), training.encode(model, val)
    head, curve, info = training.train_predictor(
        z_train,
        train.labels,
        z_val,
        val.labels,
        train_params,
        params.seed,
        params.intervention.encoder.dropout,
        device=select_device(),
    )
    with torch.no_grad():
        val_prob = torch.sigmoid(head(z_val)).numpy()
    threshold, rule = training.choose_threshold(val_prob, val.labels.numpy(), train_params.recall_target)
    clip_state = _load_state(embeddings / "clip_visual.pt")
    validation = classification_metrics(val.labels.numpy(), val_prob, threshold) if len(val) else None
    bundle_meta = {
        **meta,
        "family": params.intervention.family,
        "threshold": threshold,
        "threshold_rule": rule,
        "recall_target": train_params.recall_target,
        "training": info,
        "validation": {k: v for k, v in validation.items() if k != "notes"} if validation else None,
    }
    write_bundle(predictor, bundle_meta, model, head, clip_state)
    write_curve(live, curve, "epoch")
    log.info(
        "predictor: best epoch %d (val loss %.4f); threshold %.4f (%s)",
        info["best_epoch"],
        info["best_val_loss"],
        threshold,
        rule,
    )
    return bundle_meta
