from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.intervention.conftest import run_stage
from worldagent.config import Params
from worldagent.intervention.dataset import (
    PAGE_DEFAULTS,
    PAGE_FEATURES,
    UNK,
    build_vocab,
    encode_actions,
    label_steps,
    page_vector,
    split_sessions,
    url_bucket,
)
from worldagent.intervention.simulator import plan_episodes, render_screenshot, simulate_episode
from worldagent.intervention.stages.common import read_steps
from worldagent.pipeline import intervention as intervention_table


def tree_hash(path: Path) -> str:
    digest = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f.relative_to(path).as_posix().encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def test_simulate_and_export_are_byte_deterministic(tmp_path: Path, small_params: Params, pipeline_root: Path) -> None:
    run_stage("simulate", small_params, tmp_path)
    run_stage("export", small_params, tmp_path)
    for rel in (
        "data/experience/simulated.db",
        "data/experience/screenshots",
        "data/generated/intervention/steps.jsonl",
        "data/generated/intervention/manifest.json",
        "data/generated/intervention/interventions.json",
    ):
        assert tree_hash(tmp_path / rel) if (tmp_path / rel).is_dir() else (tmp_path / rel).read_bytes()
        a, b = tmp_path / rel, pipeline_root / rel
        assert (tree_hash(a) == tree_hash(b)) if a.is_dir() else (a.read_bytes() == b.read_bytes()), rel


def test_embed_is_byte_deterministic(tmp_path: Path, small_params: Params, pipeline_root: Path) -> None:
    import shutil

    for rel in ("data/experience", "data/generated/intervention"):
        shutil.copytree(pipeline_root / rel, tmp_path / rel, ignore=shutil.ignore_patterns("embeddings"))
    run_stage("embed", small_params, tmp_path)
    assert tree_hash(tmp_path / intervention_table.EMBEDDINGS) == tree_hash(
        pipeline_root / intervention_table.EMBEDDINGS
    )


def test_balance_splits_and_labels(pipeline_root: Path, small_params: Params) -> None:
    import json

    manifest = json.loads((pipeline_root / intervention_table.MANIFEST).read_text())
    assert manifest["balance"]["intervention_sessions"] == pytest.approx(0.65, abs=0.03)
    rows = read_steps(pipeline_root / intervention_table.STEPS)
    splits: dict[str, set[str]] = {}
    for row in rows:
        splits.setdefault(row["split"], set()).add(row["session_id"])
    assert set(splits) == {"train", "validation", "test"}
    assert (
        not (splits["train"] & splits["test"])
        and not (splits["train"] & splits["validation"])
        and not (splits["validation"] & splits["test"])
    )
    assert sum(len(v) for v in splits.values()) == small_params.intervention.simulate.episodes
    # every step is labelled; intervention episodes have negative early steps too
    by_session: dict[str, list[int]] = {}
    for row in rows:
        by_session.setdefault(row["session_id"], []).append(row["label"])
    assert any(labels[0] == 0 and labels[-1] == 1 for labels in by_session.values())
    assert any(set(labels) == {0} for labels in by_session.values())
    assert manifest["counts"]["steps"] == len(rows) and manifest["fallbacks"]["steps_without_screenshot"] == 0


def test_plan_is_balanced_and_deterministic() -> None:
    plan = plan_episodes(200, 0.65, ["ecommerce", "research", "information"], 7)
    assert sum(flag for _, _, flag in plan) == 130
    assert plan == plan_episodes(200, 0.65, ["ecommerce", "research", "information"], 7)
    assert plan != plan_episodes(200, 0.65, ["ecommerce", "research", "information"], 8)


