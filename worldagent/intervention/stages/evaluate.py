"""intervention_evaluate: the predictor and its baselines on the held-out test sessions; metrics, ROC,
precision-recall and confusion plots through DVCLive."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.intervention.dataset import HAND_FEATURES, PAGE_FEATURES
from worldagent.intervention.metrics import (
    PREDICTOR,
    classification_metrics,
    log_evaluation,
    logistic_baseline,
    majority_baseline,
)
from worldagent.intervention.serve import InterventionPredictor
from worldagent.intervention.stages.common import fmt, inputs_for, load_embeddings, read_steps, split_index
from worldagent.intervention.train import seed_everything
from worldagent.io import atomic_write_text, jsonl, pretty_json

log = logging.getLogger("worldagent.intervention")


def evaluate_stage(
    params: Params,
    *,
    steps: Path,
    embeddings: Path,
    predictor: Path,
    predictions: Path,
    metrics: Path,
    live: Path,
) -> dict[str, Any]:
    """Score the bundle in ``predictor`` on the test split → ``metrics`` (evaluation_metrics.json),
    ``predictions`` (one row per test step) and the DVCLive folder ``live`` (every number of the
    metrics; ROC and precision-recall curves of the predictor and the logistic baseline; the
    predictor's confusion matrix)."""
    rows = read_steps(steps)
    bundle = InterventionPredictor.from_dir(predictor)
    visual, mask, _ = load_embeddings(embeddings)
    meta = bundle.meta
    seed_everything(params.seed, params.intervention.train.threads)
    test, test_arrays = inputs_for(rows, "test", meta, visual, mask)
    if len(test) == 0:
        raise InputError(f"{steps}: the test split is empty (raise intervention.export.test_fraction or add sessions)")
    with torch.no_grad():
        prob = torch.sigmoid(bundle.head(bundle.encoder(*test.args()))).numpy().astype(np.float64)
    y = test.labels.numpy()
    result = classification_metrics(y, prob, bundle.threshold)
    _, train_arrays = inputs_for(rows, "train", meta, visual, mask)
    _, val_arrays = inputs_for(rows, "validation", meta, visual, mask)
    baselines: dict[str, Any] = {"majority": majority_baseline(train_arrays.labels, y)}
    curves = {PREDICTOR: prob}
    try:
        logistic, logistic_prob = logistic_baseline(
            train_arrays.hand,
            train_arrays.labels,
            val_arrays.hand,
            val_arrays.labels,
            test_arrays.hand,
            y,
            params.intervention.train.recall_target,
            params.seed,
        )
        baselines["logistic_regression"] = {**logistic, "features": [*HAND_FEATURES, *PAGE_FEATURES]}
        curves["logistic_regression"] = logistic_prob
    except ValueError as error:  # one class only in a split: the baseline cannot be fitted
        baselines["logistic_regression"] = None
        result["notes"].append(str(error))
    test_rows = [rows[i] for i in split_index(rows, "test")]
    predicted = prob >= bundle.threshold
    recall_by_reason: dict[str, Any] = {}
    for reason in sorted({r["reason"] for r in test_rows if r["label"]}):
        idx = [i for i, r in enumerate(test_rows) if r["reason"] == reason]
        recall_by_reason[reason] = {"steps": len(idx), "recall": float(np.mean(predicted[idx]))}
    logistic_f1 = (baselines["logistic_regression"] or {}).get("f1")
    result.update(
        {
            "threshold_rule": meta.get("threshold_rule"),
            "recall_target": meta.get("recall_target"),
            "baselines": baselines,
            "beats_logistic_f1": bool(logistic_f1 is not None and result["f1"] > logistic_f1),
            "recall_by_reason": recall_by_reason,
            "test_sessions": len({r["session_id"] for r in test_rows}),
            "unknown_actions": test_arrays.unknown_actions,
            "masked_screenshots": int((test.mask == 0).sum()),
            "model": {
                "clip": meta["clip"]["model"],
                "pretrained": meta["clip"]["pretrained"],
                "encoder_dim": meta["encoder"]["dim"],
            },
        }
    )
    rows_out = (
        {"id": r["id"], "label": int(label), "probability": round(float(p), 6)}
        for r, label, p in zip(test_rows, y, prob, strict=True)
    )
    atomic_write_text(metrics, pretty_json(result))
    atomic_write_text(predictions, jsonl(rows_out))
    log_evaluation(live, result, y, curves)
    for note in result["notes"]:
        log.warning("%s", note)
    log.info(
        "test: F1 %.3f, ROC AUC %s, PR AUC %s (logistic F1 %s)",
        result["f1"],
        fmt(result["auc"]),
        fmt(result["pr_auc"]),
        fmt(logistic_f1),
    )
    return result
