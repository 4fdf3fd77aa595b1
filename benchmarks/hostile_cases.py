"""The hostile cases of ``benchmarks.hostile_input``, by class (one guarded boundary each, docs/boundaries.md).

A case is a function of a fresh scratch folder (its root) that returns one short outcome line. It
fails by raising :class:`Breach` (a traceback where a line is due, a file outside its root read or
changed, a stored row that breaks a later request, an answer that is not what the guard promises);
the runner adds the bounds on time and memory. Every case gets its own process (forked from a worker
that imported its class's modules), so its peak memory is its own.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SECRET = "TOP-SECRET-OUTSIDE-CONTENT"
Case = Callable[[Path], str]


class Breach(AssertionError):
    """The case broke the contract (not merely slow or large: the runner checks those)."""


def clean(action: Callable[[], Any]) -> str:
    """Run ``action``: a project error is a clean outcome (one line), a result too; anything else breaches."""
    from worldagent.errors import WorldAgentError

    try:
        result = action()
    except WorldAgentError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if "Traceback" in str(error):
            raise Breach(f"a traceback inside the message: {first}") from None
        return f"{type(error).__name__}: {first[:90]}"
    except Breach:
        raise
    except BaseException as error:  # noqa: BLE001 - any other exception is the breach being measured
        raise Breach(f"uncaught {type(error).__name__}: {str(error)[:120]}") from None
    return f"ok: {str(result)[:90]}"


def cli(*args: str, stdin: bytes | None = None) -> str:
    """``worldagent ARGS`` in this process: exit status 1 or 2 with one ``error:`` line, never a traceback."""
    import sys

    from worldagent.cli import main

    err, out = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = main(list(args))
            except SystemExit as exit_:
                code = int(exit_.code or 0)
            except BaseException as error:  # noqa: BLE001
                raise Breach(f"uncaught {type(error).__name__}: {str(error)[:120]}") from None
    finally:
        sys.stdin = old_stdin
    lines = err.getvalue().strip().splitlines()
    if "Traceback" in err.getvalue() or (code not in (0, 1, 2)):
        raise Breach(f"exit {code}: {err.getvalue()[-200:]}")
    if code == 2 and not (len(lines) == 1 and lines[0].startswith("error: ")):
        raise Breach(f"exit 2 without one error line: {lines[:3]}")
    return f"exit {code}: {(lines[0] if lines else out.getvalue().strip()[:60])[:90]}"


def outside(root: Path) -> Path:
    """A folder next to the case's root holding a secret that must never be read or changed."""
    folder = root / "outside"
    folder.mkdir(exist_ok=True)
    (folder / "secret.stories.tsx").write_text(
        f"import {{ story }} from 'plaited/testing'\nexport const S = story({{ intent: '{SECRET}', "
        f"template: () => <p>{SECRET}</p> }})\n"
    )
    (folder / "secret.txt").write_text(SECRET)
    return folder


