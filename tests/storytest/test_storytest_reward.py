from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from worldagent.storytest.result import StoryResult
from worldagent.storytest.reward import RewardWeights, reward


def result(passed: bool, a11y: bool, ok: int, total: int) -> StoryResult:
    return StoryResult(passed=passed, totalAssertions=total, passedAssertions=ok, a11yPassed=a11y, errors=[])


@pytest.mark.parametrize(
    ("res", "expected"),
    [
        (result(True, True, 5, 5), 1.0),
        (result(False, False, 0, 5), 0.0),
        (result(True, False, 5, 10), 0.6),
        (result(True, True, 0, 0), 0.8),
    ],
)
def test_golden_rewards(res: StoryResult, expected: float) -> None:
    assert reward(res, RewardWeights()) == pytest.approx(expected)


def test_default_weights() -> None:
    w = RewardWeights()
    assert (w.passed, w.a11y, w.assertions) == (0.5, 0.3, 0.2)
    with pytest.raises(ValidationError):
        RewardWeights(passed=0.5, bogus=1.0)  # type: ignore[call-arg]


def test_reward_is_clamped_for_large_weights() -> None:
    assert reward(result(True, True, 1, 1), RewardWeights(passed=2.0, a11y=2.0, assertions=2.0)) == 1.0


def test_story_result_json_names() -> None:
    r = StoryResult(passed=True, totalAssertions=2, passedAssertions=1, a11yPassed=False, errors=["x: y (z)"])
    assert r.model_dump(mode="json") == {
        "passed": True,
        "totalAssertions": 2,
        "passedAssertions": 1,
        "a11yPassed": False,
        "errors": ["x: y (z)"],
    }
    assert StoryResult.model_validate_json(r.model_dump_json()) == r
    with pytest.raises(ValidationError):
        StoryResult(passed=True, totalAssertions=1, passedAssertions=2, a11yPassed=True)
    with pytest.raises(ValidationError):
        StoryResult.model_validate(
            {"passed": True, "totalAssertions": 0, "passedAssertions": 0, "a11yPassed": True, "errors": [], "extra": 1}
        )


@given(
    passed=st.booleans(),
    a11y=st.booleans(),
    counts=st.integers(min_value=0, max_value=1000).flatmap(
        lambda total: st.tuples(st.integers(min_value=0, max_value=total), st.just(total))
    ),
    weights=st.tuples(*(st.floats(min_value=0, max_value=1e6, allow_nan=False) for _ in range(3))),
)
def test_reward_always_in_unit_interval(
    passed: bool, a11y: bool, counts: tuple[int, int], weights: tuple[float, float, float]
) -> None:
    ok, total = counts
    w = RewardWeights(passed=weights[0], a11y=weights[1], assertions=weights[2])
    value = reward(result(passed, a11y, ok, total), w)
    assert 0.0 <= value <= 1.0
    assert 0.0 <= reward(result(passed, a11y, ok, total), RewardWeights()) <= 1.0
