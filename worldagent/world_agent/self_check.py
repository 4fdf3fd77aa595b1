"""The agent's own check, and answering again when it fails.

The system prompt tells the agent to run its story to check it. :class:`SelfCheckingPolicy` acts on
that check: every answer is run in a fresh sandbox without the hidden reference assertions
(:meth:`worldagent.world_agent.evaluate.Scorer.self_check`: it parses, no call is blocked, the story
renders and passes the accessibility and pattern rules), and a prompt whose answer fails is answered
again by the next policy of a retry sequence (a sampled decode of the same model; the next-nearest
story for the copy baseline), up to ``attempts`` times. The first answer that passes is kept; when
none does, the first answer is. Scoring against the reference assertions happens afterwards, on the
kept answer only, so the hidden assertions never choose an answer.

Most intents also quote the user's own words (``a submit control reading "Create account"``), and an
answer that renders other words passes the check above and fails the story test. The agent is given
the intent, so asking its page to show every quoted phrase is still its own check.
:class:`TieredSelfCheckingPolicy` ranks answers by it (:func:`tiered_check`): :data:`SHOWN` (renders
and shows every quoted phrase) above :data:`OWN` (renders) above 0; a prompt is answered again while
no answer reaches :data:`SHOWN`, and a retry replaces the kept answer only at a higher rank, so the
words can trade a rendering answer only for another rendering one (``evaluate.self_check_words``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from worldagent.evaluation.model_eval import SelfCheckCounts
from worldagent.storytest.assertions import Assertion
from worldagent.storytest.axtree import accessibility_tree
from worldagent.storytest.dom import parse_html, text_content
from worldagent.storytest.result import StoryResult
from worldagent.storytest.runner import StoryRunner
from worldagent.world_agent.evaluate import Scorer
from worldagent.world_agent.policies import Policy, Prompt

Check = Callable[[int, str], bool]  # (prompt position, answer) -> passed its own check


class SelfCheckingPolicy:
    """A :class:`~worldagent.world_agent.policies.Policy` that answers again while its own check fails.

    ``first`` answers every prompt; ``retry(k)`` (k = 1, 2, ...) builds the policy for the k-th retry,
    which is asked only for the prompts whose answers so far all failed ``check``.
    """

    def __init__(self, first: Policy, retry: Callable[[int], Policy], check: Check, attempts: int) -> None:
        if attempts < 0:
            raise ValueError("attempts must be 0 or more")
        self.first, self.retry, self.check, self.attempts = first, retry, check, attempts
        self.used: list[Policy] = []  # every policy that answered, first included (their stats add up)
        self.answered_by: list[int] = []  # per prompt: 0 for the first answer, k for the k-th retry
        self.counts = SelfCheckCounts(attempts=attempts, first_passed=0, fixed=0, failed=0, retried_answers=0)

    def complete(self, prompts: list[Prompt]) -> list[str]:
        from worldagent.lm.continuous import answer_with_retries, streamable

        self.answers: list[str] = [""] * len(prompts)
        self.answered_by = [0] * len(prompts)
        self._first_failed = self._fixed = self._retried = 0
        retries = [self.retry(k) for k in range(1, self.attempts + 1)] if streamable(self.first, []) else []
        if retries and streamable(self.first, retries):
            # one stream: a failing answer's retry joins the batch the step the answer ends
            self.used = [self.first, *retries]
            answer_with_retries(self.first, retries, prompts, self._again)  # type: ignore[arg-type]
        else:
            self._in_rounds(prompts)
        self.counts = SelfCheckCounts(
            attempts=self.attempts,
            first_passed=len(prompts) - self._first_failed,
            fixed=self._fixed,
            failed=self._first_failed - self._fixed,
            retried_answers=self._retried,
        )
        return self.answers

    def _in_rounds(self, prompts: list[Prompt]) -> None:
        """Every prompt answered by ``first``, then each round of retries for the prompts still failing."""
        self.used = [self.first]
        failing = [i for i, answer in enumerate(self.first.complete(prompts)) if self._again(i, 0, answer)]
        for attempt in range(1, self.attempts + 1):
            if not failing:
                break
            policy = self.retry(attempt)
            self.used.append(policy)
            again = policy.complete([prompts[i] for i in failing])
            failing = [i for i, answer in zip(failing, again, strict=True) if self._again(i, attempt, answer)]

    def _again(self, i: int, attempt: int, answer: str) -> bool:
        """Record prompt ``i``'s answer of ``attempt`` (0: the first); whether to ask it again."""
        passed = self.check(i, answer)
        if attempt == 0:
            self.answers[i] = answer
            self._first_failed += not passed
        else:
            self._retried += 1
            if passed:
                self.answers[i], self.answered_by[i] = answer, attempt
                self._fixed += 1
        return not passed and attempt < self.attempts


