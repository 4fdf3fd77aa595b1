"""GRPO stage: a new LoRA on base+sft+dpo (merged), rewarded by the story tests."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.io import sha256_bytes
from worldagent.policy.rewards import StoryTestReward
from worldagent.policy.training import (
    TrainingError,
    canonical_json,
    checkpoint_root,
    fingerprint,
    load_training_model,
    lora_config,
    prepare_checkpoints,
    read_jsonl,
    require_complete_adapter,
    run_trainer,
    stage_params,
    trainer_kwargs,
    wants_gradient_checkpointing,
)

log = logging.getLogger(__name__)
STAGE = "grpo"


def grpo_prompts(path: Path, max_prompts: int) -> list[dict[str, Any]]:
    """``{prompt, id, given_files}`` rows: the system+user turns of the single-turn trajectories, first
    ``max_prompts`` in file order; ``given_files`` is the files the task's sandbox starts with (JSON)."""
    rows = []
    for row in read_jsonl(path):
        if row.get("turns", "single") != "single":
            continue
        messages = row.get("messages") or []
        prompt = []
        for message in messages:
            if message.get("role") == "assistant":
                break
            prompt.append({"role": str(message["role"]), "content": str(message["content"])})
        if not prompt or "id" not in row:
            continue
        rows.append(
            {
                "prompt": prompt,
                "id": str(row["id"]),
                "given_files": json.dumps(row.get("given_files") or [], sort_keys=True),
            }
        )
        if len(rows) >= max_prompts:
            break
    if not rows:
        raise TrainingError(f"{path}: no single-turn trajectories with an `id` to draw GRPO prompts from")
    return rows


def _fit_prompts(rows: list[dict[str, Any]], tokenizer: Any, max_length: int) -> list[dict[str, Any]]:
    """Drop prompts longer than ``grpo.max_length`` tokens (trl 1.16's GRPO does not truncate prompts)."""
    kept = []
    for row in rows:
        ids = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False)
        if len(ids) <= max_length:
            kept.append(row)
    if len(kept) < len(rows):
        log.warning(
            "grpo: %d of %d prompts are longer than grpo.max_length=%d tokens and were left out",
            len(rows) - len(kept),
            len(rows),
            max_length,
        )
    if not kept:
        raise TrainingError(f"params.yaml: grpo.max_length={max_length} is shorter than every prompt")
    return kept


def grpo_config(params: Params, output_dir: Path, device: str, dtype: Any, gradient_checkpointing: bool) -> Any:
    from trl import GRPOConfig

    p = params.grpo
    generations_per_step = p.batch_size * p.gradient_accumulation_steps
    if generations_per_step % p.num_generations:
        raise TrainingError(
            f"params.yaml: grpo.batch_size × grpo.gradient_accumulation_steps ({generations_per_step}) must be a multiple"
            f" of grpo.num_generations ({p.num_generations}): each step trains on whole groups of completions"
        )
    return GRPOConfig(
        **trainer_kwargs(
            p,
            output_dir=output_dir,
            seed=params.seed,
            device=device,
            dtype=dtype,
            gradient_checkpointing=gradient_checkpointing,
        ),
        num_generations=p.num_generations,
        temperature=p.temperature,
        max_completion_length=p.max_completion_length,
        remove_unused_columns=False,  # the reward function reads the `id` column
    )


def train_grpo(
    params: Params,
    base_dir: Path,
    dpo_dir: Path,
    dataset_path: Path,
    stories_root: Path,
    out_dir: Path,
    *,
    curves_path: Path | None = None,
    checkpoints: Path | None = None,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
    runner: Any = None,
) -> dict[str, Any]:
    """Train the GRPO adapter on top of base+sft+dpo into ``out_dir``; returns the metrics."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from worldagent.storytest.runner import make_runner

    base_dir, dpo_dir, dataset_path, out_dir = Path(base_dir), Path(dpo_dir), Path(dataset_path), Path(out_dir)
    require_complete_adapter(dpo_dir, "dpo")
    rows = grpo_prompts(dataset_path, params.grpo.max_prompts)
    model, tokenizer, device, dtype, parents = load_training_model(params, base_dir, dpo_dir, device)
    rows = _fit_prompts(rows, tokenizer, params.grpo.max_length)
    data_hash = sha256_bytes(canonical_json(rows).encode("utf-8"))
    checkpoints = checkpoints or checkpoint_root(out_dir, STAGE)
    stage_fingerprint = fingerprint(STAGE, params, data_hash, base_dir, parents)
    stage_fingerprint["reward"] = {"weights": params.reward.model_dump(), "storytest": params.storytest.model_dump()}
    resume = prepare_checkpoints(checkpoints, stage_fingerprint)
    reward = StoryTestReward(Path(stories_root), runner or make_runner(params.storytest), params.reward, tokenizer)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=grpo_config(params, checkpoints, device, dtype, wants_gradient_checkpointing(model)),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=lora_config(params.lora, model),
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
        params={**stage_params(params, STAGE), "reward": params.reward.model_dump()},
        data_hash=data_hash,
        tokenizer=tokenizer,
        curves_path=curves_path,
        metric_keys=("loss", "reward", "reward_std", "rewards/story_test/mean", "completions/mean_length"),
    )
    metrics["prompts"] = len(rows)
    log.info("grpo: %s", metrics)
    return metrics
