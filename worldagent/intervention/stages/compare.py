"""intervention_compare: candidate − champion on the same test steps (paired bootstrap CIs)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.compare import bootstrap_diff
from worldagent.intervention.metrics import classification_metrics
from worldagent.intervention.serve import InterventionPredictor
from worldagent.intervention.stages.common import read_steps, test_states
from worldagent.io import atomic_write_text, pretty_json, read_json, read_jsonl
from worldagent.registry.champion import load_champion

log = logging.getLogger("worldagent.intervention")
COMPARED = ("accuracy", "precision", "recall", "f1", "auc", "pr_auc")


def compare_stage(
    params: Params,
    *,
    metrics: Path,
    predictions: Path,
    steps: Path,
    champion: Path,
    comparison: Path,
    root: Path | None = None,
) -> dict[str, Any]:
    """Re-evaluate the champion pinned by the reference file ``champion`` (its paths, and the
    screenshot paths in ``steps``, relative to ``root``, default the working directory) on the test
    steps the candidate's ``predictions`` cover: paired bootstrap CIs on per-step correctness and
    Brier score, and metric deltas → ``comparison``."""
    root = Path(".") if root is None else root
    compare_params = params.intervention.compare
    family = params.intervention.family
    candidate_metrics = read_json(
        metrics, "the evaluation metrics", hint="run the intervention_evaluate stage first", expect=dict
    )
    preds = read_jsonl(predictions, "the test predictions", hint="run the intervention_evaluate stage first")
    y = np.asarray([p["label"] for p in preds])
    candidate = np.asarray([p["probability"] for p in preds])
    threshold = float(candidate_metrics["threshold"])
    result: dict[str, Any] = {
        "candidate": "predictor",
        "family": family,
        "n": int(y.size),
        "confidence": compare_params.confidence,
        "bootstrap_samples": compare_params.bootstrap_samples,
        "seed": params.seed,
        "comparisons": {"champion": None},
        "notes": [],
    }
    champion_ref = load_champion(champion, root, family)
    if champion_ref is None:
        result["notes"].append("No champion is deployed yet (first run): nothing to compare the candidate with.")
    else:
        champion_model = InterventionPredictor.from_dir(champion_ref.path)
        states = test_states(read_steps(steps), root)
        if [s["id"] for s in states] != [p["id"] for p in preds]:
            raise InputError(
                f"{predictions}: the predictions do not match the test split of {steps}; rerun intervention_evaluate"
            )
        champ, _warnings = champion_model.probabilities(states)
        champ_metrics = classification_metrics(y, champ, champion_model.threshold)
        correct_candidate = ((candidate >= threshold).astype(int) == y).astype(float)
        correct_champion = ((champ >= champion_model.threshold).astype(int) == y).astype(float)
        samples, confidence = compare_params.bootstrap_samples, compare_params.confidence
        accuracy = bootstrap_diff(correct_candidate, correct_champion, samples, confidence, params.seed)
        brier = bootstrap_diff(-((candidate - y) ** 2), -((champ - y) ** 2), samples, confidence, params.seed)
        deltas = {
            k: (candidate_metrics[k] - champ_metrics[k])
            if candidate_metrics.get(k) is not None and champ_metrics.get(k) is not None
            else None
            for k in COMPARED
        }
        result["comparisons"]["champion"] = {
            "version": champion_ref.version,
            "bundle": str(champion_ref.path),
            "metrics": {k: champ_metrics[k] for k in (*COMPARED, "threshold")},
            "deltas": deltas,
            "accuracy_diff": accuracy,
            "neg_brier_diff": brier,
        }
    atomic_write_text(comparison, pretty_json(result))
    for note in result["notes"]:
        log.info("%s", note)
    return result
