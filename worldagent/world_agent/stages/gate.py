"""gate: the shared gate (:mod:`worldagent.evaluation.gate`) with the world agent's rules
(:data:`worldagent.evaluation.family.WORLD_AGENT`) → gate.json (with the candidate's content hash)
and report.md."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from worldagent.config import GateParams, Params
from worldagent.errors import InputError
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.evaluation.family import WORLD_AGENT, above_nearest_check, gate_decision, world_agent_rules
from worldagent.evaluation.gate import GateDecision, gate_payload
from worldagent.evaluation.metrics import EvalReport
from worldagent.evaluation.report import write_report
from worldagent.io import atomic_write_text, pretty_json, read_json

log = logging.getLogger("worldagent.evaluation")


def gate_stage(
    params: Params, *, summary: Path, intents: Path, comparison: Path, candidate: Path, report: Path, decision: Path
) -> GateDecision:
    """The shared gate with the world agent's rules → ``decision`` (gate.json, recording the content
    hash of the ``candidate`` adapter directory, the one deploy may publish) and ``report`` (report.md).

    ``candidate`` is the adapter of the stage compare.json names (a fixed ``compare.candidate``); with
    ``compare.candidate: best`` use :func:`gate_best_stage`, which is given every trained stage's adapter.
    """
    evaluation = read_eval_report(summary, intents)
    compared = read_json(comparison, "the comparison", hint="run the compare stage first", expect=dict)
    name = str(compared.get("candidate") or params.compare.candidate)
    return _gate(params.gate, params.registry.family, summary, evaluation, compared, name, candidate, report, decision)


def gate_best_stage(
    params: Params,
    *,
    summary: Path,
    intents: Path,
    comparison: Path,
    sft: Path,
    experience: Path,
    dpo: Path,
    grpo: Path,
    sft_metrics: Path,
    experience_metrics: Path,
    dpo_metrics: Path,
    grpo_metrics: Path,
    report: Path,
    decision: Path,
) -> GateDecision:
    """:func:`gate_stage` for whichever trained stage compare.json names (chosen by ``compare.candidate:
    best``, or named by it): gate.json records that stage (``candidate``), its adapter path
    (``artifact_path``, as given here) and its content hash, which deploy publishes. The training
    stages' metrics give report.md its training section (GRPO's signal, or why it did not train)."""
    evaluation = read_eval_report(summary, intents)
    compared = read_json(comparison, "the comparison", hint="run the compare stage first", expect=dict)
    name = str(compared.get("candidate") or "")
    adapters = {"sft": sft, "experience": experience, "dpo": dpo, "grpo": grpo}
    if name not in adapters:
        raise InputError(f"{comparison}: the candidate {name!r} is not a trained stage ({', '.join(adapters)})")
    metrics = {"sft": sft_metrics, "experience": experience_metrics, "dpo": dpo_metrics, "grpo": grpo_metrics}
    training = {
        stage: read_json(path, f"the {stage} metrics", hint=f"run the {stage} stage first", expect=dict)
        for stage, path in metrics.items()
    }
    return _gate(
        params.gate,
        params.registry.family,
        summary,
        evaluation,
        compared,
        name,
        adapters[name],
        report,
        decision,
        training,
    )


def _gate(
    gate: GateParams,
    family: str,
    summary: Path,
    evaluation: EvalReport,
    compared: dict[str, Any],
    name: str,
    candidate: Path,
    report: Path,
    decision: Path,
    training: dict[str, dict[str, Any]] | None = None,
) -> GateDecision:
    if name not in evaluation.models:
        raise InputError(f"{summary}: the candidate {name!r} was not evaluated")
    """The gate's decision for the candidate ``name`` → ``decision`` (for the registry ``family``) and ``report``."""
    extra = [above_nearest_check(compared, name)] if gate.above_nearest else []
    metrics = evaluation.models[name].metrics.model_dump()
    outcome = gate_decision(WORLD_AGENT, world_agent_rules(gate), metrics, compared, extra)
    atomic_write_text(
        decision, pretty_json(gate_payload(outcome, family=family, candidate=name, artifact_dir=candidate))
    )
    write_report(report, evaluation, compared, outcome, name, training)
    log.info("gate %s for %s", "PASSED" if outcome.passed else "FAILED", name)
    for reason in outcome.reasons:
        log.info("  %s", reason)
    return outcome
