"""Python client for the specialists API: one method per operation id (``httpx``, synchronous).

client = SpecialistsClient("http://127.0.0.1:8766")
job = client.create_improvement_job(name="checkout", scopeType="agent", scopeId="agent-1")
client.create_feedback(targetType="agent", targetId="agent-1", input={...}, output={...}, label="good")
data = client.generate_training_data(job["id"])
run = client.trigger_training(job["id"], datasetRef=data["datasetRef"])
run = client.wait_for_training(run["id"])
client.register_trained_model(outputModelRef=run["outputModelRef"], name="v1", jobId=job["id"])
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from worldagent.errors import RunError


class SpecialistsError(RunError):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


class SpecialistsClient:
    def __init__(self, base_url: str, timeout: float = 120.0, transport: Any = None, token: str | None = None) -> None:
        """``token``: the service's bearer token, when it was started with one."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport, headers=headers)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> SpecialistsClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            raise SpecialistsError(response.status_code, str(detail))
        return response.json()

    @staticmethod
    def _clean(values: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in values.items() if v is not None}

    def create_feedback(
        self,
        *,
        targetType: str,
        targetId: str,
        input: Any,
        output: Any,
        label: str,
        executionId: str | None = None,
        notes: str | None = None,
    ) -> dict[str, Any]:
        body = {
            "targetType": targetType,
            "targetId": targetId,
            "input": input,
            "output": output,
            "label": label,
            **self._clean({"executionId": executionId, "notes": notes}),
        }
        return self._call("POST", "/feedback", json=body)

    def list_feedback(
        self,
        *,
        targetId: str | None = None,
        targetType: str | None = None,
        label: str | None = None,
        since: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        return self._call(
            "GET",
            "/feedback",
            params=self._clean(
                {"targetId": targetId, "targetType": targetType, "label": label, "since": since, "limit": limit}
            ),
        )

    def record_browser_actions(
        self,
        *,
        targetId: str,
        task: str,
        actions: list[dict[str, Any]],
        targetType: str = "agent",
        executionId: str | None = None,
    ) -> dict[str, Any]:
        return self._call(
            "POST",
            "/feedback/record",
            json={
                "targetId": targetId,
                "task": task,
                "actions": actions,
                "targetType": targetType,
                **self._clean({"executionId": executionId}),
            },
        )

    def create_execution(
        self, *, id: str, targetId: str, task: str, steps: list[dict[str, Any]], targetType: str = "agent"
    ) -> dict[str, Any]:
        return self._call(
            "POST",
            "/executions",
            json={"id": id, "targetId": targetId, "task": task, "steps": steps, "targetType": targetType},
        )

    def create_improvement_job(
        self, *, name: str, scopeType: str, scopeId: str, strategy: str = "from_feedback", **extra: Any
    ) -> dict[str, Any]:
        return self._call(
            "POST",
            "/jobs",
            json={"name": name, "scopeType": scopeType, "scopeId": scopeId, "strategy": strategy, **extra},
        )

    def get_improvement_job(self, job_id: int) -> dict[str, Any]:
        return self._call("GET", f"/jobs/{job_id}")

    def update_improvement_job(self, job_id: int, **changes: Any) -> dict[str, Any]:
        return self._call("PATCH", f"/jobs/{job_id}", json=changes)

    def list_improvement_jobs(self, scopeType: str | None = None) -> list[dict[str, Any]]:
        return self._call("GET", "/jobs", params=self._clean({"scopeType": scopeType}))

    def generate_training_data(
        self, job_id: int, *, strategy: str | None = None, since: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        return self._call(
            "POST",
            f"/jobs/{job_id}/training-data",
            json=self._clean({"strategy": strategy, "since": since, "limit": limit}),
        )

    def trigger_training(self, job_id: int, *, datasetRef: str) -> dict[str, Any]:
        return self._call("POST", f"/jobs/{job_id}/training-runs", json={"datasetRef": datasetRef})

    def get_training_status(self, run_id: str) -> dict[str, Any]:
        return self._call("GET", f"/training-runs/{run_id}")

    def wait_for_training(self, run_id: str, timeout: float = 300.0, interval: float = 0.5) -> dict[str, Any]:
        """Poll until the run is completed or failed (bounded by ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.get_training_status(run_id)
            if run["status"] in ("completed", "failed") or time.monotonic() > deadline:
                return run
            time.sleep(interval)

    def register_trained_model(self, *, outputModelRef: str, name: str, jobId: int) -> dict[str, Any]:
        return self._call("POST", "/models", json={"outputModelRef": outputModelRef, "name": name, "jobId": jobId})

    def list_specialist_models(self, agent_id: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/agents/{agent_id}/models")

    def evaluate_model(self, *, modelRef: str, jobId: int, rows: str = "heldout") -> dict[str, Any]:
        return self._call("POST", "/models/evaluate", json={"modelRef": modelRef, "jobId": jobId, "rows": rows})
