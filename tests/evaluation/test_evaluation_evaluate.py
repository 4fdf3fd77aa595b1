"""Scoring outputs through constraints → sandboxed tools → story test, and the metrics from it."""

from __future__ import annotations

import pytest
from evaluation_helpers import STORIES

from worldagent.config import RewardWeights
from worldagent.evaluation.metrics import summarize
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.tools.callformat import parse_calls, render_calls
from worldagent.world_agent.evaluate import Scorer, evaluate_models, evaluate_outputs, prompts_of, select_eval_rows
from worldagent.world_agent.policies import ReferencePolicy, StaticPolicy

INLINE_ID = "avatar/avatar.stories.tsx#photoAvatar"
DIV_SOUP_ID = "card/card.stories.tsx#productCard"


def pick(rows: list[dict], *ids: str) -> list[dict]:
    by_id = {row["id"]: row for row in rows}
    return [by_id[i] for i in ids]


def reference(row: dict) -> str:
    return row["messages"][2]["content"]


def score(rows: list[dict], outputs: list[str], token_files=None):
    return evaluate_outputs(rows, outputs, STORIES, PythonStoryRunner(), RewardWeights(), token_files)


def test_reference_outputs_are_the_upper_bound(eval_rows, token_files) -> None:
    rows = eval_rows[:4]  # interleaved: the first rows come from different components
    assert len({row["component"] for row in rows}) == 4
    results = score(rows, ReferencePolicy(rows).complete(prompts_of(rows)), token_files)
    metrics = summarize(results)
    assert metrics.n == 4
    assert metrics.mean_reward >= 0.8
    assert metrics.story_pass_rate == 1.0
    assert metrics.a11y_pass_rate == 1.0
    assert metrics.parse_rate == 1.0
    assert metrics.constraint_violations == 0.0
    assert metrics.tool_efficiency == 1.0
    for result in results:
        assert result.assertions_total > 0 and result.assertions_passed == result.assertions_total
        assert result.errors == []


def test_empty_and_garbage_outputs_score_zero(eval_rows, token_files) -> None:
    rows = eval_rows[:3]
    garbage = "<start_function_call>call:writeStory{path:<escape>avatar/x.stories.tsx<escape>,content:<escape>oops"
    results = score(rows, ["", "I would write a nice avatar component.", garbage], token_files)
    for result in results:
        assert not result.parsed
        assert result.reward == 0.0
        assert not result.story_passed and not result.a11y_passed
        assert result.tool_efficiency == 0.0
        assert result.calls == 0
    assert "no tool call in the output" in results[0].errors
    assert any(error.startswith("parse:") for error in results[2].errors)
    metrics = summarize(results)
    assert (metrics.parse_rate, metrics.mean_reward, metrics.story_pass_rate) == (0.0, 0.0, 0.0)


def test_inline_style_is_blocked_and_scores_zero(eval_rows, token_files, rejected) -> None:
    [row] = pick(eval_rows, INLINE_ID)
    [result] = score([row], [rejected[(INLINE_ID, "inline-style")]], token_files)
    assert result.parsed
    assert result.violations >= 1
    assert result.reward == 0.0
    assert any("inline style" in error for error in result.errors)
    assert summarize([result]).constraint_violations == result.violations


def test_div_soup_scores_below_the_reference(eval_rows, token_files, rejected) -> None:
    [row] = pick(eval_rows, DIV_SOUP_ID)
    good, soup = score([row, row], [reference(row), rejected[(DIV_SOUP_ID, "div-soup")]], token_files)
    assert soup.parsed and good.parsed
    assert soup.reward < good.reward
    assert not soup.story_passed
    assert soup.assertions_passed < soup.assertions_total


def test_forgotten_run_story_is_still_scored_once(eval_rows, token_files) -> None:
    [row] = pick(eval_rows, INLINE_ID)
    calls = [call for call in parse_calls(reference(row)).calls if call.name != "runStory"]
    [result] = score([row], [render_calls(calls)], token_files)
    assert result.story_passed and result.reward == 1.0
    assert result.calls == len(calls)
    assert any("runStory was never called" in error for error in result.errors)
    # Nothing written, nothing run: a lone runStory of a missing file fails.
    [lonely] = score(
        [row], [render_calls([c for c in parse_calls(reference(row)).calls if c.name == "runStory"])], token_files
    )
    assert lonely.parsed and not lonely.story_passed and lonely.reward == 0.0


def test_the_written_story_is_tested_whatever_its_export_is_named_and_wherever_runstory_points(
    eval_rows, token_files
) -> None:
    [row] = pick(eval_rows, INLINE_ID)
    export = row["id"].split("#")[1]
    calls = parse_calls(reference(row)).calls
    for call in calls:
        if call.name == "writeStory":
            call.arguments["content"] = call.arguments["content"].replace(
                f"export const {export} =", "export const renamedStory ="
            )
        if call.name == "runStory":
            call.arguments["path"] = "avatar/never-written.stories.tsx"
    [result] = score([row], [render_calls(calls)], token_files)
    assert result.story_passed and result.reward == 1.0
    assert any("runStory never tested a written story; ran" in error for error in result.errors)


