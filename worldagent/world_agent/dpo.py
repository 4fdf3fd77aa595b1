"""DPO stage: the merged SFT (or experience) model is the start and, with the LoRA adapter disabled, the reference.

The pairs are the generate stage's rule-driven pairs (reference vs a degraded copy) followed by the
experience loop's on-policy pairs (a passing vs a failing sample of the same prompt, or the reference
vs a failing sample): one merged list in that order, so the data hash is deterministic.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.io import canonical_json, sha256_bytes
from worldagent.io import read_jsonl as read_jsonl_file
from worldagent.lm.training import (
    TrainingError,
    checkpoint_root,
    fingerprint,
    freed_memory_callbacks,
    load_training_model,
    lora_config,
    prepare_checkpoints,
    read_jsonl,
    require_complete_adapter,
    run_trainer,
    stage_params,
    trainer_kwargs,
)

log = logging.getLogger(__name__)
STAGE = "dpo"
PREFERENCE_COLUMNS = ("prompt", "chosen", "rejected")


def _messages(value: Any) -> list[dict[str, str]]:
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in value]


def dpo_rows(path: Path, allow_empty: bool = False) -> list[dict[str, Any]]:
    """Conversational ``{prompt, chosen, rejected}`` rows; the other columns are dropped.
    ``allow_empty``: an empty file is no pairs (the experience loop may have none yet)."""
    rows = []
    source = (
        read_jsonl_file(path, "preference pairs", hint="run the experience stage first", error=TrainingError)
        if allow_empty
        else read_jsonl(path)
    )
    for number, row in enumerate(source, start=1):
        missing = [c for c in PREFERENCE_COLUMNS if not isinstance(row.get(c), list) or not row.get(c)]
        if missing:
            raise TrainingError(f"{path}: row {number} lacks conversational {', '.join(missing)}")
        rows.append({column: _messages(row[column]) for column in PREFERENCE_COLUMNS})
    return rows


def dpo_config(params: Params, output_dir: Path, device: str, dtype: Any, model: Any) -> Any:
    from trl import DPOConfig

    nll = params.dpo.chosen_nll_weight
    return DPOConfig(
        **trainer_kwargs(params.dpo, output_dir=output_dir, seed=params.seed, device=device, dtype=dtype, model=model),
        beta=params.dpo.beta,
        max_length=params.dpo.max_length,
        loss_type=["sigmoid", "sft"] if nll > 0 else ["sigmoid"],
        loss_weights=[1.0, nll] if nll > 0 else None,
    )


def train_dpo(
    params: Params,
    base_dir: Path,
    sft_dir: Path,
    dataset_path: Path,
    out_dir: Path,
    *,
    experience_pairs: Path | None = None,
    live_dir: Path | None = None,
    checkpoints: Path | None = None,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
) -> dict[str, Any]:
    """Train the DPO adapter on top of base+sft (merged), or base+sft+experience when ``sft_dir`` is the
    experience adapter, into ``out_dir``; returns the metrics. ``experience_pairs``: on-policy pairs
    appended to the rule-driven ones of ``dataset_path``.

    The reference policy is the merged SFT model itself: trl's DPOTrainer evaluates it by
    disabling the new LoRA adapter, so no second copy of the model is held in memory.
    """
    from datasets import Dataset
    from trl import DPOTrainer

    base_dir, sft_dir, dataset_path, out_dir = Path(base_dir), Path(sft_dir), Path(dataset_path), Path(out_dir)
    parent_stage = require_complete_adapter(sft_dir, ("sft", "experience"))
    rule_rows = dpo_rows(dataset_path)
    on_policy = dpo_rows(Path(experience_pairs), allow_empty=True) if experience_pairs is not None else []
    rows = rule_rows + on_policy
    data_hash = sha256_bytes(canonical_json(rows).encode("utf-8"))
    memory_callbacks = freed_memory_callbacks(params.dpo.freed_memory)  # before the model loads
    model, tokenizer, device, dtype, parents = load_training_model(params, base_dir, sft_dir, device)
    checkpoints = checkpoints or checkpoint_root(out_dir, STAGE)
    resume = prepare_checkpoints(checkpoints, fingerprint(STAGE, params, data_hash, base_dir, parents))
    trainer = DPOTrainer(
        model=model,
        ref_model=None,
        args=dpo_config(params, checkpoints, device, dtype, model),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=lora_config(params.lora, model),
        callbacks=[*callbacks, *memory_callbacks],
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
        live_dir=live_dir,
        metric_keys=("loss", "rewards/margins", "rewards/accuracies", "rewards/chosen", "rewards/rejected"),
    )
    metrics["samples"] = len(rows)
    metrics["pairs"] = {"rule": len(rule_rows), "on_policy": len(on_policy)}
    metrics["parent"] = parent_stage
    log.info("dpo: %s", metrics)
    return metrics