def untouched(folder: Path, before: dict[str, bytes]) -> None:
    now = {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    if now != before:
        raise Breach("a file outside the root was written")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def no_secret(text: str) -> str:
    if SECRET in text:
        raise Breach("content from outside the root was reported")
    return text


# -- files ----------------------------------------------------------------------------------------


def _special(root: Path, kind: str) -> Path:
    """A path of ``kind`` under ``root``: fifo, socket, dir, sparse (10 GB), proc, zero, urandom, badutf8."""
    path = root / f"special-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        _KEEP.append(server)
    elif kind == "dir":
        path.mkdir()
    elif kind == "sparse":
        with path.open("wb") as handle:
            handle.truncate(10 * 1024**3)
    elif kind == "badutf8":
        path.write_bytes(b"<p>ok</p>\n<p>\xff\xfe</p>")
    elif kind == "surrogate8":
        path.write_bytes(b"<p>\xed\xa0\x80</p>")  # a surrogate encoded as UTF-8 (CESU): not UTF-8
    elif kind == "missing":
        pass
    else:
        return Path(
            {
                "zero": "/dev/zero",
                "urandom": "/dev/urandom",
                "null": "/dev/null",
                "proc": "/proc/self/maps",
                "tty": "/dev/tty",
                "stdin": "/dev/stdin",
            }[kind]
        )
    return path


_KEEP: list[Any] = []
FILE_KINDS = [
    "fifo",
    "socket",
    "dir",
    "sparse",
    "zero",
    "urandom",
    "null",
    "proc",
    "badutf8",
    "surrogate8",
    "missing",
    "tty",
    "stdin",
]


def _guard_read(kind: str) -> Case:
    def case(root: Path) -> str:
        from worldagent.guard import files

        return clean(lambda: len(files.read_text(_special(root, kind), max_bytes=1024 * 1024)))

    return case


def _door(kind: str, door: str) -> Case:
    def case(root: Path) -> str:
        path = str(_special(root, kind))
        if door == "a11y":
            return cli("a11y", path)
        if door == "predict":
            return cli("intervention", "predict", path)
        if door == "params":
            from worldagent.config import load_params

            return clean(lambda: load_params(path))
        if door == "read_json":
            from worldagent.io import read_json

            return clean(lambda: read_json(Path(path), "a report"))
        if door == "screenshot":
            from worldagent.intervention.clip import load_image

            return clean(lambda: load_image(path).size)
        if door == "story":
            from worldagent.stories.discover import discover_stories

            (root / "c").mkdir()
            target = root / "c" / "c.stories.tsx"
            if Path(path).exists() or Path(path).is_symlink():
                target.symlink_to(path)
            return clean(lambda: len(discover_stories([root / "c"], root=root / "c").problems))
        raise AssertionError(door)

    return case


def _resolve(path: str) -> Case:
    def case(root: Path) -> str:
        from worldagent.guard import files

        secret = outside(root)
        (root / "in").mkdir()
        (root / "in" / "link").symlink_to(secret, target_is_directory=True)
        (root / "in" / "loop").symlink_to(root / "in" / "loop")
        (root / "in" / "file").symlink_to(secret / "secret.txt")
        return no_secret(clean(lambda: files.read_text(path, root=root / "in", max_bytes=4096)))

    return case


RESOLVE_PATHS = [
    "../outside/secret.txt",
    "link/secret.txt",
    "file",
    "loop",
    "loop/x",
    "/etc/passwd",
    "a/../../outside/secret.txt",
    "x\x00y",
    "a" * 5000,
    "/".join(["d"] * 2000),
    "./link/../file",
    "link",
    "//etc/passwd",
    "..",
    ".",
]


def _image_bomb(width: int, height: int) -> Case:
    def case(root: Path) -> str:
        from worldagent.intervention.clip import load_image

        path = root / "bomb.png"
        path.write_bytes(_png_header(width, height))  # a few hundred bytes that say: billions of pixels
        return clean(lambda: load_image(path).size)

    return case


def _png_header(width: int, height: int) -> bytes:
    """A small valid-looking PNG (1-bit greyscale) claiming ``width``×``height`` pixels."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    rows = zlib.compress(b"\0" * min(height, 1000) * (1 + (width + 7) // 8 if width < 10_000 else 1), 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


# -- the agent's sandbox ------------------------------------------------------------------------

AGENT_STORY = (
    "import { story } from 'plaited/testing'\nexport const Mine = story({ intent: 'm', template: () => <p>m</p> })\n"
)


def _environment(root: Path) -> Any:
    from worldagent.storytest.runner import PythonStoryRunner
    from worldagent.world_agent.environment import AgentEnvironment

    (root / "sandbox").mkdir()
    return AgentEnvironment(root / "sandbox", PythonStoryRunner(), "Mine", None)


def _sandbox_call(tool: str, path: Any, setup: str = "") -> Case:
    def case(root: Path) -> str:
        from worldagent.tools.callformat import ToolCall

        secret = outside(root)
        env = _environment(root)
        sandbox = root / "sandbox"
        if setup == "fifo-outside":
            os.mkfifo(secret / "fifo.stories.tsx")
        elif setup == "fifo-inside":
            os.mkfifo(sandbox / "p.stories.tsx")
        elif setup == "link-dir":
            (sandbox / "l").symlink_to(secret, target_is_directory=True)
        elif setup == "link-file":
            (sandbox / "s.stories.tsx").symlink_to(secret / "secret.stories.tsx")
        elif setup == "link-zero":
            (sandbox / "z.stories.tsx").symlink_to("/dev/zero")
        elif setup == "import-out":
            (sandbox / "i.stories.tsx").write_text("import { S } from '../outside/secret.stories.tsx'\n" + AGENT_STORY)
        before = snapshot(secret)
        outcome = env.step(ToolCall(tool, {"path": path, "content": AGENT_STORY}))
        untouched(secret, before)
        text = json.dumps([outcome.violations, outcome.result.to_dict()], default=str)
        no_secret(text)
        return f"{'allowed' if outcome.allowed else 'blocked'}: {text[:80]}"

    return case


SANDBOX_PATHS: list[tuple[str, Any, str]] = [
    ("writeStory", "../outside/secret.stories.tsx", ""),
    ("writeStory", "../outside/fifo.stories.tsx", "fifo-outside"),
    ("writeStory", "../../etc/passwd.stories.tsx", ""),
    ("writeStory", "/etc/x.stories.tsx", ""),
    ("writeStory", "C:\\x.stories.tsx", ""),
    ("writeStory", "a/../../outside/secret.stories.tsx", ""),
    ("writeStory", "l/secret.stories.tsx", "link-dir"),
    ("writeStory", "s.stories.tsx", "link-file"),
    ("writeStory", "z.stories.tsx", "link-zero"),
    ("writeStory", "p.stories.tsx", "fifo-inside"),
    ("writeStory", "a\x00b.stories.tsx", ""),
    ("writeStory", "x" * 5000 + ".stories.tsx", ""),
    ("writeStory", "\ud800.stories.tsx", ""),
    ("writeStory", 5, ""),
    ("writeStory", ["a"], ""),
    ("writeTemplate", "../outside/t.tsx", ""),
    ("writeStyles", "../outside/s.css.ts", ""),
    ("writeTemplate", "l/t.tsx", "link-dir"),
    ("runStory", "../outside/secret.stories.tsx", ""),
    ("runStory", "l/secret.stories.tsx", "link-dir"),
    ("runStory", "s.stories.tsx", "link-file"),
    ("runStory", "p.stories.tsx", "fifo-inside"),
    ("runStory", "z.stories.tsx", "link-zero"),
    ("runStory", "i.stories.tsx", "import-out"),
    ("runStory", "/dev/zero", ""),
]


def _many_calls(count: int) -> Case:
    def case(root: Path) -> str:
        from worldagent.tools.callformat import ToolCall

        env = _environment(root)
        calls = [
            ToolCall("writeTemplate", {"path": f"a/t{i}.tsx", "content": "export const A = 1\n"}) for i in range(count)
        ]
        episode = env.run(calls)
        ran = sum(step.allowed for step in episode.steps)
        written = len(list((root / "sandbox").rglob("*.tsx")))
        if ran > 16 or written > 16:
            raise Breach(f"{ran} calls ran, {written} files written")
        return f"{ran} ran, {len(episode.violations)} blocked"

    return case


def _answer_text(text: str) -> Case:
    def case(root: Path) -> str:
        from worldagent.tools.callformat import parse_calls

        env = _environment(root)
        calls = parse_calls(text).calls
        episode = env.run(calls)
        return f"{len(calls)} parsed, {sum(s.allowed for s in episode.steps)} ran"

    return case


def _call(name: str, path: str) -> str:
    return (
        f"<start_function_call>call:{name}{{path:<escape>{path}<escape>,content:<escape>x<escape>}}<end_function_call>"
    )


# -- text -----------------------------------------------------------------------------------------


def _platform(root: Path, token: str | None = None) -> Any:
    from fastapi.testclient import TestClient

    from tests.guard.service_helpers import platform_service
    from worldagent.specialists.api import create_app

    service = platform_service(root)
    _KEEP.append(service)
    return TestClient(create_app(service, token=token))


def _surrogate_body(route: str, body: dict[str, Any], marker: str = "MARK") -> Case:
    def case(root: Path) -> str:
        client = _platform(root)
        job = client.post("/jobs", json={"name": "j", "scopeType": "agent", "scopeId": "a"}).json()
        raw = json.dumps(body).replace(marker, "\\ud800").replace("JOB", str(job["id"]))
        answer = client.post(
            route.replace("JOB", str(job["id"])), content=raw, headers={"content-type": "application/json"}
        )
        if answer.status_code >= 500:
            raise Breach(f"{answer.status_code}: {answer.text[:100]}")
        for later in ("/feedback", "/jobs", f"/jobs/{job['id']}"):
            status = client.get(later).status_code
            if status >= 500:
                raise Breach(f"GET {later} {status} after the body was stored")
        data = client.post(f"/jobs/{job['id']}/training-data", json={"strategy": "from_runs"})
        if data.status_code >= 500:
            raise Breach(f"from_runs {data.status_code} after the body")
        return f"POST {answer.status_code}: {answer.text[:70]}"

    return case


STEP = {"kind": "browser", "pageSnapshot": "page", "action": {"action": "click", "selectorOrRef": "e1"}}
FEEDBACK = {
    "targetType": "agent",
    "targetId": "a",
    "input": {"task": "t"},
    "output": {"action": "click"},
    "label": "good",
}
SURROGATE_BODIES: list[tuple[str, dict[str, Any]]] = [
    ("/executions", {"id": "x", "targetId": "a", "task": "t", "steps": [{**STEP, "action": {"action": "MARK"}}]}),
    ("/executions", {"id": "x", "targetId": "a", "task": "MARK", "steps": [STEP]}),
    ("/executions", {"id": "x", "targetId": "a", "task": "t", "steps": [{**STEP, "pageSnapshot": "MARK"}]}),
    ("/executions", {"id": "MARK", "targetId": "a", "task": "t", "steps": [STEP]}),
    ("/executions", {"id": "x", "targetId": "MARK", "task": "t", "steps": [STEP]}),
    ("/feedback", {**FEEDBACK, "input": {"task": "MARK"}}),
    ("/feedback", {**FEEDBACK, "output": {"action": "MARK"}}),
    ("/feedback", {**FEEDBACK, "targetId": "MARK"}),
    ("/feedback", {**FEEDBACK, "input": {"MARK": 1}}),
    ("/feedback", {**FEEDBACK, "input": "MARK"}),
    ("/jobs", {"name": "MARK", "scopeType": "agent", "scopeId": "a"}),
    ("/jobs", {"name": "j", "scopeType": "agent", "scopeId": "a", "architectureSpec": {"k": "MARK"}}),
    ("/jobs", {"name": "j", "scopeType": "agent", "scopeId": "MARK"}),
    ("/feedback/record", {"targetId": "a", "task": "MARK", "actions": []}),
    ("/jobs/JOB/training-data", {"strategy": "MARK"}),
    ("/models", {"jobId": "JOB", "modelRef": "MARK"}),
]


def _bad_utf8_body(body: bytes, route: str = "/feedback") -> Case:
    def case(root: Path) -> str:
        client = _platform(root)
        answer = client.post(route, content=body, headers={"content-type": "application/json"})
        if answer.status_code >= 500:
            raise Breach(f"{answer.status_code}")
        return f"POST {answer.status_code}: {answer.text[:70]}"

    return case


def _planted_row(table: str, column: str, value: str) -> Case:
    """A value an older version stored; every later request must still answer (also after a restart)."""

    def case(root: Path) -> str:
        client = _platform(root)
        job = client.post("/jobs", json={"name": "j", "scopeType": "agent", "scopeId": "a"}).json()
        client.post("/feedback", json=FEEDBACK)
        client.post("/executions", json={"id": "x", "targetId": "a", "task": "t", "steps": [STEP]})
        with sqlite3.connect(root / "feedback.db") as connection:
            connection.execute(f"UPDATE {table} SET {column} = ?", (value,))  # noqa: S608 - the case's own names
        client = _platform(root)  # a restart
        statuses = [client.get(path).status_code for path in ("/feedback", "/jobs", f"/jobs/{job['id']}")]
        statuses.append(client.post(f"/jobs/{job['id']}/training-data", json={"strategy": "from_runs"}).status_code)
        if any(status >= 500 for status in statuses):
            raise Breach(f"answers {statuses} after a stored row")
        return f"later answers {statuses}"

    return case


PLANTED = [
    ("execution_steps", "action", '{"action": "\\ud800"}'),
    ("execution_steps", "action", "{not json"),
    ("execution_steps", "action", "[" * 100_000),
    ("feedback", "input", '{"task": "\\udfff"}'),
    ("feedback", "output", "not json at all"),
    ("improvement_jobs", "architecture_spec", '"\\ud800"'),
]


def _story_text(intent: str) -> Case:
    def case(root: Path) -> str:
        from worldagent.stories.discover import discover_stories, discovery_to_jsonl

        (root / "c").mkdir()
        (root / "c" / "c.stories.tsx").write_text(
            f"import {{ story }} from 'plaited/testing'\nexport const S = story({{ intent: {intent}, "
            "template: () => <p>x</p> })\n"
        )

        def run() -> str:
            found = discover_stories([root / "c"], root=root / "c")
            discovery_to_jsonl(found.stories).encode("utf-8")  # what the discover stage writes
            return f"{len(found.stories)} stories, {len(found.problems)} problems"

        return clean(run)

    return case


STORY_INTENTS = [
    "'\\ud800'",
    "'\\udfff'",
    "'\\ude00\\ud83d'",
    "'\\u{D800}'",
    "`a \\ud800 b`",
    '"x\\uD800"',
    "'\\ud83d\\ude00 ok'",
    "'\\ud800\\ud800'",
]


def _store_text(field: str) -> Case:
    def case(root: Path) -> str:
        from worldagent.specialists.store import open_store

        store = open_store(f"sqlite:///{root / 'f.db'}")
        _KEEP.append(store)
        values = {"task": "t", "action": {"action": "click"}, "target": "a"}
        values[field] = "\ud800" if field != "action" else {"action": "\ud800"}
        outcome = clean(
            lambda: store.add_execution(
                execution_id="x",
                target_type="agent",
                target_id=values["target"],
                task=values["task"],
                steps=[{"kind": "browser", "pageSnapshot": "p", "action": values["action"]}],
            )
        )
        json.dumps(store.executions("a"), ensure_ascii=False).encode("utf-8")
        return outcome

    return case


# -- YAML -----------------------------------------------------------------------------------------


def alias_bomb(width: int, depth: int) -> str:
    text = "seed: &a [" + ", ".join(['"lol"'] * width) + "]\n"
    previous = "a"
    for index in range(depth):
        text += f"l{index}: &l{index} [" + ", ".join([f"*{previous}"] * width) + "]\n"
        previous = f"l{index}"
    return text


YAML_INPUTS: dict[str, Callable[[], str]] = {
    "alias bomb 9x9": lambda: alias_bomb(9, 9),
    "alias bomb 10x12 (1.4 KB)": lambda: alias_bomb(10, 12),
    "alias bomb 2x60": lambda: alias_bomb(2, 60),
    "alias bomb in a mapping": lambda: "a: &a {x: 1, y: 1}\n"
    + "".join(
        f"b{i}: &b{i} {{p: *{'a' if i == 0 else f'b{i - 1}'}, q: *{'a' if i == 0 else f'b{i - 1}'}}}\n"
        for i in range(40)
    ),
    "100,000 aliases": lambda: "a: &a 1\nb: [" + ", ".join(["*a"] * 100_000) + "]\n",
    "recursive alias": lambda: "a: &a [*a]\n",
    "flow nesting 100,000": lambda: "seed: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "block nesting 5,000": lambda: "".join("  " * i + f"k{i}:\n" for i in range(5000)) + "  " * 5000 + "v\n",
    "5 MB of YAML": lambda: "seed: 1\n" + "# " + "x" * (5 * 1024 * 1024) + "\n",
    "python object tag": lambda: "seed: !!python/object/apply:os.system ['true']\n",
    "surrogate escape": lambda: 'seed: "\\ud800"\n',
    "merge-key bomb": lambda: "a: &a {x: 1}\n"
    + "".join(f"b{i}: &b{i} {{<<: *{'a' if i == 0 else f'b{i - 1}'}, y{i}: 1}}\n" for i in range(3000)),
}


def _yaml_door(name: str, door: str) -> Case:
    def case(root: Path) -> str:
        text = YAML_INPUTS[name]()
        params = root / "params.yaml"
        params.write_text(text)
        if door == "load_params":
            from worldagent.config import load_params

            return clean(lambda: load_params(params))
        if door == "profile list":
            return cli("profile", "list", "--params", str(params), "--profiles", str(PROJECT / "profiles"))
        if door == "profile use":
            outcome = cli("profile", "use", "tiny", "--params", str(params), "--profiles", str(PROJECT / "profiles"))
            if params.read_text() != text:
                raise Breach("params.yaml changed")
            return outcome
        if door == "preflight":
            return cli("preflight", "--params", str(params))
        if door == "dvc.lock":
            from worldagent.registry.deploy import dvc_out_hash

            (root / "dvc.lock").write_text(text)
            return clean(lambda: dvc_out_hash(root, "models/x"))
        raise AssertionError(door)

    return case


PROJECT = Path(__file__).resolve().parents[1]
YAML_DOORS = ["load_params", "profile list", "profile use", "preflight", "dvc.lock"]


# -- HTTP -----------------------------------------------------------------------------------------


def _asgi(service: str, root: Path, token: str | None) -> Any:
    if service == "platform":
        return _platform(root, token).app
    from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

    (root / "data").mkdir(exist_ok=True)
    return create_trainer_app(TrainerConfig(data_dirs=[root / "data"], token=token), supervise=False)


def _http(
    service: str,
    method: str,
    path: str,
    *,
    token: str | None,
    headers: dict[str, str],
    size: int,
    chunked: bool = False,
    want: tuple[int, ...],
    body: bytes | None = None,
    max_pulled: int | None = None,
) -> Case:
    """One request straight to the ASGI app; counts the body bytes the service pulled."""

    def case(root: Path) -> str:
        import asyncio

        app = _asgi(service, root, token)
        chunk = b"x" * (1024 * 1024)
        data = body if body is not None else b""
        total = len(data) if body is not None else size
        pulled = 0
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            nonlocal pulled
            if body is not None:
                part, more = (data, False) if pulled == 0 else (b"", False)
            else:
                part = chunk[: max(0, min(len(chunk), total - pulled))]
                more = pulled + len(part) < total
            pulled += len(part)
            return {"type": "http.request", "body": part, "more_body": more}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        header_list = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        if not chunked:
            header_list.append((b"content-length", str(total).encode()))
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": header_list,
            "scheme": "http",
            "server": ("127.0.0.1", 80),
            "client": ("127.0.0.1", 1),
            "root_path": "",
            "state": {},
        }
        asyncio.run(app(scope, receive, send))
        status = next(m["status"] for m in sent if m["type"] == "http.response.start")
        if status not in want:
            raise Breach(f"answered {status}, expected one of {want}")
        if max_pulled is not None and pulled > max_pulled:
            raise Breach(f"read {pulled} body bytes before answering {status}")
        return f"{status} after reading {pulled} of {total} body bytes"

    return case


def _served_50mb(service: str, chunked: bool) -> Callable[[Path], tuple[str, float]]:
    """The target as stated: a real server process, an unauthenticated 50 MB body: refused within 1 s,
    the server's memory grows by at most 50 MB."""

    def case(root: Path) -> str:
        import subprocess
        import sys

        import psutil

        port = _free_port()
        code = (
            "import sys, uvicorn\nfrom pathlib import Path\n"
            + (
                "from tests.guard.service_helpers import platform_service\nfrom worldagent.specialists.api import create_app\n"
                f"app = create_app(platform_service(Path({str(root)!r})), token='t')\n"
                if service == "platform"
                else "from worldagent.specialists.trainer import TrainerConfig, create_trainer_app\n"
                f"app = create_trainer_app(TrainerConfig(data_dirs=[Path({str(root)!r})], token='t'), supervise=False)\n"
            )
            + f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='error')\n"
        )
        server = subprocess.Popen([sys.executable, "-c", code], cwd=PROJECT)
        try:
            _wait_for(port)
            process = psutil.Process(server.pid)
            before = process.memory_info().rss
            started = time.perf_counter()
            status = _post_50mb(port, "/train" if service == "trainer" else "/feedback", chunked)
            seconds = time.perf_counter() - started
            growth = (process.memory_info().rss - before) / 1024**2
        finally:
            server.terminate()
            server.wait(10)
        if status != 401 or seconds > 1.0 or growth > 50:
            raise Breach(f"{status} in {seconds:.2f} s, server memory +{growth:.1f} MB")
        # The case's time is the request's: the server's start (its imports) is not what is measured.
        return f"401 in {seconds:.3f} s, server memory +{growth:.1f} MB", seconds

    return case


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise Breach("the server did not start")


