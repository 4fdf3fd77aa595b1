"""The ``intervention`` section: the intervention predictor's DAG (DESIGN.md section 4), one
subsection per stage.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from worldagent.config.base import Section


class InterventionSimulateParams(Section):
    """The embedded default data: deterministic browser-agent episodes with rendered screenshots."""

    episodes: int = Field(default=480, gt=0)
    intervention_fraction: float = Field(default=0.65, ge=0, le=1)  # share of episodes that end in an intervention
    categories: list[Literal["ecommerce", "research", "information"]] = Field(
        default_factory=lambda: ["ecommerce", "research", "information"]
    )
    max_steps: int = Field(default=16, ge=6)  # the agent's step budget (running out is one cause)
    image_width: int = Field(default=160, ge=32)
    image_height: int = Field(default=100, ge=32)


class InterventionExportParams(Section):
    validation_fraction: float = Field(default=0.15, gt=0, lt=1)  # of sessions
    test_fraction: float = Field(default=0.2, gt=0, lt=1)  # of sessions
    label_horizon: int = Field(default=3, ge=0)  # a step is positive when a human steps in within this many steps
    history: int = Field(default=8, gt=0)  # actions (this one included) the action transformer sees


class InterventionClipParams(Section):
    model: str = "wa-tiny-vit"  # a built-in small config (random init) | any open_clip name, e.g. ViT-B-32
    pretrained: str | None = None  # e.g. openai (needs the Hub or a cached copy)
    offline: bool = True  # set HF_HUB_OFFLINE so a missing download fails at once
    batch_size: int = Field(default=64, gt=0)
    on_bad_screenshot: Literal["mask", "error"] = (
        "mask"  # mask: a learned 'no screenshot' vector, counted in the manifest
    )


class InterventionEncoderParams(Section):
    dim: int = Field(default=512, gt=0)  # the fused, L2-normalised embedding
    visual_dim: int = Field(default=512, gt=0)
    action_dim: int = Field(default=64, gt=0)
    action_layers: int = Field(default=2, gt=0)
    action_heads: int = Field(default=4, gt=0)
    page_hidden: int = Field(default=128, gt=0)
    url_buckets: int = Field(default=64, gt=0)  # stable (sha256) hash buckets for URLs
    dropout: float = Field(default=0.1, ge=0, lt=1)


class InterventionTrainParams(Section):
    temperature: float = Field(default=0.07, gt=0)
    epochs_contrastive: int = Field(default=20, gt=0)
    epochs_predictor: int = Field(default=10, gt=0)
    batch_size: int = Field(default=256, ge=2)
    lr_contrastive: float = Field(default=1e-3, gt=0)
    lr_predictor: float = Field(default=2e-3, gt=0)
    weight_decay: float = Field(default=1e-4, ge=0)
    patience: int = Field(default=3, gt=0)  # early stopping on validation loss (predictor)
    contrastive_labels: Literal["reason", "binary"] = "reason"  # reason: one class per cause of intervention
    threads: int = Field(
        default=1, gt=0
    )  # torch threads; 1 is fastest on a shared 2-core box (2 threads: 7x slower under load)
    recall_target: float = Field(default=0.85, gt=0, le=1)  # decision threshold: the highest reaching it on validation


class InterventionCompareParams(Section):
    bootstrap_samples: int = Field(default=1000, gt=0)
    confidence: float = Field(default=0.95, gt=0, lt=1)


class InterventionGateParams(Section):
    min_f1: float = Field(default=0.80, ge=0, le=1)
    min_auc: float = Field(default=0.90, ge=0, le=1)
    beat_baseline: bool = True  # F1 must exceed the logistic-regression baseline's
    margin: float = Field(default=0.02, ge=0)  # non-inferiority margin on accuracy vs the champion


class InterventionParams(Section):
    family: str = "intervention-predictor"  # registry family
    store_url: str | None = None
    """The experience store the export stage reads: None for the simulator's (the stage table's
    path); any SQLAlchemy URL for the store real agent runs were recorded or imported into."""
    simulate: InterventionSimulateParams = InterventionSimulateParams()
    export: InterventionExportParams = InterventionExportParams()
    clip: InterventionClipParams = InterventionClipParams()
    encoder: InterventionEncoderParams = InterventionEncoderParams()
    train: InterventionTrainParams = InterventionTrainParams()
    compare: InterventionCompareParams = InterventionCompareParams()
    gate: InterventionGateParams = InterventionGateParams()
