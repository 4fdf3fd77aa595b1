"""Paired bootstrap CIs over intents and the candidate-vs-baselines comparison."""

from __future__ import annotations

import numpy as np
import pytest
from evaluation_helpers import synthetic_report

from worldagent.evaluation.compare import bootstrap_diff, compare, compare_stages, select_candidate, step_effects
from worldagent.evaluation.family import WORLD_AGENT
from worldagent.evaluation.metrics import METRICS


def paired(n: int, true_diff: float, seed: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0, 1, n)  # shared per-intent effect: pairing must cancel it
    b = difficulty + rng.normal(0, 0.1, n)
    a = b + true_diff + rng.normal(0, 0.2, n)
    return a.tolist(), b.tolist()


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    a, b = paired(60, 0.1, seed=1)
    assert bootstrap_diff(a, b, 500, 0.95, seed=7) == bootstrap_diff(a, b, 500, 0.95, seed=7)
    assert bootstrap_diff(a, b, 500, 0.95, seed=7) != bootstrap_diff(a, b, 500, 0.95, seed=8)


def test_bootstrap_contains_the_true_difference() -> None:
    a, b = paired(200, 0.25, seed=3)
    ci = bootstrap_diff(a, b, 1000, 0.95, seed=0)
    assert ci["low"] < 0.25 < ci["high"]
    assert ci["mean"] == pytest.approx(np.mean(np.subtract(a, b)))
    # Coverage over many data sets is close to the nominal 95%.
    covered = 0
    for seed in range(100):
        a, b = paired(40, 0.25, seed=100 + seed)
        ci = bootstrap_diff(a, b, 400, 0.95, seed=seed)
        covered += ci["low"] <= 0.25 <= ci["high"]
    assert covered >= 85