def _post_50mb(port: int, path: str, chunked: bool) -> int:
    """Send headers and as much of 50 MB as the server takes; the status line it answers with."""
    size = 50 * 1024 * 1024
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{framing}\r\n\r\n".encode()
        )
        connection.setblocking(False)
        block = b"x" * (256 * 1024)
        piece = (f"{len(block):x}\r\n".encode() + block + b"\r\n") if chunked else block
        sent, answer = 0, b""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and b"\r\n" not in answer:
            with contextlib.suppress(BlockingIOError, InterruptedError):
                answer += connection.recv(4096)
            if sent < size:
                try:
                    sent += connection.send(piece)
                except (BlockingIOError, InterruptedError):
                    time.sleep(0.001)
                except OSError:
                    sent = size  # the server closed its side after answering
            else:
                time.sleep(0.001)
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


# -- databases ------------------------------------------------------------------------------------


def _registry_file(root: Path) -> Path:
    from worldagent.registry.api import open_registry

    db = root / "registry.db"
    registry = open_registry(f"sqlite:///{db}")
    registry.register_version("fam", artifact_path=str(root / "m"), metrics={"a": 1})
    registry.close()
    return db


def _damage(db: Path, how: str) -> None:
    if how == "garbage header":
        with db.open("r+b") as handle:
            handle.write(b"\xff" * 100)
    elif how == "garbage pages":
        with db.open("r+b") as handle:
            handle.seek(1024)
            handle.write(os.urandom(3000))
    elif how == "truncated":
        with db.open("r+b") as handle:
            handle.truncate(700)
    elif how == "not a database":
        db.write_bytes(b"not a database" * 1000)
    elif how == "empty file":
        db.write_bytes(b"")
    elif how == "a folder":
        db.unlink()
        db.mkdir()
    elif how == "a FIFO":
        db.unlink()
        os.mkfifo(db)
    else:
        with sqlite3.connect(db) as connection:
            connection.executescript(how)