def test_a_story_file_with_several_exports_is_tested_under_the_task_export_only(eval_rows, token_files) -> None:
    [row] = pick(eval_rows, INLINE_ID)
    export = row["id"].split("#")[1]
    calls = parse_calls(reference(row)).calls
    for call in calls:
        if call.name == "writeStory":
            body = call.arguments["content"].replace(f"export const {export} =", "export const first =")
            call.arguments["content"] = body + body.split("\n\n", 1)[1].replace(
                "export const first =", "export const second ="
            )
    [result] = score([row], [render_calls(calls)], token_files)
    assert not result.story_passed and result.reward == 0.0  # ambiguous: neither story is the task's


def test_tool_efficiency_penalises_repeated_calls(eval_rows, token_files) -> None:
    [row] = pick(eval_rows, INLINE_ID)
    [result] = score([row], [reference(row) + reference(row)], token_files)
    assert result.story_passed
    assert result.tool_efficiency == pytest.approx(0.5)


def test_sandbox_falls_back_to_the_component_token_files(eval_rows) -> None:
    rows = eval_rows[:2]
    results = score(rows, [reference(row) for row in rows], token_files=None)
    assert all(result.story_passed for result in results)
    assert Scorer(STORIES, PythonStoryRunner(), RewardWeights()).seed_files(rows[0]) == [
        f"{rows[0]['component']}/{rows[0]['component']}.tokens.ts"
    ]


class FailingRunner:
    """Runs the story as ``runner`` does, then fails it: a stricter check than the scorer's own."""

    def __init__(self, runner: PythonStoryRunner) -> None:
        self.runner = runner

    def run(self, *args, **kwargs):
        return self.runner.run(*args, **kwargs).model_copy(update={"passed": False})


def test_a_scorer_with_another_runner_keeps_its_stories_weights_and_token_files(eval_rows, token_files) -> None:
    [row] = pick(eval_rows, INLINE_ID)
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(passed=0.6), token_files)
    stricter = scorer.with_runner(FailingRunner(scorer.runner))
    assert scorer.self_check(row, reference(row)) and not stricter.self_check(row, reference(row))
    assert stricter.seed_files(row) == scorer.seed_files(row) == token_files[INLINE_ID]
    assert (stricter.stories_root, stricter.weights) == (scorer.stories_root, scorer.weights)


def test_evaluate_models_scores_every_policy_on_the_same_intents(eval_rows, token_files) -> None:
    rows = eval_rows[:3]
    built: list[str] = []

    def lazy_empty() -> StaticPolicy:
        built.append("empty")
        return StaticPolicy([""] * len(rows))

    report = evaluate_models(
        {"reference": ReferencePolicy(rows), "empty": lazy_empty},
        rows,
        STORIES,
        PythonStoryRunner(),
        RewardWeights(),
        token_files,
    )
    assert built == ["empty"]
    assert list(report.models) == ["reference", "empty"]
    assert report.intents == [row["id"] for row in rows]
    assert report.components == sorted({row["component"] for row in rows})
    assert report.models["reference"].metrics.mean_reward > report.models["empty"].metrics.mean_reward == 0.0
    with pytest.raises(ValueError, match="outputs for"):
        score(rows, [""])


def test_select_eval_rows_interleaves_components_and_keeps_single_turn() -> None:
    def row(i: str, component: str, turns: str = "single") -> dict:
        return {"id": i, "component": component, "turns": turns, "intent": i, "messages": []}

    rows = [
        row("b#2", "b"),
        row("a#1", "a"),
        row("a#2", "a"),
        row("a#1", "a", "multi"),
        row("c#1", "c"),
        row("a#3", "a"),
    ]
    assert [r["id"] for r in select_eval_rows(rows)] == ["a#1", "b#2", "c#1", "a#2", "a#3"]
    assert [r["id"] for r in select_eval_rows(rows, max_intents=2)] == ["a#1", "b#2"]


def test_summarize_means(eval_rows, token_files) -> None:
    rows = eval_rows[:2]
    results = score(rows + rows, [reference(rows[0]), reference(rows[1]), "", ""], token_files)
    metrics = summarize(results)
    assert metrics.n == 4
    assert metrics.parse_rate == 0.5 and metrics.story_pass_rate == 0.5 and metrics.a11y_pass_rate == 0.5
    assert metrics.mean_reward == pytest.approx(sum(r.reward for r in results) / 4)
    assert summarize([]).n == 0
