"""intervention_gate: the shared gate with the predictor's rules → gate.json and report.md."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.evaluation.family import INTERVENTION, gate_decision, intervention_rules
from worldagent.evaluation.gate import GateCheck, gate_payload
from worldagent.intervention.stages.common import fmt
from worldagent.io import atomic_write_text, pretty_json, read_json

log = logging.getLogger("worldagent.intervention")


def beats_baseline_check(metrics: dict[str, Any]) -> tuple[GateCheck, str]:
    """F1 must exceed the logistic-regression baseline's (a baseline that could not be fitted fails)."""
    logistic = (metrics.get("baselines") or {}).get("logistic_regression")
    if logistic is None:
        return GateCheck(name="beats_logistic_f1", value=0.0, threshold=0.0, passed=False), (
            "The logistic baseline is undefined, so the predictor cannot be shown to beat it."
        )
    margin = metrics["f1"] - logistic["f1"]
    passed = margin >= 1e-9
    verb = "beats" if passed else "does not beat"
    return GateCheck(name="beats_logistic_f1", value=margin, threshold=1e-9, passed=passed), (
        f"F1 {metrics['f1']:.3f} {verb} the logistic baseline's {logistic['f1']:.3f}."
    )


def gate_stage(
    params: Params, *, metrics: Path, comparison: Path, predictor: Path, report: Path, decision: Path
) -> dict[str, Any]:
    """Thresholds (F1, ROC AUC, beating the logistic baseline) and non-inferiority to the champion on
    accuracy → ``decision`` (gate.json, with the content hash of the ``predictor`` bundle) and
    ``report`` (report.md)."""
    hint = "run the intervention_evaluate stage first"
    scores = read_json(metrics, "the evaluation metrics", hint=hint, expect=dict)
    compared = read_json(comparison, "the comparison", hint="run the intervention_compare stage first", expect=dict)
    extra = [beats_baseline_check(scores)] if params.intervention.gate.beat_baseline else []
    outcome = gate_decision(INTERVENTION, intervention_rules(params.intervention.gate), scores, compared, extra)
    family = INTERVENTION.registry_family(params)
    payload = gate_payload(outcome, family=family, candidate="predictor", artifact_dir=predictor)
    atomic_write_text(decision, pretty_json(payload))
    atomic_write_text(report, render_report(scores, compared, payload))
    log.info("gate %s", "PASSED" if outcome.passed else "FAILED")
    for reason in outcome.reasons:
        log.info("  %s", reason)
    return payload


def render_report(metrics: dict[str, Any], comparison: dict[str, Any], gate: dict[str, Any]) -> str:
    models = {"encoder + predictor": metrics, **{name: m for name, m in (metrics.get("baselines") or {}).items() if m}}
    champion = (comparison.get("comparisons") or {}).get("champion")
    if champion:
        models[f"champion v{champion['version']}"] = champion["metrics"]
    samples = metrics["samples"]
    columns = ("accuracy", "precision", "recall", "f1", "auc", "pr_auc")
    by_reason = metrics.get("recall_by_reason") or {}
    lines = [
        "# Intervention predictor: evaluation",
        "",
        f"**Gate: {'PASSED' if gate['passed'] else 'FAILED'}**",
        "",
        *[f"- {r}" for r in gate["reasons"]],
        "",
        f"Held-out test sessions: {metrics.get('test_sessions')} ({samples['total']} steps:"
        f" {samples['interventions']} before an intervention, {samples['successes']} not).",
        f"Decision threshold {metrics['threshold']:.4f}: {metrics.get('threshold_rule')}.",
        "",
        "| model | accuracy | precision | recall | F1 | ROC AUC | PR AUC |",
        "|---|---|---|---|---|---|---|",
        *[f"| {name} | " + " | ".join(fmt(m.get(c)) for c in columns) + " |" for name, m in models.items()],
        "",
        "Recall by cause: " + ", ".join(f"{k} {v['recall']:.2f} ({v['steps']})" for k, v in by_reason.items()),
        "",
        "ROC, precision-recall and confusion plots: `dvc plots show` (the DVCLive folder `evaluation/`).",
        "",
    ]
    if champion:
        d = champion["accuracy_diff"]
        lines.append(
            f"Candidate − champion accuracy on the same steps: {d['mean']:+.3f}"
            f" ({comparison['confidence']:.0%} CI {d['low']:+.3f} to {d['high']:+.3f})."
        )
    lines += [f"- {note}" for note in [*metrics.get("notes", []), *comparison.get("notes", [])]]
    return "\n".join(lines) + "\n"
