"""Classification metrics, the baselines and the plots of the evaluate stage (scikit-learn, matplotlib Agg)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    confusion_matrix,
    f1_score,
    precision_recall_curve,
    precision_score,
    recall_score,
    roc_auc_score,
    roc_curve,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from worldagent.errors import InputError
from worldagent.intervention.train import choose_threshold


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


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "worldagent"
    return plt


def plot_confusion(metrics: dict[str, Any], path: Path) -> None:
    plt = _plt()
    cm = metrics["confusion_matrix"]
    grid = np.array([[cm["true_negatives"], cm["false_positives"]], [cm["false_negatives"], cm["true_positives"]]])
    fig, ax = plt.subplots(figsize=(4.8, 4.0), dpi=100)
    ax.imshow(grid, cmap="Blues")
    for (i, j), value in np.ndenumerate(grid):
        ax.text(
            j,
            i,
            str(value),
            ha="center",
            va="center",
            color="white" if value > grid.max() / 2 else "black",
            fontsize=13,
        )
    ax.set_xticks([0, 1], ["success", "intervention"])
    ax.set_yticks([0, 1], ["success", "intervention"])
    ax.set_xlabel("predicted")
    ax.set_ylabel("actual")
    ax.set_title(f"Test confusion matrix (threshold {metrics['threshold']:.3f})", fontsize=10)
    fig.tight_layout()
    _save(fig, path)


def plot_curves(labels: np.ndarray, curves: dict[str, np.ndarray], roc_path: Path, pr_path: Path) -> None:
    """ROC and precision-recall curves of every model (the encoder and the baselines)."""
    plt = _plt()
    for kind, path in (("roc", roc_path), ("pr", pr_path)):
        fig, ax = plt.subplots(figsize=(4.8, 4.2), dpi=100)
        if len(set(np.asarray(labels).tolist())) < 2:
            ax.text(0.5, 0.5, "one class in the test split:\nthe curve is undefined", ha="center", va="center")
        else:
            for name, probabilities in curves.items():
                if kind == "roc":
                    x, y, _ = roc_curve(labels, probabilities)
                    ax.plot(x, y, label=f"{name} (AUC {roc_auc_score(labels, probabilities):.3f})")
                else:
                    precision, recall, _ = precision_recall_curve(labels, probabilities)
                    ax.plot(
                        recall, precision, label=f"{name} (AP {average_precision_score(labels, probabilities):.3f})"
                    )
            if kind == "roc":
                ax.plot([0, 1], [0, 1], "--", color="grey", linewidth=0.8)
            ax.legend(loc="lower right" if kind == "roc" else "lower left", fontsize=8)
        ax.set_xlabel("false positive rate" if kind == "roc" else "recall")
        ax.set_ylabel("true positive rate" if kind == "roc" else "precision")
        ax.set_title("ROC curve (test sessions)" if kind == "roc" else "Precision-recall curve (test sessions)")
        fig.tight_layout()
        _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    import io

    from worldagent.io import atomic_write_bytes

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    _plt().close(fig)
    atomic_write_bytes(path, buffer.getvalue())
