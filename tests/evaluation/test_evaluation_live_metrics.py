"""The world agent's evaluation through DVCLive: what the evaluate and compare stages log is what
dvc.yaml declares, with the values of eval.json, and its bytes do not change when the evaluation does not."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation_helpers import synthetic_report

from worldagent.evaluation.live_metrics import HEADLINE, log_candidate, log_evaluation
from worldagent.evaluation.metrics import METRICS
from worldagent.pipeline import world_agent as table

MODELS = {"base": [0.0, 0.0, 0.3, 0.0], "sft": [0.5, 0.8, 0.3, 0.0], "reference": [1.0] * 4}


def _files(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def test_every_model_is_a_metric_and_each_headline_metric_a_bar_per_model(tmp_path: Path) -> None:
    report = synthetic_report(MODELS)
    folder = tmp_path / "evaluation"
    log_evaluation(folder, report)
    logged = json.loads((folder / "metrics.json").read_text())
    assert list(logged) == list(MODELS)  # no step: nothing was logged by step
    for name, evaluation in report.models.items():
        assert logged[name] == {"n": 4, **{metric: getattr(evaluation.metrics, metric) for metric in METRICS}}
    assert logged["sft"]["story_pass_rate"] == 0.5 and logged["reference"]["mean_reward"] == 1.0
    bars = json.loads((folder / "plots" / "custom" / "mean_reward.json").read_text())
    assert bars == [{"model": name, "mean_reward": e.metrics.mean_reward} for name, e in report.models.items()]

    # exactly the files the stage table declares (a declared file missing fails `dvc repro`), and
    # no others: no curves by step, no dvc.yaml or report of DVCLive's own
    stage = table.PIPELINE.stage("evaluate")
    declared = {f"{table.EVALUATION}/metrics.json"} | {plot.path for plot in stage.plot_files}
    written = {f"{table.EVALUATION}/{name}" for name in _files(folder)}
    assert written == declared & written and written >= {
        f"{table.EVALUATION}/plots/custom/{metric}.json" for metric in HEADLINE
    }
    assert f"{table.EVALUATION}/metrics.json" in stage.metric_files
    assert {plot.template for plot in stage.plot_files if plot.path.startswith(table.EVALUATION)} == {"bar_horizontal"}

    # the same evaluation logs the same bytes (no clock time anywhere): DVC sees no change
    before = _files(folder)
    log_evaluation(folder, report)
    assert _files(folder) == before


def test_the_candidate_has_fixed_column_names_whichever_stage_it_is(tmp_path: Path) -> None:
    report = synthetic_report(MODELS)
    folder = tmp_path / "candidate"
    log_candidate(folder, report.models["sft"].metrics)
    assert _files(folder).keys() == {"metrics.json"}
    logged = json.loads((folder / "metrics.json").read_text())
    assert logged["story_pass_rate"] == 0.5 and logged["mean_reward"] == report.models["sft"].metrics.mean_reward
    assert f"{table.CANDIDATE}/metrics.json" in table.PIPELINE.stage("compare").metric_files