def test_bootstrap_interval_shrinks_with_more_intents() -> None:
    small = bootstrap_diff(*paired(20, 0.1, seed=5), samples=1000, confidence=0.95, seed=0)
    large = bootstrap_diff(*paired(500, 0.1, seed=5), samples=1000, confidence=0.95, seed=0)
    assert large["high"] - large["low"] < 0.5 * (small["high"] - small["low"])
    narrow = bootstrap_diff(*paired(100, 0.1, seed=5), samples=1000, confidence=0.5, seed=0)
    wide = bootstrap_diff(*paired(100, 0.1, seed=5), samples=1000, confidence=0.99, seed=0)
    assert narrow["high"] - narrow["low"] < wide["high"] - wide["low"]


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_diff([1.0, 1.0, 1.0], [0.5, 0.5, 0.5], 100, 0.95, 0) == {"mean": 0.5, "low": 0.5, "high": 0.5}
    with pytest.raises(ValueError, match="same length"):
        bootstrap_diff([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="zero intents"):
        bootstrap_diff([], [])


def test_compare_first_run_has_no_champion() -> None:
    report = synthetic_report({"base": [0.0] * 6, "grpo": [1.0, 0.8, 1.0, 0.0, 1.0, 0.5], "reference": [1.0] * 6})
    result = compare(report, "grpo", samples=200, seed=1)
    assert result["comparisons"]["champion"] is None
    assert any("first run" in note for note in result["notes"])
    assert WORLD_AGENT.champion_diff(result) is None
    base = result["comparisons"]["base"]
    assert set(base["metrics"]) == set(METRICS)
    reward = base["metrics"]["mean_reward"]
    assert reward["diff"]["mean"] == pytest.approx(np.mean([1.0, 0.8, 1.0, 0.0, 1.0, 0.5]))
    assert reward["verdict"] == "better"
    assert base["metrics"]["constraint_violations"]["higher_is_better"] is False
    assert base["metrics"]["constraint_violations"]["verdict"] == "better"  # fewer blocked calls
    gap = result["reference_gap"]["mean_reward"]
    assert gap["gap"] == pytest.approx(1.0 - report.models["grpo"].metrics.mean_reward)


def test_compare_with_a_champion_pairs_by_intent() -> None:
    report = synthetic_report({"champion": [0.5] * 8, "base": [0.0] * 8, "grpo": [0.5] * 7 + [0.0]})
    # Reorder the champion's rows: pairing is by intent id, not by position.
    report.models["champion"].per_intent.reverse()
    result = compare(report, "grpo", samples=300, seed=2)
    diff = WORLD_AGENT.champion_diff(result)
    assert diff is not None
    assert diff["mean"] == pytest.approx(-0.5 / 8)
    assert diff["low"] <= diff["mean"] <= diff["high"] <= 0.0
    assert result["reference_gap"] is None
    with pytest.raises(ValueError, match="not evaluated"):
        compare(report, "dpo")


def test_best_candidate_is_the_trained_stage_with_the_highest_mean_reward_ties_to_the_earlier() -> None:
    report = synthetic_report(
        {
            "base": [0.0] * 6,
            "sft": [0.5] * 6,
            "experience": [1.0, 1.0, 0.5, 0.5, 0.5, 0.5],
            "dpo": [1.0, 0.5, 1.0, 0.5, 0.5, 0.5],  # the same mean as experience: the earlier stage wins
            "grpo": [0.0] * 6,
            "reference": [1.0] * 6,  # never a candidate, however good
        }
    )
    selection = select_candidate(report, "best", samples=200, seed=0)
    assert selection["candidate"] == "experience" and selection["runner_up"] == "dpo"
    assert selection["mean_reward"] == pytest.approx({"sft": 0.5, "experience": 4 / 6, "dpo": 4 / 6, "grpo": 0.0})
    diff = selection["runner_up_diff"]
    assert diff["mean"] == pytest.approx(0.0) and diff["low"] < 0 < diff["high"]  # the choice is not supported
    assert select_candidate(report, "grpo")["candidate"] == "grpo"  # an explicit stage still works
    del report.models["experience"]
    assert select_candidate(report, "best", samples=50)["candidate"] == "dpo"
    with pytest.raises(ValueError, match="no trained stage"):
        select_candidate(synthetic_report({"base": [0.0], "reference": [1.0]}), "best")
    with pytest.raises(ValueError, match="was not evaluated"):
        select_candidate(report, "experience")


def test_step_effects_chain_the_evaluated_stages_and_flag_the_ones_that_did_not_improve() -> None:
    report = synthetic_report(
        {
            "base": [0.0] * 10,
            "nearest": [0.3] * 10,
            "sft": [0.5] * 10,
            # no experience stage evaluated: dpo is compared with sft
            "dpo": [0.5] * 9 + [0.3],
            "grpo": [1.0] * 10,
        }
    )
    effects = step_effects(report, "grpo", samples=300, seed=0)
    pairs = [(e["model"], e["baseline"]) for e in effects]
    assert pairs == [("sft", "base"), ("dpo", "sft"), ("grpo", "dpo"), ("grpo", "nearest"), ("grpo", "base")]
    improved = {(e["model"], e["baseline"]): e["improved"] for e in effects}
    assert improved == {
        ("sft", "base"): True,
        ("dpo", "sft"): False,  # slightly worse: its CI reaches below 0
        ("grpo", "dpo"): True,
        ("grpo", "nearest"): True,
        ("grpo", "base"): True,
    }
    dpo = effects[1]["metrics"]
    assert dpo["mean_reward"]["diff"]["mean"] == pytest.approx(-0.02) and dpo["mean_reward"]["baseline"] == 0.5
    assert set(dpo) == {"mean_reward", "story_pass_rate"}
    # A candidate that is itself a step pairs with the base once.
    assert [(e["model"], e["baseline"]) for e in step_effects(report, "sft", samples=50)][-2:] == [
        ("grpo", "dpo"),
        ("sft", "nearest"),
    ]


def test_compare_stages_records_the_selection_and_the_step_effects() -> None:
    report = synthetic_report({"base": [0.0] * 4, "sft": [1.0] * 4, "grpo": [0.5] * 4})
    result = compare_stages(report, "best", samples=100, seed=0)
    assert result["candidate"] == "sft" and result["selection"]["rule"] == "best"
    assert result["comparisons"]["base"]["metrics"]["mean_reward"]["diff"]["mean"] == 1.0
    assert [(e["model"], e["baseline"]) for e in result["step_effects"]] == [("sft", "base"), ("grpo", "sft")]