DAMAGE = [
    "garbage header",
    "garbage pages",
    "truncated",
    "not a database",
    "empty file",
    "a folder",
    "a FIFO",
    "ALTER TABLE versions DROP COLUMN published_uri;",
    "ALTER TABLE versions DROP COLUMN metrics;",
    "ALTER TABLE aliases DROP COLUMN updated_at;",
    "DROP TABLE aliases;",
    "DROP TABLE versions;",
    "ALTER TABLE versions ADD COLUMN extra TEXT;",
    "CREATE TABLE f2 (id INTEGER PRIMARY KEY, name VARCHAR(200) NOT NULL, created_at DATETIME NOT NULL, tenant TEXT NOT NULL);"
    " INSERT INTO f2 SELECT id, name, created_at, 'x' FROM families; PRAGMA foreign_keys=OFF; DROP TABLE families;"
    " ALTER TABLE f2 RENAME TO families;",
    "UPDATE versions SET created_at = 'not a date';",
    "UPDATE versions SET created_at = 12;",
    "UPDATE versions SET number = 'x';",
    "UPDATE versions SET metrics = '{broken';",
    "UPDATE versions SET notes = '[\"\\ud800\"]';",
    "UPDATE versions SET metrics = '" + "[" * 100_000 + "';",
    "UPDATE families SET name = X'FFFE';",
    "UPDATE versions SET status = 'x';",
    "UPDATE versions SET family_id = 999;",
    "PRAGMA user_version = 99;",
]


