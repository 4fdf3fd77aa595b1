"""A run's plan: the profile, each stage's expected time (this machine's ledger first, the profile's
committed measurement else), the total, the better-profile note, and the time left as stages end."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flows import _stages
from worldagent.cli import main as cli
from worldagent.pipeline.costs import DEFAULT_LEDGER, StepCost, append_ledger, read_ledger
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.plan import (
    MEASURED,
    better_profile,
    duration,
    plan_dict,
    progress_line,
    read_measurements,
    stage_plan,
    total,
)
from worldagent.pipeline.table import Pipeline, Stage
from worldagent.pipeline.world_agent import PIPELINE as WORLD_AGENT
from worldagent.preflight import run_plan

ROOT = Path(__file__).resolve().parents[2]

MEASURED_TOY = """\
profiles:
  cpu:
    host: two toy cores
    source: a test
    wall_seconds: 700
    families:
      world-agent:
        sft: 600
        evaluate_*: 80
        discover generate: 20
"""


def _root(tmp_path: Path, measured: str = MEASURED_TOY) -> Path:
    (tmp_path / MEASURED).parent.mkdir(parents=True)
    (tmp_path / MEASURED).write_text(measured)
    return tmp_path


def test_every_stage_of_every_profile_has_a_measured_time_and_the_totals_are_the_documented_ones() -> None:
    measurements = read_measurements(ROOT / MEASURED)
    assert {"cpu", "gpu", "tiny"} <= set(measurements)
    for name in ("cpu", "gpu", "tiny"):
        plan = stage_plan(PIPELINES, name, ROOT, ledger=Path("no-ledger.jsonl"), measured=measurements)
        assert [s.stage for s in plan if s.seconds is None] == [], name
    # docs/profiles.md: 56 min 46 s on 2 AVX-512 cores, 15-16 min on one H200 (stages side by side), 9 min 43 s tiny
    assert measurements["cpu"].total() == 3406
    assert measurements["gpu"].total() == 16 * 60 and measurements["tiny"].total() == 9 * 60 + 43


def test_stages_take_their_own_figure_or_a_share_of_their_group_and_unknown_ones_stay_out(tmp_path: Path) -> None:
    plan = stage_plan([WORLD_AGENT], "cpu", _root(tmp_path))
    by_stage = {s.stage: s for s in plan}
    assert (by_stage["sft"].seconds, by_stage["sft"].source) == (600, "measured")
    evaluations = [s for s in plan if s.stage.startswith("evaluate_")]
    assert len(evaluations) == 8 and all(s.seconds == 10 for s in evaluations)  # 80 s shared by eight
    assert by_stage["discover"].seconds == 10 and by_stage["base"].seconds is None
    assert total(plan) == 700
    assert stage_plan([WORLD_AGENT], "gpu", tmp_path)[0].source == "unknown"  # no measurement of gpu


def test_this_machine_s_ledger_of_the_same_profile_wins_and_other_profiles_runs_are_ignored(tmp_path: Path) -> None:
    root = _root(tmp_path)
    when = datetime(2026, 12, 1, tzinfo=UTC)
    append_ledger(root / DEFAULT_LEDGER, "world-agent", when, [StepCost("sft", True, 42.0, None)], profile="cpu")
    append_ledger(root / DEFAULT_LEDGER, "world-agent", when, [StepCost("base", True, 9.0, None)], profile="tiny")
    by_stage = {s.stage: s for s in stage_plan([WORLD_AGENT], "cpu", root)}
    assert (by_stage["sft"].seconds, by_stage["sft"].source) == (42.0, "this machine")
    assert by_stage["base"].seconds is None


def test_cuda_suggests_the_gpu_profile_with_its_measured_minutes_and_gpu_without_one_suggests_cpu() -> None:
    measurements = read_measurements(ROOT / MEASURED)
    note = better_profile("cpu", "cuda", measurements)
    assert note is not None and "`make profile PROFILE=gpu` runs the full budgets in about 16 min here" in note
    assert better_profile("gpu", "cuda", measurements) is None
    assert better_profile("cpu", "cpu", measurements) is None and better_profile("tiny", "cpu", measurements) is None
    gpu_here = better_profile("gpu", "cpu", measurements)
    assert gpu_here is not None and "`make profile PROFILE=cpu`" in gpu_here


def test_preflight_prints_the_profile_each_stage_and_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["preflight", "--params", str(ROOT / "params.yaml")]) == 0
    out = capsys.readouterr().out
    # the ledger preflight reads (this machine's, when it has run the pipeline), so the figures agree
    plan = {s.stage: s for s in stage_plan(PIPELINES, "cpu", ROOT, ledger=DEFAULT_LEDGER)}
    assert "profile: cpu" in out and "world-agent/sft " in out and f" {duration(plan['sft'].seconds or 0)}\n" in out
    assert f"expected in all: about {duration(total(list(plan.values())))}" in out
    profile, _, text = run_plan(PIPELINES, ROOT, device="cuda")
    assert profile == "cpu" and "note: CUDA is present: `make profile PROFILE=gpu`" in text


def test_progress_counts_the_stages_done_and_the_time_left() -> None:
    plan = stage_plan([WORLD_AGENT], "cpu", ROOT, ledger=Path("none.jsonl"))
    done = {("world-agent", name) for name in ("discover", "generate", "base", "sft")}
    sft = next(s.seconds for s in plan if s.stage == "sft") or 0
    left = sum(s.seconds or 0 for s in plan if ("world-agent", s.stage) not in done)
    line = progress_line(plan, done, "world-agent", "sft", 6000.0, True)
    assert line == f"[4/18] world-agent/sft done in 1 h 40 min (expected {duration(sft)}); about {duration(left)} left"


def test_each_stage_of_a_flow_run_prints_its_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # DVC itself is tested elsewhere (tests/flows/test_flows_stages.py); here a stage "runs" at once.
    monkeypatch.setattr(_stages, "dvc_repro", lambda name, root: [name])
    toy = Pipeline(
        family="toy", steps=(_stage("a"), _stage("b")), champion="c", registry_family="r", report="r", gate="g"
    )
    measured = "profiles:\n  cpu:\n    host: h\n    source: s\n    families:\n      toy: {a: 60, b: 600}\n"
    plan = plan_dict(stage_plan([toy], "cpu", _root(tmp_path, measured)))
    _stages.run_stage("a", tmp_path, "toy", "run-1", plan, "cpu")
    assert "[1/2] toy/a done in 0 s (expected 1 min 00 s); about 10 min left" in capsys.readouterr().out
    _stages.run_stage("b", tmp_path, "toy", "run-2", plan, "cpu")  # another run: a is not done in it
    assert "[1/2] toy/b done in 0 s (expected 10 min); about 1 min 00 s left" in capsys.readouterr().out
    _stages.run_stage("a", tmp_path, "toy", "run-2", plan, "cpu")
    assert "[2/2] toy/a done in 0 s (expected 1 min 00 s); about 0 s left" in capsys.readouterr().out
    records = read_ledger(tmp_path / DEFAULT_LEDGER)
    assert {record["profile"] for record in records} == {"cpu"}  # the ledger says which profile each run ran


def _stage(name: str) -> Stage:
    return Stage(name=name, entry=f"tasks.{name}", description=name, inputs={}, outputs={name: f"{name}.json"})


def test_the_committed_params_are_the_cpu_profile_s(tmp_path: Path) -> None:
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    assert run_plan(PIPELINES, tmp_path, device="cpu")[0] == "cpu"
