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

from benchmarks.common import free_port

SECRET = "TOP-SECRET-OUTSIDE-CONTENT"
PROJECT = Path(__file__).resolve().parents[1]
CLASSES = ("files", "sandbox", "text", "yaml", "http", "db", "rows")
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
    if snapshot(folder) != before:
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


_KEEP: list[Any] = []  # sockets, services and stores a case must keep open until it ends


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


def _bad_utf8_body(body: bytes, route: str = "/feedback") -> Case:
    def case(root: Path) -> str:
        client = _platform(root)
        answer = client.post(route, content=body, headers={"content-type": "application/json"})
        if answer.status_code >= 500:
            raise Breach(f"{answer.status_code}")
        return f"POST {answer.status_code}: {answer.text[:70]}"

    return case


def _planted_row(table: str, column: str, value: str, feedback: dict[str, Any], step: dict[str, Any]) -> Case:
    """A value an older version stored; every later request must still answer (also after a restart)."""

    def case(root: Path) -> str:
        client = _platform(root)
        job = client.post("/jobs", json={"name": "j", "scopeType": "agent", "scopeId": "a"}).json()
        client.post("/feedback", json=feedback)
        client.post("/executions", json={"id": "x", "targetId": "a", "task": "t", "steps": [step]})
        with sqlite3.connect(root / "feedback.db") as connection:
            connection.execute(f"UPDATE {table} SET {column} = ?", (value,))  # noqa: S608 - the case's own names
        client = _platform(root)  # a restart
        statuses = [client.get(path).status_code for path in ("/feedback", "/jobs", f"/jobs/{job['id']}")]
        statuses.append(client.post(f"/jobs/{job['id']}/training-data", json={"strategy": "from_runs"}).status_code)
        if any(status >= 500 for status in statuses):
            raise Breach(f"answers {statuses} after a stored row")
        return f"later answers {statuses}"

    return case


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
    size: int,
    want: list[int],
    headers: dict[str, str] | None = None,
    chunked: bool = False,
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

        header_list = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
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

        port = free_port()
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


def _open_store(store: str, url: str) -> tuple[Any, Callable[[Any], object]]:
    """A store of ``store``'s kind at ``url`` and the read its service makes first."""
    if store == "feedback":
        from worldagent.specialists.store import open_store

        return open_store(url), lambda opened: f"{len(opened.list_feedback())} rows"
    if store == "trainer":
        from worldagent.specialists.trainer.runs import RunState

        return RunState(url), lambda opened: opened.counts()
    from worldagent.intervention.store import open_store as open_experience

    return open_experience(url), lambda opened: opened.stats()["tasks"]


def _store_damage(store: str, how: str) -> Case:
    def case(root: Path) -> str:
        db = root / "store.db"
        url = f"sqlite:///{db}"
        _open_store(store, url)[0].close()
        _damage(db, how)

        def run() -> str:
            if store == "experience":  # the experience store must not create a fresh file over a damaged one
                from worldagent.intervention.store import open_store as open_experience

                opened, read = open_experience(url, create=False), lambda o: o.stats()["tasks"]
            else:
                opened, read = _open_store(store, url)
            try:
                return str(read(opened))
            finally:
                opened.close()

        return clean(run)

    return case


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


# -- the table of cases ---------------------------------------------------------------------------

CORPUS = PROJECT / "tests" / "fixtures" / "hostile" / "cases.json"