def _registry_damage(how: str, door: str) -> Case:
    def case(root: Path) -> str:
        db = _registry_file(root)
        _damage(db, how)
        url = f"sqlite:///{db}"
        if door == "cli list":
            return cli("models", "list", "--registry", url, "--family", "fam")
        from worldagent.registry.api import open_registry

        def run() -> str:
            registry = open_registry(url)
            try:
                versions = registry.list_versions("fam")
                json.dumps([v.metrics for v in versions], ensure_ascii=False).encode("utf-8")
                registry.register_version("fam", artifact_path=str(root / "m2"))
                return f"{len(versions)} versions"
            finally:
                registry.close()

        return clean(run)

    return case


def _read_only(door: str) -> Case:
    """A read-only registry: SQLite's own read-only mode (file modes do not stop root)."""

    def case(root: Path) -> str:
        db = _registry_file(root)
        url = f"sqlite:///file:{db}?mode=ro&uri=true"
        from worldagent.registry.api import open_registry

        def run() -> str:
            registry = open_registry(url)
            try:
                if door == "write":
                    registry.register_version("fam", artifact_path=str(root / "m2"))
                return f"{len(registry.list_versions('fam'))} versions"
            finally:
                registry.close()

        return clean(run)

    return case


def _store_damage(store: str, how: str) -> Case:
    def case(root: Path) -> str:
        db = root / "store.db"
        url = f"sqlite:///{db}"
        if store == "feedback":
            from worldagent.specialists.store import open_store as open_feedback

            open_feedback(url).close()
        elif store == "trainer":
            from worldagent.specialists.trainer.runs import RunState

            RunState(url).close()
        else:
            from worldagent.intervention.store import open_store as open_experience

            open_experience(url).close()
        _damage(db, how)

        def run() -> str:
            if store == "feedback":
                from worldagent.specialists.store import open_store as open_feedback

                opened = open_feedback(url)
                try:
                    return f"{len(opened.list_feedback())} rows"
                finally:
                    opened.close()
            if store == "trainer":
                from worldagent.specialists.trainer.runs import RunState

                state = RunState(url)
                try:
                    return str(state.counts())
                finally:
                    state.close()
            from worldagent.intervention.store import open_store as open_experience

            opened = open_experience(url, create=False)
            try:
                return str(opened.stats()["tasks"])
            finally:
                opened.close()

        return clean(run)

    return case


