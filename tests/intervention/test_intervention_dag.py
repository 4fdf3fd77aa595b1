"""End to end (slow): the intervention stages through DVC on the small configuration, a no-op
second repro, and the Prefect flow running the same stages (nothing recomputed) and deploying."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.intervention.conftest import PROJECT, small_raw

pytestmark = pytest.mark.slow


def env(root: Path) -> dict[str, str]:
    return dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        HF_HUB_OFFLINE="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_HOME=str(root / ".prefect"),
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180",  # a busy CI box starts the temporary server slowly
    )


def run(root: Path, *args: str, stdout_only: bool = False) -> str:
    done = subprocess.run(args, cwd=root, env=env(root), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout if stdout_only else done.stdout + done.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("intervention-dag")
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copy(PROJECT / name, root / name)
    (root / "params.yaml").write_text(yaml.safe_dump(small_raw(), sort_keys=False))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "cache", "tmp")
    for name in ("tasks", "worldagent", "flows", ".dvc"):
        shutil.copytree(PROJECT / name, root / name, ignore=ignore)
    run(root, "git", "init", "-q")
    return root


def test_dvc_repro_produces_the_report_then_does_nothing_and_the_flow_agrees(project: Path) -> None:
    dvc = str(Path(sys.executable).parent / "dvc")
    first = run(project, dvc, "repro", "intervention_gate")
    for stage in ("simulate", "export", "embed", "train_encoder", "train_predictor", "evaluate", "compare", "gate"):
        assert f"Running stage 'intervention_{stage}'" in first
    assert "Running stage 'discover'" not in first  # only the intervention stages
    metrics = json.loads((project / "reports/intervention/evaluation_metrics.json").read_text())
    assert {"accuracy", "precision", "recall", "f1", "auc", "confusion_matrix", "samples"} <= set(metrics)
    for name in ("confusion_matrix.png", "roc_curve.png", "pr_curve.png", "gate.json", "report.md"):
        assert (project / "reports/intervention" / name).is_file()
    assert "Running stage" not in run(project, dvc, "repro", "intervention_gate")

    out = run(project, sys.executable, "-m", "flows.intervention", "--root", str(project), stdout_only=True)
    result = json.loads(out[out.index("{") :])
    assert result["recomputed"] == []
    assert result["deploy"]["action"] == ("deployed" if result["gate"]["passed"] else "rejected")
    assert "intervention_" not in run(project, dvc, "status", "intervention_gate").replace("Data and pipelines are up to date.", "")
