"""End to end: the whole DAG on a tiny configuration, through DVC and the deploy step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
COMPONENTS = ("button", "badge", "toggle-button")
WORLD_AGENT = "gate"  # the world-agent DAG's last stage (the intervention stages have their own test)
TINY = {
    "generate": {"eval_split": "component", "eval_components": ["badge"], "max_pairs_per_story": 2},
    "model": {
        "tiny": {"vocab_size": 800, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "sliding_window": 64},
        "pretrain": {"epochs": 0.2, "batch_size": 4, "max_length": 128},
    },
    "lora": {"r": 4, "alpha": 4},
    "sft": {"max_steps": 2, "batch_size": 2, "max_length": 2600, "logging_steps": 1},
    "dpo": {"max_steps": 2, "batch_size": 2, "max_length": 2600, "logging_steps": 1},
    "grpo": {"max_steps": 1, "batch_size": 2, "num_generations": 2, "max_completion_length": 16, "max_prompts": 2, "max_length": 4096, "logging_steps": 1},
    "evaluate": {"max_new_tokens": 16, "max_intents": 2, "batch_size": 2},
    "compare": {"bootstrap_samples": 200},
}


def env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", HF_HUB_OFFLINE="1")


def run(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env(), capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dag")
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copy(PROJECT / name, root / name)
    params = merge(yaml.safe_load((PROJECT / "params.yaml").read_text()), TINY)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("tasks", "worldagent", "flows", ".dvc"):
        shutil.copytree(PROJECT / name, root / name, ignore=ignore)
    shutil.rmtree(root / ".dvc" / "tmp", ignore_errors=True)
    for component in COMPONENTS:
        shutil.copytree(PROJECT / "data" / "stories" / component, root / "data" / "stories" / component)
    run(root, "git", "init", "-q")
    return root


def dvc(root: Path, *args: str) -> str:
    done = run(root, str(Path(sys.executable).parent / "dvc"), *args)
    return done.stdout + done.stderr


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

    deployed = run(project, sys.executable, "-m", "tasks.deploy", check=False)
    assert deployed.returncode in (0, 1), deployed.stderr[-3000:]
    listing = run(project, sys.executable, "-m", "worldagent.cli", "models", "list", "--json").stdout
    versions = json.loads(listing)
    assert versions, "deploy registered no version"
    if gate["passed"]:
        assert any("champion" in (v.get("aliases") or []) for v in (versions if isinstance(versions, list) else versions["versions"]))

    assert "up to date" in dvc(project, "status", WORLD_AGENT)
    second = dvc(project, "repro", WORLD_AGENT)
    assert "Running stage" not in second


def test_the_prefect_flow_runs_every_stage_through_dvc_and_recomputes_nothing(project: Path) -> None:
    dvc(project, "repro", WORLD_AGENT)
    run(project, sys.executable, "-m", "tasks.deploy", check=False)
    env_vars = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_HOME": str(project / ".prefect")}
    done = subprocess.run(
        [sys.executable, "-m", "flows.world_agent", "--root", str(project)],
        cwd=project, env={**env(), **env_vars}, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    result = json.loads(done.stdout[done.stdout.index("{"):])
    assert result["recomputed"] == []
    expected_actions = {"unchanged"} if result["gate"]["passed"] else {"rejected", "unchanged"}
    assert result["deploy"]["action"] in expected_actions  # nothing is published twice
    assert "up to date" in dvc(project, "status", WORLD_AGENT)