STORE_DAMAGE = ["garbage header", "truncated", "not a database", "a FIFO", "a folder"]
STORE_DRIFT = {
    "feedback": ["ALTER TABLE feedback DROP COLUMN label;", "DROP TABLE executions;"],
    "trainer": ["ALTER TABLE trainer_runs DROP COLUMN error;", "ALTER TABLE trainer_runs ADD COLUMN extra TEXT;"],
    "experience": ["ALTER TABLE steps DROP COLUMN action;", "DROP TABLE tasks;"],
}


# -- rows -----------------------------------------------------------------------------------------


def _ledger(line: str, door: str) -> Case:
    def case(root: Path) -> str:
        from worldagent.pipeline.costs import from_nothing_table, last_computed, read_ledger

        ledger = root / "flow-runs.jsonl"
        ledger.write_text(line + "\n", encoding="utf-8", errors="surrogatepass")
        if door == "worldagent costs":
            return cli("costs", "--ledger", str(ledger), "--from-nothing")
        return clean(lambda: from_nothing_table(last_computed(read_ledger(ledger))).count("\n"))

    return case


HOST = '"host": {"cpu": "c", "logical_cpus": 2}'
LEDGER_LINES = [
    "3",
    "[]",
    "null",
    '"text"',
    "{",
    "[" * 100_000,
    "{}",
    '{"family": ["x"], "finished": "t", ' + HOST + ', "steps": []}',
    '{"family": "f", "finished": 5, ' + HOST + ', "steps": []}',
    '{"family": "f", "finished": "t", "run": {"a": 1}, ' + HOST + ', "steps": []}',
    '{"family": "f", "finished": "t", "run": "r", "complete": "yes", ' + HOST + ', "steps": []}',
    '{"family": "f", "finished": "t", "host": [], "steps": []}',
    '{"family": "f", "finished": "t", ' + HOST + ', "steps": {}}',
    '{"family": "f", "finished": "t", ' + HOST + ', "steps": [1]}',
    '{"family": "f", "finished": "t", '
    + HOST
    + ', "steps": [{"step": ["a"], "ran": true, "seconds": 1, "peak_rss_bytes": null}]}',
    '{"family": "f", "finished": "t", '
    + HOST
    + ', "steps": [{"step": "a", "ran": true, "seconds": NaN, "peak_rss_bytes": null}]}',
    '{"family": "f", "finished": "t", '
    + HOST
    + ', "steps": [{"step": "a", "ran": true, "seconds": "1", "peak_rss_bytes": null}]}',
    '{"family": "f", "finished": "t", '
    + HOST
    + ', "steps": [{"step": "a", "ran": true, "seconds": 1, "peak_rss_bytes": -5}]}',
    '{"family": "f", "finished": "t", '
    + HOST
    + ', "steps": [{"step": "a", "ran": true, "seconds": 1e400, "peak_rss_bytes": 1}]}',
    '{"family": "f", "finished": "t", '
    + HOST
    + ', "steps": [{"step": "a", "ran": 1, "seconds": 1, "peak_rss_bytes": 1}]}',
    '{"family": "f", "finished": "t", '
    + HOST
    + ', "steps": [{"step": "a", "ran": true, "seconds": 1, "peak_rss_bytes": 1, "x": 1}]}',
    '{"family": "\\ud800", "finished": "t", ' + HOST + ', "steps": []}',
    '{"family": "f", "finished": "t", ' + HOST + ', "steps": []}\n\udcff',
]


def _importer(entry: dict[str, Any], where: str = "interventions") -> Case:
    def case(root: Path) -> str:
        from worldagent.intervention.importer import import_logs
        from worldagent.intervention.store import open_store

        logs = root / "logs"
        logs.mkdir()
        row = {"session_id": "s", "step": 1, **entry}
        (logs / "interventions.json").write_text(json.dumps([row] if where == "interventions" else []))
        (logs / "successes.json").write_text(json.dumps([row] if where == "successes" else []))
        store = open_store(f"sqlite:///{root / 'experience.db'}")
        _KEEP.append(store)
        outcome = clean(lambda: import_logs(store, logs)["added"])
        json.dumps(store.stats(), ensure_ascii=False).encode("utf-8")  # a later read still works
        return outcome

    return case


