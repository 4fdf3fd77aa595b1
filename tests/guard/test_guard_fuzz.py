"""Property-based fuzzing of every guarded boundary (Hypothesis): whatever a story, a model's answer, a
JSON body, a params file or a registry holds, the answer is bounded in time, a clean project error (or a
result), nothing outside the root is touched, and nothing stored breaks a later read.

Each property runs a modest number of examples under a deadline, so the suite stays part of `make test`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldagent.errors import InputError, WorldAgentError

FAST = settings(max_examples=40, deadline=2000, suppress_health_check=list(HealthCheck), derandomize=True)
SLOW = settings(max_examples=12, deadline=10_000, suppress_health_check=list(HealthCheck), derandomize=True)

# Text as an attacker sends it: lone surrogates, NULs, markers, paths and escapes mixed with plain text.
HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "../../etc/passwd", "/dev/zero", "\\ud800", "<script>", "*a"]),
    st.text(alphabet=st.sampled_from('[]{}"\\:,&*!|>-\n '), max_size=60),
)
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), HOSTILE_TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(HOSTILE_TEXT, inner, max_size=4)),
    max_leaves=20,
)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- files ----------------------------------------------------------------------------------------

PATH_PARTS = st.sampled_from(["a", "b", "..", ".", "", "link", "fifo", "x.txt", "\x00", "/", "//", "\\"])


@FAST
@given(parts=st.lists(PATH_PARTS, max_size=6), absolute=st.booleans())
def test_resolved_paths_never_leave_the_root(parts: list[str], absolute: bool) -> None:
    from worldagent.guard import files

    base = Path(tempfile.mkdtemp(prefix="guard-fuzz-"))
    try:
        root, outside = base / "root", base / "outside"
        (root / "a").mkdir(parents=True)
        outside.mkdir()
        (outside / "x.txt").write_text("secret")
        (root / "link").symlink_to(outside, target_is_directory=True)
        os.mkfifo(root / "a" / "fifo")
        path = ("/" if absolute else "") + "/".join(parts)
        try:
            resolved = files.resolve_inside(root, path)
        except InputError:
            return
        real_root = root.resolve()
        assert resolved == real_root or resolved.is_relative_to(real_root), (path, resolved)
        try:
            data = files.read_bytes(path, root=root, max_bytes=1024)
        except InputError:
            return
        assert data != b"secret"
    finally:
        shutil.rmtree(base)


# -- text -----------------------------------------------------------------------------------------


@FAST
@given(value=JSON_VALUES)
def test_checked_values_always_encode(value: Any) -> None:
    from worldagent.guard.text import TextError, check_value

    try:
        check_value(value, "body")
    except TextError as error:
        assert "lone surrogate" in str(error) and "\n" not in str(error)
        return
    json.dumps(value, ensure_ascii=False).encode("utf-8")


# -- JSON bodies ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def platform() -> Any:
    """One platform service for the module (set up outside the examples' deadline)."""
    from fastapi.testclient import TestClient

    from tests.guard.service_helpers import platform_service
    from worldagent.specialists.api import create_app

    root = Path(tempfile.mkdtemp(prefix="guard-fuzz-platform-"))
    service = platform_service(root)
    job = service.create_improvement_job(name="j", scopeType="agent", scopeId="a")
    client = TestClient(create_app(service))
    client.get("/feedback")  # warm: the first request builds the app's routes
    yield client, job["id"]
    service.close()
    shutil.rmtree(root)


@FAST
@given(value=JSON_VALUES, route=st.sampled_from(["/feedback", "/executions", "/jobs", "/feedback/record"]))
def test_json_bodies_never_break_a_later_request(platform: Any, value: Any, route: str) -> None:
    client, job = platform
    body = {
        "/feedback": lambda v: {"targetType": "agent", "targetId": "a", "input": v, "output": v, "label": "good"},
        "/executions": lambda v: {
            "id": f"x{time.perf_counter_ns()}",
            "targetId": "a",
            "task": "t",
            "steps": [{"kind": "browser", "pageSnapshot": "p", "action": v}],
        },
        "/jobs": lambda v: {"name": "j", "scopeType": "agent", "scopeId": "a", "architectureSpec": {"v": v}},
        "/feedback/record": lambda v: {"targetId": "a", "task": v, "actions": [v]},
    }[route](value)
    raw = json.dumps(body)  # ensure_ascii: a surrogate arrives as a \\ud800 escape, as from any client
    answer = client.post(route, content=raw, headers={"content-type": "application/json"})
    assert answer.status_code in (200, 201, 400, 404, 413), answer.text[:300]
    for later in ("/feedback", "/jobs"):
        assert client.get(later).status_code == 200
    data = client.post(f"/jobs/{job}/training-data", json={"strategy": "from_runs"})
    assert data.status_code in (201, 400), data.text[:300]


# -- tool-call answers --------------------------------------------------------------------------

CALL_NAMES = st.sampled_from(["writeTemplate", "writeStyles", "writeStory", "runStory", "readFile", "x"])
CALL_PATHS = st.one_of(
    st.sampled_from(["a/a.tsx", "a/a.stories.tsx", "../outside/s.stories.tsx", "/etc/passwd", "a/../../x", "fifo.tsx"]),
    HOSTILE_TEXT,
)


@SLOW
@given(calls=st.lists(st.tuples(CALL_NAMES, CALL_PATHS, HOSTILE_TEXT), max_size=24))
def test_tool_call_answers_stay_in_the_sandbox(calls: list[tuple[str, str, str]]) -> None:
    from worldagent.storytest.runner import PythonStoryRunner
    from worldagent.tools.callformat import ToolCall, parse_calls, render_calls
    from worldagent.world_agent.environment import MAX_CALLS_PER_ANSWER, AgentEnvironment

    base = Path(tempfile.mkdtemp(prefix="guard-fuzz-env-"))
    try:
        (base / "sandbox").mkdir()
        (base / "outside").mkdir()
        (base / "outside" / "s.stories.tsx").write_text("export const S = 'TOP-SECRET'\n")
        os.mkfifo(base / "sandbox" / "fifo.tsx")
        before = _tree(base / "outside")
        tool_calls = [ToolCall(name, {"path": path, "content": content}) for name, path, content in calls]
        try:
            text = render_calls(tool_calls)
            tool_calls = parse_calls(text).calls
        except ValueError:
            pass  # a name or value the renderer refuses: run the calls as they are
        env = AgentEnvironment(base / "sandbox", PythonStoryRunner(), "S", None)
        started = time.perf_counter()
        episode = env.run(tool_calls)
        assert time.perf_counter() - started < 8
        assert sum(step.allowed for step in episode.steps) <= MAX_CALLS_PER_ANSWER
        assert _tree(base / "outside") == before
        assert "TOP-SECRET" not in json.dumps([s.result.to_dict() for s in episode.steps], default=str)
    finally:
        shutil.rmtree(base)


# -- stories --------------------------------------------------------------------------------------

STORY_VALUES = st.one_of(
    st.sampled_from(["'\\ud800'", "'\\ud83d\\ude00'", "[1, 2, 3]", "Array(50)", "'x'.repeat(3)", "{}", "null"]),
    st.text(alphabet=st.sampled_from("abc'\"`\\{}[]()<>/=;,.: 0123456789"), max_size=40),
)
IMPORTS = st.sampled_from(
    ["", "import x from '../../etc/passwd'\n", "import t from './fifo'\n", "import y from '/dev/zero'\n"]
)


@SLOW
@given(intent=STORY_VALUES, arg=STORY_VALUES, imports=IMPORTS)
def test_stories_are_a_located_error_or_a_story(intent: str, arg: str, imports: str) -> None:
    from worldagent.stories.discover import discover_stories, discovery_to_jsonl
    from worldagent.stories.errors import StoryError
    from worldagent.stories.render import render_story

    base = Path(tempfile.mkdtemp(prefix="guard-fuzz-story-"))
    try:
        (base / "c").mkdir()
        os.mkfifo(base / "c" / "fifo.ts")
        source = (
            f"{imports}import {{ story }} from 'plaited/testing'\n"
            f"export const S = story({{ intent: {intent}, args: {{ v: {arg} }}, "
            "template: ({ v }) => <p>{String(v)}</p> })\n"
        )
        (base / "c" / "c.stories.tsx").write_text(source, encoding="utf-8", errors="surrogatepass")
        started = time.perf_counter()
        try:
            result = discover_stories([base], root=base)
        except InputError:
            return
        discovery_to_jsonl(result.stories).encode("utf-8")  # what the stage writes is text
        for record in result.stories:
            try:
                html = render_story(base / record.file, record.export, base).html
            except StoryError as error:
                assert str(error).strip()
            else:
                html.encode("utf-8", "surrogatepass")
        assert time.perf_counter() - started < 8
    finally:
        shutil.rmtree(base)


# -- params files ---------------------------------------------------------------------------------

YAML_TEXT = st.one_of(
    st.text(alphabet=st.sampled_from("ab:&*-[]{}!|>\"'\n #,?%@`0123\\u"), max_size=200),
    st.builds(
        lambda width, depth: "a: &a ["
        + ",".join(["x"] * width)
        + "]\n"
        + "".join(
            f"l{i}: &l{i} [" + ",".join([f"*{'a' if i == 0 else f'l{i - 1}'}"] * width) + "]\n" for i in range(depth)
        ),
        st.integers(1, 12),
        st.integers(0, 12),
    ),
    st.integers(1, 500).map(lambda depth: "model: " + "[" * depth + "]" * depth),
    st.sampled_from(['seed: "\\ud800"', "seed: !!python/object:os.system {}", "\ufeffseed: 1", "seed: 1\x00"]),
)


@FAST
@given(text=YAML_TEXT)
def test_params_files_are_a_clean_error_or_params(text: str) -> None:
    from worldagent.config import ParamsError, load_params
    from worldagent.profiles import ProfileError, matching

    base = Path(tempfile.mkdtemp(prefix="guard-fuzz-params-"))
    try:
        params = base / "params.yaml"
        params.write_text(text, encoding="utf-8", errors="surrogatepass")
        started = time.perf_counter()
        for attempt in (lambda: load_params(params), lambda: matching(params, Path("profiles"))):
            try:
                attempt()
            except (ParamsError, ProfileError, InputError) as error:
                assert "\n" not in str(error).split("\n  ")[0]
        assert time.perf_counter() - started < 2
    finally:
        shutil.rmtree(base)


# -- registry states ------------------------------------------------------------------------------

MUTATIONS = st.sampled_from(
    [
        "ALTER TABLE versions DROP COLUMN published_uri",
        "ALTER TABLE versions ADD COLUMN extra TEXT",
        "ALTER TABLE families ADD COLUMN owner TEXT NOT NULL DEFAULT 'x'",
        "DROP TABLE aliases",
        "DROP TABLE alias_events",
        "UPDATE versions SET created_at = 'not a date'",
        "UPDATE versions SET metrics = '{broken'",
        "UPDATE versions SET notes = '[\"\\ud800\"]'",
        "UPDATE versions SET number = 'x'",
        "UPDATE versions SET status = NULL",
        "UPDATE families SET name = X'FF'",
        "GARBAGE",
        "TRUNCATE",
    ]
)


@SLOW
@given(mutations=st.lists(MUTATIONS, max_size=3))
def test_registry_states_are_one_line(mutations: list[str]) -> None:
    from worldagent.registry.api import open_registry

    base = Path(tempfile.mkdtemp(prefix="guard-fuzz-registry-"))
    try:
        db = base / "registry.db"
        registry = open_registry(f"sqlite:///{db}")
        registry.register_version("fam", artifact_path=str(base / "m"), metrics={"a": 1})
        registry.close()
        for mutation in mutations:
            if mutation == "GARBAGE":
                with db.open("r+b") as handle:
                    handle.seek(100)
                    handle.write(b"\xff" * 4000)
            elif mutation == "TRUNCATE":
                with db.open("r+b") as handle:
                    handle.truncate(1000)
            else:
                try:
                    with sqlite3.connect(db) as connection:
                        connection.execute(mutation)
                except sqlite3.DatabaseError:
                    pass  # the file is already beyond SQL
        try:
            registry = open_registry(f"sqlite:///{db}")
            try:
                for version in registry.list_versions("fam"):
                    json.dumps(version.metrics, ensure_ascii=False).encode("utf-8")
                registry.register_version("fam", artifact_path=str(base / "m2"))
            finally:
                registry.close()
        except WorldAgentError as error:
            assert "\n" not in str(error) and str(db) in str(error), str(error)
    finally:
        shutil.rmtree(base)
