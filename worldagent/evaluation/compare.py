"""Candidate vs champion and base: paired bootstrap confidence intervals over intents.

Every metric is a mean of per-intent values (``metrics.per_intent_values``), so the difference
of two models on the same intents is the mean of the per-intent differences; its CI comes from
resampling intents with replacement (a paired percentile bootstrap), seeded for reproducibility.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from worldagent.evaluation.metrics import HIGHER_IS_BETTER, METRICS, EvalReport, IntentResult, per_intent_values

BASELINES: tuple[str, ...] = ("champion", "base")
REFERENCE = "reference"


def bootstrap_diff(
    a: Sequence[float],
    b: Sequence[float],
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, float]:
    """Mean of ``a - b`` (paired) with a percentile bootstrap CI; deterministic for ``seed``."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired samples must have the same length, got {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("cannot bootstrap a difference over zero intents")
    if samples < 1 or not 0 < confidence < 1:
        raise ValueError("samples must be ≥ 1 and confidence in (0, 1)")
    diff = x - y
    rng = np.random.default_rng(seed)
    means = np.empty(samples, dtype=float)
    chunk = max(1, 2_000_000 // diff.size)  # bound the index matrix's memory
    for start in range(0, samples, chunk):
        stop = min(samples, start + chunk)
        means[start:stop] = diff[rng.integers(0, diff.size, size=(stop - start, diff.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    mean = float(diff.mean())
    # Guard against float noise putting the point estimate a hair outside a degenerate interval.
    return {"mean": mean, "low": float(min(low, mean)), "high": float(max(high, mean))}


def _aligned(report: EvalReport, name: str, ids: Sequence[str]) -> list[IntentResult]:
    by_id = {result.id: result for result in report.models[name].per_intent}
    return [by_id[i] for i in ids]


def _common_ids(report: EvalReport, names: Sequence[str]) -> list[str]:
    ids = [result.id for result in report.models[names[0]].per_intent]
    for name in names[1:]:
        present = {result.id for result in report.models[name].per_intent}
        ids = [i for i in ids if i in present]
    return ids


def _versus(
    report: EvalReport, candidate: str, baseline: str, samples: int, confidence: float, seed: int
) -> dict[str, Any]:
    ids = _common_ids(report, [candidate, baseline])
    if not ids:
        raise ValueError(f"{candidate!r} and {baseline!r} share no evaluated intents")
    cand, base = _aligned(report, candidate, ids), _aligned(report, baseline, ids)
    metrics: dict[str, Any] = {}
    for metric in METRICS:
        a, b = per_intent_values(cand, metric), per_intent_values(base, metric)
        diff = bootstrap_diff(a, b, samples, confidence, seed)
        better = HIGHER_IS_BETTER[metric]
        if (diff["low"] > 0 and better) or (diff["high"] < 0 and not better):
            verdict = "better"
        elif (diff["high"] < 0 and better) or (diff["low"] > 0 and not better):
            verdict = "worse"
        else:
            verdict = "no clear difference"
        metrics[metric] = {
            "candidate": float(np.mean(a)),
            "baseline": float(np.mean(b)),
            "diff": diff,
            "higher_is_better": better,
            "verdict": verdict,
        }
    return {"baseline": baseline, "n": len(ids), "metrics": metrics}


def compare(
    report: EvalReport,
    candidate: str,
    baseline_names: Sequence[str] = BASELINES,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Candidate minus each baseline per metric with bootstrap CIs, and the gap to the reference.

    A baseline that was not evaluated (no champion yet: the first run) is ``None`` in
    ``comparisons`` and explained in ``notes``.
    """
    if candidate not in report.models:
        raise ValueError(f"candidate {candidate!r} was not evaluated; evaluated models: {sorted(report.models)}")
    result: dict[str, Any] = {
        "candidate": candidate,
        "confidence": confidence,
        "bootstrap_samples": samples,
        "seed": seed,
        "n": report.models[candidate].metrics.n,
        "comparisons": {},
        "reference_gap": None,
        "notes": [],
    }
    for name in baseline_names:
        if name == candidate:
            continue
        if name not in report.models:
            result["comparisons"][name] = None
            if name == "champion":
                result["notes"].append(
                    "No champion is deployed yet (first run): nothing to compare the candidate with but the base."
                )
            else:
                result["notes"].append(f"{name} was not evaluated, so there is no comparison with it.")
            continue
        result["comparisons"][name] = _versus(report, candidate, name, samples, confidence, seed)
    if REFERENCE in report.models and candidate != REFERENCE:
        cand = report.models[candidate].metrics
        ref = report.models[REFERENCE].metrics
        result["reference_gap"] = {
            metric: {
                "candidate": getattr(cand, metric),
                "reference": getattr(ref, metric),
                "gap": getattr(ref, metric) - getattr(cand, metric),  # how far below the upper bound
            }
            for metric in METRICS
        }
    else:
        result["notes"].append(
            "The reference outputs were not evaluated, so the distance to the upper bound is unknown."
        )
    return result
