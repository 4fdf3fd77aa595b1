"""The experience store: deterministic, deduplicated, merged across runs, and turned into training rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldagent.errors import InputError
from worldagent.world_agent.experience import (
    MANIFEST,
    ExperienceSample,
    merge_samples,
    preference_pairs,
    read_store,
    rejection_sft_rows,
    reward_variance_filter,
    samples_from_groups,
    update_store,
    write_store,
)

PROMPT_A = [{"role": "system", "content": "s"}, {"role": "user", "content": "A toggle button."}]
PROMPT_B = [{"role": "system", "content": "s"}, {"role": "user", "content": "An alert."}]


def sample(prompt, completion, reward, run="run-1", model="model-1", prompt_id=None):
    return ExperienceSample(
        prompt_id=prompt_id or prompt[1]["content"],
        prompt=prompt,
        completion=completion,
        reward=reward,
        passed=reward >= 0.9,
        model_hash=model,
        run_id=run,
    )


def test_the_store_round_trips_with_deterministic_bytes(tmp_path: Path):
    samples = [sample(PROMPT_A, "good", 1.0), sample(PROMPT_A, "bad", 0.2), sample(PROMPT_B, "meh", 0.5)]
    write_store(tmp_path / "one", samples)
    write_store(tmp_path / "two", list(reversed(samples)))
    names = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert MANIFEST in names and all(n == MANIFEST or n.startswith("samples-") for n in names)
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert sorted(read_store(tmp_path / "one"), key=lambda s: s.key) == sorted(samples, key=lambda s: s.key)
    manifest = json.loads((tmp_path / "one" / MANIFEST).read_text())
    assert (manifest["samples"], manifest["prompts"], manifest["passed"]) == (3, 2, 1)


def test_a_store_named_by_a_relative_path_reads_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """As dvc.yaml names it (data/experience/world_agent), relative to the project root."""
    samples = [sample(PROMPT_A, "good", 1.0), sample(PROMPT_B, "meh", 0.5)]
    monkeypatch.chdir(tmp_path)
    write_store(Path("data/experience/store"), samples)
    assert sorted(read_store(Path("data/experience/store")), key=lambda s: s.key) == sorted(
        samples, key=lambda s: s.key
    )


def test_a_missing_store_is_empty_and_a_damaged_one_is_named(tmp_path: Path):
    assert read_store(tmp_path / "none") == []
    write_store(tmp_path / "s", [sample(PROMPT_A, "good", 1.0)])
    shard = next((tmp_path / "s").glob("samples-*.jsonl"))
    shard.write_text(shard.read_text().replace("good", "evil"))
    with pytest.raises(InputError, match=shard.name):
        read_store(tmp_path / "s")


def test_merge_deduplicates_by_prompt_and_completion_keeping_the_first_provenance():
    old = [sample(PROMPT_A, "x", 0.1, run="run-1")]
    new = [sample(PROMPT_A, "x", 0.1, run="run-2"), sample(PROMPT_A, "y", 1.0, run="run-2")]
    merged, stats = merge_samples(old, new)
    assert [(s.completion, s.run_id) for s in merged] == sorted(
        [("x", "run-1"), ("y", "run-2")], key=lambda c: sample(PROMPT_A, c[0], 0).key
    )
    assert stats == {"previous": 1, "new": 2, "added": 1, "duplicates": 1}


def test_a_second_run_uses_the_first_runs_experience(tmp_path: Path):
    store = tmp_path / "experience"
    # Run 1: the policy only fails on A; nothing to prefer yet, except against the reference.
    update_store(store, [sample(PROMPT_A, "fail-1", 0.2, run="run-1"), sample(PROMPT_B, "pass-b", 1.0, run="run-1")])
    assert [p["source"] for p in preference_pairs(read_store(store), {"A toggle button.": "REF"})] == ["reference"]
    # Run 2 (a new model) passes on A once: the pair joins run 2's success with run 1's failure.
    stats = update_store(
        store,
        [sample(PROMPT_A, "pass-2", 1.0, run="run-2", model="model-2"), sample(PROMPT_B, "pass-b", 1.0, run="run-2")],
    )
    assert stats["added"] == 1 and stats["duplicates"] == 1 and stats["total"] == 3
    experience = read_store(store)
    pairs = preference_pairs(experience, {"A toggle button.": "REF"})
    assert len(pairs) == 1
    assert pairs[0]["chosen"][0]["content"] == "pass-2" and pairs[0]["rejected"][0]["content"] == "fail-1"
    assert pairs[0]["source"] == "on-policy" and pairs[0]["rejected_run_id"] == "run-1"
    rows = rejection_sft_rows(experience)
    assert sorted(r["messages"][-1]["content"] for r in rows) == ["pass-2", "pass-b"]
    assert {r["run_id"] for r in rows} == {"run-1", "run-2"}  # pass-b keeps its first provenance
    assert json.loads((store / MANIFEST).read_text())["runs"] == {"run-1": 2, "run-2": 1}


def test_sft_rows_cap_per_prompt_and_pairs_need_a_real_reward_gap():
    samples = [sample(PROMPT_A, f"p{i}", 0.9 + i / 100) for i in range(4)] + [sample(PROMPT_A, "f", 0.95 - 0.9)]
    rows = rejection_sft_rows(samples, max_per_prompt=2)
    assert [r["messages"][-1]["content"] for r in rows] == ["p3", "p2"]
    assert len(preference_pairs(samples, max_pairs_per_prompt=5)) == 1  # one failure to pair with
    assert preference_pairs([sample(PROMPT_B, "f", 0.1)]) == []  # nothing passes, no reference


def test_reward_variance_filter_keeps_prompts_whose_rewards_vary():
    kept, summary = reward_variance_filter(["a", "b", "c"], [[0, 0, 0], [0, 1, 0], [0.5, 0.5, 0.6]])
    assert kept == ["b", "c"]
    assert summary["frac_reward_zero_std"] == pytest.approx(1 / 3) and summary["kept"] == 2
    with pytest.raises(ValueError):
        reward_variance_filter(["a"], [])


def test_non_finite_rewards_are_refused():
    with pytest.raises(ValueError, match="finite"):
        sample(PROMPT_A, "x", float("nan"))


def test_samples_from_groups_score_each_completion_of_each_prompt():
    rows = [{"id": "a#x", "prompt": PROMPT_A}, {"id": "b#y", "prompt": PROMPT_B}]
    samples = samples_from_groups(
        rows, [["g", "h"], ["i"]], [[1.0, 0.3], [0.95]], pass_reward=0.95, model_hash="m", run_id="r"
    )
    assert [(s.prompt_id, s.completion, s.passed) for s in samples] == [
        ("a#x", "g", True),
        ("a#x", "h", False),
        ("b#y", "i", True),
    ]
    with pytest.raises(ValueError, match="a#x"):
        samples_from_groups(rows, [["g"], ["i"]], [[1.0, 0.3], [0.95]], pass_reward=1, model_hash="m", run_id="r")
