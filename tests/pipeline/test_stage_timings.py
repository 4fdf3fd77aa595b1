"""benchmarks.stages: the world-agent DAG's stages run and timed without DVC or Prefect."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
import yaml

from benchmarks.stages import GpuMemory, overlaid_params, run_stages, stage_command
from worldagent.config import load_params
from worldagent.errors import InputError
from worldagent.pipeline import world_agent
from worldagent.pipeline.table import Pipeline, Stage

PROJECT = Path(__file__).resolve().parents[2]


def test_each_command_is_the_one_dvc_runs() -> None:
    params = load_params(PROJECT / "params.yaml")
    stages = yaml.safe_load((PROJECT / "dvc.yaml").read_text())["stages"]
    stories_dir = params.discover.stories_dir
    for stage in world_agent.PIPELINE.stages:
        expected = stages[stage.name]["cmd"].replace("${discover.stories_dir}", str(stories_dir)).split()
        assert stage_command(stage, params) == [sys.executable, *expected[1:]], stage.name


STAGE_MODULE = """
import argparse, pathlib, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--source")
parser.add_argument("--out")
parser.add_argument("--params")
args = parser.parse_args()
if {fail}:
    sys.exit(3)
if args.source:
    pathlib.Path(args.source).read_text()
began = time.time()
time.sleep({sleep})
pathlib.Path(args.out).write_text(f"{{began}} {{time.time()}}")
"""


def write_stage(directory: Path, name: str, *, fail: bool = False, sleep: float = 0) -> None:
    """A stage module ``name`` that fails or writes ``--out`` (when it began and ended) after ``sleep`` s."""
    (directory / f"{name}.py").write_text(STAGE_MODULE.format(fail=fail, sleep=sleep))


def script_command(stage: Stage, params: object) -> list[str]:
    """A test stage's module run as a script: the generic entry knows only the project's tables."""
    paths = [part for name, path in stage.arguments.items() for part in (f"--{name}", path)]
    return [sys.executable, "-m", stage.entry.partition(":")[0], *paths]


@pytest.fixture
def stage_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory whose stage modules (``write_stage``) the stages import."""
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr("benchmarks.stages.stage_command", script_command)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _span(path: Path) -> tuple[float, float]:
    began, ended = (float(word) for word in path.read_text().split())
    return began, ended


def _pipeline(*steps: Stage) -> Pipeline:
    return Pipeline(family="test", steps=steps, report="r.md", gate="g.json", champion="c.json", registry_family="r.f")


def test_a_failed_stage_skips_what_needs_its_output_and_not_the_rest(stage_dir: Path) -> None:
    write_stage(stage_dir, "failing_stage", fail=True)
    write_stage(stage_dir, "working_stage")
    pipeline = _pipeline(
        Stage("first", "failing_stage", "fails", outputs={"out": "first.txt"}),
        Stage("second", "working_stage", "needs first", inputs={"source": "first.txt"}, outputs={"out": "2.txt"}),
        Stage("third", "working_stage", "independent", outputs={"out": "third.txt"}),
    )
    out = stage_dir / "times.json"

    times = run_stages(pipeline, load_params(PROJECT / "params.yaml"), out, only=None, deadline_s=None)

    assert [(t.stage, t.status) for t in times] == [("first", "failed"), ("second", "skipped"), ("third", "ran")]
    assert times[0].detail == "exit 3" and times[1].detail == "no output from first"
    assert (stage_dir / "third.txt").is_file() and not (stage_dir / "2.txt").exists()
    written = json.loads(out.read_text())
    assert [s["status"] for s in written["stages"]] == ["failed", "skipped", "ran"]


def test_no_stage_starts_past_the_deadline(tmp_path: Path) -> None:
    pipeline = _pipeline(Stage("first", "never_imported", "not run", outputs={"out": "first.txt"}))
    times = run_stages(pipeline, load_params(PROJECT / "params.yaml"), tmp_path / "t.json", None, deadline_s=0)
    assert [(t.status, t.detail) for t in times] == [("skipped", "past the deadline")]


def test_with_jobs_independent_stages_overlap_and_a_stage_waits_for_its_inputs(stage_dir: Path) -> None:
    write_stage(stage_dir, "slow_stage", sleep=1.5)
    write_stage(stage_dir, "quick_stage")
    pipeline = _pipeline(
        Stage("train", "slow_stage", "the chain", outputs={"out": "model.txt"}),
        Stage("evaluate", "quick_stage", "needs train", inputs={"source": "model.txt"}, outputs={"out": "e.txt"}),
        Stage("other", "slow_stage", "independent", outputs={"out": "other.txt"}),
    )

    times = run_stages(pipeline, load_params(PROJECT / "params.yaml"), stage_dir / "t.json", jobs=2)

    assert [(t.stage, t.status) for t in times] == [("train", "ran"), ("evaluate", "ran"), ("other", "ran")]
    train, evaluate, other = (_span(stage_dir / name) for name in ("model.txt", "e.txt", "other.txt"))
    assert other[0] < train[1] and train[0] < other[1]  # side by side
    assert evaluate[0] >= train[1]  # only once its input was written
    assert all(t.started_s is not None for t in times)