def expand(value: Any) -> Any:
    """The corpus as Python values: ``$rep`` [unit, n], ``$join`` [sep, part, n], ``$cat`` [parts],
    ``$utf8`` (text as bytes) and ``$hex`` (raw bytes) keep the file small and readable."""
    if isinstance(value, list):
        return [expand(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$rep" in value:
        return value["$rep"][0] * value["$rep"][1]
    if "$join" in value:
        separator, part, count = value["$join"]
        return separator.join([part] * count)
    if "$cat" in value:
        return "".join(expand(value["$cat"]))
    if "$utf8" in value:
        return expand(value["$utf8"]).encode("utf-8", "surrogatepass")
    if "$hex" in value:
        return bytes.fromhex(value["$hex"])
    return {k: expand(v) for k, v in value.items()}


def corpus() -> dict[str, Any]:
    return expand(json.loads(CORPUS.read_text(encoding="utf-8")))


class _Unique(dict):  # type: ignore[type-arg]
    """Case names stay unique: a second case under a name already taken gets ``#2``, ``#3``..."""

    def __setitem__(self, name: str, case: Case) -> None:
        unique, number = name, 1
        while unique in self:
            number += 1
            unique = f"{name} #{number}"
        super().__setitem__(unique, case)


def cases() -> dict[str, dict[str, Case]]:
    """Every case, by class: the corpus's values through each class's doors."""
    data = corpus()
    classes: dict[str, dict[str, Case]] = {name: _Unique() for name in CLASSES}
    files, text, rows = data["files"], data["text"], data["rows"]
    for kind in files["guard_read"]:
        classes["files"][f"guard read: {kind}"] = _guard_read(kind)
    for kind in files["door_kinds"]:
        for door in files["doors"]:
            classes["files"][f"{door}: {kind}"] = _door(kind, door)
    for path in files["resolve"]:
        classes["files"][f"resolve {path[:30]!r}"] = _resolve(path)
    for width, height in files["image_bombs"]:
        classes["files"][f"screenshot bomb {width}x{height}"] = _image_bomb(width, height)
    for tool, path, setup in data["sandbox"]["paths"]:
        classes["sandbox"][f"{tool} {str(path)[:28]!r} {setup}".strip()] = _sandbox_call(tool, path, setup)
    for count in data["sandbox"]["many_calls"]:
        classes["sandbox"][f"{count} calls in one answer"] = _many_calls(count)
    outside_writes = _call("writeStory", "../outside/x.stories.tsx") * 5000
    classes["sandbox"]["1 MB answer of outside writes"] = _answer_text(outside_writes)
    unterminated = "<start_function_call>call:writeStory{" * 10_000
    classes["sandbox"]["answer: 10,000 unterminated calls"] = _answer_text(unterminated)
    for route, body in text["surrogate_bodies"]:
        field = next(k for k, v in _flat(body) if "MARK" in str(k) + str(v))
        classes["text"][f"surrogate in {route} {field}"] = _surrogate_body(route, body)
    for name, raw in text["bad_utf8_bodies"].items():
        classes["text"][f"body not UTF-8: {name}"] = _bad_utf8_body(raw)
    for table, column, value in text["planted"]:
        classes["text"][f"stored {table}.{column}: {value[:16]!r}"] = _planted_row(
            table, column, value, text["feedback"], text["step"]
        )
    for intent in text["story_intents"]:
        classes["text"][f"story intent {intent}"] = _story_text(intent)
    for field in text["store_fields"]:
        classes["text"][f"store API: surrogate {field}"] = _store_text(field)
    for name in YAML_INPUTS:
        for door in YAML_DOORS:
            classes["yaml"][f"{name} -> {door}"] = _yaml_door(name, door)
    http = data["http"]
    for service in ("trainer", "platform"):
        route = "/train" if service == "trainer" else "/feedback"
        for name, request in http["requests"]:
            classes["http"][f"{service}: {name}"] = _http(service, "POST", route, **request)
        for path in http["unauthenticated_gets"]:
            classes["http"][f"{service}: GET {path} without the token"] = _http(
                service, "GET", path, token="t", size=0, want=[401]
            )
        for name, raw, typed in http["bodies"]:
            headers = {"authorization": "Bearer t"} | ({"content-type": "application/json"} if typed else {})
            classes["http"][f"{service}: body {name}"] = _http(
                service, "POST", route, token="t", headers=headers, size=0, body=raw, want=[400, 413, 422]
            )
        for chunked in (False, True):
            framing = "chunked" if chunked else "declared"
            classes["http"][f"{service}: served, 50 MB no token ({framing})"] = _served_50mb(service, chunked)
    db = data["db"]
    for how in db["damage"]:
        for door in ("open", "cli list"):
            classes["db"][f"registry {how[:40]} -> {door}"] = _registry_damage(how, door)
    for door in ("read", "write"):
        classes["db"][f"registry read-only -> {door}"] = _read_only(door)
    for store in ("feedback", "trainer", "experience"):
        for how in db["store_damage"] + db["store_drift"][store]:
            classes["db"][f"{store} store: {how[:40]}"] = _store_damage(store, how)
    for line in rows["ledger_lines"]:
        for door in ("read_ledger", "worldagent costs"):
            classes["rows"][f"ledger {line[:36]!r} -> {door}"] = _ledger(line, door)
    for entry, where in rows["importer_rows"]:
        classes["rows"][f"importer {where} {json.dumps(entry)[:36]}"] = _importer(entry, where)
    for state in rows["states"]:
        classes["rows"][f"predict state {json.dumps(state)[:40]}"] = _state(state)
    for raw_text in rows["predict_texts"]:
        classes["rows"][f"predict file {raw_text[:30]!r}"] = _predict_file(raw_text)
    for raw_text in rows["manifests"]:
        classes["rows"][f"experience manifest {raw_text[:30]!r}"] = _experience_manifest(raw_text)
    classes["earlier"] = earlier_cases()
    return {klass: dict(named) for klass, named in classes.items()}


def _flat(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in [(f"{prefix}{k}", v), *_flat(v, f"{prefix}{k}.")]]
    if isinstance(value, list):
        return [item for i, v in enumerate(value) for item in _flat(v, f"{prefix}{i}.")]
    return []


# -- earlier ----------------------------------------------------------------------------------------


def _write_template(unit: str, size: int) -> Case:
    def case(root: Path) -> str:
        from worldagent.behavioral import AgentConstraints
        from worldagent.world_agent.environment import content_checks

        constraints = AgentConstraints(
            known_tools=["writeTemplate"], path_allowed=lambda _p: True, checks=content_checks()
        )
        content = (unit * (size // len(unit) + 1))[:size]
        decision = constraints.propose("writeTemplate", {"path": "a/a.tsx", "content": content})
        rules = ",".join(sorted({v.rule for v in decision.violations})) or "-"
        return f"allowed={decision.allowed} rules={rules} message={len(' '.join(decision.messages))} chars"

    return case


def _deep_tool_call(root: Path) -> str:
    from worldagent.tools.callformat import parse_json_call

    return clean(lambda: parse_json_call("[" * 100_000))


def _feedback(body: str, plant: str | None = None) -> Case:
    """POST ``body`` to /feedback (or plant it as an old row), then GET /feedback must still answer."""

    def case(root: Path) -> str:
        client = _platform(root)
        headers = {"content-type": "application/json"}
        posted = client.post("/feedback", content=body, headers=headers).status_code
        if plant is not None:
            with sqlite3.connect(root / "feedback.db") as connection:
                connection.execute("UPDATE feedback SET input = ?", (plant,))
        listed = client.get("/feedback").status_code
        if posted >= 500 or listed >= 500:
            raise Breach(f"POST {posted}, GET {listed}")
        return f"POST {posted}, GET {listed}"

    return case


def _current_model_passwd(root: Path) -> str:
    client = _platform(root)
    job = client.post("/jobs", json={"name": "j", "scopeType": "agent", "scopeId": "a"}).json()
    response = client.patch(f"/jobs/{job['id']}", json={"currentModelRef": "/etc/passwd"})
    if response.status_code >= 500:
        raise Breach(f"PATCH {response.status_code}")
    return f"PATCH {response.status_code}: {response.json()['detail'][:45]}"


def _trainer_dataset_deep(root: Path) -> str:
    from fastapi.testclient import TestClient

    from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

    (root / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with TestClient(create_trainer_app(TrainerConfig(data_dirs=[root]), supervise=False)) as client:
        response = client.post("/train", json={"jobId": "j", "datasetRef": str(root / "deep.jsonl"), "runId": "r"})
    if response.status_code >= 500:
        raise Breach(f"POST /train {response.status_code}")
    return f"POST /train {response.status_code}"


def _cli_file(name: str, text: str, *args: str, exit_code: int) -> Case:
    """``worldagent ARGS PATH`` on a file ``name`` holding ``text``: the exit status it must give."""

    def case(root: Path) -> str:
        (root / name).write_text(text)
        outcome = cli(*args, str(root if name.endswith(".stories.tsx") else root / name), "--json")
        if not outcome.startswith(f"exit {exit_code}"):
            raise Breach(f"expected exit {exit_code}, got {outcome}")
        return outcome

    return case


def _big_story() -> str:
    """A story whose template maps a 2 MB string 32x32 (the interpreter must stop it, not build 2 GB)."""
    lines = ["import { story } from 'plaited/testing'", "const s0 = 'xxxxxxxxxxxxxxxx'"]
    lines += [f"const s{i} = s{i - 1} + s{i - 1}" for i in range(1, 18)]
    lines += [
        "const row = [" + ", ".join(["s17"] * 32) + "]",
        "const grid = row.map((a) => row.map((b) => a + b))",
        "export const big = story({ intent: 'x', template: () => <p>{grid.length}</p> })",
    ]
    return "\n".join(lines)


def earlier_cases() -> dict[str, Case]:
    """The rounds before the guard's classes: oversized content, deep JSON, stored rows, the story runner."""
    deep = '{"targetType": "agent", "targetId": "a", "input": ' + "[" * 100_000 + "]" * 100_000
    row = '{"targetType": "agent", "targetId": "a", "input": %s, "output": {"action": "click"}, "label": "good"}'
    return {
        "writeTemplate 1 MB of 'a style={1} '": _write_template("a style={1} ", 1024 * 1024),
        "writeTemplate 256 KB of 'a style={1} '": _write_template("a style={1} ", 256 * 1024 - 1),
        "writeTemplate 256 KB of '<a style={'": _write_template("<a style={", 256 * 1024 - 1),
        "tool-call JSON, 100,000 nested brackets": _deep_tool_call,
        "trainer datasetRef row, 100,000 nested": _trainer_dataset_deep,
        "platform: 50 MB feedback row": _feedback(row % json.dumps("x" * (50 * 1024 * 1024))),
        "platform: feedback string 256 deep": _feedback(row % json.dumps("[" * 256 + "]" * 256)),
        "platform: feedback body 100,000 deep": _feedback(deep + ', "output": 1, "label": "good"}'),
        "platform: GET /feedback with an old deep row": _feedback(
            row % '{"ok": 1}', plant="[" * 100_000 + "]" * 100_000
        ),
        "platform: current model /etc/passwd": _current_model_passwd,
        "corrupt registry file": _registry_damage("not a database", "open"),
        "story-test: 2 MB string mapped 32x32": _cli_file("big.stories.tsx", _big_story(), "story-test", exit_code=1),
        "a11y: 8,000 <img> without alt": _cli_file("p.html", "<img>" * 8000, "a11y", exit_code=1),
        "a11y: '<div ' * 16000": _cli_file("p.html", "<div " * 16000, "a11y", exit_code=0),
    }
