from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.intervention.conftest import run_stage
from worldagent.config import Params
from worldagent.intervention.clip import ScreenshotError, build_visual, embed_sources
from worldagent.intervention.metrics import classification_metrics, log_evaluation, numbers
from worldagent.intervention.model import EncoderConfig, ExperienceEncoder, PredictorHead, supcon_loss
from worldagent.intervention.serve import BundleError, InterventionPredictor
from worldagent.intervention.stages.common import read_steps
from worldagent.intervention.train import choose_threshold
from worldagent.pipeline import intervention as intervention_table


def test_encoder_shapes_and_unit_norm() -> None:
    torch.manual_seed(0)
    cfg = EncoderConfig(visual_in=128, vocab_size=10, page_in=19, history=8)
    enc = ExperienceEncoder(cfg).eval()
    b = 5
    actions = torch.randint(1, 10, (b, 8))
    actions[0] = 0  # a row with no actions at all must not produce NaNs
    z = enc(
        torch.randn(b, 128),
        torch.tensor([1.0, 1, 0, 1, 0]),
        actions,
        torch.randint(0, 3, (b, 8)),
        torch.randn(b, 19),
        torch.randint(0, 64, (b,)),
    )
    assert z.shape == (b, 512)
    assert torch.isfinite(z).all() and torch.allclose(z.norm(dim=1), torch.ones(b), atol=1e-5)
    assert PredictorHead(512)(z).shape == (b,)
    with pytest.raises(ValueError, match="visual features have 64 dims"):
        enc(
            torch.randn(b, 64),
            torch.ones(b),
            actions,
            torch.zeros(b, 8, dtype=torch.long),
            torch.randn(b, 19),
            torch.zeros(b, dtype=torch.long),
        )


def test_masked_screenshots_use_the_learned_vector_not_their_zeros() -> None:
    torch.manual_seed(0)
    enc = ExperienceEncoder(
        EncoderConfig(
            visual_in=16,
            vocab_size=4,
            page_in=19,
            history=2,
            dim=8,
            visual_dim=8,
            action_dim=8,
            action_heads=2,
            page_hidden=8,
        )
    ).eval()
    args = (
        torch.ones(2, 2, dtype=torch.long),
        torch.full((2, 2), 2),
        torch.zeros(2, 19),
        torch.zeros(2, dtype=torch.long),
    )
    with torch.no_grad():
        enc.no_screenshot.fill_(3.0)
        a = enc(torch.zeros(2, 16), torch.zeros(2), *args)
        b = enc(torch.randn(2, 16), torch.zeros(2), *args)  # the masked content is ignored
        c = enc(torch.zeros(2, 16), torch.ones(2), *args)  # an unmasked zero vector differs
    assert torch.allclose(a, b) and not torch.allclose(a, c)


def test_supcon_prefers_clustered_embeddings() -> None:
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    clustered = torch.nn.functional.normalize(torch.eye(3)[labels] + 0.01 * torch.randn(6, 3), dim=1)
    shuffled = clustered[torch.tensor([0, 2, 4, 1, 3, 5])]
    assert supcon_loss(clustered, labels, 0.07) < supcon_loss(shuffled, labels, 0.07)
    lonely = supcon_loss(clustered[:3:2], torch.tensor([0, 1]), 0.07)  # no positives at all: zero, no NaN
    assert float(lonely) == 0.0


def test_metrics_on_known_values_and_single_class() -> None:
    y = np.array([0, 0, 1, 1, 1])
    p = np.array([0.1, 0.6, 0.4, 0.8, 0.9])
    m = classification_metrics(y, p, 0.5)
    assert m["confusion_matrix"] == {
        "true_negatives": 1,
        "false_positives": 1,
        "false_negatives": 1,
        "true_positives": 2,
    }
    assert (
        m["precision"] == pytest.approx(2 / 3)
        and m["recall"] == pytest.approx(2 / 3)
        and m["accuracy"] == pytest.approx(0.6)
    )
    assert m["auc"] == pytest.approx(5 / 6) and m["samples"] == {"total": 5, "interventions": 3, "successes": 2}
    one = classification_metrics(np.array([1, 1]), np.array([0.2, 0.9]), 0.5)
    assert one["auc"] is None and one["pr_auc"] is None and "only interventions" in one["notes"][0]


def test_threshold_reaches_the_recall_target() -> None:
    y = np.array([1, 1, 1, 1, 0, 0])
    p = np.array([0.9, 0.8, 0.3, 0.2, 0.5, 0.1])
    t, _ = choose_threshold(p, y, 0.75)
    assert t == pytest.approx(0.3) and ((p >= t) & (y == 1)).sum() / 4 >= 0.75
    assert choose_threshold(p, np.zeros(6, dtype=int), 0.9)[0] == 0.5


