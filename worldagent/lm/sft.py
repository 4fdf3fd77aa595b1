"""SFT stage: LoRA on the base with trl's SFTTrainer over the conversational trajectories."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldagent.config import ExperienceParams, Params, SftParams
from worldagent.lm.training import (
    TrainingError,
    checkpoint_root,
    file_hash,
    fingerprint,
    freed_memory_callbacks,
    load_training_model,
    lora_config,
    prepare_checkpoints,
    read_jsonl,
    run_trainer,
    stage_params,
    trainer_kwargs,
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


def sft_config(
    params: Params, section: SftParams | ExperienceParams, output_dir: Path, device: str, dtype: Any, model: Any
) -> Any:
    """trl's SFTConfig for ``model`` from ``section``: ``params.sft``, or ``params.experience`` for the
    experience loop's rejection-sampling fine-tune, which masks the prompt as SFT does."""
    from trl import SFTConfig

    return SFTConfig(
        **trainer_kwargs(section, output_dir=output_dir, seed=params.seed, device=device, dtype=dtype, model=model),
        max_length=section.max_length,
        assistant_only_loss=params.sft.assistant_only_loss,
        packing=False,
    )


@dataclass(frozen=True)
class SftSetup:
    """A built SFT trainer and what writing its adapter needs."""

    trainer: Any
    tokenizer: Any
    parents: list[Path]
    rows: int
    data_hash: str


def build_sft_trainer(
    params: Params,
    base_dir: Path,
    dataset_path: Path,
    checkpoints: Path,
    *,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
) -> SftSetup:
    """trl's ``SFTTrainer`` over the base with a fresh LoRA adapter, configured from ``params``.

    Under ``accelerate launch`` the trainer takes the launch's distributed setup (DDP, DeepSpeed).
    """
    from datasets import Dataset
    from trl import SFTTrainer

    rows = sft_rows(dataset_path)
    memory_callbacks = freed_memory_callbacks(params.sft.freed_memory)  # before the model loads
    model, tokenizer, device, dtype, parents = load_training_model(params, base_dir, None, device)
    trainer = SFTTrainer(
        model=model,
        args=sft_config(params, params.sft, checkpoints, device, dtype, model),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=lora_config(params.lora, model),
        callbacks=[*callbacks, *memory_callbacks],
    )
    return SftSetup(trainer, tokenizer, list(parents), len(rows), file_hash(dataset_path))


def train_sft(
    params: Params,
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
    base_dir, dataset_path, out_dir = Path(base_dir), Path(dataset_path), Path(out_dir)
    checkpoints = checkpoints or checkpoint_root(out_dir, STAGE)
    setup = build_sft_trainer(params, base_dir, dataset_path, checkpoints, device=device, callbacks=callbacks)
    resume = prepare_checkpoints(checkpoints, fingerprint(STAGE, params, setup.data_hash, base_dir, setup.parents))
    metrics = run_trainer(
        setup.trainer,
        stage=STAGE,
        out_dir=out_dir,
        checkpoints=checkpoints,
        resume=resume,
        base_dir=base_dir,
        parents=setup.parents,
        params=stage_params(params, STAGE),
        data_hash=setup.data_hash,
        tokenizer=setup.tokenizer,
        live_dir=live_dir,
        metric_keys=("loss", "mean_token_accuracy", "grad_norm"),
    )
    metrics["samples"] = setup.rows
    log.info("sft: %s", metrics)
    return metrics