def test_one_job_runs_the_stages_one_after_another(stage_dir: Path) -> None:
    write_stage(stage_dir, "slow_stage", sleep=0.3)
    pipeline = _pipeline(
        Stage("first", "slow_stage", "independent", outputs={"out": "1.txt"}),
        Stage("second", "slow_stage", "independent", outputs={"out": "2.txt"}),
    )

    run_stages(pipeline, load_params(PROJECT / "params.yaml"), stage_dir / "t.json", jobs=1)

    assert _span(stage_dir / "2.txt")[0] >= _span(stage_dir / "1.txt")[1]


def test_a_stage_running_at_the_deadline_is_stopped(stage_dir: Path) -> None:
    write_stage(stage_dir, "slow_stage", sleep=60)
    pipeline = _pipeline(
        Stage("long", "slow_stage", "outlives the deadline", outputs={"out": "1.txt"}),
        Stage("after", "slow_stage", "needs it", inputs={"source": "1.txt"}, outputs={"out": "2.txt"}),
    )

    times = run_stages(pipeline, load_params(PROJECT / "params.yaml"), stage_dir / "t.json", deadline_s=1.0)

    assert [(t.stage, t.status) for t in times] == [("long", "timed out"), ("after", "skipped")]
    assert times[0].seconds < 30 and not (stage_dir / "1.txt").exists()


def test_an_overlay_replaces_params_values_and_the_stages_read_them(tmp_path: Path) -> None:
    overlay = tmp_path / "gpu.yaml"
    overlay.write_text("sft:\n  batch_size: 7\nevaluate:\n  batch_size: 67\n")

    written = overlaid_params(PROJECT / "params.yaml", overlay, tmp_path / "t.params.yaml")

    params, committed = load_params(written), load_params(PROJECT / "params.yaml")
    assert (params.sft.batch_size, params.evaluate.batch_size) == (7, 67)
    assert params.dpo == committed.dpo and params.sft.learning_rate == committed.sft.learning_rate


def test_the_committed_gpu_overlay_keeps_each_steps_rows(tmp_path: Path) -> None:
    params = load_params(overlaid_params(PROJECT / "params.yaml", PROJECT / "profiles/gpu.yaml", tmp_path / "p.yaml"))
    committed = load_params(PROJECT / "params.yaml")
    for section in ("sft", "experience", "dpo", "grpo"):
        mine, theirs = getattr(params, section), getattr(committed, section)
        assert mine.gradient_accumulation_steps == 1, section
        assert mine.batch_size == theirs.batch_size * theirs.gradient_accumulation_steps, section


def test_an_overlay_naming_an_unknown_key_is_refused(tmp_path: Path) -> None:
    overlay = tmp_path / "typo.yaml"
    overlay.write_text("sft:\n  batch_sise: 7\n")
    with pytest.raises(InputError, match=r"typo.yaml: `sft.batch_sise` is not a key"):
        overlaid_params(PROJECT / "params.yaml", overlay, tmp_path / "p.yaml")
    assert not (tmp_path / "p.yaml").exists()


def fake_nvidia_smi(folder: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> None:
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")


def test_gpu_memory_keeps_each_processs_largest_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # each call reports 100 MiB more for process 7 than the last (a counter file), 50 for process 9
    counter = tmp_path / "calls"
    counter.write_text("0")
    body = f'n=$(cat {counter}); n=$((n+1)); echo $n > {counter}; echo "7, $((n*100))"; echo "9, 50"'
    fake_nvidia_smi(tmp_path, body, monkeypatch)
    with GpuMemory(interval_s=0.05) as gpu:
        while int(counter.read_text() or 0) < 3:  # empty while the script rewrites it
            time.sleep(0.01)
    calls = int(counter.read_text())
    assert gpu.peak == {7: calls * 100, 9: 50}  # the last sample, taken as the block ended, included


def test_gpu_memory_stops_sampling_when_nvidia_smi_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = tmp_path / "calls"
    counter.write_text("0")
    fake_nvidia_smi(tmp_path, f"n=$(cat {counter}); echo $((n+1)) > {counter}; exit 9", monkeypatch)
    with GpuMemory(interval_s=0.05) as gpu:
        time.sleep(0.5)
    assert gpu.peak == {} and int(counter.read_text()) == 2  # one failed sample, then the one at the end


def test_without_nvidia_smi_gpu_memory_samples_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with GpuMemory(interval_s=0.05) as gpu:
        time.sleep(0.2)
    assert gpu.peak == {}
