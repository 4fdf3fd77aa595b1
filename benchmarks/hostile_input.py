"""Hostile input outside the stories: each case ends in a clear error (or a bounded answer) within a few
seconds and a few hundred MB. Each case runs in its own process, so its peak memory is its own.

    .venv/bin/python -m benchmarks.hostile_input            # table on stdout; exit 1 if a bound is missed
    .venv/bin/python -m benchmarks.hostile_input --json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_SECONDS = 5.0
MAX_PEAK_MB = 600.0  # the process as a whole: Python, FastAPI, SQLAlchemy and the input itself


def _constraints() -> Any:
    from worldagent.behavioral import AgentConstraints
    from worldagent.world_agent.environment import content_checks

    return AgentConstraints(known_tools=["writeTemplate"], path_allowed=lambda _path: True, checks=content_checks())


def _write_template(unit: str, size: int) -> Callable[[], str]:
    def run() -> str:
        constraints = _constraints()
        content = (unit * (size // len(unit) + 1))[:size]
        decision = constraints.propose("writeTemplate", {"path": "a/a.tsx", "content": content})
        rules = sorted({v.rule for v in decision.violations})
        message = len(" ".join(decision.messages))
        return f"allowed={decision.allowed} rules={','.join(rules) or '-'} message={message} chars"

    return run


def _tool_call_json() -> str:
    from worldagent.tools.callformat import CallParseError, parse_json_call

    try:
        parse_json_call("[" * 100_000)
    except CallParseError as error:
        return f"CallParseError: {str(error)[:60]}"
    return "parsed (unexpected)"


def _platform(tmp: Path) -> Any:
    from fastapi.testclient import TestClient

    from worldagent.config import Params
    from worldagent.specialists.api import create_app
    from worldagent.specialists.service import SpecialistsService
    from worldagent.specialists.store import open_store

    params = Params()
    params = params.model_copy(
        update={"specialists": params.specialists.model_copy(update={"data_dir": str(tmp / "data")})}
    )
    service = SpecialistsService(
        store=open_store(f"sqlite:///{tmp / 'feedback.db'}"),
        params=params,
        root=tmp,
        registry_url=f"sqlite:///{tmp / 'registry.db'}",
        trainer_url="http://127.0.0.1:9",
    )
    return TestClient(create_app(service))


def _row(value: object) -> dict[str, object]:
    return {"targetType": "agent", "targetId": "a", "input": value, "output": {"action": "click"}, "label": "good"}


def _feedback_50mb() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        client = _platform(Path(tmp))
        body = json.dumps(_row("x" * (50 * 1024 * 1024)))
        response = client.post("/feedback", content=body, headers={"content-type": "application/json"})
        return f"POST {response.status_code}: {response.json()['detail'][:50]}"


def _feedback_deep() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        client = _platform(Path(tmp))
        inside = client.post("/feedback", json=_row("[" * 256 + "]" * 256))
        body = (
            '{"targetType": "agent", "targetId": "a", "input": '
            + "[" * 100_000
            + "]" * 100_000
            + ', "output": 1, "label": "good"}'
        )
        raw = client.post("/feedback", content=body, headers={"content-type": "application/json"})
        listing = client.get("/feedback")
        return f"string 256 deep: {inside.status_code}; body 100,000 deep: {raw.status_code}; GET {listing.status_code}"


def _feedback_listing_after_old_deep_row() -> str:
    import sqlite3

    with tempfile.TemporaryDirectory() as tmp:
        client = _platform(Path(tmp))
        client.post("/feedback", json=_row({"ok": 1}))
        with sqlite3.connect(Path(tmp) / "feedback.db") as connection:
            connection.execute("UPDATE feedback SET input = ?", ("[" * 100_000 + "]" * 100_000,))
        listing = client.get("/feedback")
        return f"GET {listing.status_code}"


def _current_model_passwd() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        client = _platform(Path(tmp))
        job = client.post("/jobs", json={"name": "j", "scopeType": "agent", "scopeId": "a"}).json()
        response = client.patch(f"/jobs/{job['id']}", json={"currentModelRef": "/etc/passwd"})
        return f"PATCH {response.status_code}: {response.json()['detail'][:45]}"


def _trainer_dataset_deep() -> str:
    from fastapi.testclient import TestClient

    from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        (data / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
        with TestClient(create_trainer_app(TrainerConfig(data_dirs=[data]), supervise=False)) as client:
            response = client.post("/train", json={"jobId": "j", "datasetRef": str(data / "deep.jsonl"), "runId": "r"})
        return f"POST /train {response.status_code}"


def _corrupt_registry() -> str:
    from worldagent.registry.api import open_registry
    from worldagent.registry.db import CorruptDatabaseError

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "registry.db"
        db.write_bytes(b"not a database" * 10_000)
        try:
            open_registry(f"sqlite:///{db}")
        except CorruptDatabaseError as error:
            return f"{type(error).__name__} ({len(str(error).splitlines())} line)"
    return "opened (unexpected)"


CASES: dict[str, Callable[[], str]] = {
    "writeTemplate 1 MB of 'a style={1} '": _write_template("a style={1} ", 1024 * 1024),
    "writeTemplate 256 KB of 'a style={1} '": _write_template("a style={1} ", 256 * 1024 - 1),
    "writeTemplate 256 KB of '<a style={'": _write_template("<a style={", 256 * 1024 - 1),
    "tool-call JSON, 100,000 nested brackets": _tool_call_json,
    "trainer datasetRef row, 100,000 nested": _trainer_dataset_deep,
    "platform: 50 MB feedback row": _feedback_50mb,
    "platform: feedback nested 256 / 100,000": _feedback_deep,
    "platform: GET /feedback with an old deep row": _feedback_listing_after_old_deep_row,
    "platform: current model /etc/passwd": _current_model_passwd,
    "corrupt registry file": _corrupt_registry,
}


def run_case(name: str) -> dict[str, object]:
    """In this process: import what the case needs, then time the case alone; peak RSS of the process."""
    case = CASES[name]
    # Imports are not the case's cost: load what the cases use before the clock starts.
    import fastapi.testclient  # noqa: F401

    import worldagent.registry.api  # noqa: F401
    import worldagent.specialists.api  # noqa: F401
    import worldagent.specialists.service  # noqa: F401
    import worldagent.specialists.trainer  # noqa: F401
    import worldagent.tools.callformat  # noqa: F401
    import worldagent.world_agent.environment  # noqa: F401

    started = time.perf_counter()
    outcome = case()
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"case": name, "seconds": round(seconds, 3), "peak_mb": round(peak_mb, 1), "outcome": outcome}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # internal: run one case in this process
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(args.case)))
        return 0
    results = []
    for name in CASES:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.hostile_input", "--case", name],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            results.append(
                {"case": name, "seconds": None, "peak_mb": None, "outcome": f"crashed: {done.stderr.strip()[-200:]}"}
            )
            continue
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    ok = all(r["seconds"] is not None and r["seconds"] <= MAX_SECONDS and r["peak_mb"] <= MAX_PEAK_MB for r in results)
    if args.json:
        print(
            json.dumps({"max_seconds": MAX_SECONDS, "max_peak_mb": MAX_PEAK_MB, "ok": ok, "cases": results}, indent=2)
        )
    else:
        print(f"{'case':46} {'seconds':>8} {'peak MB':>8}  outcome   (bounds: {MAX_SECONDS} s, {MAX_PEAK_MB} MB)")
        for r in results:
            print(f"{r['case']:46} {r['seconds']!s:>8} {r['peak_mb']!s:>8}  {r['outcome']}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
