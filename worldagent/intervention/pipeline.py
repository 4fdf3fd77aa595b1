"""The intervention stages as plain functions of (params, root): what ``tasks/intervention_*.py``
run under DVC and Prefect. No Prefect and no DVC here.

simulate → export → embed → train_encoder → train_predictor → evaluate → compare → gate (→ deploy)
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import torch

from worldagent.config import Params
from worldagent.intervention import clip as clipmod
from worldagent.intervention.dataset import HAND_FEATURES, PAGE_FEATURES, SPLITS, build_vocab, featurize, split_sessions, task_rows
from worldagent.intervention.importer import to_reference
from worldagent.intervention.metrics import classification_metrics, logistic_baseline, majority_baseline, plot_confusion, plot_curves
from worldagent.intervention.model import EncoderConfig, ExperienceEncoder
from worldagent.intervention.serve import InterventionPredictor, _load_state, _torch_bytes, write_bundle
from worldagent.intervention.simulator import episode_to_task, plan_episodes, render_screenshot, simulate_episode
from worldagent.intervention.store import add_task, load_tasks, open_store
from worldagent.intervention.train import choose_threshold, encode, encoder_config, make_inputs, seed_everything, train_encoder, train_predictor
from worldagent.io import atomic_write_bytes, atomic_write_text, jsonl, pretty_json, replace_directory

log = logging.getLogger("worldagent.intervention")

DATA = Path("data/generated/intervention")
STEPS = DATA / "steps.jsonl"
MANIFEST = DATA / "manifest.json"
EMBEDDINGS = DATA / "embeddings"
MODELS = Path("models/intervention")
ENCODER_DIR = MODELS / "encoder"
PREDICTOR_DIR = MODELS / "predictor"
REPORTS = Path("reports/intervention")
METRICS_JSON = REPORTS / "evaluation_metrics.json"
PREDICTIONS = REPORTS / "test_predictions.jsonl"
COMPARE_JSON = REPORTS / "compare.json"
GATE_JSON = REPORTS / "gate.json"
REPORT_MD = REPORTS / "report.md"


def sqlite_target(url: str, root: Path) -> str:
    from worldagent.registry.deploy import resolve_registry_url

    return resolve_registry_url(url, root)


def _sqlite_path(url: str, root: Path) -> Path:
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        raise ValueError(f"intervention.store_url: the simulate stage writes a SQLite file, got {url!r}")
    path = Path(parsed.database)
    return path if path.is_absolute() else root / path


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: {what} not found (run the stage that writes it first)") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}:{error.lineno}:{error.colno}: invalid JSON in {what}: {error.msg}") from None


# -- simulate -----------------------------------------------------------------------------------


def simulate(params: Params, root: Path) -> dict[str, Any]:
    """Episodes → a fresh SQLite experience store and screenshots, both replaced atomically."""
    p, ip = params.intervention.simulate, params.intervention
    from worldagent.registry.db import require_sqlite_file

    db = require_sqlite_file(ip.store_url, root, "intervention.store_url")
    shots = root / ip.screenshots_dir
    tmp_shots = shots.with_name(f".{shots.name}.tmp")
    shutil.rmtree(tmp_shots, ignore_errors=True)
    tmp_db = db.with_name(f".{db.name}.tmp")
    tmp_db.unlink(missing_ok=True)
    counts: Counter[str] = Counter()
    store = open_store(f"sqlite:///{tmp_db}")
    try:
        with store.session() as session:
            for index, category, intervention in plan_episodes(p.episodes, p.intervention_fraction, list(p.categories), params.seed):
                episode = simulate_episode(params.seed, index, category, intervention, p.max_steps)
                paths = []
                for k, step in enumerate(episode.steps):
                    rel = Path(ip.screenshots_dir) / episode.session_id / f"{k:03d}.png"
                    png = render_screenshot(step.scene, category, p.image_width, p.image_height, f"{params.seed}:{episode.session_id}:{k}")
                    out = tmp_shots / episode.session_id / f"{k:03d}.png"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(png)
                    paths.append(rel.as_posix())
                add_task(session, episode_to_task(episode, paths), source="simulator")
                counts[f"status.{episode.status}"] += 1
                counts[f"cause.{episode.cause or 'none'}"] += 1
                counts["steps"] += len(episode.steps)
    finally:
        store.close()
    replace_directory(tmp_shots, shots)
    os.replace(tmp_db, db)
    summary = {"episodes": p.episodes, **dict(sorted(counts.items())), "intervention_rate": counts["status.intervention"] / max(p.episodes, 1)}
    atomic_write_text(root / REPORTS / "simulate.json", pretty_json(summary))
    log.info("simulated %d episodes, %d steps, %.0f%% end in an intervention", p.episodes, counts["steps"], 100 * summary["intervention_rate"])
    return summary


# -- export -------------------------------------------------------------------------------------


def export(params: Params, root: Path) -> dict[str, Any]:
    """Store → labelled steps split by session (steps.jsonl), reference-shaped logs and a manifest."""
    ip, p = params.intervention, params.intervention.export
    store = open_store(sqlite_target(ip.store_url, root), create=False)
    try:
        tasks = load_tasks(store)
    finally:
        store.close()
    if not tasks:
        raise ValueError(f"{ip.store_url}: the experience store has no finished tasks (empty database): record or import some first")
    splits = split_sessions(tasks, p.validation_fraction, p.test_fraction, params.seed)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        for row in task_rows(task, p.label_horizon, p.history):
            row["split"] = splits[task["session_id"]]
            rows.append(row)
    if not rows:
        raise ValueError(f"{ip.store_url}: the finished tasks have no steps to learn from")
    interventions, successes = to_reference(tasks, splits)
    per_split: dict[str, Any] = {}
    for split in SPLITS:
        sessions = [t for t in tasks if splits[t["session_id"]] == split]
        steps = [r for r in rows if r["split"] == split]
        positives = sum(r["label"] for r in steps)
        per_split[split] = {
            "sessions": len(sessions),
            "intervention_sessions": sum(t["status"] == "intervention" for t in sessions),
            "steps": len(steps),
            "positive_steps": positives,
            "positive_rate": positives / len(steps) if steps else 0.0,
        }
    missing_fields: Counter[str] = Counter()
    from worldagent.intervention.dataset import page_vector

    for row in rows:
        missing_fields.update(page_vector(row["page_state"], row["step"], row["max_steps"], 1).missing)
    manifest = {
        "format": "reference-v1",
        "counts": {"interventions": len(interventions), "successes": len(successes), "tasks": len(tasks), "steps": len(rows)},
        "balance": {
            "intervention_sessions": sum(t["status"] == "intervention" for t in tasks) / len(tasks),
            "positive_steps": sum(r["label"] for r in rows) / len(rows),
        },
        "splits": per_split,
        "label_horizon": p.label_horizon,
        "reasons": dict(sorted(Counter(r["reason"] for r in rows if r["label"]).items())),
        "fallbacks": {
            "steps_without_screenshot": sum(not r["screenshot_path"] for r in rows),
            "page_state_missing_fields": dict(sorted(missing_fields.items())),
            "sessions_without_steps": sum(not t["steps"] for t in tasks),
        },
    }
    out = root / DATA
    atomic_write_text(out / "steps.jsonl", jsonl(rows))
    atomic_write_text(out / "interventions.json", pretty_json(interventions))
    atomic_write_text(out / "successes.json", pretty_json(successes))
    atomic_write_text(out / "manifest.json", pretty_json(manifest))
    log.info("exported %d steps from %d sessions: %s", len(rows), len(tasks), {k: v["sessions"] for k, v in per_split.items()})
    return manifest


def read_steps(root: Path) -> list[dict[str, Any]]:
    path = root / STEPS
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ValueError(f"{path}: not found (run the intervention_export stage first)") from None
    rows = []
    for n, line in enumerate(lines, 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{n}: invalid JSON: {error.msg}") from None
    return rows


# -- embed --------------------------------------------------------------------------------------


def embed(params: Params, root: Path) -> dict[str, Any]:
    """Every step's screenshot through the frozen visual tower, once; cached as a DVC out."""
    cp = params.intervention.clip
    rows = read_steps(root)
    tower = clipmod.build_visual(cp.model, cp.pretrained, cp.offline, seed=params.seed)
    torch.set_num_threads(params.intervention.train.threads)
    sources: list[Any] = [None if not r.get("screenshot_path") else (Path(r["screenshot_path"]) if Path(r["screenshot_path"]).is_absolute() else root / r["screenshot_path"]) for r in rows]
    visual, mask, problems = clipmod.embed_sources(tower, sources, cp.batch_size, cp.on_bad_screenshot)
    spec, state = clipmod.save_visual(tower)
    info = {
        "clip": spec,
        "rows": len(rows),
        "embedded": int(mask.sum()),
        "masked": len(problems),
        "problems": [{"id": rows[int(pr["row"])]["id"], "error": pr["error"]} for pr in problems[:50]],
    }
    out = root / EMBEDDINGS
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    np.save(tmp / "visual.npy", visual)
    np.save(tmp / "mask.npy", mask)
    atomic_write_bytes(tmp / "clip_visual.pt", _torch_bytes(state))
    atomic_write_text(tmp / "embeddings.json", pretty_json(info))
    replace_directory(tmp, out)
    if problems:
        log.warning("%d of %d screenshots were unusable and are masked (see %s)", len(problems), len(rows), out / "embeddings.json")
    log.info("embedded %d screenshots with %s (%d-d)", int(mask.sum()), cp.model, spec["dim"])
    return info


