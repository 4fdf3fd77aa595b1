"""The flows' shared machinery: alerts, and tasks built from the stage tables."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from flows import _stages
from tests.harness import dvc, run
from worldagent.pipeline.world_agent import PIPELINE


def test_alert_logs_at_error_outside_prefect(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="flows"):
        _stages.alert("gate failed: reasons")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.ERROR, "ALERT: gate failed: reasons")]


def test_alert_inside_a_prefect_run_emits_an_event_and_an_artifact(monkeypatch: pytest.MonkeyPatch) -> None:
    import prefect.events

    events: list[dict[str, Any]] = []
    artifacts: list[dict[str, Any]] = []
    monkeypatch.setattr(_stages, "_in_prefect_run", lambda: True)
    monkeypatch.setattr(prefect.events, "emit_event", lambda **kw: events.append(kw))
    monkeypatch.setattr(_stages, "create_markdown_artifact", lambda **kw: artifacts.append(kw))
    _stages.alert("v2 failed the gate")
    resource = {"prefect.resource.id": "worldagent.deploy"}
    assert events == [
        {"event": _stages.ALERT_EVENT, "resource": resource, "payload": {"message": "v2 failed the gate"}}
    ]
    assert artifacts[0]["key"] == "deploy-alert" and "v2 failed the gate" in artifacts[0]["markdown"]


def test_every_step_of_the_table_becomes_a_task_with_its_name() -> None:
    tasks = [
        _stages.stage_task(step) if step in PIPELINE.stages else _stages.side_effect_task(step)
        for step in PIPELINE.steps
    ]
    assert [t.name for t in tasks] == [step.name for step in PIPELINE.steps]
    deploy = tasks[-1]
    assert deploy.on_failure_hooks == [_stages._on_failure]
    assert {t.name: t.retries for t in tasks}["upload"] == 2


def test_a_stage_waits_for_an_input_another_stage_is_still_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DVC refuses at once a stage whose input another process is writing (its per-path lock, raised
    # inside its reproduction error): under load one family's stage met another's still running.
    from dvc.fs import LocalFileSystem
    from dvc.rwlock import rwlock

    monkeypatch.chdir(tmp_path)
    run(tmp_path, "git", "init", "-q")
    dvc(tmp_path, "init", "-q")
    write = "python -c 'import json,sys; json.dump(1, open(sys.argv[1], \"w\"))'"
    stages = {
        "a": {"cmd": f"{write} a.json", "outs": ["a.json"]},
        "c": {"cmd": f"{write} gate.json", "deps": ["a.json"], "outs": ["gate.json"]},
    }
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}))
    assert _stages.dvc_repro("a", tmp_path) == ["a"]
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.update(ran=_stages.dvc_repro("c", tmp_path, lock_wait_s=60)))
    lock_args = (str(tmp_path / ".dvc" / "tmp"), LocalFileSystem(), "another stage", [], [str(tmp_path / "a.json")])
    with rwlock(*lock_args, False):
        worker.start()
        time.sleep(3)  # c finds a.json being written, and waits
        assert worker.is_alive() and not (tmp_path / "gate.json").exists()
    worker.join(timeout=60)
    assert result == {"ran": ["c"]} and (tmp_path / "gate.json").exists()


def test_a_stage_s_cost_is_in_the_ledger_when_it_ends_so_a_stopped_run_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that fails (or is killed) after its first stages still says what they cost: each stage
    appends its own line as it ends, and the ledger folds a run's lines into one record."""
    from worldagent.errors import RunError
    from worldagent.pipeline.costs import DEFAULT_LEDGER, read_ledger

    monkeypatch.chdir(tmp_path)
    run(tmp_path, "git", "init", "-q")
    dvc(tmp_path, "init", "-q")
    stages = {
        "a": {"cmd": 'python -c \'open("a.json", "w").write("1")\'', "outs": ["a.json"]},
        "b": {"cmd": "python -c 'raise SystemExit(3)'", "deps": ["a.json"], "outs": ["b.json"]},
    }
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}))
    _stages.run_stage("a", tmp_path, "toy", "2026-12-01T00:00:00+00:00")
    with pytest.raises(RunError, match="dvc repro b failed"):  # the flow stops here: no whole record
        _stages.run_stage("b", tmp_path, "toy", "2026-12-01T00:00:00+00:00")
    (record,) = read_ledger(tmp_path / DEFAULT_LEDGER)
    assert record["complete"] is False and [(s["step"], s["ran"]) for s in record["steps"]] == [("a", True)]
    assert record["steps"][0]["seconds"] > 0
