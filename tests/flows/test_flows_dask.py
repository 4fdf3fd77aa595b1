"""Independent stages run at once on a real local Dask cluster, each through DVC, in table order,
with the flow and its worker processes on one temporary Prefect server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from prefect import flow

from flows._stages import run_pipelines
from tests.harness import PROJECT, dvc, flow_result, python, run
from worldagent.pipeline.costs import read_ledger
from worldagent.pipeline.table import Pipeline, Stage

pytestmark = pytest.mark.slow

# a and b meet: each marks that it started, then waits (up to RENDEZVOUS_S) for the other's mark and
# records whether it came. Run one after the other, the first waits in vain, however busy the
# machine, so the test needs no timing margin. c reads both and writes the gate.
RENDEZVOUS_S = 120
RENDEZVOUS = f"""\
import json, sys, time
from pathlib import Path

me, other = sys.argv[1], sys.argv[2]
Path(me + ".started").touch()
deadline = time.monotonic() + {RENDEZVOUS_S}
while not Path(other + ".started").exists() and time.monotonic() < deadline:
    time.sleep(0.1)
Path(me + ".json").write_text(json.dumps(dict(met=Path(other + ".started").exists())))
"""
GATE = 'python -c \'import json; json.dump(dict(passed=True), open("gate.json", "w"))\''
DVC_YAML = {
    "stages": {
        "a": {"cmd": "python rendezvous.py a b", "outs": ["a.json"]},
        "b": {"cmd": "python rendezvous.py b a", "outs": ["b.json"]},
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


# As `python -m flows.*` runs a flow (flows/_stages.py: run_flow), with no Prefect server named.
RUN_TOY_FLOW = f"""\
import json, os, sys
os.environ.pop("PREFECT_API_URL", None)
sys.path.insert(0, {str(PROJECT)!r})
from pathlib import Path
import flows  # Prefect's settings, as `python -m flows.*` sets them before Prefect is imported
from flows._stages import run_flow
from tests.flows.test_flows_dask import toy_flow

if __name__ == "__main__":  # Dask's worker processes import this module again
    print(json.dumps(run_flow(toy_flow, Path("."), deploy=False), indent=2, default=str))
"""


@flow(name="toy")
def toy_flow(root: str, deploy: bool) -> dict:
    first = toy_pipeline("first", [Stage("a", "x", "sleeps", outputs={"out": "a.json"})])
    second = toy_pipeline(
        "second",
        [
            Stage("b", "x", "sleeps", outputs={"out": "b.json"}),
            Stage("c", "x", "reads both", inputs={"a": "a.json", "b": "b.json"}, outputs={"out": "gate.json"}),
        ],
    )
    return run_pipelines([first, second], Path(root), deploy=deploy)


def test_independent_stages_overlap_on_dask_and_dependent_ones_wait(tmp_path: Path) -> None:
    run(tmp_path, "git", "init", "-q")
    dvc(tmp_path, "init", "-q")
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(DVC_YAML))
    (tmp_path / "rendezvous.py").write_text(RENDEZVOUS)
    params = "registry:\n  url: sqlite:///registry.db\norchestrate:\n  task_runner: dask\n  dask_workers: 2\n"
    (tmp_path / "params.yaml").write_text(params)
    (tmp_path / "run_toy_flow.py").write_text(RUN_TOY_FLOW)
    done = python(tmp_path, "run_toy_flow.py")  # from the project root, as `python -m flows.*` runs
    result = flow_result(done.stdout)
    # Each worker process would start a server of its own (migrating one SQLite file at once) unless
    # pointed at the flow's.
    servers = (done.stdout + done.stderr).count("Starting temporary server on")
    assert servers == 1, f"{servers} temporary Prefect servers started:\n{done.stderr[-3000:]}"
    met = {n: json.loads((tmp_path / f"{n}.json").read_text())["met"] for n in "ab"}
    assert met == {"a": True, "b": True}, f"a and b did not run at the same time: {met}"
    ends = [(tmp_path / f"{n}.json").stat().st_mtime for n in "ab"]
    assert (tmp_path / "gate.json").stat().st_mtime >= max(ends)
    assert result["first"]["recomputed"] == ["a"] and result["second"]["recomputed"] == ["b", "c"]
    # what each stage cost travels back from the worker processes, and each family's run is one ledger line
    assert [[cost["step"] for cost in result[family]["costs"] if cost["ran"]] for family in ("first", "second")] == [
        ["a"],
        ["b", "c"],
    ]
    ledger = read_ledger(tmp_path / "logs/flow-runs.jsonl")
    assert sorted(record["family"] for record in ledger) == ["first", "second"]
    assert all(record["complete"] for record in ledger)
    assert "up to date" in dvc(tmp_path, "status")
