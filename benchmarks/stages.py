"""Each stage of a family's DAG timed on its own, run in table order without DVC or Prefect.

For a machine where DVC and Prefect are not installed (a lent GPU with only the training stack):
every stage runs as `dvc repro` would run it (`python -m tasks.<stage> --<arg> PATH ...`, paths from
the stage table, `${...}` from params.yaml), writing into this checkout. A stage whose inputs a
failed or skipped stage should have written is skipped; one that fails does not stop the others.
After each stage the timings go to `--out` (atomically), so a run stopped at its deadline still
says what it measured. On CUDA the GPU's peak memory in use (nvidia-smi, sampled each second) is
recorded per stage.

    python -m benchmarks.stages --out reports/stage-times.json                 # the world-agent DAG
    python -m benchmarks.stages --only base,sft --deadline 600 --out t.json    # a subset, 10 min at most
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import BaseModel

from worldagent.config import load_params
from worldagent.io import atomic_write_text
from worldagent.pipeline.dvcfile import command
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.table import Pipeline, Stage, interpolate


@dataclass
class StageTime:
    stage: str
    status: str
    """ran | failed (exit status in ``detail``) | skipped (why in ``detail``) | timed out"""
    seconds: float = 0.0
    peak_gpu_mib: int | None = None
    detail: str = ""


def stage_command(stage: Stage, params: BaseModel) -> list[str]:
    """The command `dvc repro` runs for ``stage`` (dvc.yaml's), ``${...}`` read from params."""
    _python, *words = shlex.split(interpolate(" ".join(command(stage)), params))
    return [sys.executable, *words]


class GpuMemoryPeak:
    """The largest GPU memory in use (MiB, nvidia-smi) while the block runs; None without nvidia-smi."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.interval_s = interval_s
        self.peak: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                output = subprocess.run(
                    ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                    capture_output=True,
                    text=True,
                    timeout=10,
                    check=True,
                ).stdout
                used = max(int(line) for line in output.split() if line.strip().isdigit())
                self.peak = used if self.peak is None else max(self.peak, used)
            except (OSError, subprocess.SubprocessError, ValueError):
                return
            self._stop.wait(self.interval_s)

    def __enter__(self) -> GpuMemoryPeak:
        if shutil.which("nvidia-smi"):
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def run_stages(
    pipeline: Pipeline,
    params: BaseModel,
    out: Path,
    only: set[str] | None = None,
    deadline_s: float | None = None,
    params_file: Path = Path("params.yaml"),
) -> list[StageTime]:
    start = time.monotonic()
    times: list[StageTime] = []
    missing: dict[str, str] = {}  # path a stage did not write → that stage
    for stage in pipeline.stages:
        if only is not None and stage.name not in only:
            continue
        needs = [interpolate(path, params) for path in stage.inputs.values()]
        blocked = sorted({missing[path] for path in needs if path in missing})
        left = None if deadline_s is None else deadline_s - (time.monotonic() - start)
        if blocked:
            result = StageTime(stage.name, "skipped", detail="no output from " + ", ".join(blocked))
        elif left is not None and left <= 0:
            result = StageTime(stage.name, "skipped", detail="past the deadline")
        else:
            print(f"== {stage.name}", flush=True)
            began = time.monotonic()
            with GpuMemoryPeak() as gpu:
                try:
                    command = [*stage_command(stage, params), "--params", str(params_file)]
                    code = subprocess.run(command, timeout=left).returncode
                    status = "ran" if code == 0 else "failed"
                except subprocess.TimeoutExpired:
                    code, status = None, "timed out"
            result = StageTime(
                stage.name,
                status,
                round(time.monotonic() - began, 1),
                gpu.peak,
                "" if code in (0, None) else f"exit {code}",
            )
        if result.status != "ran":
            for path in [*stage.outputs.values(), *stage.reports.values(), *stage.metrics.values()]:
                missing[interpolate(path, params)] = stage.name
        times.append(result)
        print(f"== {stage.name}: {result.status} {result.seconds} s {result.detail}", flush=True)
        write(out, times, start)
    return times


def write(out: Path, times: list[StageTime], start: float) -> None:
    summary = {
        "stages": [asdict(t) for t in times],
        "total_s": round(time.monotonic() - start, 1),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2, 2),
    }
    atomic_write_text(out, json.dumps(summary, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stages", description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="world-agent", choices=sorted(p.family for p in PIPELINES))
    parser.add_argument("--params", default="params.yaml", type=Path, help="parameters file (default: params.yaml)")
    parser.add_argument("--only", help="comma-separated stage names (default: every stage of the family)")
    parser.add_argument("--deadline", type=float, help="seconds after which no stage starts and a running one stops")
    parser.add_argument("--out", type=Path, required=True, help="JSON file of the timings, rewritten after each stage")
    args = parser.parse_args(argv)
    pipeline = next(p for p in PIPELINES if p.family == args.family)
    only = None if args.only is None else {name.strip() for name in args.only.split(",")}
    unknown = sorted((only or set()) - {stage.name for stage in pipeline.stages})
    if unknown:
        parser.error(f"--only: {args.family} has no stage(s) {', '.join(unknown)}")
    times = run_stages(pipeline, load_params(args.params), args.out, only, args.deadline, args.params)
    if any(t.status != "ran" for t in times):
        sys.exit(1)


if __name__ == "__main__":
    main()
