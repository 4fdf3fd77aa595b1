from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.intervention.conftest import pin_champion, run_stage
from worldagent.config import Params
from worldagent.intervention.serve import BundleError, InterventionPredictor
from worldagent.intervention.stages.common import read_steps
from worldagent.pipeline import intervention as intervention_table
from worldagent.pipeline.deploy import deploy_intervention as deploy_predictor


def test_compare_gate_deploy_then_compare_with_the_champion(pipeline_root: Path, small_params: Params) -> None:
    pin_champion(small_params, pipeline_root)
    first = run_stage("compare", small_params, pipeline_root)
    assert first["comparisons"]["champion"] is None and "No champion" in first["notes"][0]
    gate = run_stage("gate", small_params, pipeline_root)
    assert isinstance(gate["passed"], bool) and gate["reasons"]
    assert {c["name"] for c in gate["checks"]} >= {"min_f1", "min_auc", "beats_logistic_f1"}
    report = (pipeline_root / intervention_table.REPORT).read_text()
    assert "logistic_regression" in report and "Gate:" in report

    # force a pass so deploy publishes (the small config is not meant to meet the real targets)
    forced = {**gate, "passed": True}
    (pipeline_root / intervention_table.GATE).write_text(json.dumps(forced))
    alerts: list[str] = []
    result = deploy_predictor(small_params, pipeline_root, alert=alerts.append)
    assert result.action == "deployed" and result.champion == result.version and not alerts
    assert (
        deploy_predictor(small_params, pipeline_root, alert=alerts.append).action == "unchanged"
    )  # never published twice
    champion = InterventionPredictor.load(
        "champion", registry_url=small_params.registry.url, family=small_params.intervention.family, root=pipeline_root
    )
    assert "published" in champion.source

    pin_champion(small_params, pipeline_root)
    second = run_stage("compare", small_params, pipeline_root)
    champ = second["comparisons"]["champion"]
    assert champ["version"] == result.version
    assert champ["accuracy_diff"]["mean"] == pytest.approx(0.0, abs=1e-9)  # the champion is the candidate itself
    gated = run_stage("gate", small_params, pipeline_root)
    assert any(c["name"] == "non_inferiority_accuracy" and c["passed"] for c in gated["checks"])

    (pipeline_root / intervention_table.GATE).write_text(json.dumps({**gate, "passed": False}))
    rejected = deploy_predictor(small_params, pipeline_root, alert=alerts.append)
    assert rejected.action == "rejected" and rejected.champion == result.version and "failed the gate" in alerts[-1]
    with pytest.raises(BundleError, match="has no version 99"):
        InterventionPredictor.load(
            "v99", registry_url=small_params.registry.url, family=small_params.intervention.family, root=pipeline_root
        )


def test_cli_experience_and_predict(pipeline_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from worldagent.cli import main

    url = f"sqlite:///{tmp_path / 'exp.db'}"
    assert main(["experience", "init", "--url", url]) == 0
    assert main(["experience", "import", str(pipeline_root / "data/generated/intervention"), "--url", url]) == 0
    capsys.readouterr()
    assert main(["experience", "stats", "--url", url, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    manifest = json.loads((pipeline_root / intervention_table.MANIFEST).read_text())
    assert (
        stats["tasks"] == manifest["counts"]["tasks"]
        and stats["by_status"]["intervention"] == manifest["counts"]["interventions"]
    )
    assert main(["experience", "export", str(tmp_path / "out"), "--url", url]) == 0
    assert json.loads((tmp_path / "out/manifest.json").read_text())["counts"]["tasks"] == stats["tasks"]
    assert main(["experience", "stats", "--url", f"sqlite:///{tmp_path / 'none.db'}"]) == 2

    row = next(r for r in read_steps(pipeline_root / intervention_table.STEPS) if r["split"] == "test")
    state = {
        "actions": row["actions"],
        "page_state": row["page_state"],
        "screenshot": str(pipeline_root / row["screenshot_path"]),
    }
    (tmp_path / "state.json").write_text(json.dumps([state, state]))
    capsys.readouterr()
    assert (
        main(
            [
                "intervention",
                "predict",
                str(tmp_path / "state.json"),
                "--model",
                str(pipeline_root / intervention_table.PREDICTOR),
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 2 and {"probability", "needs_human", "threshold", "warnings"} <= set(out[0])
    (tmp_path / "bad.json").write_text("{oops")
    assert (
        main(
            [
                "intervention",
                "predict",
                str(tmp_path / "bad.json"),
                "--model",
                str(pipeline_root / intervention_table.PREDICTOR),
            ]
        )
        == 2
    )
    assert "bad.json:1:2: invalid JSON" in capsys.readouterr().err