IMPORTER_ROWS: list[tuple[dict[str, Any], str]] = [
    ({"step": None}, "interventions"),
    ({"step": "NaN"}, "interventions"),
    ({"step": -1}, "interventions"),
    ({"step": 1e300}, "interventions"),
    ({"step": [1]}, "interventions"),
    ({"max_steps": "many"}, "interventions"),
    ({"actions_before": 5}, "interventions"),
    ({"actions_before": [5]}, "interventions"),
    ({"actions_before": [{"action": {"a": 1}}]}, "interventions"),
    ({"category": {"a": 1}}, "interventions"),
    ({"goal": ["x"]}, "interventions"),
    ({"goal": "\ud800"}, "interventions"),
    ({"page_state": [1, 2]}, "interventions"),
    ({"session_id": {"a": 1}}, "interventions"),
    ({"reason": ["x"]}, "interventions"),
    ({"steps": "abc"}, "successes"),
    ({"steps": [7]}, "successes"),
    ({"max_steps": float("inf")}, "successes"),
]


def _state(state: Any) -> Case:
    def case(root: Path) -> str:
        from worldagent.intervention.serve import state_row

        return clean(lambda: state_row(0, state)["step"])

    return case


def _predict_file(text: str) -> Case:
    def case(root: Path) -> str:
        path = root / "state.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return cli("intervention", "predict", str(path), "--model", str(root / "no-model"))

    return case


A = [{"action": "click", "target": "b"}]
STATES: list[Any] = [
    {"actions": A, "step": float("nan")},
    {"actions": A, "step": float("inf")},
    {"actions": A, "step": -3},
    {"actions": A, "step": 2.5},
    {"actions": A, "step": "3"},
    {"actions": A, "step": True},
    {"actions": A, "step": 10**15},
    {"actions": A, "max_steps": 0},
    {"actions": A, "max_steps": float("nan")},
    {"actions": "click"},
    {"actions": [1]},
    {"actions": [[{"action": "x"}]]},
    {"actions": [{"action": 5}]},
    {"actions": [{"action": "x", "success": "no"}]},
    {"actions": A, "page_state": [1]},
    {"actions": {"action": "x"}},
    [1],
    "state",
    None,
]
PREDICT_TEXTS = [
    '{"actions": [{"action": "x"}], "step": NaN}',
    '[{"actions": "x"}]',
    '{"actions": [{"action": "\\ud800"}]}',
    "[" * 100_000,
    "\ufeff{}",
    '{"actions": [{"action": "x"}]}\x00',
]


def _experience_manifest(text: str) -> Case:
    def case(root: Path) -> str:
        from worldagent.world_agent.experience import read_store

        store = root / "experience"
        store.mkdir()
        os.mkfifo(store / "fifo.jsonl")
        outside(root)
        (store / "manifest.json").write_text(text)
        return clean(lambda: len(read_store(store)))

    return case


MANIFESTS = [
    "[]",
    "3",
    '{"format": 2}',
    '{"format": 1, "sha256": {"../../outside/secret.txt": "x"}}',
    '{"format": 1, "sha256": {"fifo.jsonl": "x"}}',
    '{"format": 1, "sha256": []}',
    "[" * 100_000,
]


# -- the table of cases ---------------------------------------------------------------------------


class _Unique(dict):  # type: ignore[type-arg]
    """Case names stay unique: a second case under a name already taken gets ``#2``, ``#3``..."""

    def __setitem__(self, name: str, case: Case) -> None:
        unique, number = name, 1
        while unique in self:
            number += 1
            unique = f"{name} #{number}"
        super().__setitem__(unique, case)


