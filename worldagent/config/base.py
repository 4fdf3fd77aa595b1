"""What every section shares: the ``Section`` base (unknown keys are errors, values frozen) and the
field types more than one section uses.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _ngram_guard(value: int) -> int:
    if value == 1:
        raise ValueError("must be 0 (off) or at least 2: a 1-gram guard would forbid every repeated token")
    return value


NgramGuard = Annotated[int, Field(ge=0), AfterValidator(_ngram_guard)]
"""``no_repeat_ngram``: never repeat an n-gram of this length that the completion itself wrote
(``worldagent.lm.ngram_guard``; the prompt is ignored, so copying from it stays free). 0: off."""
