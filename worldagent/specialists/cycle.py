"""One improvement cycle per agent: enough new feedback → data → train (trainer service) → evaluate → gate → register.

Plain functions over :class:`SpecialistsService`; ``flows/specialists.py`` runs each step as a Prefect task.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from worldagent.config import SpecialistsParams
from worldagent.evaluation.family import SPECIALISTS, gate_decision, specialists_rules
from worldagent.evaluation.gate import GateCheck, GateDecision
from worldagent.specialists.service import SpecialistsService
from worldagent.specialists.store import parse_time


def agents_due(service: SpecialistsService, min_new_feedback: int | None = None) -> list[dict[str, Any]]:
    """Agent jobs with at least ``min_new_feedback`` feedback rows since they were last trained."""
    threshold = min_new_feedback or service.specialists.min_new_feedback
    due = []
    for job in service.list_improvement_jobs("agent"):
        new = service.store.count_feedback(job["scopeId"], since=parse_time(job["lastTrainedAt"], "lastTrainedAt"))
        if new >= threshold:
            due.append({**job, "newFeedback": new})
    return due


def wait_for_run(
    service: SpecialistsService,
    run_id: str,
    timeout_s: float = 600.0,
    poll_s: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Poll ``get_training_status`` until completed or failed; a run still active after ``timeout_s``
    is returned as is."""
    deadline = time.monotonic() + timeout_s
    while True:
        run = service.get_training_status(run_id)
        if run["status"] in ("completed", "failed") or time.monotonic() >= deadline:
            return run
        sleep(poll_s)


def above_base_check(metrics: Mapping[str, Any]) -> tuple[GateCheck, str]:
    """The candidate's held-out action accuracy must be strictly above the untrained base's own."""
    value, base = metrics.get("action_accuracy"), metrics.get("base_action_accuracy")
    if value is None or base is None:
        return (
            GateCheck(name="above_base_action_accuracy", value=0.0, threshold=0.0, passed=False),
            "Held-out action accuracy of the candidate or of its base is undefined, so it cannot beat the base.",
        )
    passed = value > base
    verb = "is above" if passed else "is not above"
    return (
        GateCheck(name="above_base_action_accuracy", value=float(value), threshold=float(base), passed=passed),
        f"Held-out action accuracy {value:.3f} {verb} the untrained base's {base:.3f}.",
    )


def registration_gate(metrics: Mapping[str, Any], specialists: SpecialistsParams) -> GateDecision:
    """The shared gate with the specialists' rules: held-out action accuracy (right element and action on
    the embedded browser set) at least ``specialists.min_action_accuracy`` and, with
    ``specialists.above_base``, above the untrained base's own accuracy on the same rows."""
    extra = [above_base_check(metrics)] if specialists.above_base else []
    return gate_decision(SPECIALISTS, specialists_rules(specialists), metrics, extra_checks=extra)


def improve_agent(
    service: SpecialistsService, job: Mapping[str, Any], *, timeout_s: float = 600.0, poll_s: float = 1.0
) -> dict[str, Any]:
    data = service.generate_training_data(int(job["id"]))
    run = service.trigger_training(int(job["id"]), datasetRef=data["datasetRef"])
    run = wait_for_run(service, run["id"], timeout_s, poll_s)
    result: dict[str, Any] = {
        "jobId": job["id"],
        "agentId": job["scopeId"],
        "datasetRef": data["datasetRef"],
        "runId": run["id"],
        "status": run["status"],
    }
    if run["status"] != "completed":
        return {
            **result,
            "registered": False,
            "reason": run.get("error") or f"run still {run['status']} after {timeout_s}s",
        }
    metrics = service.evaluate_model(modelRef=run["outputModelRef"], jobId=int(job["id"]))
    decision = registration_gate(metrics, service.specialists)
    reason = " ".join(decision.reasons[1:])
    result.update(
        metrics={k: v for k, v in metrics.items() if k not in ("examples", "feedback")},
        feedback_metrics={k: v for k, v in (metrics.get("feedback") or {}).items() if k != "examples"},
        gate=decision.passed,
        reason=reason,
        registered=False,
    )
    if decision.passed:
        registered = service.register_trained_model(
            outputModelRef=run["outputModelRef"], name=f"{job['name']}-{run['id']}", jobId=int(job["id"])
        )
        result.update(registered=True, family=registered["family"], version=registered["version"])
    return result
