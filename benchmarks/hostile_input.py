"""Hostile input, by class (issue 84): every case ends in one clean line (or a bounded answer) within
5 s and 600 MB, with nothing outside its root read or changed and no stored row that breaks a later
request. Each case runs in its own process (forked from a worker that imported its class's modules),
so its time and peak memory are its own; the table gives, per class, the cases, how many passed, the
worst time and the worst peak.

    .venv/bin/python -m benchmarks.hostile_input              # the table; exit 1 if any case fails
    .venv/bin/python -m benchmarks.hostile_input --json       # the table and every case
    .venv/bin/python -m benchmarks.hostile_input --sample 3   # 3 cases of each class (the CI test)
    .venv/bin/python -m benchmarks.hostile_input --class yaml,http --list
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import arguments, peak_rss_mb

MAX_SECONDS = 5.0
MAX_PEAK_MB = 600.0  # the process as a whole: Python, FastAPI, SQLAlchemy and the input itself


CASE_TIMEOUT_S = 60.0  # a case still running then is killed and counted as failed


def all_cases() -> dict[str, dict[str, Callable[[Path], Any]]]:
    """Every case by class: the guard's classes, then the earlier rounds' (tests.fixtures.hostile.cases)."""
    from tests.fixtures.hostile.cases import cases

    return cases()


def _warm(klass: str) -> None:
    """Import what a class's cases use before any clock starts (imports are not a case's cost)."""
    import importlib

    from tests.fixtures.hostile.cases import corpus

    for module in corpus()["warm"][klass]:
        importlib.import_module(module)


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:  # noqa: PTH123 - the kernel's own file
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _run_forked(klass: str, name: str, case: Callable[[Path], Any]) -> dict[str, Any]:
    """Fork, run ``case`` in a fresh folder in the child, and read back its outcome, time and peak memory."""
    import os
    import select
    import shutil
    import signal

    from tests.fixtures.hostile.cases import Breach

    reader, writer = os.pipe()
    baseline = _rss_mb()
    pid = os.fork()
    if pid == 0:  # the child: one case, its own process
        os.close(reader)
        root = Path(tempfile.mkdtemp(prefix="hostile-"))
        try:
            started = time.perf_counter()
            try:
                outcome = case(root)
                ok = True
            except Breach as breach:
                outcome, ok = f"BREACH: {breach}", False
            except BaseException as error:  # noqa: BLE001 - reported, not raised: the parent records it
                outcome, ok = f"BREACH (harness): {type(error).__name__}: {error}", False
            seconds = time.perf_counter() - started
            if isinstance(outcome, tuple):  # a case that times its own part (a served request)
                outcome, seconds = outcome
            peak = peak_rss_mb()
            result = {"ok": ok, "outcome": str(outcome)[:160], "seconds": round(seconds, 3), "peak_mb": round(peak, 1)}
        finally:
            shutil.rmtree(root, ignore_errors=True)
        os.write(writer, json.dumps(result).encode("utf-8", "replace"))
        os.close(writer)
        os._exit(0)
    os.close(writer)
    chunks: list[bytes] = []
    deadline = time.monotonic() + CASE_TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([reader], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(reader, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    else:
        chunks = []
    os.close(reader)
    finished, _ = os.waitpid(pid, os.WNOHANG)
    if not finished:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    row: dict[str, Any] = {"class": klass, "case": name, "baseline_mb": round(baseline, 1)}
    try:
        row |= json.loads(b"".join(chunks))
    except ValueError:
        row |= {
            "ok": False,
            "outcome": f"no answer within {CASE_TIMEOUT_S:.0f} s (killed)",
            "seconds": None,
            "peak_mb": None,
        }
    return row


def run_worker(klass: str, names: list[str]) -> list[dict[str, Any]]:
    """In this process: warm the class's imports once, then each case in its own forked child."""
    _warm(klass)
    chosen = all_cases()[klass]
    return [_run_forked(klass, name, chosen[name]) for name in names]


def _within_bounds(row: dict[str, Any]) -> bool:
    return (
        bool(row.get("ok"))
        and row.get("seconds") is not None
        and row["seconds"] <= MAX_SECONDS
        and row["peak_mb"] is not None
        and row["peak_mb"] <= MAX_PEAK_MB
    )


def select_cases(classes: dict[str, dict[str, Any]], only: str | None, sample: int | None) -> dict[str, list[str]]:
    """The cases to run by class: all, or ``sample`` spread evenly over each class (deterministic)."""
    chosen: dict[str, list[str]] = {}
    for klass, named in classes.items():
        if only and klass not in only.split(","):
            continue
        names = list(named)
        if sample is not None and sample < len(names):
            step = len(names) / sample
            names = [names[int(i * step)] for i in range(sample)]
        chosen[klass] = names
    return chosen


def summary(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per class: cases, passed (clean and within the bounds), worst time and worst memory."""
    rows = []
    for klass in dict.fromkeys(r["class"] for r in results):
        mine = [r for r in results if r["class"] == klass]
        times = [r["seconds"] for r in mine if r["seconds"] is not None]
        peaks = [r["peak_mb"] for r in mine if r["peak_mb"] is not None]
        rows.append(
            {
                "class": klass,
                "cases": len(mine),
                "passed": sum(_within_bounds(r) for r in mine),
                "worst_seconds": max(times, default=None),
                "worst_peak_mb": max(peaks, default=None),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--class", dest="only", help="only these classes (comma-separated)")
    parser.add_argument("--sample", type=int, help="run this many cases of each class, spread evenly (CI)")
    parser.add_argument("--list", action="store_true", help="list the cases by class and exit")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # internal: run one class's cases in this process
    parser.add_argument("--cases", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        for row in run_worker(args.worker, json.loads(args.cases)):
            print(json.dumps(row), flush=True)
        return 0
    classes = all_cases()
    chosen = select_cases(classes, args.only, args.sample)
    if args.list:
        for klass, names in chosen.items():
            print(f"{klass} ({len(names)})")
            print("".join(f"  {name}\n" for name in names), end="")
        return 0
    results: list[dict[str, Any]] = []
    for klass, names in chosen.items():
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.hostile_input", "--worker", klass, "--cases", json.dumps(names)],
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S * len(names) + 120,
        )
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        seen = {row["case"] for row in rows}
        rows += [
            {
                "class": klass,
                "case": name,
                "ok": False,
                "seconds": None,
                "peak_mb": None,
                "outcome": f"worker crashed: {done.stderr.strip()[-200:]}",
            }
            for name in names
            if name not in seen
        ]
        results += rows
    table = summary(results)
    ok = all(_within_bounds(r) for r in results)
    if args.json:
        print(
            json.dumps(
                {"max_seconds": MAX_SECONDS, "max_peak_mb": MAX_PEAK_MB, "ok": ok, "classes": table, "cases": results},
                indent=2,
            )
        )
    else:
        print(
            f"{'class':10} {'cases':>6} {'passed':>7} {'worst s':>8} {'worst MB':>9}   (bounds: {MAX_SECONDS} s, {MAX_PEAK_MB} MB)"
        )
        for row in table:
            print(
                f"{row['class']:10} {row['cases']:>6} {row['passed']:>7} {row['worst_seconds']!s:>8} {row['worst_peak_mb']!s:>9}"
            )
        print(f"{'all':10} {len(results):>6} {sum(r['passed'] for r in table):>7}")
        for r in results:
            if not _within_bounds(r):
                print(f"  FAILED {r['class']}: {r['case']}: {r['seconds']} s, {r['peak_mb']} MB: {r['outcome']}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
