"""The one gate every model family goes through: thresholds, then non-inferiority to the champion.

A family states its rules (:class:`GateRules`): which metrics gate, each with its limit and whether
higher is better, and the one metric whose candidate − champion difference must be non-inferior:
the lower bound of its confidence interval must lie above ``-margin``. With no champion (the first
run) the gate applies the thresholds alone and says so. Every check yields a human sentence,
whether it passed or failed.

The decision is written as ``gate.json`` (:func:`gate_payload`), a small JSON object that people
read and the deploy step acts on::

    {
      "passed": true,                      # the decision
      "reasons": ["The candidate passes the gate.", "Story pass rate 0.800 meets the minimum 0.500.", ...],
      "checks": [{"name": "min_story_pass_rate", "value": 0.8, "threshold": 0.5, "passed": true}, ...],
      "family": "world-agent",             # the registry family deploy registers it in
      "candidate": "grpo",                 # which model was gated
      "artifact_path": "models/world_agent/grpo",
      "artifact_hash": "…"               # content hash of the gated artifact (worldagent.io.directory_hash)
    }

Deploy publishes only the artifact whose content hash is ``artifact_hash``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from worldagent.errors import InputError
from worldagent.io import directory_hash, read_json

FIRST_RUN = "No champion is deployed yet (first run): the gate applies the thresholds alone, without non-inferiority."


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


@dataclass(frozen=True)
class Threshold:
    """One metric's limit. ``required`` false lets a missing (undefined) value pass, with a sentence."""

    name: str  # the check's name in gate.json, e.g. "min_story_pass_rate"
    label: str  # how the sentence names the metric, e.g. "Story pass rate"
    metric: str  # the key in the candidate's metrics
    limit: float
    higher_is_better: bool = True
    unit: str = ""  # appended to the value in the sentence, e.g. " per intent"
    required: bool = True


@dataclass(frozen=True)
class NonInferiority:
    """The candidate − champion difference on ``label`` must have its CI's lower bound above ``-margin``."""

    label: str  # e.g. "Mean reward"; the check is named non_inferiority_<label in snake case>
    margin: float


@dataclass(frozen=True)
class GateRules:
    thresholds: tuple[Threshold, ...]
    non_inferiority: NonInferiority | None = None


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def threshold_check(rule: Threshold, value: float | None) -> tuple[GateCheck, str]:
    """One threshold check and its sentence; a missing value fails (unless not ``required``) and says so."""
    if value is None:
        passed = not rule.required
        outcome = "the check does not apply" if passed else f"so it cannot meet {_fmt(rule.limit)}"
        return GateCheck(
            name=rule.name, value=0.0, threshold=rule.limit, passed=passed
        ), f"{rule.label} is undefined, {outcome}."
    ok = value >= rule.limit if rule.higher_is_better else value <= rule.limit
    if rule.higher_is_better:
        verb, bound = ("meets" if ok else "is below"), "minimum"
    else:
        verb, bound = ("is within" if ok else "exceeds"), "maximum"
    sentence = f"{rule.label} {_fmt(value)}{rule.unit} {verb} the {bound} {_fmt(rule.limit)}."
    return GateCheck(name=rule.name, value=float(value), threshold=rule.limit, passed=ok), sentence


def interval_text(diff: Mapping[str, float], confidence: float) -> str:
    """A difference with its CI, as every gate sentence writes it: ``0.050 (95% CI 0.010 to 0.090)``."""
    return f"{_fmt(diff['mean'])} ({confidence:.0%} CI {_fmt(diff['low'])} to {_fmt(diff['high'])})"


def non_inferiority_check(rule: NonInferiority, diff: Mapping[str, float], confidence: float) -> tuple[GateCheck, str]:
    ok = diff["low"] > -rule.margin
    name = "non_inferiority_" + rule.label.lower().replace(" ", "_")
    interval = interval_text(diff, confidence)
    if ok:
        sentence = (
            f"{rule.label} is non-inferior to the champion: candidate − champion = {interval};"
            f" the lower bound is above −{_fmt(rule.margin)}."
        )
    else:
        sentence = (
            f"{rule.label} may be worse than the champion's: candidate − champion = {interval};"
            f" the lower bound is not above −{_fmt(rule.margin)}."
        )
    return GateCheck(name=name, value=diff["low"], threshold=-rule.margin, passed=ok), sentence


def decide(
    metrics: Mapping[str, float | None],
    rules: GateRules,
    champion_diff: Mapping[str, float] | None = None,
    confidence: float = 0.95,
    extra_checks: Sequence[tuple[GateCheck, str]] = (),
) -> GateDecision:
    """The gate: every threshold of ``rules`` on ``metrics``, any ``extra_checks`` a family adds,
    then non-inferiority on ``champion_diff`` (None: no champion yet, so thresholds alone)."""
    results = [threshold_check(rule, metrics.get(rule.metric)) for rule in rules.thresholds]
    results += list(extra_checks)
    checks = [check for check, _ in results]
    reasons = [reason for _, reason in results]
    if rules.non_inferiority is not None:
        if champion_diff is None:
            reasons.append(FIRST_RUN)
        else:
            check, reason = non_inferiority_check(rules.non_inferiority, champion_diff, confidence)
            checks.append(check)
            reasons.append(reason)
    passed = all(check.passed for check in checks)
    failed = [check.name for check in checks if not check.passed]
    reasons.insert(
        0, "The candidate passes the gate." if passed else f"The candidate fails the gate ({', '.join(failed)})."
    )
    return GateDecision(passed=passed, reasons=reasons, checks=checks)


# -- gate.json ----------------------------------------------------------------------------------


def gate_payload(
    decision: GateDecision,
    *,
    family: str,
    candidate: str,
    artifact_dir: Path,
    artifact_path: str | None = None,
) -> dict[str, Any]:
    """gate.json (see the module docstring); records the content hash of the artifact it scored."""
    artifact_hash = directory_hash(artifact_dir)
    if decision.passed and artifact_hash is None:
        raise InputError(
            f"{artifact_dir}: the candidate passed the gate but its artifact directory is missing or empty"
        )
    return {
        **decision.model_dump(mode="json"),
        "family": family,
        "candidate": candidate,
        "artifact_path": artifact_path if artifact_path is not None else str(artifact_dir),
        "artifact_hash": artifact_hash,
    }


def read_gate(path: Path, error: type[InputError] = InputError) -> dict[str, Any]:
    """gate.json, checked: a boolean ``passed`` and a list ``reasons``."""
    gate = read_json(path, "the gate decision", hint="run the gate stage first", expect=dict, error=error)
    if not isinstance(gate.get("passed"), bool):
        raise error(f"{path}: expected an object with a boolean 'passed'")
    if not isinstance(gate.get("reasons", []), list):
        raise error(f"{path}: 'reasons' must be a list of strings")
    return gate