def _load_embeddings(root: Path) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    out = root / EMBEDDINGS
    try:
        return np.load(out / "visual.npy"), np.load(out / "mask.npy"), _read_json(out / "embeddings.json", "the embedding manifest")
    except FileNotFoundError as error:
        raise ValueError(f"{error.filename}: not found (run the intervention_embed stage first)") from None


def _split_index(rows: list[dict[str, Any]], split: str) -> np.ndarray:
    return np.asarray([i for i, r in enumerate(rows) if r["split"] == split], dtype=np.int64)


def _contrastive_labels(rows: list[dict[str, Any]], mode: str, reasons: list[str]) -> torch.Tensor:
    if mode == "binary":
        return torch.tensor([int(r["label"]) for r in rows])
    return torch.tensor([0 if not r["label"] else 1 + reasons.index(r["reason"]) if r["reason"] in reasons else len(reasons) + 1 for r in rows])


# -- train --------------------------------------------------------------------------------------


def _write_dir(out: Path, files: dict[str, bytes]) -> None:
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, data in files.items():
        atomic_write_bytes(tmp / name, data)
    replace_directory(tmp, out)


def train_encoder_stage(params: Params, root: Path) -> dict[str, Any]:
    ip, tp = params.intervention, params.intervention.train
    rows = read_steps(root)
    visual, mask, info = _load_embeddings(root)
    train_idx, val_idx = _split_index(rows, "train"), _split_index(rows, "validation")
    if train_idx.size == 0:
        raise ValueError(f"{root / STEPS}: the training split is empty")
    train_rows = [rows[i] for i in train_idx]
    val_rows = [rows[i] for i in val_idx]
    vocab_list = build_vocab(train_rows)
    vocab = {t: i for i, t in enumerate(vocab_list)}
    reasons = sorted({r["reason"] for r in train_rows if r["label"]})
    history = ip.export.history
    cfg = encoder_config(visual.shape[1], len(vocab_list), history, ip.encoder)
    train = make_inputs(featurize(train_rows, vocab, history, ip.encoder.url_buckets), visual[train_idx], mask[train_idx])
    val = make_inputs(featurize(val_rows, vocab, history, ip.encoder.url_buckets), visual[val_idx], mask[val_idx]) if val_rows else None
    encoder, curve = train_encoder(
        cfg, train, _contrastive_labels(train_rows, tp.contrastive_labels, reasons), val,
        _contrastive_labels(val_rows, tp.contrastive_labels, reasons) if val_rows else None, tp, params.seed,
    )
    meta = {"encoder": cfg.to_dict(), "vocab": vocab_list, "history": history, "url_buckets": ip.encoder.url_buckets, "contrastive_classes": ["none", *reasons], "clip": info["clip"], "page_features": list(PAGE_FEATURES)}
    _write_dir(root / ENCODER_DIR, {"encoder.pt": _torch_bytes(encoder.state_dict()), "encoder.json": pretty_json(meta).encode()})
    atomic_write_text(root / REPORTS / "encoder_training.json", pretty_json(curve))
    log.info("contrastive loss %.4f → %.4f over %d epochs", curve[0]["loss"], curve[-1]["loss"], len(curve))
    return {"curve": curve}


