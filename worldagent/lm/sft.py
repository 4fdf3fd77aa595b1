"""SFT stage: LoRA on the base with trl's SFTTrainer over the conversational trajectories."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldagent.config import SftParams, TrainerParams
from worldagent.lm.training import (
    LoraSetup,
    StageRun,
    TrainerSpec,
    TrainingError,
    file_hash,
    load_model,
    read_jsonl,
    train_stage,
)

log = logging.getLogger(__name__)
STAGE = "sft"


def sft_rows(path: Path) -> list[dict[str, Any]]:
    """``{messages}`` rows (the only column the trainer needs); every row needs an assistant turn."""
    rows = []
    for number, row in enumerate(read_jsonl(path), start=1):
        messages = row.get("messages")
        if not isinstance(messages, list) or not any(
            isinstance(m, dict) and m.get("role") == "assistant" for m in messages
        ):
            raise TrainingError(f"{path}: row {number} has no assistant message in `messages`")
        rows.append({"messages": [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]})
    return rows


SFT_METRIC_KEYS = ("loss", "mean_token_accuracy", "grad_norm")


def sft_config(common: dict[str, Any], section: TrainerParams, assistant_only_loss: bool) -> Any:
    """trl's SFTConfig: ``common`` (:func:`worldagent.lm.training.trainer_kwargs`) and ``section``'s
    length; ``section`` is ``sft``, or ``experience`` for the experience loop's rejection-sampling
    fine-tune, which masks the prompt as SFT does (``assistant_only_loss``: ``sft``'s)."""
    from trl import SFTConfig

    return SFTConfig(**common, max_length=section.max_length, assistant_only_loss=assistant_only_loss, packing=False)


def sft_spec(rows: list[dict[str, Any]], section: TrainerParams, assistant_only_loss: bool) -> TrainerSpec:
    """trl's SFTTrainer over ``rows`` (``{messages}``), configured from ``section``."""
    from trl import SFTTrainer

    return TrainerSpec(
        trainer_class=SFTTrainer,
        config=lambda common, loaded: sft_config(common, section, assistant_only_loss),
        rows=rows,
        metric_keys=SFT_METRIC_KEYS,
    )


@dataclass(frozen=True)
class SftSetup:
    """A built SFT trainer and what writing its adapter needs."""

    trainer: Any
    tokenizer: Any
    parents: list[Path]
    rows: int
    data_hash: str


def sft_run(
    sft: SftParams,
    setup: LoraSetup,
    base_dir: Path,
    dataset_path: Path,
    out_dir: Path,
    *,
    live_dir: Path | None = None,
    checkpoints: Path | None = None,
    callbacks: Sequence[Any] = (),
) -> StageRun:
    """The sft stage's run over ``dataset_path`` (its data hash is the file's)."""
    return StageRun(
        stage=STAGE,
        section=sft,
        setup=setup,
        base_dir=Path(base_dir),
        out_dir=Path(out_dir),
        data_hash=file_hash(Path(dataset_path)),
        checkpoints=checkpoints,
        live_dir=live_dir,
        callbacks=tuple(callbacks),
    )


def build_sft_trainer(
    sft: SftParams,
    setup: LoraSetup,
    base_dir: Path,
    dataset_path: Path,
    checkpoints: Path,
    *,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
) -> SftSetup:
    """trl's ``SFTTrainer`` over the base with a fresh LoRA adapter, configured from ``sft`` (what the
    sft stage trains, for launch tests and benchmarks that drive the trainer themselves).

    Under ``accelerate launch`` the trainer takes the launch's distributed setup (DDP, DeepSpeed).
    """
    from worldagent.lm.training import build_trainer

    rows = sft_rows(dataset_path)
    # out_dir is never written here: the caller runs the trainer itself
    run = sft_run(sft, setup, base_dir, dataset_path, checkpoints, checkpoints=checkpoints, callbacks=callbacks)
    loaded = load_model(sft, setup, Path(base_dir), None, device)
    trainer = build_trainer(run, loaded, sft_spec(rows, sft, sft.assistant_only_loss))
    return SftSetup(trainer, loaded.tokenizer, loaded.parents, len(rows), run.data_hash)


def train_sft(
    sft: SftParams,
    setup: LoraSetup,
    base_dir: Path,
    dataset_path: Path,
    out_dir: Path,
    *,
    live_dir: Path | None = None,
    checkpoints: Path | None = None,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
) -> dict[str, Any]:
    """Train the SFT adapter into ``out_dir`` (atomically); returns the run's metrics.

    Resumes from the last checkpoint under ``checkpoints`` (default
    ``<out_dir>/../checkpoints/sft``) when one was written for the same inputs.
    """
    rows = sft_rows(Path(dataset_path))
    run = sft_run(
        sft, setup, base_dir, dataset_path, out_dir, live_dir=live_dir, checkpoints=checkpoints, callbacks=callbacks
    )
    metrics = train_stage(run, None, lambda loaded: sft_spec(rows, sft, sft.assistant_only_loss), device)
    metrics["samples"] = len(rows)
    log.info("sft: %s", metrics)
    return metrics
