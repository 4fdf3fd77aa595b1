"""End to end: the whole DAG on a tiny configuration, through DVC and the deploy step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import TINY, TINY_COMPONENTS, copy_project, dvc, flow_result, python
from worldagent.pipeline.costs import read_ledger
from worldagent.pipeline.world_agent import PIPELINE

pytestmark = pytest.mark.slow
WORLD_AGENT = "gate"  # the world-agent DAG's last stage (the intervention stages have their own test)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("dag"), TINY, TINY_COMPONENTS)


def test_the_whole_dag_trains_evaluates_gates_deploys_and_then_recomputes_nothing(project: Path) -> None:
    first = dvc(project, "repro", WORLD_AGENT)
    for stage in ("discover", "generate", "base", "sft", "experience", "dpo", "grpo", "evaluate", "compare", "gate"):
        assert f"Running stage '{stage}'" in first
    for stage in ("base", "sft", "experience", "dpo", "grpo"):
        assert (project / "models" / "world_agent" / stage).is_dir()
    evaluation = json.loads((project / "reports/world_agent/eval.json").read_text())
    assert {"base", "nearest", "sft", "experience", "dpo", "reference"} <= set(evaluation["models"])
    # GRPO with no reward variance (the tiny model's usual case) writes DPO's adapter through: it is
    # not evaluated again, and the evaluation says so
    grpo = json.loads((project / "models/world_agent/grpo/stage.json").read_text())
    if grpo.get("skipped"):
        assert "grpo" not in evaluation["models"]
        assert any(note.startswith("`grpo` did not train") for note in evaluation["notes"]), evaluation["notes"]
    else:
        assert "grpo" in evaluation["models"]
    gate = json.loads((project / "reports/world_agent/gate.json").read_text())
    assert isinstance(gate["passed"], bool) and gate["reasons"]
    report = (project / "reports/world_agent/report.md").read_text()
    assert "reference" in report and ("passed" in report.lower() or "failed" in report.lower())

    deployed = python(project, "-m", "worldagent.pipeline.deploy", check=False)
    assert deployed.returncode in (0, 1), deployed.stderr[-3000:]
    listing = python(project, "-m", "worldagent.cli", "models", "list", "--json").stdout
    versions = json.loads(listing)
    assert versions, "deploy registered no version"
    if gate["passed"]:
        assert any(
            "champion" in (v.get("aliases") or [])
            for v in (versions if isinstance(versions, list) else versions["versions"])
        )

    assert "up to date" in dvc(project, "status", WORLD_AGENT)
    second = dvc(project, "repro", WORLD_AGENT)
    assert "Running stage" not in second


def test_a_retrained_model_with_the_same_bytes_is_not_evaluated_again(project: Path) -> None:
    dvc(project, "repro", WORLD_AGENT)
    forced = dvc(project, "repro", "--force", "--single-item", "dpo")
    assert "Running stage 'dpo'" in forced
    # the adapter is the same bytes (its clock times are in dpo-metrics.json only), so neither its
    # evaluation nor GRPO trained on it runs again; the gate reads the new metrics file and does
    after = dvc(project, "repro", WORLD_AGENT)
    for stage in ("evaluate_dpo", "grpo", "evaluate_grpo", "evaluate"):
        assert f"Running stage '{stage}'" not in after, after
    assert "Running stage 'gate'" in after


def test_the_prefect_flow_pins_the_new_champion_then_recomputes_nothing(project: Path) -> None:
    dvc(project, "repro", WORLD_AGENT)
    deployed = json.loads(
        python(project, "-m", "worldagent.pipeline.deploy", check=False).stdout.strip().splitlines()[-1]
    )

    first = flow(project)
    if deployed["champion"]:
        # A champion the DAG has not compared against yet: only what reads the reference reruns.
        assert first["champion"]["version"] == deployed["champion"]
        assert first["recomputed"] == ["evaluate_champion", "evaluate", "compare", "gate"]
    costs = {cost["step"]: cost for cost in first["costs"]}
    assert list(costs) == [stage.name for stage in PIPELINE.stages]  # every stage, in table order
    assert [step for step, cost in costs.items() if cost["ran"]] == first["recomputed"]
    for step in first["recomputed"]:  # each a python process of its own, most of them with torch loaded
        assert costs[step]["seconds"] > 0 and costs[step]["peak_rss_bytes"] > 20 * 1024**2, costs[step]
    second = flow(project)
    assert second["recomputed"] == []  # a no-op run is a no-op
    assert not any(cost["ran"] for cost in second["costs"])
    ledger = read_ledger(project / "logs/flow-runs.jsonl")  # each run's lines folded into its record
    assert [record["steps"] for record in ledger[-2:]] == [first["costs"], second["costs"]]
    assert all(record["complete"] for record in ledger[-2:])
    expected_actions = {"unchanged"} if second["gate"]["passed"] else {"rejected", "unchanged"}
    assert second["deploy"]["action"] in expected_actions  # nothing is published twice
    assert "up to date" in dvc(project, "status", WORLD_AGENT)


def flow(project: Path) -> dict:
    done = python(project, "-m", "flows.world_agent", "--root", str(project))
    return flow_result(done.stdout)
