"""benchmarks.training_fit: a trained stage answering its own training stories once, greedily."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluation_helpers import DATA, STORIES, cookies_answers, scored_row

from benchmarks.training_fit import fit_params, fit_summary, measure_fit, training_rows
from worldagent.config import Params, RewardWeights
from worldagent.errors import InputError
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.world_agent.evaluate import Scorer


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_training_rows_leave_out_relabelled_copies_and_spread_over_components(tmp_path: Path, eval_rows) -> None:
    first, second = eval_rows[0], next(r for r in eval_rows if r["component"] != eval_rows[0]["component"])
    copy = dict(first, id=f"{first['id']}~relabel-1")
    rows = training_rows(_write(tmp_path / "t.jsonl", [copy, second, first, first]), None)
    assert [row["id"] for row in rows] == sorted([first["id"], second["id"]], key=lambda i: i.split("/")[0])
    assert [row["id"] for row in training_rows(tmp_path / "t.jsonl", 1)] == [rows[0]["id"]]
    with pytest.raises(InputError, match="no single-turn training rows"):
        training_rows(_write(tmp_path / "only-copies.jsonl", [copy]), None)


def test_fit_params_answer_once_without_retries_or_an_unconstrained_row() -> None:
    params = Params.model_validate({"evaluate": {"self_check_attempts": 3, "unconstrained_models": ["sft"]}})
    fit = fit_params(params, 5)
    assert (fit.evaluate.self_check_attempts, fit.evaluate.unconstrained_models, fit.evaluate.max_intents) == (0, [], 5)
    assert params.evaluate.self_check_attempts == 3  # the caller's params are left alone


def test_the_summary_splits_failures_and_counts_memorised_answers(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, answers = cookies_answers(eval_rows)
    fitted = scored_row(scorer, row, answers)
    summary = fit_summary(fitted, [row, row, row])
    assert {k: summary[k] for k in ("n", "passed", "assertion_failed", "render_or_a11y_failed")} == {
        "n": 3,
        "passed": 1,
        "assertion_failed": 1,
        "render_or_a11y_failed": 1,
    }
    assert summary["repeats_training_answer"] == 1
    assert summary["story_pass_rate"] == pytest.approx(1 / 3)


def test_measure_fit_generates_one_answer_per_training_story(tmp_path: Path, tiny_model, token_files) -> None:
    rows = training_rows(DATA / "trajectories.eval.jsonl", 2)
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    params = Params.model_validate({"evaluate": {"max_new_tokens": 16, "batch_size": 2, "self_check_attempts": 2}})
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    evaluation = measure_fit(params, "sft", rows, scorer, tmp_path, adapter, loader=lambda base, a: tiny_model)
    assert evaluation.intents == [row["id"] for row in rows]
    (row,) = evaluation.rows  # one row: no unconstrained decoding
    assert row.self_check is None  # no retries, whatever the params say
    summary = fit_summary(row, rows)
    assert (summary["model"], summary["n"]) == ("sft", 2)
    assert summary["passed"] == 0  # 16 tokens of a random model write no story
    assert summary["render_or_a11y_failed"] == 2


def test_sampled_answers_follow_their_seed(tmp_path: Path, tiny_model, token_files) -> None:
    rows = training_rows(DATA / "trajectories.eval.jsonl", 2)
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    params = Params.model_validate({"evaluate": {"max_new_tokens": 16, "batch_size": 2}})

    def sample(seed: int) -> list[str]:
        evaluation = measure_fit(
            params, "sft", rows, scorer, tmp_path, tmp_path, loader=lambda base, a: tiny_model, sampling=(1.5, seed)
        )
        (row,) = evaluation.rows
        assert row.name == f"sft (sampled at 1.5, seed {seed})" and evaluation.intents == [r["id"] for r in rows]
        return row.outputs

    greedy = measure_fit(params, "sft", rows, scorer, tmp_path, tmp_path, loader=lambda base, a: tiny_model)
    assert sample(1) == sample(1)  # reproducible
    assert sample(2) != sample(1) != greedy.rows[0].outputs  # another seed, another answer; not the greedy one
