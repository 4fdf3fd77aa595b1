"""The agent's own check (no hidden assertions) and answering again while it fails."""

from __future__ import annotations

import pytest
from evaluation_helpers import STORIES

from worldagent.config import RewardWeights
from worldagent.evaluation.evaluate import Scorer
from worldagent.evaluation.policies import StaticPolicy
from worldagent.evaluation.self_check import SelfCheckingPolicy, row_check
from worldagent.storytest.runner import PythonStoryRunner

INLINE_ID = "avatar/avatar.stories.tsx#photoAvatar"
COOKIES_ID = "checkbox/checkbox.stories.tsx#essentialCookiesLocked"


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
