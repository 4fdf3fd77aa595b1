"""Feedback store and training-data strategies (no model, no server)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from specialists_helpers import browser_input, raw_export_rows

from worldagent.config import Params
from worldagent.registry.db import utcnow
from worldagent.specialists.store import NotFound, StoreError, open_store
from worldagent.specialists.strategies import (
    TrainingDataError,
    conversations_from_rows,
    from_feedback,
    from_runs,
    generate_training_data,
    is_held_out,
    read_dataset_file,
)

CLICK = {"action": "click", "selectorOrRef": "[ref=e1]", "value": None}
FILL = {"action": "fill", "selectorOrRef": "[ref=s1]", "value": "shoes"}


@pytest.fixture
def store(db_url: str):  # SQLite and a real PostgreSQL server (tests/conftest.py)
    store = open_store(db_url)
    yield store
    store.close()


def test_json_values_and_json_encoded_strings_are_stored_and_read_back_the_same(store) -> None:
    value = browser_input("Buy", "e1")
    a = store.add_feedback(target_type="agent", target_id="a", input=value, output=CLICK, label="good")
    b = store.add_feedback(
        target_type="agent", target_id="a", input=json.dumps(value), output=json.dumps(CLICK), label="good"
    )
    plain = store.add_feedback(
        target_type="chat", target_id="c", input="hello {there", output="plain text", label="bad"
    )
    assert a["input"] == b["input"] == value and a["output"] == b["output"] == CLICK
    rows = {row["id"]: row for row in store.list_feedback()}
    assert rows[a["id"]]["input"] == rows[b["id"]]["input"] == value
    assert rows[plain["id"]]["input"] == "hello {there" and rows[plain["id"]]["output"] == "plain text"


def test_feedback_validation_names_the_field(store) -> None:
    with pytest.raises(StoreError, match="label"):
        store.add_feedback(target_type="agent", target_id="a", input={}, output={}, label="meh")
    with pytest.raises(StoreError, match="targetType"):
        store.add_feedback(target_type="robot", target_id="a", input={}, output={}, label="good")


def test_jobs_create_update_get_and_runs(store) -> None:
    job = store.create_job(
        name="checkout",
        scope_type="agent",
        scope_id="agent-1",
        instance_refs=["i-1"],
        architecture_spec={"base": "tiny"},
    )
    assert store.get_job(job["id"])["instanceRefs"] == ["i-1"]
    updated = store.update_job(job["id"], current_model_ref="m/1", name="checkout-2")
    assert updated["currentModelRef"] == "m/1" and updated["name"] == "checkout-2"
    with pytest.raises(NotFound):
        store.get_job(999)
    run = store.create_run(run_id="r1", job_id=job["id"], backend="local", dataset_ref="d.jsonl", config={})
    assert run["status"] == "pending"
    with pytest.raises(StoreError, match="runId"):
        store.create_run(run_id="r1", job_id=job["id"], backend="local", dataset_ref="d.jsonl", config={})
    done = store.update_run("r1", status="completed", output_model_ref="out")
    assert done["finishedAt"] is not None


def test_from_feedback_newest_first_since_and_limit(store) -> None:
    now = utcnow()
    for i in range(5):
        store.add_feedback(
            target_type="agent",
            target_id="a",
            input=browser_input(f"t{i}", "e1"),
            output=CLICK,
            label="good",
            created_at=now - timedelta(hours=5 - i),
        )
    store.add_feedback(
        target_type="agent", target_id="other", input=browser_input("x", "e1"), output=CLICK, label="good"
    )
    rows = from_feedback(store, "a", limit=3)
    assert [r["input"]["task"] for r in rows] == ["t4", "t3", "t2"]
    since = from_feedback(store, "a", since=now - timedelta(hours=2, minutes=30))
    assert [r["input"]["task"] for r in since] == ["t4", "t3"]


def test_sft_preferences_and_corrections(store, tmp_path: Path) -> None:
    job = store.create_job(name="j", scope_type="agent", scope_id="a")
    same = browser_input("Search shoes", "e1")
    store.add_feedback(target_type="agent", target_id="a", input=same, output=FILL, label="good")
    store.add_feedback(target_type="agent", target_id="a", input=same, output=CLICK, label="bad")
    other = browser_input("Open cart", "e2")
    store.add_feedback(
        target_type="agent",
        target_id="a",
        input=other,
        output=FILL,
        label="bad",
        notes='wrong: use {"action": "click", "selectorOrRef": "[ref=e2]"}',
    )
    store.add_feedback(
        target_type="agent", target_id="a", input={"question": "hi"}, output={"answer": "hello"}, label="good"
    )
    manifest = generate_training_data(store, job, tmp_path / "data")
    sft = [json.loads(line) for line in Path(manifest["files"]["sft"]).read_text().splitlines()]
    prefs = [json.loads(line) for line in Path(manifest["files"]["preferences"]).read_text().splitlines()]
    raw = [json.loads(line) for line in Path(manifest["files"]["raw"]).read_text().splitlines()]
    assert manifest["counts"] == {"sft": 3, "preferences": 2, "raw": 4, "embedded": 0}
    answers = [row["messages"][-1]["content"] for row in sft]
    assert json.loads(answers[1]) == {
        "action": "click",
        "selectorOrRef": "[ref=e2]",
        "value": None,
    }  # corrected bad row → good
    assert all(row["messages"][-1]["role"] == "assistant" for row in sft)
    pair = next(p for p in prefs if "Search shoes" in p["prompt"][-1]["content"])
    assert json.loads(pair["chosen"][0]["content"]) == FILL and json.loads(pair["rejected"][0]["content"]) == CLICK
    assert isinstance(raw[0]["input"], str) and json.loads(raw[0]["input"]) == {"question": "hi"}
    # The raw export trains like the sft file (what a trainer reads back).
    assert len(read_dataset_file(Path(manifest["files"]["raw"]))) == 3
    from datasets import load_dataset

    assert len(load_dataset("json", data_files=manifest["files"]["preferences"], split="train")) == 2


def test_the_embedded_train_split_joins_sft_but_not_the_raw_export(store, tmp_path: Path) -> None:
    from worldagent.specialists.browser_set import embedded_rows
    from worldagent.specialists.strategies import sft_rows

    job = store.create_job(name="j", scope_type="agent", scope_id="a")
    store.add_feedback(target_type="agent", target_id="a", input=browser_input("Buy", "e1"), output=CLICK, label="good")
    train, heldout = embedded_rows(Params().specialists.browser_set.model_copy(update={"train": 5, "heldout": 2}))
    manifest = generate_training_data(store, job, tmp_path / "data", extra_rows=train)
    assert manifest["counts"] == {"sft": 6, "preferences": 0, "raw": 1, "embedded": 5}
    sft = [json.loads(line) for line in Path(manifest["files"]["sft"]).read_text().splitlines()]
    assert sft[1:] == sft_rows(train)  # the job's own rows first, then the embedded ones, converted the same way
    assert len(Path(manifest["files"]["raw"]).read_text().splitlines()) == 1


def test_from_runs_slices_every_browser_decision(store) -> None:
    steps = [
        {"kind": "browser", "pageSnapshot": "page 1", "action": FILL},
        {"kind": "tool", "data": {"log": "ignored"}},
        {"kind": "browser", "pageSnapshot": "page 2", "action": CLICK},
    ]
    store.add_execution(execution_id="x1", target_type="agent", target_id="a", task="buy shoes", steps=steps)
    rows = from_runs(store, "a")
    assert [r["input"]["pageSnapshot"] for r in rows] == ["page 1", "page 2"]
    assert rows[0]["input"]["previousActions"] == [] and rows[1]["input"]["previousActions"] == [FILL]
    assert rows[1]["output"] == CLICK and rows[1]["input"]["task"] == "buy shoes"


def test_unknown_strategy_and_nothing_to_train_are_errors_not_empty_files(store, tmp_path: Path) -> None:
    job = store.create_job(name="j", scope_type="agent", scope_id="a")
    with pytest.raises(TrainingDataError, match="not implemented"):
        generate_training_data(store, job, tmp_path / "data", strategy="from_screenshots")
    with pytest.raises(TrainingDataError, match="no rows"):
        generate_training_data(store, job, tmp_path / "data")
    store.add_feedback(target_type="agent", target_id="a", input=browser_input("x", "e1"), output=CLICK, label="bad")
    with pytest.raises(TrainingDataError, match="none is labelled good"):
        generate_training_data(store, job, tmp_path / "data")
    assert not list((tmp_path / "data").rglob("*.jsonl"))


def test_raw_export_from_another_platform_reads_as_conversations() -> None:
    rows = raw_export_rows(20)
    conversations = conversations_from_rows(rows)
    assert len(conversations) == 18  # the two bad rows have no correction
    assert json.loads(conversations[0]["messages"][-1]["content"])["selectorOrRef"] == "[ref=e0]"
    with pytest.raises(TrainingDataError, match="row 1"):
        conversations_from_rows([{"something": 1}])


def test_held_out_split_is_stable() -> None:
    picked = [i for i in range(1000) if is_held_out(i, 0.2)]
    assert 150 < len(picked) < 250 and picked == [i for i in range(1000) if is_held_out(i, 0.2)]
    assert not any(is_held_out(i, 0.0) for i in range(100))


def test_params_section_defaults_and_unknown_keys() -> None:
    from worldagent.config import ParamsError, parse_params

    assert parse_params({}).specialists.trainer.host == "127.0.0.1"  # older params files still load
    with pytest.raises(ParamsError, match="specialists.trainer.prot"):
        parse_params({"specialists": {"trainer": {"prot": 1}}})


def test_registration_gate_is_the_shared_gate_and_family_names() -> None:
    from worldagent.config import parse_params
    from worldagent.specialists.cycle import registration_gate
    from worldagent.specialists.service import family_for

    def gate(metrics: dict, threshold: float, above_base: bool = False) -> bool:
        spec = {"min_action_accuracy": threshold, "above_base": above_base}
        return registration_gate(metrics, parse_params({"specialists": spec}).specialists).passed

    assert gate({"action_accuracy": 0.5, "n": 4}, 0.4) and not gate({"action_accuracy": 0.25, "n": 4}, 0.4)
    assert gate({"action_accuracy": None, "n": 0}, 0.0) and not gate({"action_accuracy": None, "n": 0}, 0.1)
    # Above the minimum is not enough: the specialist must also beat its untrained base.
    assert gate({"action_accuracy": 0.9, "base_action_accuracy": 0.5}, 0.8, above_base=True)
    assert not gate({"action_accuracy": 0.9, "base_action_accuracy": 0.9}, 0.8, above_base=True)
    assert not gate({"action_accuracy": 0.9}, 0.8, above_base=True)  # the base was not measured
    decision = registration_gate(
        {"action_accuracy": 0.25, "base_action_accuracy": 0.3},
        parse_params({"specialists": {"min_action_accuracy": 0.4}}).specialists,
    )
    assert [c.name for c in decision.checks] == ["min_action_accuracy", "above_base_action_accuracy"]
    assert "Held-out action accuracy 0.250 is below the minimum 0.400." in decision.reasons
    assert "Held-out action accuracy 0.250 is not above the untrained base's 0.300." in decision.reasons
    assert parse_params({}).specialists.min_action_accuracy == 0.8  # the pretrained base's bar
    assert family_for("specialist", "team/agent 1") == "specialist-team-agent-1"
