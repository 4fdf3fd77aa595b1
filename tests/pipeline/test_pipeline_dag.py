"""End to end: the whole DAG on a tiny configuration, through DVC and the deploy step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import copy_project, dvc, python

pytestmark = pytest.mark.slow

COMPONENTS = ("button", "badge", "toggle-button")
WORLD_AGENT = "gate"  # the world-agent DAG's last stage (the intervention stages have their own test)
TINY = {
    "generate": {"eval_split": "component", "eval_components": ["badge"], "max_pairs_per_story": 2},
    "model": {
        "tiny": {
            "vocab_size": 800,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "head_dim": 16,
            "sliding_window": 64,
        },
        "pretrain": {"epochs": 0.2, "batch_size": 4, "max_length": 128},
    },
    "lora": {"r": 4, "alpha": 4},
    "sft": {"max_steps": 2, "batch_size": 2, "max_length": 2600, "logging_steps": 1},
    "dpo": {"max_steps": 2, "batch_size": 2, "max_length": 2600, "logging_steps": 1},
    "grpo": {
        "max_steps": 1,
        "batch_size": 2,
        "num_generations": 2,
        "max_completion_length": 16,
        "max_prompts": 2,
        "max_length": 4096,
        "logging_steps": 1,
    },
    "evaluate": {"max_new_tokens": 16, "max_intents": 2, "batch_size": 2},
    "compare": {"bootstrap_samples": 200},
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("dag"), TINY, COMPONENTS)


def test_the_whole_dag_trains_evaluates_gates_deploys_and_then_recomputes_nothing(project: Path) -> None:
    first = dvc(project, "repro", WORLD_AGENT)
    for stage in ("discover", "generate", "base", "sft", "dpo", "grpo", "evaluate", "compare", "gate"):
        assert f"Running stage '{stage}'" in first
    for stage in ("base", "sft", "dpo", "grpo"):
        assert (project / "models" / "world_agent" / stage).is_dir()
    evaluation = json.loads((project / "reports/world_agent/eval.json").read_text())
    assert {"base", "sft", "dpo", "grpo", "reference"} <= set(json.dumps(evaluation).replace('"', " ").split())
    gate = json.loads((project / "reports/world_agent/gate.json").read_text())
    assert isinstance(gate["passed"], bool) and gate["reasons"]
    report = (project / "reports/world_agent/report.md").read_text()
    assert "reference" in report and ("passed" in report.lower() or "failed" in report.lower())

    deployed = python(project, "-m", "tasks.deploy", check=False)
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


def test_the_prefect_flow_pins_the_new_champion_then_recomputes_nothing(project: Path) -> None:
    dvc(project, "repro", WORLD_AGENT)
    deployed = json.loads(python(project, "-m", "tasks.deploy", check=False).stdout.strip().splitlines()[-1])

    first = flow(project)
    if deployed["champion"]:
        # A champion the DAG has not compared against yet: only what reads the reference reruns.
        assert first["champion"]["version"] == deployed["champion"]
        assert first["recomputed"] == ["evaluate", "compare", "gate"]
    second = flow(project)
    assert second["recomputed"] == []  # a no-op run is a no-op
    expected_actions = {"unchanged"} if second["gate"]["passed"] else {"rejected", "unchanged"}
    assert second["deploy"]["action"] in expected_actions  # nothing is published twice
    assert "up to date" in dvc(project, "status", WORLD_AGENT)


def flow(project: Path) -> dict:
    done = python(project, "-m", "flows.world_agent", "--root", str(project))
    return json.loads(done.stdout[done.stdout.index("{") :])
