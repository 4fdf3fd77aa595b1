"""Each stage of a family's DAG timed on its own, run without DVC or Prefect.

For a machine where DVC and Prefect are not installed (a lent GPU with only the training stack):
every stage runs as `dvc repro` would run it (`python -m tasks.<stage> --<arg> PATH ...`, paths from
the stage table, `${...}` from the parameters), writing into this checkout. A stage starts once the
stages that write its inputs have run; with `--jobs N`, up to N stages run side by side (the
evaluations beside the training chain, as `dvc repro` run by Prefect's parallel runner would), in
table order otherwise. A stage whose inputs a failed or skipped stage should have written is
skipped; one that fails does not stop the others. After each stage the timings go to `--out`
(atomically), so a run stopped at its deadline still says what it measured. `--overlay FILE` runs
with params.yaml plus that file's values (a partial params.yaml, as a profile is), written to
`<out>.params.yaml`. On CUDA each stage's peak GPU memory (nvidia-smi, its own process, sampled
each second) is recorded.

    python -m benchmarks.stages --out reports/stage-times.json                 # the world-agent DAG
    python -m benchmarks.stages --only base,sft --deadline 600 --out t.json    # a subset, 10 min at most
    python -m benchmarks.stages --jobs 4 --overlay profiles/gpu.yaml --out t.json  # on one GPU
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import BaseModel

from benchmarks.common import peak_rss_mb
from worldagent.config import load_params
from worldagent.errors import InputError, clean_errors
from worldagent.io import atomic_write_text
from worldagent.pipeline.costs import SamplingThread
from worldagent.pipeline.dvcfile import command
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.table import Pipeline, Stage, interpolate
from worldagent.profiles import apply_profile, read_profile

POLL_S = 0.2


@dataclass
class StageTime:
    stage: str
    status: str
    """ran | failed (exit status in ``detail``) | skipped (why in ``detail``) | timed out"""
    seconds: float = 0.0
    peak_gpu_mib: int | None = None
    detail: str = ""
    started_s: float | None = None
    """When it started, in seconds after the run began (stages run side by side with ``--jobs``)."""


def stage_command(stage: Stage, params: BaseModel) -> list[str]:
    """The command `dvc repro` runs for ``stage`` (dvc.yaml's), ``${...}`` read from params."""
    _python, *words = shlex.split(interpolate(" ".join(command(stage)), params))
    return [sys.executable, *words]


class GpuMemory(SamplingThread):
    """Each process's largest GPU memory in use (MiB, nvidia-smi's compute apps, sampled each
    ``interval_s``) while the block runs; nothing without nvidia-smi."""

    def __init__(self, interval_s: float = 1.0) -> None:
        super().__init__(interval_s)
        self.peak: dict[int, int] = {}

    def enabled(self) -> bool:
        return shutil.which("nvidia-smi") is not None

    def sample(self) -> None:
        try:
            output = subprocess.run(
                ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout
            for line in output.splitlines():
                pid, used = (int(word) for word in line.split(","))
                self.peak[pid] = max(self.peak.get(pid, 0), used)
        except (OSError, subprocess.SubprocessError, ValueError):
            self.stop_sampling()  # nvidia-smi that fails once keeps failing: no figures rather than noise


def _paths(stage: Stage, params: BaseModel) -> list[str]:
    """Every path ``stage`` writes."""
    return [interpolate(p, params) for p in (*stage.outputs.values(), *stage.reports.values(), *stage.metrics.values())]


def run_stages(
    pipeline: Pipeline,
    params: BaseModel,
    out: Path,
    only: set[str] | None = None,
    deadline_s: float | None = None,
    params_file: Path = Path("params.yaml"),
    jobs: int = 1,
) -> list[StageTime]:
    """Run the stages (``only`` these, if given), up to ``jobs`` at once, each once the stages that
    write its inputs have run; returns their timings in table order (also written to ``out``)."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    start = time.monotonic()
    stages = [stage for stage in pipeline.stages if only is None or stage.name in only]
    writer = {path: stage.name for stage in stages for path in _paths(stage, params)}
    needs = {
        stage.name: sorted({writer[p] for p in (interpolate(v, params) for v in stage.inputs.values()) if p in writer})
        for stage in stages
    }
    times: dict[str, StageTime] = {}
    running: dict[str, tuple[subprocess.Popen[bytes], float]] = {}

    def finish(name: str, result: StageTime) -> None:
        times[name] = result
        print(f"== {name}: {result.status} {result.seconds} s {result.detail}".rstrip(), flush=True)
        write(out, [times[s.name] for s in stages if s.name in times], start)

    with GpuMemory() as gpu:
        while len(times) < len(stages):
            now = time.monotonic() - start
            past_deadline = deadline_s is not None and now >= deadline_s
            for stage in stages:
                if stage.name in times or stage.name in running:
                    continue
                failed = [n for n in needs[stage.name] if n in times and times[n].status != "ran"]
                if failed:
                    finish(stage.name, StageTime(stage.name, "skipped", detail="no output from " + ", ".join(failed)))
                elif past_deadline:
                    finish(stage.name, StageTime(stage.name, "skipped", detail="past the deadline"))
                elif len(running) < jobs and all(n in times for n in needs[stage.name]):  # none failed
                    print(f"== {stage.name} (at {now:.0f} s)", flush=True)
                    process = subprocess.Popen([*stage_command(stage, params), "--params", str(params_file)])
                    running[stage.name] = (process, now)
            for name, (process, began) in list(running.items()):
                code = process.poll()
                if code is None and not past_deadline:
                    continue
                if code is None:
                    process.kill()
                    process.wait()
                del running[name]
                status = "timed out" if code is None else "ran" if code == 0 else "failed"
                seconds = round(time.monotonic() - start - began, 1)
                detail = "" if code in (0, None) else f"exit {code}"
                finish(name, StageTime(name, status, seconds, gpu.peak.get(process.pid), detail, round(began, 1)))
            if len(times) < len(stages):
                time.sleep(POLL_S)
    return [times[stage.name] for stage in stages]


def write(out: Path, times: list[StageTime], start: float) -> None:
    summary = {
        "stages": [asdict(t) for t in times],
        "total_s": round(time.monotonic() - start, 1),
        "peak_rss_gb": round(peak_rss_mb(children=True) / 1024, 2),
    }
    atomic_write_text(out, json.dumps(summary, indent=2) + "\n")


def overlaid_params(params_file: Path, overlay: Path, out: Path) -> Path:
    """``params_file`` with ``overlay``'s values written in (every key must exist), saved to ``out``."""
    if not overlay.is_file():
        raise InputError(f"{overlay}: no such overlay file")
    text = apply_profile(params_file.read_text(encoding="utf-8"), read_profile(overlay.stem, overlay.parent), overlay)
    atomic_write_text(out, text)
    return out


@clean_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stages", description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="world-agent", choices=sorted(p.family for p in PIPELINES))
    parser.add_argument("--params", default="params.yaml", type=Path, help="parameters file (default: params.yaml)")
    parser.add_argument("--overlay", type=Path, help="a partial params.yaml whose values replace --params' own")
    parser.add_argument("--only", help="comma-separated stage names (default: every stage of the family)")
    parser.add_argument("--jobs", type=int, default=1, help="stages run side by side at most (default: 1)")
    parser.add_argument("--deadline", type=float, help="seconds after which no stage starts and running ones stop")
    parser.add_argument("--out", type=Path, required=True, help="JSON file of the timings, rewritten after each stage")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    pipeline = next(p for p in PIPELINES if p.family == args.family)
    only = None if args.only is None else {name.strip() for name in args.only.split(",")}
    unknown = sorted((only or set()) - {stage.name for stage in pipeline.stages})
    if unknown:
        parser.error(f"--only: {args.family} has no stage(s) {', '.join(unknown)}")
    params_file = args.params
    if args.overlay is not None:
        params_file = overlaid_params(args.params, args.overlay, args.out.with_suffix(".params.yaml"))
    params = load_params(params_file)
    times = run_stages(pipeline, params, args.out, only, args.deadline, params_file, args.jobs)
    return 1 if any(t.status != "ran" for t in times) else 0


if __name__ == "__main__":
    raise SystemExit(main())
