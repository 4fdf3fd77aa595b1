"""SFT stage: LoRA on the base with trl's SFTTrainer over the conversational trajectories."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.policy.training import (
    TrainingError,
    checkpoint_root,
    file_hash,
    fingerprint,
    load_training_model,
    lora_config,
    prepare_checkpoints,
    read_jsonl,
    run_trainer,
    stage_params,
    trainer_kwargs,
    wants_gradient_checkpointing,
)

log = logging.getLogger(__name__)
STAGE = "sft"


def sft_rows(path: Path) -> list[dict[str, Any]]:
    """``{messages}`` rows (the only column the trainer needs); every row needs an assistant turn."""
    rows = []
    for number, row in enumerate(read_jsonl(path), start=1):
        messages = row.get("messages")
        if not isinstance(messages, list) or not any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages):
            raise TrainingError(f"{path}: row {number} has no assistant message in `messages`")
        rows.append({"messages": [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]})
    return rows


def sft_config(params: Params, output_dir: Path, device: str, dtype: Any, gradient_checkpointing: bool) -> Any:
    from trl import SFTConfig

    return SFTConfig(
        **trainer_kwargs(params.sft, output_dir=output_dir, seed=params.seed, device=device, dtype=dtype, gradient_checkpointing=gradient_checkpointing),
        max_length=params.sft.max_length,
        assistant_only_loss=params.sft.assistant_only_loss,
        packing=False,
    )


def train_sft(
    params: Params,
    base_dir: Path,
    dataset_path: Path,
    out_dir: Path,
    *,
    curves_path: Path | None = None,
    checkpoints: Path | None = None,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
) -> dict[str, Any]:
    """Train the SFT adapter into ``out_dir`` (atomically); returns the run's metrics.

    Resumes from the last checkpoint under ``checkpoints`` (default
    ``<out_dir>/../checkpoints/sft``) when one was written for the same inputs.
    """
    from datasets import Dataset
    from trl import SFTTrainer

    base_dir, dataset_path, out_dir = Path(base_dir), Path(dataset_path), Path(out_dir)
    rows = sft_rows(dataset_path)
    data_hash = file_hash(dataset_path)
    model, tokenizer, device, dtype, parents = load_training_model(params, base_dir, None, device)
    checkpoints = checkpoints or checkpoint_root(out_dir, STAGE)
    resume = prepare_checkpoints(checkpoints, fingerprint(STAGE, params, data_hash, base_dir, parents))
    trainer = SFTTrainer(
        model=model,
        args=sft_config(params, checkpoints, device, dtype, wants_gradient_checkpointing(model)),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=lora_config(params.lora),
        callbacks=list(callbacks),
    )
    metrics = run_trainer(
        trainer,
        stage=STAGE,
        out_dir=out_dir,
        checkpoints=checkpoints,
        resume=resume,
        base_dir=base_dir,
        parents=parents,
        params=stage_params(params, STAGE),
        data_hash=data_hash,
        tokenizer=tokenizer,
        curves_path=curves_path,
        metric_keys=("loss", "mean_token_accuracy", "grad_norm"),
    )
    metrics["samples"] = len(rows)
    log.info("sft: %s", metrics)
    return metrics
