from __future__ import annotations

from pathlib import Path

import pytest

from worldagent.intervention.importer import export_logs, import_logs, read_reference_logs
from worldagent.intervention.recorder import Recorder
from worldagent.intervention.store import StoreError, load_tasks, open_store

PAGE = {
    "url": "https://shop.example/p",
    "title": "P",
    "state": {
        "scroll_y": 10,
        "scroll_height": 2000,
        "viewport_width": 1280,
        "viewport_height": 800,
        "interactive_elements": 12,
        "accessibility_summary": 'button "Buy"',
    },
}


def record_two(store_url: str, tmp_path: Path) -> Recorder:
    rec = Recorder(open_store(store_url), tmp_path / "shots")
    a = rec.start_task("buy a lamp", "https://shop.example", "ecommerce", session_id="a", max_steps=10)
    rec.record_step(a, "click", "#search", True, PAGE, None, "a/0.png")
    rec.record_step(a, "click", "#buy", False, PAGE)
    rec.record_intervention(a, 1, "captcha")
    rec.finish(a, "intervention")
    b = rec.start_task("read about Lisbon", "https://wiki.example", "information", session_id="b")
    rec.record_step(b, "navigate", "https://wiki.example/Lisbon", True, PAGE)
    rec.finish(b, "complete")
    return rec


def test_recorder_writes_tasks_steps_and_interventions(db_url: str, tmp_path: Path) -> None:
    rec = record_two(db_url, tmp_path)  # SQLite and a real PostgreSQL server (tests/conftest.py)
    stats = rec.store.stats()
    assert stats["tasks"] == 2 and stats["steps"] == 3
    assert stats["by_status"] == {"complete": 1, "intervention": 1}
    assert stats["interventions_by_reason"] == {"captcha": 1}
    tasks = load_tasks(rec.store)
    assert [t["session_id"] for t in tasks] == ["a", "b"]
    assert tasks[0]["steps"][1]["success"] is False and tasks[0]["steps"][0]["page_before"]["state"]["scroll_y"] == 10


def test_recorder_rejects_bad_calls(tmp_path: Path) -> None:
    rec = Recorder(open_store(f"sqlite:///{tmp_path / 'x.db'}"))
    with pytest.raises(StoreError, match="unknown session"):
        rec.record_step("nope", "click")
    sid = rec.start_task("g", "https://x", session_id="s")
    with pytest.raises(StoreError, match="already exists"):
        rec.start_task("g", "https://x", session_id="s")
    with pytest.raises(StoreError, match="unknown reason"):
        rec.record_intervention(sid, 0, "bored")
    with pytest.raises(StoreError, match="none was recorded"):
        rec.finish(sid, "intervention")
    rec.finish(sid, "failed")
    with pytest.raises(StoreError, match="already finished"):
        rec.record_step(sid, "click")


def test_missing_or_foreign_database_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not found"):
        open_store(f"sqlite:///{tmp_path / 'missing.db'}", create=False)
    import sqlite3

    sqlite3.connect(tmp_path / "other.db").execute("create table t (x)").connection.commit()
    with pytest.raises(StoreError, match="no 'tasks' table"):
        open_store(f"sqlite:///{tmp_path / 'other.db'}", create=False)


def test_export_then_import_round_trips(tmp_path: Path) -> None:
    rec = record_two(f"sqlite:///{tmp_path / 'a.db'}", tmp_path)
    manifest = export_logs(rec.store, tmp_path / "logs")
    assert manifest["counts"] == {"interventions": 1, "successes": 1, "tasks": 2}
    other = open_store(f"sqlite:///{tmp_path / 'b.db'}")
    report = import_logs(other, tmp_path / "logs")
    assert report["added"] == 2
    again = import_logs(other, tmp_path / "logs")
    assert again["added"] == 0 and again["skipped_existing"] == 2
    a, b = load_tasks(other)
    assert a["status"] == "intervention" and a["interventions"][0]["reason"] == "captcha"
    assert [s["action"] for s in a["steps"]] == ["click", "click"]
    assert a["steps"][-1]["page_before"]["state"]["interactive_elements"] == 12
    assert b["status"] == "complete" and len(b["steps"]) == 1


def test_importer_reads_the_fields_nested_under_state(tmp_path: Path) -> None:
    import json

    logs = tmp_path / "ref"
    logs.mkdir()
    (logs / "interventions.json").write_text(
        json.dumps(
            [
                {
                    "session_id": "s1",
                    "step": 7,
                    "total_steps": 8,
                    "reason": "agent_stuck",
                    "goal": "g",
                    "start_url": "https://x",
                    "page_state": {
                        "url": "https://x/a",
                        "title": "A",
                        "state": {
                            "scroll_y": 300,
                            "scroll_height": 1200,
                            "viewport_width": 1000,
                            "viewport_height": 700,
                            "interactive_elements": 33,
                            "accessibility_summary": "s",
                        },
                    },
                    "actions_before": [{"action": "click", "target": "#a", "success": True}, "click #a"],
                    "screenshot_path": "shots/s1.png",
                },
                {
                    "session_id": "s2",
                    "step": 2,
                    "total_steps": 3,
                    "reason": "something_new",
                    "goal": "g",
                    "start_url": "https://x",
                    "page_state": {"url": "https://x/b", "scroll_y": 5, "interactive_elements": 4},
                    "actions_before": [{"action": "type", "target": "#q"}],
                },
            ]
        )
    )
    (logs / "successes.json").write_text(
        json.dumps([{"session_id": "s3", "goal": "g", "start_url": "https://x", "total_steps": 4}])
    )
    (logs / "manifest.json").write_text(json.dumps({"counts": {"interventions": 2, "successes": 1}}))
    tasks, report = read_reference_logs(logs)
    s1, s2, s3 = tasks
    assert s1["steps"][-1]["page_before"]["state"]["interactive_elements"] == 33
    assert s1["steps"][-1]["screenshot_path"] == str(logs / "shots/s1.png")
    assert s1["steps"][1]["target"] == "#a"
    assert s2["steps"][-1]["page_before"]["state"] == {"scroll_y": 5, "interactive_elements": 4}
    assert s2["interventions"][0]["reason"] == "other"
    fb = report["fallbacks"]
    assert fb["flat_page_states"] == 1 and fb["unknown_reason.something_new"] == 1
    assert (
        fb["missing_field.scroll_height"] == 1
        and fb["screenshot_files_not_found"] == 1
        and fb["successes_without_steps"] == 1
    )
    assert s3["status"] == "complete" and s3["steps"] == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON"),
        ('[{"step": 1}]', "'session_id' is missing"),
        ('[{"session_id": "x"}]', "'step' is missing"),
        ('"x"', "expected a JSON list"),
    ],
)
def test_importer_names_the_file_and_entry_on_bad_logs(tmp_path: Path, content: str, message: str) -> None:
    from worldagent.intervention.importer import ImportError_

    (tmp_path / "interventions.json").write_text(content)
    (tmp_path / "successes.json").write_text("[]")
    with pytest.raises(ImportError_, match=message) as info:
        read_reference_logs(tmp_path)
    assert "interventions.json" in str(info.value)


def test_a_corrupt_experience_store_is_one_clear_line(tmp_path: Path) -> None:
    from worldagent.registry.db import CorruptDatabaseError

    db = tmp_path / "experience.db"
    db.write_bytes(b"not sqlite" * 500)
    for create in (True, False):
        with pytest.raises(CorruptDatabaseError, match="experience store is not a readable SQLite database"):
            open_store(f"sqlite:///{db}", create=create)
