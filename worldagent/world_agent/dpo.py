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

from worldagent.config import DpoParams
from worldagent.io import canonical_json, sha256_bytes
from worldagent.io import read_jsonl as read_jsonl_file
from worldagent.lm.training import (
    LoraSetup,
    StageRun,
    TrainerSpec,
    TrainingError,
    is_off,
    off_reason,
    read_jsonl,
    require_complete_adapter,
    skip_stage,
    train_stage,
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


DPO_METRIC_KEYS = ("loss", "rewards/margins", "rewards/accuracies", "rewards/chosen", "rewards/rejected")


def dpo_config(common: dict[str, Any], dpo: DpoParams) -> Any:
    """trl's DPOConfig: ``common`` (:func:`worldagent.lm.training.trainer_kwargs`) and ``dpo``'s own knobs."""
    from trl import DPOConfig

    nll = dpo.chosen_nll_weight
    return DPOConfig(
        **common,
        beta=dpo.beta,
        max_length=dpo.max_length,
        loss_type=["sigmoid", "sft"] if nll > 0 else ["sigmoid"],
        loss_weights=[1.0, nll] if nll > 0 else None,
    )


def dpo_spec(rows: list[dict[str, Any]], dpo: DpoParams) -> TrainerSpec:
    """trl's DPOTrainer over ``rows``; no ``ref_model``: the reference is the model with the new LoRA
    adapter disabled."""
    from trl import DPOTrainer

    return TrainerSpec(
        trainer_class=DPOTrainer,
        config=lambda common, loaded: dpo_config(common, dpo),
        rows=rows,
        metric_keys=DPO_METRIC_KEYS,
        extra={"ref_model": None},
    )


def train_dpo(
    dpo: DpoParams,
    setup: LoraSetup,
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
    appended to the rule-driven ones of ``dataset_path``. ``dpo.max_steps`` 0: the stage is off, the
    input adapter is written through (:func:`worldagent.lm.training.skip_stage`), nothing is loaded.

    The reference policy is the merged SFT model itself: trl's DPOTrainer evaluates it by
    disabling the new LoRA adapter, so no second copy of the model is held in memory.
    """
    base_dir, sft_dir, dataset_path, out_dir = Path(base_dir), Path(sft_dir), Path(dataset_path), Path(out_dir)
    parent_stage = require_complete_adapter(sft_dir, ("sft", "experience"))
    if is_off(dpo):
        return skip_stage(STAGE, sft_dir, out_dir, live_dir, off_reason(STAGE), parent=parent_stage)
    rule_rows = dpo_rows(dataset_path)
    on_policy = dpo_rows(Path(experience_pairs), allow_empty=True) if experience_pairs is not None else []
    rows = rule_rows + on_policy
    run = StageRun(
        stage=STAGE,
        section=dpo,
        setup=setup,
        base_dir=base_dir,
        out_dir=out_dir,
        data_hash=sha256_bytes(canonical_json(rows).encode("utf-8")),
        checkpoints=checkpoints,
        live_dir=live_dir,
        callbacks=tuple(callbacks),
    )
    metrics = train_stage(run, sft_dir, lambda loaded: dpo_spec(rows, dpo), device)
    metrics["samples"] = len(rows)
    metrics["pairs"] = {"rule": len(rule_rows), "on_policy": len(on_policy)}
    metrics["parent"] = parent_stage
    log.info("dpo: %s", metrics)
    return metrics
