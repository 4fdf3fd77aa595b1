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


# -- the candidate and the effect of each step ------------------------------------------------------

BEST = "best"
TRAINED_STAGES: tuple[str, ...] = ("sft", "experience", "dpo", "grpo")  # in training order
STEP_CHAIN: tuple[str, ...] = ("base", *TRAINED_STAGES)
STEP_METRICS: tuple[str, ...] = ("mean_reward", "story_pass_rate")
CANDIDATE_BASELINES: tuple[str, ...] = ("nearest", "base")


def _paired_diff(
    report: EvalReport, a: str, b: str, metric: str, samples: int, confidence: float, seed: int
) -> tuple[int, dict[str, float]]:
    ids = _common_ids(report, [a, b])
    if not ids:
        raise ValueError(f"{a!r} and {b!r} share no evaluated intents")
    values_a = per_intent_values(_aligned(report, a, ids), metric)
    values_b = per_intent_values(_aligned(report, b, ids), metric)
    return len(ids), bootstrap_diff(values_a, values_b, samples, confidence, seed)


def select_candidate(
    report: EvalReport,
    rule: str = BEST,
    stages: Sequence[str] = TRAINED_STAGES,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Which model is the candidate, and why.

    ``rule`` ``best``: the trained stage (``stages``, in training order) with the highest held-out
    mean reward; a tie goes to the earlier stage (less training for the same score). Any other
    ``rule`` names the stage itself. The result records every stage's mean reward, the runner-up and
    the chosen − runner-up difference with its paired bootstrap CI: choosing on the eval set is
    optimistic (the winner's score is biased upward), and that difference says by how much it could be.
    """
    if rule != BEST:
        if rule not in report.models:
            raise ValueError(f"candidate {rule!r} was not evaluated; evaluated models: {sorted(report.models)}")
        return {"rule": rule, "candidate": rule, "mean_reward": {}, "runner_up": None, "runner_up_diff": None}
    present = [stage for stage in stages if stage in report.models]
    if not present:
        raise ValueError(
            f"no trained stage ({', '.join(stages)}) was evaluated, so there is no best stage;"
            f" evaluated models: {sorted(report.models)}"
        )
    scores = {stage: report.models[stage].metrics.mean_reward for stage in present}
    ranked = sorted(present, key=lambda stage: (-scores[stage], present.index(stage)))
    selection: dict[str, Any] = {
        "rule": BEST,
        "candidate": ranked[0],
        "mean_reward": scores,
        "runner_up": None,
        "runner_up_diff": None,
    }
    if len(ranked) > 1:
        _, diff = _paired_diff(report, ranked[0], ranked[1], "mean_reward", samples, confidence, seed)
        selection["runner_up"], selection["runner_up_diff"] = ranked[1], diff
    return selection


def step_pairs(report: EvalReport, candidate: str) -> list[tuple[str, str]]:
    """(model, previous) for each evaluated step of base → sft → experience → dpo → grpo (a stage not
    evaluated is skipped: the next one is compared with the last one that was), then the candidate
    against the nearest-story baseline and the base; each pair once."""
    chain = [name for name in STEP_CHAIN if name in report.models]
    pairs = list(zip(chain[1:], chain[:-1], strict=True))
    for baseline in CANDIDATE_BASELINES:
        pair = (candidate, baseline)
        if candidate in report.models and baseline in report.models and candidate != baseline and pair not in pairs:
            pairs.append(pair)
    return pairs


def step_effects(
    report: EvalReport,
    candidate: str,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    metrics: Sequence[str] = STEP_METRICS,
) -> list[dict[str, Any]]:
    """Each step's paired bootstrap difference over the previous one (see :func:`step_pairs`).

    ``improved`` is true only when the mean-reward CI lies wholly above 0: a CI that includes 0, or
    lies below it, is a step that did not (clearly) improve.
    """
    effects = []
    for model, baseline in step_pairs(report, candidate):
        entry: dict[str, Any] = {"model": model, "baseline": baseline, "n": 0, "metrics": {}}
        for metric in metrics:
            n, diff = _paired_diff(report, model, baseline, metric, samples, confidence, seed)
            entry["n"] = n
            entry["metrics"][metric] = {
                "model": getattr(report.models[model].metrics, metric),
                "baseline": getattr(report.models[baseline].metrics, metric),
                "diff": diff,
            }
        entry["improved"] = entry["metrics"]["mean_reward"]["diff"]["low"] > 0 if "mean_reward" in metrics else None
        effects.append(entry)
    return effects


def compare_stages(
    report: EvalReport,
    candidate: str = BEST,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """compare.json: the candidate chosen by ``candidate`` (``best`` or a stage name,
    :func:`select_candidate`), :func:`compare` against the champion and base, and every step's effect."""
    selection = select_candidate(report, candidate, samples=samples, confidence=confidence, seed=seed)
    chosen = selection["candidate"]
    result = compare(report, chosen, samples=samples, confidence=confidence, seed=seed)
    result["selection"] = selection
    result["step_effects"] = step_effects(report, chosen, samples, confidence, seed)
    return result
