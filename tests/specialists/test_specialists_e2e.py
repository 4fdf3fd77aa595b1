"""End to end on loopback: the trainer and the specialists service as real servers, real short fine-tunes.

- e2e: job → 2 good + 1 bad browser decisions, generic rows and recorded actions → generate data →
  trigger → poll until completed → adapter files load with peft → register → list → evaluate; then
  one improvement cycle (the flow's logic) trains, evaluates and registers a second version.
- fault: a worker killed mid-run fails its run with the reason; the trainer killed mid-run → after its
  restart that run is failed with the reason, earlier runs still answer, and a run triggered while it
  was down (recorded pending) is resubmitted.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from specialists_helpers import Server, browser_input, free_port, wait_until, write_params

from worldagent.specialists.client import SpecialistsClient, SpecialistsError

pytestmark = pytest.mark.slow
AGENT = "agent-1"
CLICK_BUY = {"action": "click", "selectorOrRef": "[ref=e1]", "value": None}
FILL_SEARCH = {"action": "fill", "selectorOrRef": "[ref=s1]", "value": "running shoes"}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, tiny_base: Path) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("project")
    (root / "data").mkdir()
    trainer_port, service_port = free_port(), free_port()
    params = write_params(
        root / "params.yaml", tiny_base, root / "feedback.db", root / "registry.db", f"http://127.0.0.1:{trainer_port}"
    )
    trainer = Server(
        ["trainer", "serve", "--data-dir", str(root / "data"), "--params", str(params)],
        root,
        trainer_port,
        root / "trainer.log",
    ).start()
    service = Server(
        ["specialists", "serve", "--params", str(params), "--root", str(root)], root, service_port, root / "service.log"
    ).start()
    client = SpecialistsClient(service.url)
    state: dict[str, Any] = {
        "root": root,
        "params": params,
        "trainer": trainer,
        "service": service,
        "client": client,
        "completed": [],
    }
    yield state
    client.close()
    service.stop()
    trainer.stop()


def _trainer_status(env: dict[str, Any], run_id: str) -> dict[str, Any]:
    return httpx.get(f"{env['trainer'].url}/status/{run_id}", timeout=5).json()


def test_feedback_to_registered_specialist(
    env: dict[str, Any], tiny_base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client: SpecialistsClient = env["client"]
    job = client.create_improvement_job(name="shop", scopeType="agent", scopeId=AGENT)
    search = browser_input("Search for running shoes", "e1")
    client.create_feedback(
        targetType="agent", targetId=AGENT, executionId="x1", input=search, output=FILL_SEARCH, label="good"
    )
    client.create_feedback(
        targetType="agent",
        targetId=AGENT,
        executionId="x1",
        input=json.dumps(search),
        output=json.dumps(CLICK_BUY),
        label="bad",
        notes="clicked buy before searching",
    )
    client.create_feedback(
        targetType="agent",
        targetId=AGENT,
        executionId="x2",
        input=browser_input("Buy the shoes", "e1"),
        output=CLICK_BUY,
        label="good",
    )
    for i in range(3):  # generic (non-browser) rows
        client.create_feedback(
            targetType="agent",
            targetId=AGENT,
            input={"question": f"status of order {i}?"},
            output={"answer": f"order {i} shipped"},
            label="good",
        )
    recorded = client.record_browser_actions(
        targetId=AGENT,
        task="Open the cart",
        actions=[
            {"pageSnapshot": '- link "Cart" [ref=c1]', "action": "click", "selectorOrRef": "[ref=c1]"},
            {
                "pageSnapshot": '- link "Checkout" [ref=c2]',
                "action": "navigate",
                "selectorOrRef": "[ref=c2]",
                "value": "/checkout",
            },
        ],
    )
    assert [row["label"] for row in recorded["feedback"]] == ["good", "good"]
    assert recorded["feedback"][1]["input"]["previousActions"] == [
        {"action": "click", "selectorOrRef": "[ref=c1]", "value": None}
    ]
    rows = client.list_feedback(targetId=AGENT)
    assert len(rows) == 8 and rows[0]["id"] > rows[-1]["id"]  # newest first
    assert (
        rows[-2]["input"] == search and rows[-2]["output"] == CLICK_BUY
    )  # the JSON-encoded strings read back as values
    with pytest.raises(SpecialistsError) as bad:
        client.create_feedback(targetType="agent", targetId=AGENT, input={}, output={}, label="maybe")
    assert bad.value.status == 400 and "label" in bad.value.detail

    data = client.generate_training_data(job["id"])
    assert data["counts"] == {"sft": 7 + 8, "preferences": 1, "raw": 8, "embedded": 8}  # + browser_set.train
    assert Path(data["datasetRef"]).is_file()
    with pytest.raises(SpecialistsError, match="not implemented"):
        client.generate_training_data(job["id"], strategy="from_screenshots")

    run = client.trigger_training(job["id"], datasetRef=data["datasetRef"])
    assert run["status"] == "pending" and run["error"] is None
    run = client.wait_for_training(run["id"], timeout=150)
    assert run["status"] == "completed", run
    adapter = Path(run["outputModelRef"])
    assert (
        adapter.is_relative_to(env["root"] / "data")
        and (adapter / "adapter_model.safetensors").is_file()
        and (adapter / "adapter_config.json").is_file()
    )
    assert _trainer_status(env, run["id"])["status"] == "completed"
    env["completed"].append(run["id"])

    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_base), str(adapter))
    assert any("lora_A" in name for name, _ in model.named_parameters())

    registered = client.register_trained_model(outputModelRef=str(adapter), name="shop-v1", jobId=job["id"])
    assert registered["family"] == f"specialist-{AGENT}" and registered["version"] == 1
    assert client.get_improvement_job(job["id"])["currentModelRef"] == str(adapter)
    assert client.get_improvement_job(job["id"])["lastTrainedAt"] is not None
    models = client.list_specialist_models(AGENT)
    assert [(m["name"], m["version"], m["status"]) for m in models] == [("shop-v1", 1, "registered")]
    assert client.list_specialist_models("nobody") == []
    with pytest.raises(SpecialistsError) as missing:
        client.register_trained_model(outputModelRef=str(env["root"] / "data"), name="x", jobId=job["id"])
    assert missing.value.status == 400 and "outputModelRef" in missing.value.detail

    metrics = client.evaluate_model(modelRef=str(adapter), jobId=job["id"], rows="all")
    assert metrics["n"] == 6  # the embedded held-out decisions (specialists.browser_set.heldout)
    assert 0.0 <= metrics["action_accuracy"] <= 1.0 and 0.0 <= metrics["base_action_accuracy"] <= 1.0
    assert metrics["base_model"] == str(tiny_base)
    feedback = metrics["feedback"]
    assert feedback["n"] == 4  # the good browser decisions (2 posted + 2 recorded)
    assert 0.0 <= feedback["action_accuracy"] <= 1.0 and 0.0 <= feedback["parse_rate"] <= 1.0
    assert len(feedback["examples"]) == 4

    from worldagent.cli import main

    assert main(["specialists", "list-models", AGENT, "--url", env["service"].url]) == 0
    assert json.loads(capsys.readouterr().out)[0]["family"] == f"specialist-{AGENT}"

    # The flow's cycle: enough new feedback since the last training → data → train → evaluate → gate → register.
    from worldagent.config import load_params
    from worldagent.specialists.cycle import agents_due, improve_agent
    from worldagent.specialists.service import SpecialistsService

    client.create_feedback(
        targetType="agent", targetId=AGENT, input=browser_input("Buy again", "e1"), output=CLICK_BUY, label="good"
    )
    service = SpecialistsService.from_params(load_params(env["params"]), root=env["root"])
    try:
        due = agents_due(service, min_new_feedback=1)
        assert [j["scopeId"] for j in due] == [AGENT]
        result = improve_agent(service, due[0], timeout_s=150, poll_s=0.5)
    finally:
        service.close()
    assert result["status"] == "completed" and result["registered"] and result["version"] == 2, result
    env["completed"].append(result["runId"])
    assert [m["version"] for m in client.list_specialist_models(AGENT)] == [1, 2]


def test_killed_worker_fails_and_restart_keeps_state(env: dict[str, Any]) -> None:
    client: SpecialistsClient = env["client"]
    job = client.create_improvement_job(name="fault", scopeType="agent", scopeId="agent-2")
    for i in range(4):
        client.create_feedback(
            targetType="agent",
            targetId="agent-2",
            input=browser_input(f"task {i}", f"e{i}"),
            output=CLICK_BUY,
            label="good",
        )
    data = client.generate_training_data(job["id"])
    run = client.trigger_training(job["id"], datasetRef=data["datasetRef"])
    pid = wait_until(lambda: _trainer_status(env, run["id"]).get("worker_pid"), 30, what="the worker to start")
    os.kill(pid, signal.SIGKILL)
    failed = client.wait_for_training(run["id"], timeout=30)
    assert failed["status"] == "failed" and "killed by signal SIGKILL" in failed["error"]

    # The trainer service dies (SIGKILL) while a run is running: after the restart that run is failed with the reason.
    trainer: Server = env["trainer"]
    running = client.trigger_training(job["id"], datasetRef=data["datasetRef"])
    wait_until(
        lambda: _trainer_status(env, running["id"]).get("status") == "running",
        30,
        interval=0.05,
        what="the run to start",
    )
    trainer.stop(signal.SIGKILL)
    pending = client.trigger_training(job["id"], datasetRef=data["datasetRef"])
    assert pending["status"] == "pending" and "unreachable" in pending["error"]
    assert client.get_training_status(pending["id"])["status"] == "pending"
    trainer.start()
    for run_id in env["completed"]:
        assert _trainer_status(env, run_id)["status"] == "completed"
        assert client.get_training_status(run_id)["status"] == "completed"
    assert _trainer_status(env, run["id"])["status"] == "failed"
    orphan = client.get_training_status(running["id"])
    assert orphan["status"] == "failed" and "stopped while this run was running" in orphan["error"]
    resubmitted = client.get_training_status(pending["id"])  # the trainer never saw it: submitted again
    assert resubmitted["status"] in ("pending", "running") and resubmitted["error"] is None
    assert _trainer_status(env, pending["id"])["status"] in ("pending", "running", "completed")
