"""Independent stages run at once on a real local Dask cluster, each through DVC, in table order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from prefect import flow
from prefect.testing.utilities import prefect_test_harness

from flows._stages import run_pipelines, task_runner
from tests.harness import dvc, run
from worldagent.pipeline.table import Pipeline, Stage

pytestmark = pytest.mark.slow

# Each of a and b sleeps, recording when it started and ended; c reads both and writes the gate.
SLEEPER = "python -c 'import json,sys,time; s=time.time(); time.sleep(4); json.dump([s, time.time()], open(sys.argv[1], \"w\"))'"
GATE = 'python -c \'import json; json.dump(dict(passed=True), open("gate.json", "w"))\''
DVC_YAML = {
    "stages": {
        "a": {"cmd": f"{SLEEPER} a.json", "outs": ["a.json"]},
        "b": {"cmd": f"{SLEEPER} b.json", "outs": ["b.json"]},
        "c": {"cmd": GATE, "deps": ["a.json", "b.json"], "outs": ["gate.json"]},
    }
}


def toy_pipeline(family: str, stages: list[Stage]) -> Pipeline:
    return Pipeline(
        family=family,
        steps=tuple(stages),
        report="report.md",
        gate=stages[-1].outputs["out"],
        champion="champion.json",
        registry_family="registry.family",
    )


@flow(name="toy")
def toy_flow(root: str) -> dict:
    first = toy_pipeline("first", [Stage("a", "x", "sleeps", outputs={"out": "a.json"})])
    second = toy_pipeline(
        "second",
        [
            Stage("b", "x", "sleeps", outputs={"out": "b.json"}),
            Stage("c", "x", "reads both", inputs={"a": "a.json", "b": "b.json"}, outputs={"out": "gate.json"}),
        ],
    )
    return run_pipelines([first, second], Path(root), deploy=False)


def test_independent_stages_overlap_on_dask_and_dependent_ones_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # as `python -m flows.*` does: DVC and the workers run from the project root
    run(tmp_path, "git", "init", "-q")
    dvc(tmp_path, "init", "-q")
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(DVC_YAML))
    params = "registry:\n  url: sqlite:///registry.db\norchestrate:\n  task_runner: dask\n  dask_workers: 2\n"
    (tmp_path / "params.yaml").write_text(params)
    with prefect_test_harness(server_startup_timeout=600):
        result = toy_flow.with_options(task_runner=task_runner(Path(".")))(".")
    (a_start, a_end), (b_start, b_end) = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab")
    assert max(a_start, b_start) < min(a_end, b_end), "a and b did not run at the same time"
    assert (tmp_path / "gate.json").stat().st_mtime >= max(a_end, b_end)
    assert result["first"]["recomputed"] == ["a"] and result["second"]["recomputed"] == ["b", "c"]
    assert "up to date" in dvc(tmp_path, "status")