def test_evaluation_report_has_the_required_fields_and_plots(pipeline_root: Path) -> None:
    m = json.loads((pipeline_root / intervention_table.METRICS).read_text())
    for key in ("accuracy", "precision", "recall", "f1", "auc", "pr_auc", "threshold"):
        assert key in m
    assert set(m["confusion_matrix"]) == {"true_negatives", "false_positives", "false_negatives", "true_positives"}
    assert (
        m["samples"]["total"]
        == sum(m["confusion_matrix"].values())
        == m["samples"]["interventions"] + m["samples"]["successes"]
    )
    assert {"majority", "logistic_regression"} <= set(m["baselines"])
    # the DVCLive folder holds every number of the metrics and exactly the plots the table declares
    stage = intervention_table.PIPELINE.stage("intervention_evaluate")
    live = pipeline_root / intervention_table.EVALUATION.path
    logged = json.loads((live / "metrics.json").read_text())
    assert (
        numbers(logged) == numbers(m) and logged["f1"] == m["f1"] and logged["baselines"]["logistic_regression"]["auc"]
    )
    assert logged["confusion_matrix"]["true_positives"] == m["confusion_matrix"]["true_positives"]
    assert f"{intervention_table.EVALUATION.path}/metrics.json" in stage.metric_files
    for plot in stage.plot_files:
        assert (pipeline_root / plot.path).exists(), plot.path
    roc = json.loads((live / "plots/sklearn/roc/predictor.json").read_text())["roc"]
    assert roc[-1]["fpr"] == roc[-1]["tpr"] == 1.0
    assert (live / "plots/sklearn/precision_recall/logistic_regression.json").is_file()
    matrix = json.loads((live / "plots/sklearn/confusion_matrix.json").read_text())
    cm = m["confusion_matrix"]
    assert sum(row == {"actual": "intervention", "predicted": "intervention"} for row in matrix) == cm["true_positives"]
    assert sum(row == {"actual": "success", "predicted": "intervention"} for row in matrix) == cm["false_positives"]
    assert not list(pipeline_root.glob("reports/intervention/*.png"))


