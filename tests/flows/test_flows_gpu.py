"""The weekly run on a GPU worker: checkout, pull, the gpu profile, the DAG, push, in that order."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from flows import gpu
from worldagent.errors import RunError

ROOT = Path(__file__).resolve().parents[2]


def test_the_worker_checks_out_pulls_and_switches_to_the_profile_before_the_dag_and_pushes_after() -> None:
    before = gpu.before_commands("abc123", "gpu", pull=True)
    assert before == [
        ["git", "fetch", "--quiet", "origin"],
        ["git", "checkout", "--quiet", "--force", "--detach", "abc123"],
        [sys.executable, "-m", "dvc", "pull", "--run-cache", "--allow-missing"],
        [sys.executable, "-m", "worldagent.cli", "profile", "use", "gpu"],
    ]
    assert gpu.before_commands(None, "gpu", pull=False) == [before[-1]]
    assert gpu.after_commands(push=True) == [[sys.executable, "-m", "dvc", "push", "--run-cache"]]
    assert gpu.after_commands(push=False) == []


def test_a_failed_step_stops_the_run_naming_the_command(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="git checkout --quiet --force --detach nowhere failed"):
        gpu.run_command(["git", "checkout", "--quiet", "--force", "--detach", "nowhere"], tmp_path)


def test_the_weekly_gpu_deployment_runs_this_flow_on_the_gpu_pool_with_the_gpu_profile() -> None:
    deployments = {d["name"]: d for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]}
    weekly = deployments["weekly-gpu"]
    assert weekly["entrypoint"] == "flows/gpu.py:gpu_pipeline" and weekly["work_pool"]["name"] == "gpu"
    assert weekly["parameters"]["profile"] == "gpu" and (ROOT / "profiles" / "gpu.yaml").is_file()
    assert gpu.gpu_pipeline.name == "world-agent-gpu"  # the name the workflows submit: world-agent-gpu/weekly-gpu
    for workflow in ("train.yml", "pr-check.yml"):
        assert "world-agent-gpu/weekly-gpu" in (ROOT / ".github" / "workflows" / workflow).read_text()
