"""Reward of a story result: ``0.5·passed + 0.3·a11yPassed + 0.2·passed/total assertions``."""

from __future__ import annotations

from worldagent.config import RewardWeights
from worldagent.storytest.result import StoryResult

__all__ = ["RewardWeights", "reward"]


def reward(result: StoryResult, weights: RewardWeights | None = None) -> float:
    """Weighted reward clamped to [0, 1]; the assertion term is 0 when there are none."""
    w = weights if weights is not None else RewardWeights()
    ratio = (result.passedAssertions / result.totalAssertions) if result.totalAssertions > 0 else 0.0
    value = (
        w.passed * float(result.passed) + w.a11y * float(result.a11yPassed) + w.assertions * min(max(ratio, 0.0), 1.0)
    )
    return min(max(value, 0.0), 1.0)
