"""What each step of a flow run cost: its wall time and the peak memory of the processes it started.

The flows run every file-to-file stage through DVC, whose stage command is a child process of the
task that asked for it. :class:`PeakMemoryWatch` watches the processes that appear under the
current one while a step runs and keeps the largest peak resident set of any of them (Linux's
``VmHWM``, the kernel's own high-water mark, so a peak between two samples is not lost while the
process lives; elsewhere the largest resident set sampled). Processes already running when the
watch starts (a temporary Prefect server the flow started) are not the step's and are left out. A
process is found by sampling, so one that lives less than :data:`SAMPLE_INTERVAL_S` can be missed:
a stage that took a second shows no peak (`–`), which is not a number anyone needs.

Costs describe a run on one machine, not an artifact, so they never go into a DVC output (whose
bytes must not depend on the host): the flows return them with their result, log a table, and
append them to a ledger (:func:`append_ledger`) that weekly runs add to. Each stage's cost is
appended the moment the stage ends, as a partial line of its run, and the run's whole record when
the flow ends; :func:`read_ledger` folds a run's lines into one record, so a run that failed or was
stopped (a killed process, a machine handed back) keeps what its finished stages cost, marked
``complete: false``.

The watch attributes every new process to the step: true when one step runs at a time in the
process (the sequential runner, or a local Dask worker with one thread); a task runner that runs
several steps in one process at once mixes their processes.
"""

from __future__ import annotations

import json
import math
import os
import platform
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import psutil

from worldagent import safejson
from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.guard.text import check_value

SAMPLE_INTERVAL_S = 0.2  # a process that ends sooner can be missed: a stage DVC ran in a second or two
GIB = 1024**3
# Where the flows append one JSON line per family and run, relative to the project root.
DEFAULT_LEDGER = Path("logs/flow-runs.jsonl")