def row_check(scorer: Scorer, rows: Sequence[dict[str, Any]]) -> Check:
    """The check of the prompt at position i: ``scorer.self_check`` on ``rows[i]``."""
    return lambda i, answer: scorer.self_check(rows[i], answer)


_QUOTED = re.compile(r'"([^"]+)"')
_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def quoted_phrases(intent: str) -> list[str]:
    """The phrases an intent puts in double quotes, whitespace-normalised: the user's own words for
    a label, a name or a message."""
    return [phrase for phrase in (_normal(q) for q in _QUOTED.findall(intent)) if phrase]


def page_words(html: str) -> str:
    """What a reader of the rendered page can find: its text, and every accessible name and state
    value (labels, descriptions, ``aria-valuetext``...), one per line."""
    nodes = accessibility_tree(html)
    parts = [text_content(parse_html(html))]
    parts += [node.name for node in nodes]
    parts += [value for node in nodes for value in node.states.values()]
    return "\n".join(_normal(part) for part in parts if part)


def missing_phrases(intent: str, html: str) -> list[str]:
    """The intent's quoted phrases that the page does not show (case-sensitive, as the story test)."""
    words = page_words(html)
    return [phrase for phrase in quoted_phrases(intent) if phrase not in words]


class QuotedPhrasesRunner:
    """A :class:`~worldagent.storytest.runner.StoryRunner` that runs ``runner``, then reads a passing
    story's page for every phrase ``intent`` quotes (set per prompt by the check): ``missing`` is what
    the last run's page does not show. The result is ``runner``'s: the words rank an answer
    (:func:`tiered_check`), they never fail it."""

    def __init__(self, runner: StoryRunner) -> None:
        self.runner = runner
        self.intent = ""
        self.missing: list[str] = []

    def run(
        self,
        story_file: Path,
        export: str,
        root: Path,
        expected: list[Assertion] | None = None,
        overlay: Mapping[str, str] | None = None,
    ) -> StoryResult:
        from worldagent.stories.render import render_story

        result = self.runner.run(story_file, export, root, expected, overlay)
        self.missing = []
        if not result.passed or not quoted_phrases(self.intent):
            return result
        self.missing = missing_phrases(self.intent, render_story(Path(story_file), export, Path(root), overlay).html)
        return result


Level = Callable[[int, str], int]  # (prompt position, answer) -> 0 failed, 1 own check, 2 and words shown
OWN, SHOWN = 1, 2


def tiered_check(scorer: Scorer, rows: Sequence[dict[str, Any]]) -> Level:
    """The level of an answer to the prompt at position i: :data:`SHOWN` when it passes the own check
    and its page shows every phrase the intent quotes, :data:`OWN` when it passes the own check only,
    else 0. Each answer's story runs once: the own check's run, whose page is then read for the words."""
    runner = QuotedPhrasesRunner(scorer.runner)
    checking = scorer.with_runner(runner)

    def level(i: int, answer: str) -> int:
        runner.intent, runner.missing = str(rows[i]["intent"]), []
        if not checking.self_check(rows[i], answer):
            return 0
        return OWN if runner.missing else SHOWN

    return level


class TieredSelfCheckingPolicy(SelfCheckingPolicy):
    """A :class:`SelfCheckingPolicy` whose check is a :data:`Level`: a prompt is answered again while
    no answer reaches :data:`SHOWN` (the base policy's loop, with "passed" meaning that rank), and
    where none does, the earliest answer of the highest rank is kept instead of the first. Its
    ``counts`` are of the top rank; ``levels`` and ``first_levels`` are each prompt's kept and first
    answer's rank."""

    def __init__(self, first: Policy, retry: Callable[[int], Policy], check: Level, attempts: int) -> None:
        super().__init__(first, retry, self._shown, attempts)
        self.rank = check
        self.levels: list[int] = []
        self.first_levels: list[int] = []
        self._asked: list[int] = []  # per prompt: answers checked so far (the n-th is attempt n)
        self._best: list[tuple[str, int]] = []  # per prompt: (answer, attempt) of its best rank so far

    def _shown(self, i: int, answer: str) -> bool:
        level, attempt = self.rank(i, answer), self._asked[i]
        self._asked[i] += 1
        if attempt == 0:
            self.first_levels[i] = level
        if level > self.levels[i]:
            self.levels[i], self._best[i] = level, (answer, attempt)
        return level == SHOWN

    def complete(self, prompts: list[Prompt]) -> list[str]:
        n = len(prompts)
        self.levels, self.first_levels, self._asked, self._best = [-1] * n, [0] * n, [0] * n, [("", 0)] * n
        answers = super().complete(prompts)
        for i, level in enumerate(self.levels):
            if level < SHOWN:  # no answer showed the words: the one the own check passed, if any
                answers[i], self.answered_by[i] = self._best[i]
        kept_rendering = sum(level == OWN for level in self.levels)
        self.counts = self.counts.model_copy(update={"ranked": True, "kept_rendering": kept_rendering})
        return answers
