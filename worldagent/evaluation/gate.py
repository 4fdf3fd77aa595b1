"""The gate: thresholds from ``params.yaml`` plus non-inferiority to the champion on mean reward.

Non-inferiority: the lower bound of the candidate − champion mean-reward CI must lie above
``-gate.margin``. With no champion (the first run) the gate applies the thresholds alone and
says so. Every check yields a human sentence, whether it passed or failed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from worldagent.config import GateParams
from worldagent.evaluation.compare import champion_reward_diff
from worldagent.evaluation.metrics import ModelMetrics


class GateCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    value: float
    threshold: float
    passed: bool


class GateDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: bool
    reasons: list[str] = Field(default_factory=list)
    checks: list[GateCheck] = Field(default_factory=list)


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def decide(candidate_metrics: ModelMetrics, comparison: dict[str, Any] | None, params: GateParams) -> GateDecision:
    checks: list[GateCheck] = []
    reasons: list[str] = []
    m = candidate_metrics

    ok = m.story_pass_rate >= params.min_story_pass_rate
    checks.append(GateCheck(name="min_story_pass_rate", value=m.story_pass_rate, threshold=params.min_story_pass_rate, passed=ok))
    reasons.append(
        f"Story pass rate {_fmt(m.story_pass_rate)} {'meets' if ok else 'is below'} the minimum {_fmt(params.min_story_pass_rate)}."
    )

    ok = m.a11y_pass_rate >= params.min_a11y_pass_rate
    checks.append(GateCheck(name="min_a11y_pass_rate", value=m.a11y_pass_rate, threshold=params.min_a11y_pass_rate, passed=ok))
    reasons.append(
        f"Accessibility pass rate {_fmt(m.a11y_pass_rate)} {'meets' if ok else 'is below'} the minimum {_fmt(params.min_a11y_pass_rate)}."
    )

    ok = m.constraint_violations <= params.max_constraint_violations
    checks.append(
        GateCheck(name="max_constraint_violations", value=m.constraint_violations, threshold=params.max_constraint_violations, passed=ok)
    )
    reasons.append(
        f"Constraint violations {_fmt(m.constraint_violations)} per intent {'are within' if ok else 'exceed'}"
        f" the maximum {_fmt(params.max_constraint_violations)}."
    )

    diff = champion_reward_diff(comparison or {})
    if diff is None:
        reasons.append("No champion is deployed yet (first run): the gate applies the thresholds alone, without non-inferiority.")
    else:
        ok = diff["low"] > -params.margin
        checks.append(GateCheck(name="non_inferiority_mean_reward", value=diff["low"], threshold=-params.margin, passed=ok))
        confidence = (comparison or {}).get("confidence", 0.95)
        interval = f"{_fmt(diff['mean'])} ({confidence:.0%} CI {_fmt(diff['low'])} to {_fmt(diff['high'])})"
        if ok:
            reasons.append(
                f"Mean reward is non-inferior to the champion: candidate − champion = {interval}; the lower bound is above −{_fmt(params.margin)}."
            )
        else:
            reasons.append(
                f"Mean reward may be worse than the champion's: candidate − champion = {interval}; the lower bound is not above −{_fmt(params.margin)}."
            )

    passed = all(check.passed for check in checks)
    failed = [check.name for check in checks if not check.passed]
    reasons.insert(0, "The candidate passes the gate." if passed else f"The candidate fails the gate ({', '.join(failed)}).")
    return GateDecision(passed=passed, reasons=reasons, checks=checks)


# -- generic form (used by the intervention predictor's gate) ------------------------------------


def threshold_check(name: str, label: str, value: float | None, threshold: float, higher_is_better: bool = True) -> tuple[GateCheck, str]:
    """One threshold check and its sentence; a missing value (``None``) fails and says so."""
    if value is None:
        return GateCheck(name=name, value=0.0, threshold=threshold, passed=False), f"{label} is undefined, so it cannot meet {_fmt(threshold)}."
    ok = value >= threshold if higher_is_better else value <= threshold
    verb = ("meets" if ok else "is below") if higher_is_better else ("is within" if ok else "exceeds")
    return GateCheck(name=name, value=value, threshold=threshold, passed=ok), f"{label} {_fmt(value)} {verb} the {'minimum' if higher_is_better else 'maximum'} {_fmt(threshold)}."


def decide_checks(
    checks: list[tuple[GateCheck, str]],
    champion_diff: dict[str, float] | None,
    margin: float,
    metric_label: str,
    confidence: float = 0.95,
) -> GateDecision:
    """The gate over any metrics: every threshold check, then non-inferiority to the champion on one
    metric (the lower CI bound of candidate − champion above ``-margin``), as :func:`decide` does."""
    items = [check for check, _ in checks]
    reasons = [reason for _, reason in checks]
    if champion_diff is None:
        reasons.append("No champion is deployed yet (first run): the gate applies the thresholds alone, without non-inferiority.")
    else:
        ok = champion_diff["low"] > -margin
        items.append(GateCheck(name=f"non_inferiority_{metric_label.lower().replace(' ', '_')}", value=champion_diff["low"], threshold=-margin, passed=ok))
        interval = f"{_fmt(champion_diff['mean'])} ({confidence:.0%} CI {_fmt(champion_diff['low'])} to {_fmt(champion_diff['high'])})"
        reasons.append(
            f"{metric_label} is non-inferior to the champion: candidate − champion = {interval}; the lower bound is above −{_fmt(margin)}."
            if ok
            else f"{metric_label} may be worse than the champion's: candidate − champion = {interval}; the lower bound is not above −{_fmt(margin)}."
        )
    passed = all(check.passed for check in items)
    failed = [check.name for check in items if not check.passed]
    reasons.insert(0, "The candidate passes the gate." if passed else f"The candidate fails the gate ({', '.join(failed)}).")
    return GateDecision(passed=passed, reasons=reasons, checks=items)
