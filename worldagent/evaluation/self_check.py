"""The agent's own check, and answering again when it fails.

The system prompt tells the agent to run its story to check it. :class:`SelfCheckingPolicy` acts on
that check: every answer is run in a fresh sandbox without the hidden reference assertions
(:meth:`worldagent.evaluation.evaluate.Scorer.self_check`: it parses, no call is blocked, the story
renders and passes the accessibility and pattern rules), and a prompt whose answer fails is answered
again by the next policy of a retry sequence (a sampled decode of the same model; the next-nearest
story for the copy baseline), up to ``attempts`` times. The first answer that passes is kept; when
none does, the first answer is. Scoring against the reference assertions happens afterwards, on the
kept answer only, so the hidden assertions never choose an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from worldagent.evaluation.evaluate import Scorer
from worldagent.evaluation.model_eval import SelfCheckCounts
from worldagent.evaluation.policies import Policy, Prompt

Check = Callable[[int, str], bool]  # (prompt position, answer) -> passed its own check


class SelfCheckingPolicy:
    """A :class:`~worldagent.evaluation.policies.Policy` that answers again while its own check fails.

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
        answers = self.first.complete(prompts)
        self.used = [self.first]
        self.answered_by = [0] * len(prompts)
        failing = [i for i, answer in enumerate(answers) if not self.check(i, answer)]
        first_failed, retried = len(failing), 0
        for attempt in range(1, self.attempts + 1):
            if not failing:
                break
            policy = self.retry(attempt)
            self.used.append(policy)
            again = policy.complete([prompts[i] for i in failing])
            retried += len(failing)
            still: list[int] = []
            for i, answer in zip(failing, again, strict=True):
                if self.check(i, answer):
                    answers[i], self.answered_by[i] = answer, attempt
                else:
                    still.append(i)
            failing = still
        self.counts = SelfCheckCounts(
            attempts=self.attempts,
            first_passed=len(prompts) - first_failed,
            fixed=first_failed - len(failing),
            failed=len(failing),
            retried_answers=retried,
        )
        return answers


def row_check(scorer: Scorer, rows: Sequence[dict[str, Any]]) -> Check:
    """The check of the prompt at position i: ``scorer.self_check`` on ``rows[i]``."""
    return lambda i, answer: scorer.self_check(rows[i], answer)