@dataclass(frozen=True)
class StepCost:
    """One step of a flow run: ``ran`` is False when DVC found it up to date (nothing computed)."""

    step: str
    ran: bool
    seconds: float
    peak_rss_bytes: int | None  # the largest process the step started; None: it started none

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def process_peak_bytes(process: psutil.Process) -> int:
    """The peak resident set of ``process`` so far: ``VmHWM`` where the kernel keeps it, else its
    resident set now."""
    try:
        with open(f"/proc/{process.pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # reported in kB
    except OSError:
        pass
    return int(process.memory_info().rss)


class SamplingThread:
    """Calls :meth:`sample` every ``interval_s`` on a thread of its own while the ``with`` block runs,
    and once more as it ends; a subclass says what a sample reads, and whether it can (``enabled``)."""

    def __init__(self, interval_s: float) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be above 0")
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def enabled(self) -> bool:
        return True

    def sample(self) -> None:
        raise NotImplementedError

    def stop_sampling(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def __enter__(self) -> Self:
        if self.enabled():
            self._thread = threading.Thread(target=self._run, name=type(self).__name__, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self.sample()


class PeakMemoryWatch(SamplingThread):
    """``with PeakMemoryWatch() as watch: ...``, then ``watch.peak_bytes``: the largest peak resident
    set of a process that appeared under this one inside the block (None when none appeared)."""

    def __init__(self, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        super().__init__(interval_s)
        self.peak_bytes: int | None = None
        self._me = psutil.Process()
        self._before: set[int] = set()
        self._peaks: dict[tuple[int, float], int] = {}  # (pid, start time): a reused pid is another process

    def __enter__(self) -> Self:
        self._before = {child.pid for child in self._children()}
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.peak_bytes = max(self._peaks.values(), default=None)

    def _children(self) -> list[psutil.Process]:
        try:
            return self._me.children(recursive=True)
        except psutil.Error:
            return []

    def sample(self) -> None:
        """Read the peak of every process that appeared under this one since the watch started."""
        for child in self._children():
            if child.pid in self._before:
                continue
            try:
                key = (child.pid, child.create_time())
                self._peaks[key] = max(self._peaks.get(key, 0), process_peak_bytes(child))
            except psutil.Error:  # it ended between the listing and the read
                continue


def host_summary() -> dict[str, Any]:
    """Which machine a run's costs belong to: its CPU, cores, memory and torch threads."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            names = [line.split(":", 1)[1].strip() for line in info if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return {
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "memory_bytes": int(psutil.virtual_memory().total),
        "torch_threads": os.environ.get("WORLDAGENT_TORCH_THREADS"),
    }


def largest_peak(costs: Sequence[StepCost]) -> int | None:
    """The largest peak of ``costs`` (None when no step has one)."""
    return max((cost.peak_rss_bytes for cost in costs if cost.peak_rss_bytes is not None), default=None)


def _gib(value: int | None) -> str:
    return "–" if value is None else f"{value / GIB:.2f} GiB"


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{seconds:.1f} s"


def cost_table(costs: Sequence[StepCost]) -> str:
    """A markdown table of ``costs``, then the run's total time and its largest peak."""
    lines = ["| step | ran | wall time | peak memory |", "|---|---|---:|---:|"]
    lines += [
        f"| {cost.step} | {'yes' if cost.ran else 'up to date'} | {_duration(cost.seconds)} | {_gib(cost.peak_rss_bytes)} |"
        for cost in costs
    ]
    total = sum(cost.seconds for cost in costs)
    peak = largest_peak(costs)
    lines.append(f"\nTotal {_duration(total)} (steps one after another); the largest process peaked at {_gib(peak)}.")
    return "\n".join(lines)


def run_summary(record: dict[str, Any]) -> str:
    """One line for a ledger record: when, which family, what ran, how long and how much memory."""
    costs = [StepCost(**step) for step in record["steps"]]
    ran = [cost.step for cost in costs if cost.ran]
    peak = largest_peak(costs)
    stopped = "" if record.get("complete", True) else " (stopped before its end: only its finished stages)"
    return (
        f"{record['finished']}  {record['family']}: {len(ran)} of {len(costs)} stages ran{stopped}, "
        f"{_duration(sum(cost.seconds for cost in costs))}, largest process {_gib(peak)} ({record['host']['cpu']}, "
        f"{record['host']['logical_cpus']} cores)"
    )


@dataclass(frozen=True)
class ComputedCost:
    """A step's cost in the last recorded run that computed it (``finished`` None: no run did)."""

    step: str
    finished: str | None
    seconds: float | None
    peak_rss_bytes: int | None


def last_computed(records: Sequence[dict[str, Any]]) -> list[ComputedCost]:
    """Each step of the newest record, in its order, with its cost in the newest record where DVC ran
    it: what the whole DAG costs from nothing, when a weekly run recomputes only what changed.

    The records are one family's, oldest first (:func:`read_ledger`); a step no record computed has
    no cost (its ``finished`` is None)."""
    if not records:
        return []
    costs = []
    for step in _step_order(records):
        computed = [
            (record["finished"], entry)
            for record in records
            for entry in record["steps"]
            if entry["step"] == step and entry["ran"]
        ]
        if computed:
            finished, entry = computed[-1]
            costs.append(ComputedCost(step, finished, float(entry["seconds"]), entry["peak_rss_bytes"]))
        else:
            costs.append(ComputedCost(step, None, None, None))
    return costs


def _step_order(records: Sequence[dict[str, Any]]) -> list[str]:
    """The steps of the newest complete run, in its order, then those only a later (stopped) run
    recorded; every recorded step in first-seen order when no run completed."""
    complete = [record for record in records if record.get("complete", True)]
    base = complete[-1:] if complete else []
    later = records[records.index(base[0]) + 1 :] if base else records
    return list(dict.fromkeys(entry["step"] for record in [*base, *later] for entry in record["steps"]))


def from_nothing_table(costs: Sequence[ComputedCost]) -> str:
    """A markdown table of :func:`last_computed`, then the sum of the steps' times, the largest peak
    and its step, and the steps no recorded run computed (left out of the sum)."""
    lines = ["| step | last computed | wall time | peak memory |", "|---|---|---:|---:|"]
    for cost in costs:
        if cost.finished is None:
            lines.append(f"| {cost.step} | not in the ledger | – | – |")
        else:
            seconds = _duration(cost.seconds or 0.0)
            lines.append(f"| {cost.step} | {cost.finished} | {seconds} | {_gib(cost.peak_rss_bytes)} |")
    recorded = [cost for cost in costs if cost.finished is not None]
    peaks = [cost for cost in recorded if cost.peak_rss_bytes is not None]
    largest = max(peaks, key=lambda cost: cost.peak_rss_bytes or 0, default=None)
    summary = f"\nFrom nothing: {_duration(sum(cost.seconds or 0.0 for cost in recorded))} (steps one after another)"
    summary += f"; the largest process peaked at {_gib(largest.peak_rss_bytes)} ({largest.step})." if largest else "."
    missing = [cost.step for cost in costs if cost.finished is None]
    if missing:
        summary += f" No recorded run computed {', '.join(missing)}: the sum leaves those out."
    return "\n".join([*lines, summary])


MAX_LEDGER_BYTES = 256 * 1024 * 1024  # years of weekly runs; bounds a hostile or runaway file


def _number(value: Any, *, whole: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return False
    return not whole or value == int(value)


def ledger_record_problem(record: Any) -> str | None:
    """Why one parsed ledger line is not a flow-run record (the field named), or None."""
    if not isinstance(record, dict):
        return f"expected an object, got {type(record).__name__}"
    for key in ("family", "finished"):
        if not isinstance(record.get(key), str):
            return f"'{key}' must be text"
    if "run" in record and not isinstance(record["run"], str):
        return "'run' must be text"
    if "complete" in record and not isinstance(record["complete"], bool):
        return "'complete' must be true or false"
    host = record.get("host")
    if not isinstance(host, dict) or "cpu" not in host or "logical_cpus" not in host:
        return "'host' must be an object with 'cpu' and 'logical_cpus'"
    steps = record.get("steps")
    if not isinstance(steps, list):
        return "'steps' must be a list"
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or set(step) != {"step", "ran", "seconds", "peak_rss_bytes"}:
            return f"steps[{index}] must be an object with step, ran, seconds and peak_rss_bytes"
        if not isinstance(step["step"], str) or not isinstance(step["ran"], bool):
            return f"steps[{index}]: 'step' must be text and 'ran' true or false"
        if not _number(step["seconds"]):
            return f"steps[{index}].seconds: expected a number of seconds, got {step['seconds']!r}"
        peak = step["peak_rss_bytes"]
        if peak is not None and not _number(peak, whole=True):
            return f"steps[{index}].peak_rss_bytes: expected a whole number of bytes or null, got {peak!r}"
    return None


def read_ledger(path: Path, family: str | None = None) -> list[dict[str, Any]]:
    """The ledger's records, oldest first (only ``family``'s when given); a line that is not a record
    is an :class:`InputError` naming its line and field. Read through the file guard (a regular file
    under :data:`MAX_LEDGER_BYTES`, UTF-8) and the text policy."""
    if not path.is_file():
        raise InputError(f"{path}: no flow run recorded yet (`make pipeline` or `python -m flows.<family>` writes it)")
    text = files.read_text(path, max_bytes=MAX_LEDGER_BYTES, what="the flow-run ledger")
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = safejson.loads(line)  # nesting past safejson.MAX_DEPTH is a parse error
        except json.JSONDecodeError as error:
            raise InputError(
                f"{where}: not a flow-run record (invalid JSON at column {error.colno}: {error.msg})"
            ) from None
        check_value(record, where)
        problem = ledger_record_problem(record)
        if problem is not None:
            raise InputError(f"{where}: not a flow-run record ({problem})")
        if family is None or record["family"] == family:
            records.append(record)
    return fold_runs(records)


def fold_runs(lines: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per run, where the run's last line was: a run's whole record (``complete``) stands
    for the partial lines its stages wrote; a run that has only partial lines becomes one record with
    their steps in order, ``complete: false``. Lines without a ``run`` (older ledgers) are whole records."""
    parts: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in lines:
        if "run" in line:
            parts.setdefault((line["family"], line["run"]), []).append(line)
    folded = []
    for line in lines:
        run = parts.get((line["family"], line["run"])) if "run" in line else None
        if run is None:
            folded.append(line)
        elif line is run[-1]:
            whole = [part for part in run if part.get("complete", True)]
            steps = [step for part in run for step in part["steps"]]
            folded.append(whole[-1] if whole else {**line, "steps": steps, "complete": False})
    return folded


def append_ledger(
    path: Path,
    family: str,
    finished: datetime,
    costs: Sequence[StepCost],
    *,
    run: str | None = None,
    complete: bool = True,
    profile: str | None = None,
) -> dict[str, Any]:
    """Append one JSON line for ``family`` to ``path`` (created with its folder); the record.

    ``run`` names the flow run the line belongs to; ``complete=False`` marks a partial line (one
    stage's cost, written as it ends), which the run's whole record replaces when the flow ends.
    ``profile`` names the profile params.yaml was set to, so a later run's plan
    (:mod:`worldagent.pipeline.plan`) reads only the same profile's times."""
    record: dict[str, Any] = {
        "family": family,
        "finished": finished.astimezone(UTC).isoformat(timespec="seconds"),
        "host": host_summary(),
        "steps": [cost.to_dict() for cost in costs],
    }
    if run is not None:
        record |= {"run": run, "complete": complete}
    if profile is not None:
        record["profile"] = profile
    path.parent.mkdir(parents=True, exist_ok=True)
    # One write() on an O_APPEND descriptor: lines that stages in other processes append at the
    # same moment never interleave.
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, (json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))
    finally:
        os.close(descriptor)
    return record
