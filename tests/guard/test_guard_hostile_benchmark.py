"""benchmarks/hostile_input.py in CI: a small sample of every class passes its bounds (the full run is `make bench`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.hostile_input import all_cases, select_cases, summary

PROJECT = Path(__file__).resolve().parents[2]


def test_at_least_200_cases_of_the_guards_classes() -> None:
    classes = all_cases()
    own = {klass: named for klass, named in classes.items() if klass != "earlier"}
    assert sum(len(named) for named in own.values()) >= 200
    assert set(own) == {"files", "sandbox", "text", "yaml", "http", "db", "rows"}
    assert all(len(named) >= 20 for named in own.values())


def test_a_sample_of_every_class_passes_its_bounds() -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WORLDAGENT_TORCH_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.hostile_input", "--sample", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=PROJECT,
        env=env,
    )
    report = json.loads(done.stdout)
    failed = [case for case in report["cases"] if not case["ok"]]
    assert done.returncode == 0 and report["ok"], failed or report["cases"]
    assert {row["class"] for row in report["classes"]} == set(all_cases())
    assert all(row["passed"] == row["cases"] == 2 for row in report["classes"])


def test_the_sample_and_the_table() -> None:
    chosen = select_cases({"a": dict.fromkeys("abcdefghij")}, None, 3)
    assert chosen == {"a": ["a", "d", "g"]}
    rows = [
        {"class": "a", "case": "1", "ok": True, "seconds": 0.5, "peak_mb": 100.0},
        {"class": "a", "case": "2", "ok": True, "seconds": 6.0, "peak_mb": 90.0},
        {"class": "a", "case": "3", "ok": False, "seconds": None, "peak_mb": None},
    ]
    assert summary(rows) == [{"class": "a", "cases": 3, "passed": 1, "worst_seconds": 6.0, "worst_peak_mb": 100.0}]