def _load_encoder(root: Path) -> tuple[ExperienceEncoder, dict[str, Any]]:
    meta = _read_json(root / ENCODER_DIR / "encoder.json", "the encoder")
    encoder = ExperienceEncoder(EncoderConfig(**meta["encoder"]))
    encoder.load_state_dict(_load_state(root / ENCODER_DIR / "encoder.pt"))
    encoder.eval()
    return encoder, meta


def _inputs_for(rows: list[dict[str, Any]], split: str, meta: dict[str, Any], visual: np.ndarray, mask: np.ndarray) -> tuple[Any, Any]:
    idx = _split_index(rows, split)
    vocab = {t: i for i, t in enumerate(meta["vocab"])}
    arrays = featurize([rows[i] for i in idx], vocab, int(meta["history"]), int(meta["url_buckets"]))
    return make_inputs(arrays, visual[idx], mask[idx]), arrays


def train_predictor_stage(params: Params, root: Path) -> dict[str, Any]:
    tp = params.intervention.train
    rows = read_steps(root)
    visual, mask, _info = _load_embeddings(root)
    encoder, meta = _load_encoder(root)
    seed_everything(params.seed, tp.threads)
    train, _ = _inputs_for(rows, "train", meta, visual, mask)
    val, _ = _inputs_for(rows, "validation", meta, visual, mask)
    z_train, z_val = encode(encoder, train), encode(encoder, val)
    head, curve, info = train_predictor(z_train, train.labels, z_val, val.labels, tp, params.seed, params.intervention.encoder.dropout)
    with torch.no_grad():
        val_prob = torch.sigmoid(head(z_val)).numpy()
    threshold, rule = choose_threshold(val_prob, val.labels.numpy(), tp.recall_target)
    clip_state = _load_state(root / EMBEDDINGS / "clip_visual.pt")
    bundle_meta = {
        **meta,
        "family": params.intervention.family,
        "threshold": threshold,
        "threshold_rule": rule,
        "recall_target": tp.recall_target,
        "training": info,
        "validation": {k: v for k, v in classification_metrics(val.labels.numpy(), val_prob, threshold).items() if k != "notes"} if len(val) else None,
    }
    write_bundle(root / PREDICTOR_DIR, bundle_meta, encoder, head, clip_state)
    atomic_write_text(root / REPORTS / "predictor_training.json", pretty_json(curve))
    log.info("predictor: best epoch %d (val loss %.4f); threshold %.4f (%s)", info["best_epoch"], info["best_val_loss"], threshold, rule)
    return bundle_meta