def test_causes_are_visible_in_the_data() -> None:
    base = {
        "path": "/",
        "scroll": 0,
        "highlight": 0,
        "cookie": False,
        "toast": False,
        "overlay": False,
        "login": False,
        "captcha": False,
    }
    import io

    def mean(scene: dict) -> float:
        return float(np.asarray(Image.open(io.BytesIO(render_screenshot(scene, "ecommerce", 80, 50, "k")))).mean())

    assert mean({**base, "overlay": True}) < mean(base) - 40  # the overlay darkens the page
    assert mean({**base, "captcha": True}) != mean(base)
    stuck = [e for e in (simulate_episode(1, i, "research", True, 12) for i in range(60)) if e.cause == "agent_stuck"]
    assert stuck and all(len({s.target for s in e.steps if s.label_cause}) == 1 for e in stuck)  # loops on one element
    budget = [e for e in (simulate_episode(1, i, "research", True, 12) for i in range(60)) if e.cause == "max_steps"]
    assert budget and all(len(e.steps) == 12 for e in budget)


def test_label_horizon() -> None:
    task = {"steps": [{}] * 6, "interventions": [{"step": 5, "reason": "captcha"}]}
    assert [lab for lab, _ in label_steps(task, 2)] == [0, 0, 0, 1, 1, 1]
    assert label_steps(task, 0)[5] == (1, "captcha")


def test_page_vector_reads_nested_state_and_counts_missing_fields() -> None:
    page = {
        "url": "https://x/login",
        "title": "T",
        "state": {
            "scroll_y": 500,
            "scroll_height": 1000,
            "viewport_width": 1920,
            "viewport_height": 1080,
            "interactive_elements": 0,
            "accessibility_summary": "captcha box",
        },
    }
    vec = page_vector(page, 3, 10, 16)
    values = dict(zip(PAGE_FEATURES, vec.values, strict=True))
    assert (
        values["scroll_frac"] == 0.5
        and values["viewport_width"] == 1.0
        and values["kw_captcha"] == 1.0
        and values["url_login"] == 1.0
    )
    assert values["budget_left"] == pytest.approx(0.7) and vec.missing == []
    flat = page_vector({"url": "https://x", "scroll_y": 500}, 0, None, 16)  # fields not under state: defaults, counted
    assert set(flat.missing) == set(PAGE_DEFAULTS)
    assert dict(zip(PAGE_FEATURES, flat.values, strict=True))["missing_scroll_y"] == 1.0
    bad = page_vector({"state": {"scroll_y": "a lot", "scroll_height": float("nan")}}, 0, None, 16)
    assert "scroll_y" in bad.missing and "scroll_height" in bad.missing


def test_url_hash_is_stable_across_processes() -> None:
    # sha256-based: the same value in every process and on every machine (Python's hash() is salted)
    assert url_bucket("https://shop.example/product/42", 1_000_003) == url_bucket(
        "https://shop.example/product/7", 1_000_003
    )
    assert (
        url_bucket("https://shop.example/product/42", 1_000_003)
        == int.from_bytes(hashlib.sha256(b"shop.example/product").digest()[:8], "big") % 1_000_003
    )


def test_unknown_actions_map_to_the_unknown_token() -> None:
    vocab_list = build_vocab([{"actions": [{"action": "click", "target": "#a"}]}, {"actions": [{"action": "scroll"}]}])
    vocab = {t: i for i, t in enumerate(vocab_list)}
    ids, ok, unknown = encode_actions(
        [{"action": "click", "target": "#a", "success": False}, {"action": "teleport"}], vocab, 4
    )
    assert ids == [0, 0, vocab["click:#a"], vocab[UNK]] and ok == [0, 0, 1, 2] and unknown == 1


def test_split_is_stratified_and_stable() -> None:
    tasks = [{"session_id": f"s{i}", "status": "intervention" if i % 3 else "complete"} for i in range(90)]
    a = split_sessions(tasks, 0.2, 0.2, 1)
    assert a == split_sessions(list(reversed(tasks)), 0.2, 0.2, 1)
    test = [t for t in tasks if a[t["session_id"]] == "test"]
    assert len(test) == 18 and sum(t["status"] == "complete" for t in test) == 6


def test_empty_store_is_a_clear_error(tmp_path: Path, small_params: Params) -> None:
    from worldagent.intervention.store import open_store

    open_store(f"sqlite:///{tmp_path / 'data/experience/simulated.db'}").close()
    with pytest.raises(ValueError, match="no finished tasks"):
        run_stage("export", small_params, tmp_path)
