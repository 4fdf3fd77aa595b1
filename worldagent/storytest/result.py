"""The outcome of running one story: the ``storyResult`` of trajectory records."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["StoryResult"]


class StoryResult(BaseModel):
    """``passed``: rendered, no pattern violations and every assertion holds.
    ``a11yPassed``: no accessibility violations. ``errors``: render errors, then a11y and
    pattern violations as ``"rule: message (target)"``, then failed assertions."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    totalAssertions: int = Field(ge=0)
    passedAssertions: int = Field(ge=0)
    a11yPassed: bool
    errors: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _counts(self) -> StoryResult:
        if self.passedAssertions > self.totalAssertions:
            raise ValueError(
                f"passedAssertions ({self.passedAssertions}) exceeds totalAssertions ({self.totalAssertions})"
            )
        return self

    @classmethod
    def failure(cls, error: str, total_assertions: int = 0) -> StoryResult:
        """A story that could not be rendered or run."""
        return cls(passed=False, totalAssertions=total_assertions, passedAssertions=0, a11yPassed=False, errors=[error])