def test_dvclive_logs_every_number_and_the_curves_with_the_same_bytes_each_time(tmp_path: Path) -> None:
    labels = np.array([0, 0, 1, 1, 1])
    curves = {"predictor": np.array([0.1, 0.6, 0.4, 0.8, 0.9]), "logistic_regression": np.array([0.5] * 5)}
    result = {**classification_metrics(labels, curves["predictor"], 0.5), "flag": True, "rule": "text"}
    result["by"] = {"timeout": {"recall": 0.5, "steps": 2}, "none": None}
    folder = tmp_path / "evaluation"
    log_evaluation(folder, result, labels, curves)
    logged = json.loads((folder / "metrics.json").read_text())
    assert logged["by"] == {"timeout": {"recall": 0.5, "steps": 2}} and "flag" not in logged and "rule" not in logged
    assert logged["auc"] == pytest.approx(5 / 6) and logged["confusion_matrix"]["false_positives"] == 1
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert set(files) == {
        "metrics.json",
        "plots/sklearn/roc/predictor.json",
        "plots/sklearn/roc/logistic_regression.json",
        "plots/sklearn/precision_recall/predictor.json",
        "plots/sklearn/precision_recall/logistic_regression.json",
        "plots/sklearn/confusion_matrix.json",
    }
    log_evaluation(folder, result, labels, curves)  # no clock time anywhere: DVC sees no change
    assert {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == files


def test_training_is_reproducible(pipeline_root: Path, small_params: Params, tmp_path: Path) -> None:
    import shutil

    for rel in ("data/generated/intervention",):
        shutil.copytree(pipeline_root / rel, tmp_path / rel)
    run_stage("train_encoder", small_params, tmp_path)
    run_stage("train_predictor", small_params, tmp_path)
    run_stage("evaluate", small_params, tmp_path)
    a = json.loads((pipeline_root / intervention_table.METRICS).read_text())
    b = json.loads((tmp_path / intervention_table.METRICS).read_text())
    assert a == b


def state_of(root: Path) -> dict:
    row = next(r for r in read_steps(root / intervention_table.STEPS) if r["split"] == "test")
    return {
        "actions": row["actions"],
        "page_state": row["page_state"],
        "screenshot": str(root / row["screenshot_path"]),
        "step": row["step"],
        "max_steps": row["max_steps"],
    }


def test_predictor_serves_single_and_batch(pipeline_root: Path) -> None:
    predictor = InterventionPredictor.load(pipeline_root / intervention_table.PREDICTOR)
    state = state_of(pipeline_root)
    one = predictor.predict(state)
    assert (
        0 <= one["probability"] <= 1
        and one["needs_human"] == (one["probability"] >= one["threshold"])
        and one["warnings"] == []
    )
    batch = predictor.predict_batch([state, state])
    assert batch[0]["probability"] == pytest.approx(one["probability"], abs=1e-6)
    # the served probability equals the evaluate stage's for the same step (same features, same tower)
    first = json.loads((pipeline_root / intervention_table.PREDICTIONS).read_text().splitlines()[0])
    assert one["probability"] == pytest.approx(first["probability"], abs=1e-4)


def test_bad_inputs_get_fallbacks_with_warnings_or_clear_errors(pipeline_root: Path, tmp_path: Path) -> None:
    predictor = InterventionPredictor.load(pipeline_root / intervention_table.PREDICTOR)
    state = state_of(pipeline_root)
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    out = predictor.predict(
        {**state, "screenshot": str(corrupt), "actions": [{"action": "teleport"}], "page_state": {"url": "https://x"}}
    )
    text = " ".join(out["warnings"])
    assert "corrupt.png" in text and "no-screenshot vector" in text and "unknown action" in text and "scroll_y" in text
    assert "not found" in predictor.predict({**state, "screenshot": str(tmp_path / "gone.png")})["warnings"][0]
    with pytest.raises(ValueError, match="'actions' is missing or empty"):
        predictor.predict({**state, "actions": []})
    predictor.on_bad_screenshot = "error"
    with pytest.raises(ScreenshotError, match="corrupt.png"):
        predictor.predict({**state, "screenshot": str(corrupt)})
    with pytest.raises(BundleError, match="no predictor.json"):
        InterventionPredictor.load(tmp_path)


def test_embedding_masks_or_rejects_bad_screenshots(tmp_path: Path) -> None:
    tower = build_visual("wa-tiny-vit", None)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"garbage")
    visual, mask, problems = embed_sources(tower, [None, bad, tmp_path / "missing.png"], on_bad="mask")
    assert mask.tolist() == [0, 0, 0] and len(problems) == 3 and "bad.png" in problems[1]["error"]
    with pytest.raises(ScreenshotError, match="missing.png: screenshot not found"):
        embed_sources(tower, [tmp_path / "missing.png"], on_bad="error")


def test_missing_pretrained_weights_fail_fast_offline() -> None:
    import time

    from worldagent.intervention.clip import ClipError

    start = time.perf_counter()
    with pytest.raises(ClipError, match="offline"):
        build_visual("RN50", "openai", offline=True)
    assert time.perf_counter() - start < 30  # no network wait (the model itself is still built)
    with pytest.raises(ClipError, match="unknown open_clip model"):
        build_visual("no-such-model", None)


def recorded_devices(root: Path) -> tuple[str, str, str]:
    """Where the tower embedded, the encoder trained and the predictor head trained, as recorded."""
    embeddings = json.loads((root / intervention_table.EMBEDDINGS / "embeddings.json").read_text())
    bundle = json.loads((root / intervention_table.PREDICTOR / "predictor.json").read_text())
    return embeddings["device"], bundle["device"], bundle["training"]["device"]


def test_embedding_and_training_run_on_the_device_select_device_picks(
    pipeline_root: Path, small_params: Params, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tower and both trainers go where ``select_device()`` points, as the policy's stages do.
    ``cpu:0`` stands for an accelerator here: a device string torch accepts that no default passes,
    so every tensor really moves; on the CPU the result must not change."""
    import shutil

    from worldagent.intervention.stages import embed, train_encoder, train_predictor

    for module in (embed, train_encoder, train_predictor):
        monkeypatch.setattr(module, "select_device", lambda: "cpu:0")
    for rel in ("data/generated/intervention", "data/experience"):
        shutil.copytree(pipeline_root / rel, tmp_path / rel)
    for name in ("embed", "train_encoder", "train_predictor", "evaluate"):
        run_stage(name, small_params, tmp_path)
    assert recorded_devices(tmp_path) == ("cpu:0",) * 3
    if recorded_devices(pipeline_root) == ("cpu",) * 3:  # the fixture's run, on this machine's CPU
        metrics = json.loads((tmp_path / intervention_table.METRICS).read_text())
        assert metrics == json.loads((pipeline_root / intervention_table.METRICS).read_text())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_the_family_embeds_and_trains_there(pipeline_root: Path) -> None:
    assert recorded_devices(pipeline_root) == ("cuda",) * 3
