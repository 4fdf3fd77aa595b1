"""Training: the experience encoder with supervised contrastive loss, then the predictor head on
the frozen encoder (class-weighted BCE, early stopping on validation loss), and the threshold.

Deterministic on CPU for a seed: torch, numpy and random are seeded, the thread count is fixed
(CPU kernels are deterministic for a fixed count), and batches are drawn from a seeded generator.

Both trainers run on the ``device`` they are given (the stages pass
:func:`worldagent.lm.device.select_device`'s, as every family does). The models are initialised
on the CPU, so a seed starts from the same weights on every device, and are returned on the CPU.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from worldagent.config import InterventionEncoderParams, InterventionTrainParams
from worldagent.intervention.dataset import PAGE_FEATURES, Arrays
from worldagent.intervention.model import EncoderConfig, ExperienceEncoder, PredictorHead, supcon_loss
from worldagent.lm.device import seed_everything as seed_all


def seed_everything(seed: int, threads: int | None = None, device: str = "cpu") -> None:
    """Seed random, numpy and torch (:func:`worldagent.lm.device.seed_everything`) and fix the
    thread count. Deterministic algorithms only on an accelerator, where CUDA's embedding backward
    otherwise sums in a different order on every run; on the CPU they made a training step 3.4x
    slower (embedding backward) for no change in the result, since CPU kernels are deterministic
    for a fixed thread count."""
    seed_all(seed, deterministic=torch.device(device).type != "cpu")
    if threads:
        torch.set_num_threads(threads)


@dataclass
class Inputs:
    """Tensors for the encoder, one row per step."""

    visual: torch.Tensor
    mask: torch.Tensor
    actions: torch.Tensor
    success: torch.Tensor
    page: torch.Tensor
    url: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def _map(self, change: Callable[[torch.Tensor], torch.Tensor]) -> Inputs:
        return Inputs(*(change(getattr(self, field.name)) for field in fields(self)))

    def take(self, index: torch.Tensor) -> Inputs:
        return self._map(lambda tensor: tensor[index])

    def to(self, device: str | torch.device) -> Inputs:
        return self._map(lambda tensor: tensor.to(device))

    def args(self) -> tuple[torch.Tensor, ...]:
        return self.visual, self.mask, self.actions, self.success, self.page, self.url


def make_inputs(arrays: Arrays, visual: np.ndarray, mask: np.ndarray) -> Inputs:
    if visual.shape[0] != arrays.labels.shape[0]:
        raise ValueError(
            f"{visual.shape[0]} visual embeddings for {arrays.labels.shape[0]} steps: the embed stage is stale, rerun it"
        )
    return Inputs(
        visual=torch.from_numpy(np.ascontiguousarray(visual, dtype=np.float32)),
        mask=torch.from_numpy(np.ascontiguousarray(mask, dtype=np.float32)),
        actions=torch.from_numpy(arrays.actions),
        success=torch.from_numpy(arrays.success),
        page=torch.from_numpy(arrays.page),
        url=torch.from_numpy(arrays.url),
        labels=torch.from_numpy(arrays.labels),
    )


def encoder_config(visual_in: int, vocab_size: int, history: int, p: InterventionEncoderParams) -> EncoderConfig:
    return EncoderConfig(
        visual_in=visual_in,
        vocab_size=vocab_size,
        page_in=len(PAGE_FEATURES),
        history=history,
        dim=p.dim,
        visual_dim=p.visual_dim,
        action_dim=p.action_dim,
        action_layers=p.action_layers,
        action_heads=p.action_heads,
        page_hidden=p.page_hidden,
        url_buckets=p.url_buckets,
        dropout=p.dropout,
    )


def _batches(n: int, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    order = torch.randperm(n, generator=generator)
    chunks = list(order.split(batch_size))
    if len(chunks) > 1 and len(chunks[-1]) < 2:
        chunks[-2] = torch.cat([chunks[-2], chunks[-1]])
        chunks.pop()
    return chunks


def train_encoder(
    cfg: EncoderConfig,
    train: Inputs,
    contrastive_labels: torch.Tensor,
    validation: Inputs | None,
    validation_labels: torch.Tensor | None,
    p: InterventionTrainParams,
    seed: int,
    device: str = "cpu",
) -> tuple[ExperienceEncoder, list[dict[str, float]]]:
    """Supervised contrastive training; returns the encoder and one {epoch, loss, val_loss} per epoch."""
    if len(train) < 2:
        raise ValueError(f"the training split has {len(train)} steps; contrastive training needs at least 2")
    seed_everything(seed, p.threads, device)
    encoder = ExperienceEncoder(cfg)
    real = train.visual[train.mask > 0]
    if len(real) > 1:
        encoder.visual_mean.copy_(real.mean(0))
        encoder.visual_std.copy_(real.std(0).clamp(min=1e-4))
    encoder.to(device)
    train, contrastive_labels = train.to(device), contrastive_labels.to(device)
    if validation is not None and validation_labels is not None:
        validation, validation_labels = validation.to(device), validation_labels.to(device)
    optimiser = torch.optim.AdamW(encoder.parameters(), lr=p.lr_contrastive, weight_decay=p.weight_decay)
    generator = torch.Generator().manual_seed(seed)
    total = p.epochs_contrastive * math.ceil(len(train) / p.batch_size)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimiser, max_lr=p.lr_contrastive, total_steps=max(total, 1), pct_start=0.1
    )
    history: list[dict[str, float]] = []
    for epoch in range(1, p.epochs_contrastive + 1):
        encoder.train()
        losses = []
        for cpu_index in _batches(len(train), p.batch_size, generator):
            index = cpu_index.to(device)
            batch = train.take(index)
            loss = supcon_loss(encoder(*batch.args()), contrastive_labels[index], p.temperature)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
            optimiser.step()
            if scheduler.last_epoch < total:
                scheduler.step()
            losses.append(float(loss.detach()))
        row = {"epoch": float(epoch), "loss": float(np.mean(losses))}
        if validation is not None and validation_labels is not None and len(validation) > 1:
            encoder.eval()
            with torch.no_grad():
                row["val_loss"] = float(supcon_loss(encoder(*validation.args()), validation_labels, p.temperature))
        history.append(row)
    encoder.eval()
    return encoder.cpu(), history


@torch.no_grad()
def encode(encoder: ExperienceEncoder, inputs: Inputs, batch_size: int = 1024) -> torch.Tensor:
    encoder.eval()
    parts = [
        encoder(*inputs.take(torch.arange(i, min(i + batch_size, len(inputs)))).args())
        for i in range(0, len(inputs), batch_size)
    ]
    return torch.cat(parts) if parts else torch.zeros(0, encoder.cfg.dim)


def train_predictor(
    z_train: torch.Tensor,
    y_train: torch.Tensor,
    z_val: torch.Tensor,
    y_val: torch.Tensor,
    p: InterventionTrainParams,
    seed: int,
    dropout: float = 0.1,
    device: str = "cpu",
) -> tuple[PredictorHead, list[dict[str, float]], dict[str, Any]]:
    """The head on frozen embeddings: BCE weighted by the class balance, early stopping on val loss."""
    positives = int(y_train.sum())
    negatives = len(y_train) - positives
    if positives == 0 or negatives == 0:
        raise ValueError(
            f"the training split has {positives} positive and {negatives} negative steps; the predictor needs both classes"
        )
    seed_everything(seed + 1, p.threads, device)
    head = PredictorHead(z_train.shape[1], dropout=dropout).to(device)
    z_train, z_val = z_train.to(device), z_val.to(device)
    optimiser = torch.optim.AdamW(head.parameters(), lr=p.lr_predictor, weight_decay=p.weight_decay)
    pos_weight = torch.tensor(negatives / positives, device=device)
    generator = torch.Generator().manual_seed(seed + 1)
    y_train_f, y_val_f = y_train.float().to(device), y_val.float().to(device)
    best = (math.inf, 0, copy.deepcopy(head.state_dict()))
    history: list[dict[str, float]] = []
    stale = 0
    for epoch in range(1, p.epochs_predictor + 1):
        head.train()
        losses = []
        for cpu_index in _batches(len(z_train), p.batch_size, generator):
            index = cpu_index.to(device)
            loss = F.binary_cross_entropy_with_logits(head(z_train[index]), y_train_f[index], pos_weight=pos_weight)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
        head.eval()
        with torch.no_grad():
            val_loss = (
                float(F.binary_cross_entropy_with_logits(head(z_val), y_val_f, pos_weight=pos_weight))
                if len(z_val)
                else float(np.mean(losses))
            )
        history.append({"epoch": float(epoch), "loss": float(np.mean(losses)), "val_loss": val_loss})
        if val_loss < best[0] - 1e-6:
            best, stale = (val_loss, epoch, copy.deepcopy(head.state_dict())), 0
        else:
            stale += 1
            if stale >= p.patience:
                break
    head.load_state_dict(best[2])
    head.eval().cpu()
    info = {
        "best_epoch": best[1],
        "best_val_loss": best[0],
        "epochs_run": len(history),
        "pos_weight": float(pos_weight),
        "stopped_early": len(history) < p.epochs_predictor,
        "device": str(device),
    }
    return head, history, info


def choose_threshold(probabilities: np.ndarray, labels: np.ndarray, recall_target: float) -> tuple[float, str]:
    """The highest threshold whose recall on these (validation) labels reaches ``recall_target``."""
    positive = np.sort(probabilities[labels == 1])[::-1]
    if positive.size == 0:
        return 0.5, "validation has no positive step: the threshold falls back to 0.5"
    k = max(1, math.ceil(recall_target * positive.size))
    return float(
        positive[k - 1]
    ), f"highest threshold with validation recall ≥ {recall_target:.2f} ({k}/{positive.size} positives)"