def cases() -> dict[str, dict[str, Case]]:
    """Every case, by class."""
    classes: dict[str, dict[str, Case]] = {
        name: _Unique() for name in ("files", "sandbox", "text", "yaml", "http", "db", "rows")
    }
    for kind in FILE_KINDS:
        classes["files"][f"guard read: {kind}"] = _guard_read(kind)
    for kind in ("fifo", "zero", "sparse", "dir", "badutf8", "socket"):
        for door in ("a11y", "predict", "params", "read_json", "screenshot", "story"):
            classes["files"][f"{door}: {kind}"] = _door(kind, door)
    for path in RESOLVE_PATHS:
        classes["files"][f"resolve {path[:30]!r}"] = _resolve(path)
    for width, height in ((20_000, 20_000), (60_000, 60_000), (100_000, 1)):
        classes["files"][f"screenshot bomb {width}x{height}"] = _image_bomb(width, height)
    for tool, path, setup in SANDBOX_PATHS:
        classes["sandbox"][f"{tool} {str(path)[:28]!r} {setup}".strip()] = _sandbox_call(tool, path, setup)
    for count in (17, 100, 1000, 10_000):
        classes["sandbox"][f"{count} calls in one answer"] = _many_calls(count)
    classes["sandbox"]["1 MB answer of outside writes"] = _answer_text(
        _call("writeStory", "../outside/x.stories.tsx") * 5000
    )
    classes["sandbox"]["answer: 10,000 unterminated calls"] = _answer_text(
        "<start_function_call>call:writeStory{" * 10_000
    )
    for route, body in SURROGATE_BODIES:
        field = next(k for k, v in _flat(body) if "MARK" in str(k) + str(v))
        classes["text"][f"surrogate in {route} {field}"] = _surrogate_body(route, body)
    for name, raw in (
        ("0xff", b'{"a": "\xff"}'),
        ("overlong", b'{"a": "\xc0\xaf"}'),
        ("CESU surrogate", b'{"a": "\xed\xa0\x80"}'),
        ("truncated", b'{"a": "\xe2\x82'),
        ("UTF-16", '{"a": 1}'.encode("utf-16")),
    ):
        classes["text"][f"body not UTF-8: {name}"] = _bad_utf8_body(raw)
    for table, column, value in PLANTED:
        classes["text"][f"stored {table}.{column}: {value[:16]!r}"] = _planted_row(table, column, value)
    for intent in STORY_INTENTS:
        classes["text"][f"story intent {intent}"] = _story_text(intent)
    for field in ("task", "action", "target"):
        classes["text"][f"store API: surrogate {field}"] = _store_text(field)
    for name in YAML_INPUTS:
        for door in YAML_DOORS:
            classes["yaml"][f"{name} -> {door}"] = _yaml_door(name, door)
    for service in ("trainer", "platform"):
        route = "/train" if service == "trainer" else "/feedback"
        mb50 = 50 * 1024 * 1024
        classes["http"][f"{service}: 50 MB, no token (declared)"] = _http(
            service, "POST", route, token="t", headers={}, size=mb50, want=(401,), max_pulled=0
        )
        classes["http"][f"{service}: 50 MB, no token (chunked)"] = _http(
            service, "POST", route, token="t", headers={}, size=mb50, chunked=True, want=(401,), max_pulled=0
        )
        classes["http"][f"{service}: 50 MB, wrong token"] = _http(
            service,
            "POST",
            route,
            token="t",
            headers={"authorization": "Bearer x"},
            size=mb50,
            want=(401,),
            max_pulled=0,
        )
        classes["http"][f"{service}: 50 MB, 'bearer t' lower case"] = _http(
            service,
            "POST",
            route,
            token="t",
            headers={"authorization": "bearer t"},
            size=mb50,
            want=(401,),
            max_pulled=0,
        )
        classes["http"][f"{service}: 50 MB with the token (declared)"] = _http(
            service,
            "POST",
            route,
            token="t",
            headers={"authorization": "Bearer t"},
            size=mb50,
            want=(413,),
            max_pulled=0,
        )
        classes["http"][f"{service}: 50 MB with the token (chunked)"] = _http(
            service,
            "POST",
            route,
            token="t",
            headers={"authorization": "Bearer t"},
            size=mb50,
            chunked=True,
            want=(413,),
            max_pulled=17 * 1024 * 1024,
        )
        classes["http"][f"{service}: 50 MB, no token set (declared)"] = _http(
            service, "POST", route, token=None, headers={}, size=mb50, want=(413,), max_pulled=0
        )
        for path in ("/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"):
            classes["http"][f"{service}: GET {path} without the token"] = _http(
                service, "GET", path, token="t", headers={}, size=0, want=(401,)
            )
        for name, raw in (
            ("100,000 deep", b"[" * 100_000 + b"]" * 100_000),
            ("not UTF-8", b'{"a": "\xff"}'),
            ("lone surrogate", b'{"jobId": "\\ud800", "runId": "r", "datasetRef": "x"}'),
            ("deep, no content type", b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"),
        ):
            headers = {"authorization": "Bearer t"} | (
                {} if "no content type" in name else {"content-type": "application/json"}
            )
            classes["http"][f"{service}: body {name}"] = _http(
                service, "POST", route, token="t", headers=headers, size=0, body=raw, want=(400, 413, 422)
            )
        classes["http"][f"{service}: served, 50 MB no token (declared)"] = _served_50mb(service, chunked=False)
        classes["http"][f"{service}: served, 50 MB no token (chunked)"] = _served_50mb(service, chunked=True)
    for how in DAMAGE:
        for door in ("open", "cli list"):
            classes["db"][f"registry {how[:40]} -> {door}"] = _registry_damage(how, door)
    for door in ("read", "write"):
        classes["db"][f"registry read-only -> {door}"] = _read_only(door)
    for store in ("feedback", "trainer", "experience"):
        for how in STORE_DAMAGE + STORE_DRIFT[store]:
            classes["db"][f"{store} store: {how[:40]}"] = _store_damage(store, how)
    for line in LEDGER_LINES:
        for door in ("read_ledger", "worldagent costs"):
            classes["rows"][f"ledger {line[:36]!r} -> {door}"] = _ledger(line, door)
    for entry, where in IMPORTER_ROWS:
        classes["rows"][f"importer {where} {json.dumps(entry)[:36]}"] = _importer(entry, where)
    for state in STATES:
        classes["rows"][f"predict state {json.dumps(state)[:40]}"] = _state(state)
    for text in PREDICT_TEXTS:
        classes["rows"][f"predict file {text[:30]!r}"] = _predict_file(text)
    for text in MANIFESTS:
        classes["rows"][f"experience manifest {text[:30]!r}"] = _experience_manifest(text)
    return {klass: dict(named) for klass, named in classes.items()}


def _flat(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in [(f"{prefix}{k}", v), *_flat(v, f"{prefix}{k}.")]]
    if isinstance(value, list):
        return [item for i, v in enumerate(value) for item in _flat(v, f"{prefix}{i}.")]
    return []


# What each class imports before its cases fork (not the cases' cost).
WARM: dict[str, tuple[str, ...]] = {
    "files": (
        "worldagent.cli",
        "worldagent.config",
        "worldagent.io",
        "worldagent.intervention.clip",
        "worldagent.stories.discover",
        "PIL.Image",
    ),
    "sandbox": ("worldagent.world_agent.environment", "worldagent.storytest.runner", "worldagent.tools.callformat"),
    "text": (
        "fastapi.testclient",
        "worldagent.specialists.api",
        "worldagent.specialists.service",
        "worldagent.stories.discover",
    ),
    "yaml": (
        "worldagent.cli",
        "worldagent.config",
        "worldagent.profiles",
        "worldagent.preflight",
        "worldagent.registry.deploy",
    ),
    "http": ("fastapi.testclient", "worldagent.specialists.api", "worldagent.specialists.trainer", "psutil"),
    "db": (
        "worldagent.cli",
        "worldagent.registry.api",
        "worldagent.registry.cli",
        "worldagent.specialists.store",
        "worldagent.specialists.trainer.runs",
        "worldagent.intervention.store",
    ),
    "rows": (
        "worldagent.cli",
        "worldagent.pipeline.costs",
        "worldagent.intervention.importer",
        "worldagent.intervention.serve",
        "worldagent.world_agent.experience",
    ),
}
