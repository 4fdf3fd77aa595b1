"""Each door the issue named, tried as an attacker would: a clean line, bounded, nothing outside the root."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from worldagent.errors import InputError
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.tools.callformat import ToolCall
from worldagent.world_agent.environment import MAX_CALLS_PER_ANSWER, AgentEnvironment

PROJECT = Path(__file__).resolve().parents[2]
SECRET = "TOP-SECRET-OUTSIDE-CONTENT"
OUTSIDE_STORY = f"""import {{ story }} from 'plaited/testing'
export const Leak = story({{ intent: 'x', template: () => <img src='{SECRET}' /> }})
"""
AGENT_STORY = """import { story } from 'plaited/testing'
export const Mine = story({ intent: 'mine', template: () => <p>hello</p> })
"""


def run_cli(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WORLDAGENT_TORCH_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "worldagent.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=PROJECT,
        env=env,
        input=stdin,
    )


def assert_one_line(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


# -- the agent's sandbox ------------------------------------------------------------------------


@pytest.fixture
def env(tmp_path: Path) -> AgentEnvironment:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (tmp_path / "outside").mkdir()
    return AgentEnvironment(sandbox, PythonStoryRunner(), "Mine", None)


def test_write_outside_the_sandbox_never_reports_the_outside_file(env: AgentEnvironment, tmp_path: Path) -> None:
    (tmp_path / "outside" / "x.stories.tsx").write_text(OUTSIDE_STORY)
    outcome = env.step(ToolCall("writeStory", {"path": "../outside/x.stories.tsx", "content": AGENT_STORY}))
    assert not outcome.allowed
    text = json.dumps([outcome.violations, outcome.result.to_dict()])
    assert SECRET not in text and "outside the sandbox" in text
    assert (tmp_path / "outside" / "x.stories.tsx").read_text() == OUTSIDE_STORY


def test_fifo_at_the_outside_path_does_not_hang_the_episode(env: AgentEnvironment, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "outside" / "x.stories.tsx")
    finished: list[bool] = []

    def step() -> None:
        env.step(ToolCall("writeStory", {"path": "../outside/x.stories.tsx", "content": AGENT_STORY}))
        finished.append(True)

    thread = threading.Thread(target=step, daemon=True)
    thread.start()
    thread.join(10)
    assert finished == [True], "the episode hung on a FIFO"


def test_fifo_and_symlink_inside_the_sandbox_are_refused(env: AgentEnvironment, tmp_path: Path) -> None:
    os.mkfifo(env.sandbox.root / "p.stories.tsx")
    (tmp_path / "outside" / "s.stories.tsx").write_text(OUTSIDE_STORY)
    (env.sandbox.root / "s.stories.tsx").symlink_to(tmp_path / "outside" / "s.stories.tsx")
    started = time.perf_counter()
    for path in ("p.stories.tsx", "s.stories.tsx"):
        outcome = env.step(ToolCall("runStory", {"path": path}))
        assert SECRET not in json.dumps(outcome.result.to_dict())
        assert not outcome.result.success or not outcome.allowed
    assert time.perf_counter() - started < 10


def test_tool_calls_past_the_cap_are_blocked_unrun(env: AgentEnvironment) -> None:
    calls = [ToolCall("writeTemplate", {"path": f"a/t{i}.tsx", "content": "export const A = 1\n"}) for i in range(40)]
    episode = env.run(calls)
    ran = [step for step in episode.steps if step.allowed]
    assert len(ran) == MAX_CALLS_PER_ANSWER
    assert len(episode.violations) == 40 - MAX_CALLS_PER_ANSWER
    assert not (env.sandbox.root / "a" / f"t{MAX_CALLS_PER_ANSWER}.tsx").exists()


# -- command-line doors -------------------------------------------------------------------------


def test_a11y_on_dev_zero_is_refused_unread() -> None:
    started = time.perf_counter()
    line = assert_one_line(run_cli("a11y", "/dev/zero"))
    assert "/dev/zero: is a device, not a regular file" in line
    assert time.perf_counter() - started < 30


def alias_bomb(levels: int = 12) -> str:
    text = "seed: &a [" + ", ".join(['"lol"'] * 9) + "]\n"
    previous = "a"
    for index in range(levels):
        text += f"l{index}: &l{index} [" + ", ".join([f"*{previous}"] * 9) + "]\n"
        previous = f"l{index}"
    return text


@pytest.mark.parametrize("command", [("profile", "list"), ("profile", "use", "tiny"), ("preflight",)])
def test_alias_bomb_params_is_one_line_in_every_command(tmp_path: Path, command: tuple[str, ...]) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(alias_bomb())
    started = time.perf_counter()
    extra = ["--profiles", str(PROJECT / "profiles")] if command[0] == "profile" else []
    line = assert_one_line(run_cli(*command, "--params", str(params), *extra))
    assert "alias bomb" in line and str(params) in line
    assert time.perf_counter() - started < 30
    assert params.read_text() == alias_bomb()  # nothing written


def test_load_params_refuses_a_fifo_and_a_bomb(tmp_path: Path) -> None:
    from worldagent.config import ParamsError, load_params

    os.mkfifo(tmp_path / "fifo.yaml")
    with pytest.raises(ParamsError, match="FIFO"):
        load_params(tmp_path / "fifo.yaml")
    (tmp_path / "bomb.yaml").write_text(alias_bomb())
    with pytest.raises(ParamsError, match="alias bomb"):
        load_params(tmp_path / "bomb.yaml")


# -- stories --------------------------------------------------------------------------------------


def test_lone_surrogate_intent_is_a_located_problem_and_pairs_are_text(tmp_path: Path) -> None:
    from worldagent.stories.discover import discover_stories, discovery_to_jsonl

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "a.stories.tsx").write_text(
        "import { story } from 'plaited/testing'\n"
        "export const Bad = story({ intent: 'buy \\ud800 now', template: () => <p>x</p> })\n"
        "export const Good = story({ intent: 'smile \\ud83d\\ude00', template: () => <p>y</p> })\n"
    )
    result = discover_stories([tmp_path], root=tmp_path)
    assert [r.export for r in result.stories] == ["Good"]
    assert result.stories[0].intent == "smile \U0001f600"
    assert any(p.kind == "encoding" and "lone surrogate" in p.message for p in result.problems)
    discovery_to_jsonl(result.stories).encode("utf-8")  # what the stage writes: text


# -- services -------------------------------------------------------------------------------------


def test_trainer_with_a_token_refuses_a_big_unauthenticated_body_unread(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

    app = create_trainer_app(TrainerConfig(data_dirs=[tmp_path], token="s3cret"), supervise=False)
    body = b"x" * (50 * 1024 * 1024)
    with TestClient(app) as client:
        started = time.perf_counter()
        response = client.post("/train", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 401
        assert time.perf_counter() - started < 5
        for path in ("/docs", "/openapi.json", "/redoc"):
            assert client.get(path).status_code == 401, path
        assert client.get("/openapi.json", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.get("/health").status_code == 200
        big = client.post("/train", content=b"{}" + b" " * 100_000, headers={"Authorization": "Bearer s3cret"})
        assert big.status_code == 413


def test_a_lone_surrogate_is_never_stored_and_an_old_one_never_breaks_from_runs(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from tests.guard.service_helpers import platform_service
    from worldagent.specialists.api import create_app

    service = platform_service(tmp_path)
    client = TestClient(create_app(service))
    step = {"kind": "browser", "pageSnapshot": "page", "action": {"action": "click", "selectorOrRef": "e1"}}
    bad = json.dumps({"id": "x1", "targetId": "a", "task": "t", "steps": [step]}).replace('"e1"', '"\\ud800"')
    refused = client.post("/executions", content=bad, headers={"content-type": "application/json"})
    assert refused.status_code == 400 and "lone surrogate" in refused.json()["detail"]
    assert (
        client.post("/executions", json={"id": "x2", "targetId": "a", "task": "t", "steps": [step]}).status_code == 201
    )
    job = client.post("/jobs", json={"name": "j", "scopeType": "agent", "scopeId": "a", "strategy": "from_runs"}).json()
    assert client.post(f"/jobs/{job['id']}/training-data", json={"strategy": "from_runs"}).status_code == 201
    # A row an older version stored (escaped JSON): every later request still answers.
    with sqlite3.connect(tmp_path / "feedback.db") as connection:
        connection.execute("UPDATE execution_steps SET action = ?", ('{"action": "click \\ud800"}',))
    service.close()
    service = platform_service(tmp_path)  # after a restart too
    client = TestClient(create_app(service))
    answer = client.post(f"/jobs/{job['id']}/training-data", json={"strategy": "from_runs"})
    assert answer.status_code in (201, 400), answer.text
    service.close()


def test_the_store_refuses_a_lone_surrogate_from_python_callers(tmp_path: Path) -> None:
    from worldagent.specialists.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'feedback.db'}")
    with pytest.raises(InputError, match="lone surrogate"):
        store.add_execution(
            execution_id="x",
            target_type="agent",
            target_id="a",
            task="t",
            steps=[{"kind": "browser", "pageSnapshot": "p", "action": {"action": "\udfff"}}],
        )
    assert store.executions("a") == []
    store.close()


# -- files and rows -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        '{"family": ["x"], "finished": "t", "host": {"cpu": "c", "logical_cpus": 1}, "steps": []}',
        '{"family": "f", "run": {"a": 1}, "finished": "t", "host": {"cpu": "c", "logical_cpus": 1}, "steps": []}',
        '{"family": "f", "finished": "t", "host": {"cpu": "c", "logical_cpus": 1}, "steps": [{"step": "a", "ran": true, "seconds": NaN, "peak_rss_bytes": null}]}',
        '{"family": "\\ud800", "finished": "t", "host": {}, "steps": []}',
        "[" * 100_000,
        "3",
    ],
)
def test_odd_ledger_rows_are_one_line(tmp_path: Path, line: str) -> None:
    from worldagent.pipeline.costs import last_computed, read_ledger

    ledger = tmp_path / "flow-runs.jsonl"
    ledger.write_text(line + "\n")
    with pytest.raises(InputError, match=r"flow-runs.jsonl:1: ") as raised:
        last_computed(read_ledger(ledger))
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"step": None}, "step"),
        ({"step": "NaN"}, "step"),
        ({"step": 1, "max_steps": "many"}, "max_steps"),
        ({"step": 1, "actions_before": 5}, "actions_before"),
        ({"step": 1, "category": {"a": 1}}, "category"),
        ({"step": 1, "goal": ["x"]}, "goal"),
        ({"step": 1e300}, "step"),
    ],
)
def test_odd_importer_rows_are_one_line(tmp_path: Path, entry: dict[str, object], field: str) -> None:
    from worldagent.intervention.importer import ReferenceImportError, read_reference_logs

    (tmp_path / "interventions.json").write_text(json.dumps([{"session_id": "s", **entry}]))
    (tmp_path / "successes.json").write_text("[]")
    with pytest.raises(ReferenceImportError, match=rf"interventions.json\[0\]\.{field}"):
        read_reference_logs(tmp_path)


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"actions": [{"action": "click"}], "step": float("nan")}, "step: expected a whole number"),
        ({"actions": [{"action": "click"}], "max_steps": float("inf")}, "max_steps"),
        ({"actions": "click"}, "'actions' must be a list"),
        ({"actions": [1, 2]}, r"actions\[0\]: expected an object"),
        ({"actions": [{"action": ["x"]}]}, r"actions\[0\].action: expected text"),
        ({"actions": [{"action": "x"}], "page_state": [1]}, "'page_state' must be an object"),
        ({"actions": [{"action": "x"}], "step": 10**12}, "outside"),
        ([1], "expected an object"),
    ],
)
def test_intervention_states_are_checked_field_by_field(state: object, message: str) -> None:
    from worldagent.intervention.dataset import DatasetError
    from worldagent.intervention.serve import state_row

    with pytest.raises(DatasetError, match=message):
        state_row(0, state)


def test_intervention_predict_reads_states_through_the_guard() -> None:
    line = assert_one_line(run_cli("intervention", "predict", "/dev/zero"))
    assert "is a device" in line
