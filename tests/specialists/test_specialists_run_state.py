"""The trainer's run state machine on SQLite and on a real PostgreSQL server (``db_url``, tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldagent.registry.db import CorruptDatabaseError
from worldagent.specialists.trainer import RunState


@pytest.fixture
def state(db_url: str):  # type: ignore[no-untyped-def]
    state = RunState(db_url)
    yield state
    state.close()


def test_pending_running_completed_failed(state: RunState) -> None:
    assert state.create("a", "job-1", "d.jsonl", 3)["status"] == "pending"  # type: ignore[index]
    assert state.create("a", "job-1", "d.jsonl", 3) is None  # the run id exists already
    state.create("b", "job-1", "d.jsonl", 2)
    state.create("c", "job-1", "d.jsonl", 1)
    assert state.claim_pending(2) == ["a", "b"]
    state.set_pid("a", 4242)
    assert state.finish("a", "completed", output_model_ref="/m/a", metrics={"loss": 0.5})
    assert not state.finish("a", "failed", error="late worker")  # terminal states stay
    assert state.get("a")["status"] == "completed" and state.get("a")["metrics"] == {"loss": 0.5}  # type: ignore[index]
    assert state.fail_orphans("the service stopped") == ["b"]
    assert "the service stopped" in state.get("b")["error"]  # type: ignore[index]
    assert state.counts() == {"pending": 1, "running": 0, "completed": 1, "failed": 1}
    assert state.get("nobody") is None


def test_state_survives_a_restart(db_url: str) -> None:
    first = RunState(db_url)
    first.create("kept", "job", "d.jsonl", 1)
    first.close()
    again = RunState(db_url)
    assert again.get("kept")["status"] == "pending"  # type: ignore[index]
    again.close()


def test_a_corrupt_run_state_file_is_one_clear_line(tmp_path: Path) -> None:
    db = tmp_path / "trainer.db"
    db.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(CorruptDatabaseError, match="trainer run state is not a readable SQLite database"):
        RunState(f"sqlite:///{db}")