# -- evaluate -----------------------------------------------------------------------------------


def evaluate(params: Params, root: Path) -> dict[str, Any]:
    """The predictor and the baselines on the held-out test sessions, with the plots."""
    rows = read_steps(root)
    predictor = InterventionPredictor.from_dir(root / PREDICTOR_DIR)
    visual, mask, _ = _load_embeddings(root)
    meta = predictor.meta
    seed_everything(params.seed, params.intervention.train.threads)
    test, test_arrays = _inputs_for(rows, "test", meta, visual, mask)
    if len(test) == 0:
        raise ValueError(f"{root / STEPS}: the test split is empty (raise intervention.export.test_fraction or add sessions)")
    with torch.no_grad():
        prob = torch.sigmoid(predictor.head(predictor.encoder(*test.args()))).numpy().astype(np.float64)
    y = test.labels.numpy()
    result = classification_metrics(y, prob, predictor.threshold)
    _, train_arrays = _inputs_for(rows, "train", meta, visual, mask)
    _, val_arrays = _inputs_for(rows, "validation", meta, visual, mask)
    baselines: dict[str, Any] = {"majority": majority_baseline(train_arrays.labels, y)}
    curves = {"encoder + predictor": prob}
    try:
        logistic, logistic_prob = logistic_baseline(train_arrays.hand, train_arrays.labels, val_arrays.hand, val_arrays.labels, test_arrays.hand, y, params.intervention.train.recall_target, params.seed)
        baselines["logistic_regression"] = {**logistic, "features": [*HAND_FEATURES, *PAGE_FEATURES]}
        curves["logistic baseline"] = logistic_prob
    except ValueError as error:
        baselines["logistic_regression"] = None
        result["notes"].append(str(error))
    by_reason: dict[str, Any] = {}
    test_rows = [rows[i] for i in _split_index(rows, "test")]
    pred = prob >= predictor.threshold
    for reason in sorted({r["reason"] for r in test_rows if r["label"]}):
        idx = [i for i, r in enumerate(test_rows) if r["reason"] == reason]
        by_reason[reason] = {"steps": len(idx), "recall": float(np.mean(pred[idx]))}
    result.update(
        {
            "threshold_rule": meta.get("threshold_rule"),
            "recall_target": meta.get("recall_target"),
            "baselines": baselines,
            "beats_logistic_f1": bool(baselines["logistic_regression"] and result["f1"] > baselines["logistic_regression"]["f1"]),
            "recall_by_reason": by_reason,
            "test_sessions": len({r["session_id"] for r in test_rows}),
            "unknown_actions": test_arrays.unknown_actions,
            "masked_screenshots": int((test.mask == 0).sum()),
            "model": {"clip": meta["clip"]["model"], "pretrained": meta["clip"]["pretrained"], "encoder_dim": meta["encoder"]["dim"]},
        }
    )
    out = root / REPORTS
    atomic_write_text(out / "evaluation_metrics.json", pretty_json(result))
    atomic_write_text(out / "test_predictions.jsonl", jsonl({"id": r["id"], "label": int(l), "probability": round(float(p), 6)} for r, l, p in zip(test_rows, y, prob, strict=True)))
    plot_confusion(result, out / "confusion_matrix.png")
    plot_curves(y, curves, out / "roc_curve.png", out / "pr_curve.png")
    for note in result["notes"]:
        log.warning("%s", note)
    log.info("test: F1 %.3f, ROC AUC %s, PR AUC %s (logistic F1 %s)", result["f1"], _f(result["auc"]), _f(result["pr_auc"]), _f((baselines.get("logistic_regression") or {}).get("f1")))
    return result


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


