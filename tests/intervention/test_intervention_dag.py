"""End to end (slow): the intervention stages through DVC on the small configuration, a no-op
second repro, and the Prefect flow running the same stages (nothing recomputed) and deploying."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import copy_project, dvc, flow_result, python
from tests.intervention.conftest import small_raw

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("intervention-dag"), small_raw(), components=())


def test_dvc_repro_produces_the_report_then_does_nothing_and_the_flow_agrees(project: Path) -> None:
    first = dvc(project, "repro", "intervention_gate")
    for stage in ("simulate", "export", "embed", "train_encoder", "train_predictor", "evaluate", "compare", "gate"):
        assert f"Running stage 'intervention_{stage}'" in first
    assert "Running stage 'discover'" not in first  # only the intervention stages
    metrics = json.loads((project / "reports/intervention/evaluation_metrics.json").read_text())
    assert {"accuracy", "precision", "recall", "f1", "auc", "confusion_matrix", "samples"} <= set(metrics)
    for name in ("evaluation/metrics.json", "evaluation/plots/sklearn/confusion_matrix.json", "gate.json", "report.md"):
        assert (project / "reports/intervention" / name).is_file()
    assert "evaluation/metrics.json" in dvc(project, "metrics", "show")
    assert "Running stage" not in dvc(project, "repro", "intervention_gate")

    out = python(project, "-m", "flows.intervention", "--root", str(project)).stdout
    result = flow_result(out)
    assert result["recomputed"] == []
    assert result["deploy"]["action"] == ("deployed" if result["gate"]["passed"] else "rejected")
    assert "intervention_" not in dvc(project, "status", "intervention_gate").replace(
        "Data and pipelines are up to date.", ""
    )
