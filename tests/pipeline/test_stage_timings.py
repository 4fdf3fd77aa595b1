"""benchmarks.stages: the world-agent DAG's stages run and timed without DVC or Prefect."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from benchmarks.stages import run_stages, stage_command
from worldagent.config import load_params
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
import argparse, pathlib, sys
parser = argparse.ArgumentParser()
parser.add_argument("--source")
parser.add_argument("--out")
parser.add_argument("--params")
args = parser.parse_args()
if {fail}:
    sys.exit(3)
if args.source:
    pathlib.Path(args.source).read_text()
pathlib.Path(args.out).write_text("done")
"""


def test_a_failed_stage_skips_what_needs_its_output_and_not_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, fail in (("failing_stage", True), ("working_stage", False)):
        (tmp_path / f"{name}.py").write_text(STAGE_MODULE.format(fail=fail))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    pipeline = Pipeline(
        family="test",
        steps=(
            Stage("first", "failing_stage", "fails", outputs={"out": "first.txt"}),
            Stage("second", "working_stage", "needs first", inputs={"source": "first.txt"}, outputs={"out": "2.txt"}),
            Stage("third", "working_stage", "independent", outputs={"out": "third.txt"}),
        ),
        report="r.md",
        gate="g.json",
        champion="c.json",
        registry_family="registry.family",
    )
    out = tmp_path / "times.json"

    times = run_stages(pipeline, load_params(PROJECT / "params.yaml"), out, only=None, deadline_s=None)

    assert [(t.stage, t.status) for t in times] == [("first", "failed"), ("second", "skipped"), ("third", "ran")]
    assert times[0].detail == "exit 3" and times[1].detail == "no output from first"
    assert (tmp_path / "third.txt").read_text() == "done" and not (tmp_path / "2.txt").exists()
    written = json.loads(out.read_text())
    assert [s["status"] for s in written["stages"]] == ["failed", "skipped", "ran"]


def test_no_stage_starts_past_the_deadline(tmp_path: Path) -> None:
    pipeline = Pipeline(
        family="test",
        steps=(Stage("first", "never_imported", "not run", outputs={"out": "first.txt"}),),
        report="r.md",
        gate="g.json",
        champion="c.json",
        registry_family="registry.family",
    )
    times = run_stages(pipeline, load_params(PROJECT / "params.yaml"), tmp_path / "t.json", None, deadline_s=0)
    assert [(t.status, t.detail) for t in times] == [("skipped", "past the deadline")]
