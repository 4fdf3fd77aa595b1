"""gate: the shared gate (:mod:`worldagent.evaluation.gate`) with the world agent's rules
(:data:`worldagent.evaluation.family.WORLD_AGENT`) → gate.json (with the candidate's content hash)
and report.md."""

from __future__ import annotations

import logging
from pathlib import Path

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.evaluation.family import WORLD_AGENT, gate_decision
from worldagent.evaluation.gate import GateDecision, gate_payload
from worldagent.evaluation.report import write_report
from worldagent.io import atomic_write_text, pretty_json, read_json

log = logging.getLogger("worldagent.evaluation")


def gate_stage(
    params: Params, *, summary: Path, intents: Path, comparison: Path, candidate: Path, report: Path, decision: Path
) -> GateDecision:
    """The shared gate with the world agent's rules → ``decision`` (gate.json, recording the content
    hash of the ``candidate`` adapter directory, the one deploy may publish) and ``report`` (report.md)."""
    evaluation = read_eval_report(summary, intents)
    compared = read_json(comparison, "the comparison", hint="run the compare stage first", expect=dict)
    name = str(compared.get("candidate") or params.compare.candidate)
    if name not in evaluation.models:
        raise InputError(f"{summary}: the candidate {name!r} was not evaluated")
    outcome = gate_decision(WORLD_AGENT, params, evaluation.models[name].metrics.model_dump(), compared)
    family = WORLD_AGENT.registry_family(params)
    atomic_write_text(
        decision, pretty_json(gate_payload(outcome, family=family, candidate=name, artifact_dir=candidate))
    )
    write_report(report, evaluation, compared, outcome, name)
    log.info("gate %s for %s", "PASSED" if outcome.passed else "FAILED", name)
    for reason in outcome.reasons:
        log.info("  %s", reason)
    return outcome
