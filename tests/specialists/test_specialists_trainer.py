"""The trainer service's contract without training: validation, state machine, concurrency, restarts."""

from __future__ import annotations

import json
import os
import signal
import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from specialists_helpers import raw_export_rows, wait_until

from worldagent.specialists.trainer import RunState, Supervisor, TrainerConfig, create_trainer_app


def make_config(tmp_path: Path, **kwargs) -> TrainerConfig:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "raw.jsonl").write_text("".join(json.dumps(r) + "\n" for r in raw_export_rows(10)), encoding="utf-8")
    return TrainerConfig(data_dirs=[data], **kwargs)


def test_train_validation_status_codes(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    (tmp_path / "outside.jsonl").write_text((config.data_dirs[0] / "raw.jsonl").read_text())
    (config.data_dirs[0] / "empty.jsonl").write_text("")
    with TestClient(create_trainer_app(config, supervise=False)) as client:
        ok = {"jobId": "job-1", "datasetRef": str(config.data_dirs[0] / "raw.jsonl"), "runId": "run-1"}
        missing = client.post("/train", json={"jobId": "job-1"})
        assert (
            missing.status_code == 400
            and "datasetRef: missing field" in missing.json()["detail"]
            and "runId" in missing.json()["detail"]
        )
        outside = client.post("/train", json={**ok, "datasetRef": str(tmp_path / "outside.jsonl")})
        assert outside.status_code == 400 and "outside the allowed data directories" in outside.json()["detail"]
        escape = client.post("/train", json={**ok, "datasetRef": str(config.data_dirs[0] / ".." / "outside.jsonl")})
        assert escape.status_code == 400
        assert (
            client.post("/train", json={**ok, "datasetRef": str(config.data_dirs[0] / "nope.jsonl")}).status_code == 400
        )
        assert (
            "empty"
            in client.post("/train", json={**ok, "datasetRef": str(config.data_dirs[0] / "empty.jsonl")}).json()[
                "detail"
            ]
        )
        assert client.post("/train", json={**ok, "runId": "../evil"}).status_code == 400
        assert (
            client.post("/train", content=b"not json", headers={"content-type": "application/json"}).status_code == 400
        )
        accepted = client.post("/train", json=ok)
        assert accepted.status_code == 202 and accepted.json() == {"runId": "run-1", "status": "pending"}
        assert client.post("/train", json=ok).status_code == 409
        status = client.get("/status/run-1").json()
        assert (
            status["status"] == "pending"
            and status["output_model_ref"] is None
            and status["error"] is None
            and status["rows"] == 9
        )
        assert client.get("/status/unknown").status_code == 404
        assert client.get("/health").json()["pending"] == 1


def test_bearer_token(tmp_path: Path) -> None:
    with TestClient(create_trainer_app(make_config(tmp_path, token="s3cret"), supervise=False)) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/status/x").status_code == 401
        assert client.get("/status/x", headers={"Authorization": "Bearer s3cret"}).status_code == 404


def test_runs_left_running_by_a_dead_service_are_failed_on_startup(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    state = RunState(str(config.db_url))
    state.create("done", "j", "d", 1)
    state.create("orphan", "j", "d", 1)
    state.create("waiting", "j", "d", 1)
    assert state.claim_pending(2) == ["done", "orphan"]
    state.finish("done", "completed", output_model_ref="/x")
    state.close()
    with TestClient(create_trainer_app(config, supervise=False)) as client:
        orphan = client.get("/status/orphan").json()
        assert orphan["status"] == "failed" and "stopped while this run was running" in orphan["error"]
        assert client.get("/status/done").json()["status"] == "completed"
        assert client.get("/status/waiting").json()["status"] == "pending"  # resumed by the supervisor


def test_concurrency_limit_killed_worker_and_shutdown(tmp_path: Path) -> None:
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    config = make_config(tmp_path, python=str(fake), max_concurrent=1)
    state = RunState(str(config.db_url))
    for run in ("a", "b"):
        state.create(run, "j", "d", 1)
    supervisor = Supervisor(config, state)
    try:
        supervisor.tick()
        assert state.get("a")["status"] == "running" and state.get("b")["status"] == "pending"
        pid = state.get("a")["worker_pid"]
        os.kill(pid, signal.SIGKILL)
        wait_until(
            lambda: (supervisor.tick(), state.get("a")["status"] == "failed")[1], 10, what="the killed run to fail"
        )
        assert "killed by signal SIGKILL" in state.get("a")["error"]
        assert state.get("b")["status"] == "running"
    finally:
        supervisor.stop()
    assert state.get("b")["status"] == "failed" and "shut down" in state.get("b")["error"]
    state.close()


def test_missing_base_names_the_fix(tmp_path: Path) -> None:
    from specialists_helpers import tiny_base_settings

    from worldagent.specialists.modeling import SpecialistBaseUnavailable, resolve_base

    with pytest.raises(SpecialistBaseUnavailable, match="dvc repro base"):
        resolve_base(str(tmp_path / "somewhere"), *tiny_base_settings(), tmp_path / "cache")
