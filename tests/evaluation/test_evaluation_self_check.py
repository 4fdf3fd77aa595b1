"""The agent's own check (no hidden assertions) and answering again while it fails."""

from __future__ import annotations

from typing import Any

import pytest
from evaluation_helpers import COOKIES_ID, STORIES, cookies_answers

from worldagent.config import RewardWeights
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.world_agent.evaluate import Scorer, prompts_of
from worldagent.world_agent.policies import StaticPolicy
from worldagent.world_agent.self_check import (
    OWN,
    SHOWN,
    SelfCheckingPolicy,
    TieredSelfCheckingPolicy,
    missing_phrases,
    quoted_phrases,
    row_check,
    tiered_check,
)

INLINE_ID = "avatar/avatar.stories.tsx#photoAvatar"


class Recording(StaticPolicy):
    """Fixed outputs by prompt text; remembers what it was asked."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__([])
        self.answers, self.asked = answers, []

    def complete(self, prompts):
        self.asked.append([prompt[0]["content"] for prompt in prompts])
        return [self.answers[prompt[0]["content"]] for prompt in prompts]


def prompts(*names: str) -> list[list[dict]]:
    return [[{"role": "user", "content": name}] for name in names]


def test_only_failing_answers_are_asked_again_and_the_first_passing_retry_is_kept() -> None:
    first = Recording({"a": "good a", "b": "bad b", "c": "bad c"})
    retries = [Recording({"b": "bad b again", "c": "good c"}), Recording({"b": "good b"})]
    policy = SelfCheckingPolicy(first, lambda k: retries[k - 1], lambda i, answer: answer.startswith("good"), 3)
    assert policy.complete(prompts("a", "b", "c")) == ["good a", "good b", "good c"]
    assert first.asked == [["a", "b", "c"]]
    assert retries[0].asked == [["b", "c"]] and retries[1].asked == [["b"]]  # a retry sees only what still fails
    assert policy.answered_by == [0, 2, 1]
    assert policy.used == [first, *retries]  # no third retry once every answer passes
    counts = policy.counts
    assert (counts.first_passed, counts.fixed, counts.failed, counts.retried_answers) == (1, 2, 0, 3)


def test_when_no_retry_passes_the_first_answer_is_kept() -> None:
    first = Recording({"a": "bad a"})
    policy = SelfCheckingPolicy(first, lambda k: Recording({"a": f"worse a {k}"}), lambda i, answer: False, 2)
    assert policy.complete(prompts("a")) == ["bad a"]
    assert policy.answered_by == [0]
    counts = policy.counts
    assert (counts.attempts, counts.first_passed, counts.fixed, counts.failed, counts.retried_answers) == (
        2,
        0,
        0,
        1,
        2,
    )
    assert "0 of 1 first answers passed" in counts.note("m") and "1 kept a failing first answer" in counts.note("m")


def test_zero_attempts_never_retries() -> None:
    def no_retry(k: int):
        raise AssertionError("retried")

    policy = SelfCheckingPolicy(Recording({"a": "bad"}), no_retry, lambda i, answer: False, 0)
    assert policy.complete(prompts("a")) == ["bad"]
    with pytest.raises(ValueError, match="attempts"):
        SelfCheckingPolicy(Recording({}), no_retry, lambda i, answer: False, -1)


def test_the_self_check_sees_what_runstory_shows_the_agent_never_the_hidden_assertions(
    eval_rows, token_files, rejected
) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    by_id = {row["id"]: row for row in eval_rows}
    inline = by_id[INLINE_ID]
    reference = inline["messages"][2]["content"]
    assert scorer.self_check(inline, reference)
    assert not scorer.self_check(inline, rejected[(INLINE_ID, "inline-style")])  # a blocked call
    assert not scorer.self_check(inline, "no calls at all")
    broken = reference.replace("export const", "export cnst", 1)  # the story no longer parses
    assert not scorer.self_check(inline, broken)
    # A story that renders accessibly but names the wrong option passes its own check and fails the
    # hidden assertions: the check cannot peek at what the scorer grades.
    cookies = by_id[COOKIES_ID]
    wrong = cookies["messages"][2]["content"].replace("label: 'Essential cookies'", "label: 'Marketing cookies'")
    assert wrong != cookies["messages"][2]["content"]
    assert scorer.self_check(cookies, wrong)
    assert not scorer.score(cookies, wrong).story_passed


def test_row_check_checks_each_prompt_against_its_own_row(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    rows = eval_rows[:2]
    assert rows[0]["component"] != rows[1]["component"]  # interleaved by component
    check = row_check(scorer, rows)
    answers = [row["messages"][2]["content"] for row in rows]
    assert check(0, answers[0]) and check(1, answers[1])
    # the first row's story in the second row's sandbox: the component it imports is not there
    assert not check(1, answers[0])


def test_quoted_phrases_are_the_users_own_words() -> None:
    intent = 'A "Create account"  button, a "Terms\n of  use" link and an unquoted Cancel; "" is nothing'
    assert quoted_phrases(intent) == ["Create account", "Terms of use"]
    assert quoted_phrases("Create a secondary button that says Cancel") == []


def test_a_phrase_counts_as_shown_in_text_names_or_states_and_case_matters() -> None:
    html = (
        '<button type="button">Create account</button>'
        '<input type="text" aria-label="Phone number" aria-describedby="hint" aria-invalid="true">'
        '<p id="hint">Enter 10 digits</p>'
        '<div role="progressbar" aria-label="Storage" aria-valuenow="12" aria-valuetext="12 GB of 15 GB used"></div>'
    )
    shown = 'A "Create account" button, a "Phone number" field hinting "Enter 10 digits", "12 GB of 15 GB used"'
    assert missing_phrases(shown, html) == []
    assert missing_phrases('"create account", "Sign in" and "Create account"', html) == ["create account", "Sign in"]


def test_the_tiered_check_keeps_the_best_level_and_retries_only_below_the_top() -> None:
    levels = {"shown a": SHOWN, "own b": OWN, "bad b": 0, "shown b": SHOWN, "bad c": 0, "own c": OWN, "own c2": OWN}
    asked: list[list[str]] = []

    class Answers(StaticPolicy):
        def __init__(self, by_prompt: dict[str, str]) -> None:
            super().__init__([])
            self.by_prompt = by_prompt

        def complete(self, prompts):
            asked.append([prompt[0]["content"] for prompt in prompts])
            return [self.by_prompt[prompt[0]["content"]] for prompt in prompts]

    first = Answers({"a": "shown a", "b": "own b", "c": "bad c"})
    retries = [Answers({"b": "bad b", "c": "own c"}), Answers({"b": "shown b", "c": "own c2"})]
    policy = TieredSelfCheckingPolicy(first, lambda k: retries[k - 1], lambda i, answer: levels[answer], 2)
    prompts = [[{"role": "user", "content": name}] for name in "abc"]
    # b: a worse retry never replaces a better answer, a better one does; c: an equal level keeps the earlier
    assert policy.complete(prompts) == ["shown a", "shown b", "own c"]
    assert asked == [["a", "b", "c"], ["b", "c"], ["b", "c"]]
    assert policy.answered_by == [0, 2, 1]
    assert policy.first_levels == [SHOWN, OWN, 0] and policy.levels == [SHOWN, SHOWN, OWN]
    counts = policy.counts
    assert (counts.first_passed, counts.fixed, counts.failed, counts.retried_answers) == (1, 1, 1, 4)
    assert counts.ranked and counts.kept_rendering == 1
    assert "1 of 3 first answers reached the top rank" in counts.note("sft")
    assert "of the 1 that never did, 1 kept an answer that passes the own check" in counts.note("sft")


class CountingRunner:
    """A story runner that counts the stories it runs."""

    def __init__(self, runner: PythonStoryRunner) -> None:
        self.runner, self.runs = runner, 0

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self.runs += 1
        return self.runner.run(*args, **kwargs)


def test_the_tiered_check_ranks_the_words_above_the_own_check(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, (reference, wrong, broken) = cookies_answers(eval_rows)
    level = tiered_check(scorer, [row])
    assert [level(0, answer) for answer in (reference, wrong, broken)] == [SHOWN, OWN, 0]
    # ranking runs each answer's story no more often than the own check alone does
    tiered_runner, own_runner = CountingRunner(PythonStoryRunner()), CountingRunner(PythonStoryRunner())
    tiered = tiered_check(Scorer(STORIES, tiered_runner, RewardWeights(), token_files), [row])
    own = row_check(Scorer(STORIES, own_runner, RewardWeights(), token_files), [row])
    for answer in (reference, wrong, broken):
        tiered(0, answer)
        own(0, answer)
        assert tiered_runner.runs == own_runner.runs
    assert own_runner.runs >= 2  # the reference and the wrong answer each ran their story
    # where no retry shows the words, the answer the own check passes stays (not the first one)
    policy = TieredSelfCheckingPolicy(StaticPolicy([broken]), lambda k: StaticPolicy([wrong]), level, 2)
    assert policy.complete(prompts_of([row])) == [wrong]


def test_the_evaluation_ranks_answers_by_the_quoted_words_unless_told_not_to(eval_rows, token_files) -> None:
    from worldagent.config import EvaluateParams
    from worldagent.world_agent.stages.evaluate_model import with_self_check

    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, (_, wrong, broken) = cookies_answers(eval_rows)
    first, retry = StaticPolicy([broken]), StaticPolicy([wrong])

    def policy(**evaluate: object):
        return with_self_check(EvaluateParams.model_validate(evaluate), "sft", first, lambda k: retry, [row], scorer)

    ranked = policy()
    assert type(ranked) is TieredSelfCheckingPolicy  # the default
    assert ranked.complete(prompts_of([row])) == [wrong] and ranked.levels == [OWN]
    plain = policy(self_check_words=False)
    assert type(plain) is SelfCheckingPolicy and plain.complete(prompts_of([row])) == [wrong]
    assert policy(self_check_attempts=0) is first and policy(self_check_models=["dpo"]) is first
