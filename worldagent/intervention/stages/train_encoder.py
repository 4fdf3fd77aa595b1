"""intervention_train_encoder: the experience encoder, trained contrastively on the training split."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.intervention import train as training
from worldagent.intervention.dataset import PAGE_FEATURES, build_vocab, featurize
from worldagent.intervention.serve import _torch_bytes
from worldagent.intervention.stages.common import load_embeddings, read_steps, split_index
from worldagent.io import pretty_json, write_directory
from worldagent.live import write_curve
from worldagent.lm.device import select_device

log = logging.getLogger("worldagent.intervention")


def contrastive_labels(rows: list[dict[str, Any]], mode: str, reasons: list[str]) -> torch.Tensor:
    """Class per row: 0 no intervention, then one per known cause (``reason`` mode) or 1 (``binary``)."""
    if mode == "binary":
        return torch.tensor([int(r["label"]) for r in rows])
    unknown = len(reasons) + 1
    return torch.tensor(
        [0 if not r["label"] else 1 + reasons.index(r["reason"]) if r["reason"] in reasons else unknown for r in rows]
    )


def train_encoder_stage(params: Params, *, steps: Path, embeddings: Path, encoder: Path, live: Path) -> dict[str, Any]:
    """Train on ``steps``' training split (validation split for the curve) → the ``encoder``
    directory (encoder.pt, encoder.json) and the loss curve → the DVCLive folder ``live``."""
    intervention, train_params = params.intervention, params.intervention.train
    rows = read_steps(steps)
    visual, mask, info = load_embeddings(embeddings)
    train_idx, val_idx = split_index(rows, "train"), split_index(rows, "validation")
    if train_idx.size == 0:
        raise InputError(f"{steps}: the training split is empty")
    train_rows = [rows[i] for i in train_idx]
    val_rows = [rows[i] for i in val_idx]
    vocab_list = build_vocab(train_rows)
    vocab = {t: i for i, t in enumerate(vocab_list)}
    reasons = sorted({r["reason"] for r in train_rows if r["label"]})
    history = intervention.export.history
    config = training.encoder_config(visual.shape[1], len(vocab_list), history, intervention.encoder)
    buckets = intervention.encoder.url_buckets
    train = training.make_inputs(featurize(train_rows, vocab, history, buckets), visual[train_idx], mask[train_idx])
    val = (
        training.make_inputs(featurize(val_rows, vocab, history, buckets), visual[val_idx], mask[val_idx])
        if val_rows
        else None
    )
    val_labels = contrastive_labels(val_rows, train_params.contrastive_labels, reasons) if val_rows else None
    device = select_device()
    model, curve = training.train_encoder(
        config,
        train,
        contrastive_labels(train_rows, train_params.contrastive_labels, reasons),
        val,
        val_labels,
        train_params,
        params.seed,
        device=device,
    )
    meta = {
        "encoder": config.to_dict(),
        "vocab": vocab_list,
        "history": history,
        "url_buckets": buckets,
        "contrastive_classes": ["none", *reasons],
        "clip": info["clip"],
        "page_features": list(PAGE_FEATURES),
        "device": device,
    }
    write_directory(
        encoder, {"encoder.pt": _torch_bytes(model.state_dict()), "encoder.json": pretty_json(meta).encode()}
    )
    write_curve(live, curve, "epoch")
    log.info("contrastive loss %.4f → %.4f over %d epochs", curve[0]["loss"], curve[-1]["loss"], len(curve))
    return {"curve": curve}