# -- compare and gate ---------------------------------------------------------------------------


def test_states(rows: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """The test split's steps as predictor states (raw screenshots: a champion uses its own tower)."""
    states = []
    for r in rows:
        if r["split"] != "test":
            continue
        shot = r.get("screenshot_path")
        states.append({"actions": r["actions"], "page_state": r["page_state"], "step": r["step"], "max_steps": r.get("max_steps"), "screenshot": None if not shot else (Path(shot) if Path(shot).is_absolute() else root / shot), "id": r["id"]})
    return states


def champion_bundle(params: Params, root: Path) -> tuple[Path | None, int | None]:
    from worldagent.registry.api import CHAMPION, open_registry

    with open_registry(sqlite_target(params.registry.url, root)) as registry:
        champion = registry.get_alias(params.intervention.family, CHAMPION)
    if champion is None:
        return None, None
    path = Path(champion.artifact_path)
    return (path if path.is_absolute() else root / path), champion.number


def compare(params: Params, root: Path) -> dict[str, Any]:
    """Candidate − champion on the same test sessions: paired bootstrap CIs on per-step correctness
    and Brier score (:func:`worldagent.evaluation.compare.bootstrap_diff`), and metric deltas."""
    from worldagent.evaluation.compare import bootstrap_diff

    cp = params.intervention.compare
    metrics = _read_json(root / METRICS_JSON, "the evaluation metrics")
    preds = [json.loads(line) for line in (root / PREDICTIONS).read_text(encoding="utf-8").splitlines()]
    y = np.asarray([p["label"] for p in preds])
    cand = np.asarray([p["probability"] for p in preds])
    threshold = float(metrics["threshold"])
    result: dict[str, Any] = {"candidate": "predictor", "family": params.intervention.family, "n": int(y.size), "confidence": cp.confidence, "bootstrap_samples": cp.bootstrap_samples, "seed": params.seed, "comparisons": {"champion": None}, "notes": []}
    path, number = champion_bundle(params, root)
    if path is None:
        result["notes"].append("No champion is deployed yet (first run): nothing to compare the candidate with.")
    elif not (path / "predictor.json").is_file():
        result["notes"].append(f"The champion's bundle {path} is missing: it cannot be re-evaluated, so there is no comparison.")
    else:
        champion = InterventionPredictor.from_dir(path)
        rows = read_steps(root)
        states = test_states(rows, root)
        if [s["id"] for s in states] != [p["id"] for p in preds]:
            raise ValueError(f"{root / PREDICTIONS}: the predictions do not match the test split of {root / STEPS}; rerun intervention_evaluate")
        champ, _warnings = champion.probabilities(states)
        champ_metrics = classification_metrics(y, champ, champion.threshold)
        correct_c = ((cand >= threshold).astype(int) == y).astype(float)
        correct_h = ((champ >= champion.threshold).astype(int) == y).astype(float)
        acc = bootstrap_diff(correct_c, correct_h, cp.bootstrap_samples, cp.confidence, params.seed)
        brier = bootstrap_diff(-((cand - y) ** 2), -((champ - y) ** 2), cp.bootstrap_samples, cp.confidence, params.seed)
        deltas = {k: (metrics[k] - champ_metrics[k]) if metrics.get(k) is not None and champ_metrics.get(k) is not None else None for k in ("accuracy", "precision", "recall", "f1", "auc", "pr_auc")}
        result["comparisons"]["champion"] = {
            "version": number,
            "bundle": str(path),
            "metrics": {k: champ_metrics[k] for k in ("accuracy", "precision", "recall", "f1", "auc", "pr_auc", "threshold")},
            "deltas": deltas,
            "accuracy_diff": acc,
            "neg_brier_diff": brier,
        }
    atomic_write_text(root / COMPARE_JSON, pretty_json(result))
    for note in result["notes"]:
        log.info("%s", note)
    return result


def gate(params: Params, root: Path) -> dict[str, Any]:
    """Thresholds (F1, ROC AUC, beating the logistic baseline) and non-inferiority to the champion
    on accuracy, through the shared gate (:func:`worldagent.evaluation.gate.decide_checks`)."""
    from worldagent.evaluation.gate import decide_checks, threshold_check

    gp = params.intervention.gate
    metrics = _read_json(root / METRICS_JSON, "the evaluation metrics")
    comparison = _read_json(root / COMPARE_JSON, "the comparison")
    checks = [threshold_check("min_f1", "Test F1", metrics["f1"], gp.min_f1), threshold_check("min_auc", "Test ROC AUC", metrics["auc"], gp.min_auc)]
    logistic = (metrics.get("baselines") or {}).get("logistic_regression")
    if gp.beat_baseline:
        if logistic is None:
            checks.append(threshold_check("beats_logistic_f1", "The logistic baseline", None, 0.0))
        else:
            margin = metrics["f1"] - logistic["f1"]
            check, _ = threshold_check("beats_logistic_f1", "F1 − logistic F1", margin, 1e-9)
            checks.append((check, f"F1 {metrics['f1']:.3f} {'beats' if check.passed else 'does not beat'} the logistic baseline's {logistic['f1']:.3f}."))
    champ = (comparison.get("comparisons") or {}).get("champion")
    decision = decide_checks(checks, champ["accuracy_diff"] if champ else None, gp.margin, "Accuracy", comparison.get("confidence", 0.95))
    payload = {**decision.model_dump(mode="json"), "candidate": "predictor", "family": params.intervention.family}
    atomic_write_text(root / GATE_JSON, pretty_json(payload))
    atomic_write_text(root / REPORT_MD, render_report(metrics, comparison, payload))
    log.info("gate %s", "PASSED" if decision.passed else "FAILED")
    for reason in decision.reasons:
        log.info("  %s", reason)
    return payload


def render_report(metrics: dict[str, Any], comparison: dict[str, Any], gate_payload: dict[str, Any]) -> str:
    def f(v: Any) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    models = {"encoder + predictor": metrics, **{name: m for name, m in (metrics.get("baselines") or {}).items() if m}}
    champ = (comparison.get("comparisons") or {}).get("champion")
    if champ:
        models[f"champion v{champ['version']}"] = champ["metrics"]
    lines = [
        "# Intervention predictor: evaluation",
        "",
        f"**Gate: {'PASSED' if gate_payload['passed'] else 'FAILED'}**",
        "",
        *[f"- {r}" for r in gate_payload["reasons"]],
        "",
        f"Held-out test sessions: {metrics.get('test_sessions')} ({metrics['samples']['total']} steps: {metrics['samples']['interventions']} before an intervention, {metrics['samples']['successes']} not).",
        f"Decision threshold {metrics['threshold']:.4f}: {metrics.get('threshold_rule')}.",
        "",
        "| model | accuracy | precision | recall | F1 | ROC AUC | PR AUC |",
        "|---|---|---|---|---|---|---|",
        *[f"| {name} | {f(m.get('accuracy'))} | {f(m.get('precision'))} | {f(m.get('recall'))} | {f(m.get('f1'))} | {f(m.get('auc'))} | {f(m.get('pr_auc'))} |" for name, m in models.items()],
        "",
        "Recall by cause: " + ", ".join(f"{k} {v['recall']:.2f} ({v['steps']})" for k, v in (metrics.get("recall_by_reason") or {}).items()),
        "",
        "![confusion matrix](confusion_matrix.png) ![ROC](roc_curve.png) ![PR](pr_curve.png)",
        "",
    ]
    if champ:
        d = champ["accuracy_diff"]
        lines.append(f"Candidate − champion accuracy on the same steps: {d['mean']:+.3f} ({comparison['confidence']:.0%} CI {d['low']:+.3f} to {d['high']:+.3f}).")
    lines += [f"- {note}" for note in [*metrics.get("notes", []), *comparison.get("notes", [])]]
    return "\n".join(lines) + "\n"
