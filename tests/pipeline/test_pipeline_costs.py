"""worldagent.pipeline.costs: the peak memory of the processes a step starts, the table, the ledger."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from worldagent.cli import main
from worldagent.errors import InputError
from worldagent.pipeline.costs import (
    GIB,
    PeakMemoryWatch,
    StepCost,
    append_ledger,
    cost_table,
    from_nothing_table,
    last_computed,
    read_ledger,
    run_summary,
)

MIB = 1024**2
# Touches every page of 300 MiB, lets it go, then sleeps: the peak is reached well before the end,
# so only a high-water mark (not the resident set at the last sample) still shows it.
ALLOCATE_THEN_FREE = "import time; b = b'x' * (300 << 20); del b; time.sleep(1.5)"


def child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def test_the_watch_keeps_the_peak_of_a_process_started_inside_it_after_it_freed_the_memory() -> None:
    with PeakMemoryWatch(interval_s=0.1) as watch:
        child(ALLOCATE_THEN_FREE).wait(timeout=60)
    assert watch.peak_bytes is not None
    assert 300 * MIB <= watch.peak_bytes < 2 * GIB


def test_a_process_running_before_the_watch_started_is_not_the_steps() -> None:
    earlier = child(ALLOCATE_THEN_FREE.replace("1.5", "5"))
    try:
        with PeakMemoryWatch(interval_s=0.1) as watch:
            child("import time; time.sleep(0.5)").wait(timeout=60)
    finally:
        earlier.kill()
        earlier.wait()
    assert watch.peak_bytes is not None and watch.peak_bytes < 300 * MIB  # the sleeper only


def test_a_step_that_starts_no_process_has_no_peak() -> None:
    with PeakMemoryWatch(interval_s=0.1) as watch:
        pass
    assert watch.peak_bytes is None


def test_the_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="interval_s"):
        PeakMemoryWatch(interval_s=0)


COSTS = [
    StepCost(step="sft", ran=True, seconds=3300.0, peak_rss_bytes=int(7.3 * GIB)),
    StepCost(step="evaluate_sft", ran=True, seconds=341.5, peak_rss_bytes=int(3.5 * GIB)),
    StepCost(step="compare", ran=False, seconds=2.4, peak_rss_bytes=None),
]


def test_the_table_has_a_row_per_step_and_the_total_and_largest_peak() -> None:
    table = cost_table(COSTS)
    assert "| sft | yes | 55 min 00 s | 7.30 GiB |" in table
    assert "| evaluate_sft | yes | 5 min 42 s | 3.50 GiB |" in table
    assert "| compare | up to date | 2.4 s | – |" in table
    assert "Total 60 min 44 s" in table and "peaked at 7.30 GiB" in table


def test_each_run_appends_one_line_to_the_ledger(tmp_path: Path) -> None:
    ledger = tmp_path / "logs" / "flow-runs.jsonl"
    when = datetime(2026, 11, 29, 4, 0, tzinfo=UTC)
    append_ledger(ledger, "world-agent", when, COSTS)
    append_ledger(ledger, "intervention", when, COSTS[:1])
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [record["family"] for record in records] == ["world-agent", "intervention"]
    assert records[0]["finished"] == "2026-11-29T04:00:00+00:00"
    assert records[0]["steps"] == [cost.to_dict() for cost in COSTS]
    assert records[0]["host"]["logical_cpus"] >= 1 and records[0]["host"]["memory_bytes"] > 0


def test_the_ledger_reads_back_oldest_first_and_by_family(tmp_path: Path) -> None:
    ledger = tmp_path / "flow-runs.jsonl"
    for hour, family in enumerate(["world-agent", "intervention", "world-agent"]):
        append_ledger(ledger, family, datetime(2026, 11, 29, hour, tzinfo=UTC), COSTS)
    assert [r["finished"][11:13] for r in read_ledger(ledger)] == ["00", "01", "02"]
    assert [r["finished"][11:13] for r in read_ledger(ledger, "world-agent")] == ["00", "02"]
    summary = run_summary(read_ledger(ledger)[0])
    assert "world-agent: 2 of 3 stages ran, 60 min 44 s, largest process 7.30 GiB" in summary


@pytest.mark.parametrize(
    "line",
    ['{"family": "world-agent"', '{"family": "x", "finished": "t", "host": {}, "steps": []}', '{"steps": [{"x": 1}]}'],
)
def test_a_line_that_is_not_a_record_is_named_by_its_line(tmp_path: Path, line: str) -> None:
    ledger = tmp_path / "flow-runs.jsonl"
    append_ledger(ledger, "world-agent", datetime(2026, 11, 29, tzinfo=UTC), COSTS)
    with ledger.open("a") as out:
        out.write(line + "\n")
    with pytest.raises(InputError, match=r"flow-runs\.jsonl:2: not a flow-run record"):
        read_ledger(ledger)


def test_no_ledger_yet_says_what_writes_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no flow run recorded yet.*make pipeline"):
        read_ledger(tmp_path / "flow-runs.jsonl")


def test_the_costs_command_lists_the_last_runs_then_the_last_ones_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "flow-runs.jsonl"
    append_ledger(ledger, "world-agent", datetime(2026, 11, 22, tzinfo=UTC), COSTS)
    append_ledger(ledger, "world-agent", datetime(2026, 11, 29, tzinfo=UTC), COSTS[1:])
    assert main(["costs", "--ledger", str(ledger), "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "2026-11-22" not in out and out.startswith("2026-11-29T00:00:00+00:00  world-agent: 1 of 2 stages ran")
    assert "| evaluate_sft | yes | 5 min 42 s | 3.50 GiB |" in out and "| sft |" not in out
    assert main(["costs", "--ledger", str(ledger), "--runs", "0"]) == 2
    assert main(["costs", "--ledger", str(ledger), "--family", "intervention"]) == 2
    assert "no run of family 'intervention'" in capsys.readouterr().err


def test_from_nothing_takes_each_step_from_the_last_run_that_computed_it(tmp_path: Path) -> None:
    ledger = tmp_path / "flow-runs.jsonl"
    week_one = [*COSTS[:2], StepCost(step="compare", ran=True, seconds=3.0, peak_rss_bytes=int(0.1 * GIB))]
    week_two = [
        StepCost(step="sft", ran=False, seconds=0.5, peak_rss_bytes=None),
        StepCost(step="evaluate_sft", ran=True, seconds=300.0, peak_rss_bytes=int(4.0 * GIB)),
        StepCost(step="compare", ran=False, seconds=0.4, peak_rss_bytes=None),
        StepCost(step="gate", ran=False, seconds=0.2, peak_rss_bytes=None),
    ]
    append_ledger(ledger, "world-agent", datetime(2026, 11, 22, tzinfo=UTC), week_one)
    append_ledger(ledger, "intervention", datetime(2026, 11, 23, tzinfo=UTC), COSTS[:1])
    append_ledger(ledger, "world-agent", datetime(2026, 11, 29, tzinfo=UTC), week_two)
    costs = last_computed(read_ledger(ledger, "world-agent"))
    assert [(cost.step, (cost.finished or "")[:10], cost.seconds) for cost in costs] == [
        ("sft", "2026-11-22", 3300.0),  # the second week kept SFT: its cost is the first week's
        ("evaluate_sft", "2026-11-29", 300.0),
        ("compare", "2026-11-22", 3.0),
        ("gate", "", None),  # no week computed it
    ]
    table = from_nothing_table(costs)
    assert "| sft | 2026-11-22T00:00:00+00:00 | 55 min 00 s | 7.30 GiB |" in table
    assert "| gate | not in the ledger | – | – |" in table
    assert "From nothing: 60 min 03 s" in table and "peaked at 7.30 GiB (sft)" in table
    assert "No recorded run computed gate" in table
    assert last_computed([]) == []


def test_the_costs_command_sums_each_familys_dag_from_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "flow-runs.jsonl"
    append_ledger(ledger, "world-agent", datetime(2026, 11, 22, tzinfo=UTC), COSTS)
    append_ledger(ledger, "intervention", datetime(2026, 11, 23, tzinfo=UTC), COSTS[1:2])
    assert main(["costs", "--ledger", str(ledger), "--from-nothing"]) == 0
    out = capsys.readouterr().out
    assert out.index("world-agent: each stage") < out.index("intervention: each stage")
    assert "From nothing: 60 min 42 s" in out and "No recorded run computed compare" in out
    assert main(["costs", "--ledger", str(ledger), "--from-nothing", "--family", "intervention"]) == 0
    assert "world-agent" not in capsys.readouterr().out


def test_a_runs_partial_lines_fold_into_one_record_and_its_whole_record_replaces_them(tmp_path: Path) -> None:
    ledger = tmp_path / "flow-runs.jsonl"
    week_one, week_two = "2026-11-22T00:00:00+00:00", "2026-11-29T00:00:00+00:00"
    append_ledger(ledger, "world-agent", datetime(2026, 11, 21, tzinfo=UTC), COSTS)  # an older line: no run
    for hour, cost in enumerate(COSTS):  # week one: every stage's line, then the whole record
        append_ledger(
            ledger, "world-agent", datetime(2026, 11, 22, hour, tzinfo=UTC), [cost], run=week_one, complete=False
        )
    append_ledger(ledger, "world-agent", datetime(2026, 11, 22, 5, tzinfo=UTC), COSTS, run=week_one)
    for hour, cost in enumerate(COSTS[:2]):  # week two stops after two stages
        append_ledger(
            ledger, "world-agent", datetime(2026, 11, 29, hour, tzinfo=UTC), [cost], run=week_two, complete=False
        )
    append_ledger(ledger, "intervention", datetime(2026, 11, 29, 3, tzinfo=UTC), COSTS[:1], run=week_two)
    records = read_ledger(ledger)
    assert [(r["family"], r["finished"][:13], r.get("complete")) for r in records] == [
        ("world-agent", "2026-11-21T00", None),
        ("world-agent", "2026-11-22T05", True),
        ("world-agent", "2026-11-29T01", False),
        ("intervention", "2026-11-29T03", True),  # another family's run of the same name is its own
    ]
    assert records[1]["steps"] == records[0]["steps"] == [cost.to_dict() for cost in COSTS]
    assert records[2]["steps"] == [cost.to_dict() for cost in COSTS[:2]]
    assert "2 of 2 stages ran (stopped before its end: only its finished stages)" in run_summary(records[2])
    assert "stopped" not in run_summary(records[1])
    # From nothing: the stopped week's stages from it, the rest from the last whole run, in its order.
    costs = last_computed(read_ledger(ledger, "world-agent"))
    assert [(c.step, (c.finished or "")[:10]) for c in costs] == [
        ("sft", "2026-11-29"),
        ("evaluate_sft", "2026-11-29"),
        ("compare", ""),  # up to date in every run: never computed
    ]


def test_a_run_that_stopped_before_any_whole_record_still_gives_its_steps(tmp_path: Path) -> None:
    ledger = tmp_path / "flow-runs.jsonl"
    run = "2026-11-29T00:00:00+00:00"
    append_ledger(ledger, "world-agent", datetime(2026, 11, 29, tzinfo=UTC), COSTS[:1], run=run, complete=False)
    assert [c.step for c in last_computed(read_ledger(ledger))] == ["sft"]
