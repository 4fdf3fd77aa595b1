"""Classification metrics, the baselines and the DVCLive metrics and plots of the evaluate stage (scikit-learn)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    confusion_matrix,
    f1_score,
    precision_score,
    recall_score,
    roc_auc_score,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from worldagent.errors import InputError
from worldagent.intervention.train import choose_threshold
from worldagent.live import open_live

PREDICTOR = "predictor"
"""The encoder + predictor's name among the evaluation's curves (the baselines' are theirs)."""
CLASSES = ("success", "intervention")
"""Label 0 and 1 as the confusion matrix names them."""


class SingleClassError(InputError):
    """A split holds one class only, so ROC/PR curves and AUCs are undefined."""


def classification_metrics(labels: np.ndarray, probabilities: np.ndarray, threshold: float) -> dict[str, Any]:
    """accuracy, precision, recall, f1, auc (ROC), pr_auc, confusion matrix and sample counts.

    With one class in ``labels`` the AUCs are ``None`` and ``notes`` says why (no crash).
    """
    labels = np.asarray(labels, dtype=int)
    probabilities = np.asarray(probabilities, dtype=float)
    if labels.size == 0:
        raise ValueError("no samples to evaluate (the test split is empty)")
    predictions = (probabilities >= threshold).astype(int)
    tn, fp, fn, tp = (int(x) for x in confusion_matrix(labels, predictions, labels=[0, 1]).ravel())
    notes: list[str] = []
    both = len(set(labels.tolist())) == 2
    if not both:
        notes.append(
            f"the test split holds only {'interventions' if labels[0] == 1 else 'successes'}: ROC AUC and PR AUC are undefined"
        )
    return {
        "accuracy": float(accuracy_score(labels, predictions)),
        "precision": float(precision_score(labels, predictions, zero_division=0)),
        "recall": float(recall_score(labels, predictions, zero_division=0)),
        "f1": float(f1_score(labels, predictions, zero_division=0)),
        "auc": float(roc_auc_score(labels, probabilities)) if both else None,
        "pr_auc": float(average_precision_score(labels, probabilities)) if both else None,
        "threshold": float(threshold),
        "confusion_matrix": {"true_negatives": tn, "false_positives": fp, "false_negatives": fn, "true_positives": tp},
        "samples": {
            "total": int(labels.size),
            "interventions": int(labels.sum()),
            "successes": int(labels.size - labels.sum()),
        },
        "notes": notes,
    }


def majority_baseline(train_labels: np.ndarray, test_labels: np.ndarray) -> dict[str, Any]:
    majority = int(np.mean(train_labels) >= 0.5)
    probabilities = np.full(len(test_labels), float(majority))
    out = classification_metrics(test_labels, probabilities, 0.5)
    if out["auc"] is not None:
        out["auc"], out["pr_auc"] = 0.5, float(np.mean(test_labels))
    out["predicts"] = "intervention" if majority else "success"
    return out


def logistic_baseline(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    recall_target: float,
    seed: int,
) -> tuple[dict[str, Any], np.ndarray]:
    """Logistic regression on hand-made features, thresholded on validation like the predictor."""
    if len(set(y_train.tolist())) < 2:
        raise SingleClassError("the training split holds one class: the logistic baseline cannot be fitted")
    model = make_pipeline(
        StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=2000, random_state=seed)
    )
    model.fit(x_train, y_train)
    threshold, rule = choose_threshold(model.predict_proba(x_val)[:, 1], y_val, recall_target)
    probabilities = model.predict_proba(x_test)[:, 1]
    out = classification_metrics(y_test, probabilities, threshold)
    out["threshold_rule"] = rule
    return out, probabilities


def numbers(record: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Every finite number of a (nested) record under its ``/``-joined key: what DVCLive logs as
    metrics (``recall_by_reason/timeout/recall``); text, flags, lists and missing values are left out."""
    found: dict[str, float] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            found |= numbers(value, f"{name}/")
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            found[name] = value  # a count stays an integer
    return found


def log_evaluation(
    directory: Path, result: Mapping[str, Any], labels: np.ndarray, curves: Mapping[str, np.ndarray]
) -> None:
    """The evaluation into the DVCLive folder ``directory`` (emptied first): every number of
    ``result`` as a DVC metric, each model's ROC and precision-recall curve (``curves``: name →
    test probabilities; ``plots/sklearn/{roc,precision_recall}/<name>.json``) and the predictor's
    confusion matrix at its threshold (``plots/sklearn/confusion_matrix.json``) as DVC plots."""
    labels = np.asarray(labels, dtype=int)
    live = open_live(directory)
    try:
        for name, value in numbers(result).items():
            live.log_metric(name, value, plot=False)  # a summary value, not a curve by step
        with warnings.catch_warnings():
            # one class in the test split: the curves are undefined (NaN), as ``notes`` says
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            for name, scores in curves.items():
                probabilities = np.asarray(scores, dtype=np.float64)  # a float32 threshold is no JSON number
                live.log_sklearn_plot("roc", labels, probabilities, name=f"roc/{name}")
                live.log_sklearn_plot("precision_recall", labels, probabilities, name=f"precision_recall/{name}")
        predicted = np.asarray(curves[PREDICTOR]) >= result["threshold"]
        live.log_sklearn_plot(
            "confusion_matrix",
            [CLASSES[label] for label in labels],
            [CLASSES[int(guess)] for guess in predicted],
            name="confusion_matrix",
        )
    finally:
        live.end()
