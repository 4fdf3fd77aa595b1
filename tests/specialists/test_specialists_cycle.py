"""The improvement cycle's registration gate: a specialist below the minimum, or not above its untrained
base, is trained and evaluated but never registered."""

from __future__ import annotations

from typing import Any

import pytest

from worldagent.config import SpecialistsParams, parse_params
from worldagent.specialists.cycle import improve_agent


class FakeService:
    """The service operations improve_agent calls, with a fixed evaluation."""

    def __init__(self, specialists: SpecialistsParams, metrics: dict[str, Any]) -> None:
        self.specialists, self.metrics = specialists, metrics
        self.registered: list[str] = []

    def generate_training_data(self, job_id: int) -> dict[str, Any]:
        return {"datasetRef": f"data/job-{job_id}/sft.jsonl"}

    def trigger_training(self, job_id: int, *, datasetRef: str) -> dict[str, Any]:
        return {"id": "run-1", "status": "pending"}

    def get_training_status(self, run_id: str) -> dict[str, Any]:
        return {"id": run_id, "status": "completed", "outputModelRef": "data/adapters/run-1"}

    def evaluate_model(self, *, modelRef: str, jobId: int) -> dict[str, Any]:
        return {"modelRef": modelRef, "jobId": jobId, **self.metrics}

    def register_trained_model(self, *, outputModelRef: str, name: str, jobId: int) -> dict[str, Any]:
        self.registered.append(outputModelRef)
        return {"family": "specialist-a", "version": len(self.registered)}


JOB = {"id": 1, "name": "shop", "scopeId": "agent-a"}
PRETRAINED = parse_params({"specialists": {"min_action_accuracy": 0.8}}).specialists


@pytest.mark.parametrize(
    ("accuracy", "base", "registered", "why"),
    [
        (0.9, 0.1, True, "0.900 is above the untrained base's 0.100"),
        (0.7, 0.1, False, "0.700 is below the minimum 0.800"),
        (0.85, 0.85, False, "0.850 is not above the untrained base's 0.850"),
        (0.9, None, False, "cannot beat the base"),  # the base's own score is missing
    ],
)
def test_registration_needs_the_minimum_and_beating_the_base(
    accuracy: float, base: float | None, registered: bool, why: str
) -> None:
    metrics = {"n": 60, "action_accuracy": accuracy, "base_action_accuracy": base, "examples": [], "feedback": {}}
    service = FakeService(PRETRAINED, metrics)
    result = improve_agent(service, JOB, timeout_s=1, poll_s=0)  # type: ignore[arg-type]
    assert result["status"] == "completed" and result["registered"] is registered
    assert service.registered == (["data/adapters/run-1"] if registered else [])
    assert result["metrics"]["action_accuracy"] == accuracy and "examples" not in result["metrics"]
    assert result["gate"] is registered and why in result["reason"]


def test_the_reason_names_both_failures() -> None:
    service = FakeService(PRETRAINED, {"action_accuracy": 0.2, "base_action_accuracy": 0.3})
    result = improve_agent(service, JOB, timeout_s=1, poll_s=0)  # type: ignore[arg-type]
    assert not result["registered"]
    assert "0.200 is below the minimum 0.800" in result["reason"]
    assert "0.200 is not above the untrained base's 0.300" in result["reason"]
