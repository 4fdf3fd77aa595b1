"""Error types shared by story discovery and rendering.

Every error carries a `SourceLocation` so that a message always reads
``file:line:col: message``; the agent and the data scientist both need to know
where in a story file something went wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from worldagent.errors import InputError


@dataclass(frozen=True, order=True)
class SourceLocation:
    """A 1-based position in a source file (col counts characters, not bytes)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


ProblemKind = Literal["syntax", "no-intent", "duplicate-intent", "encoding", "too-large", "import", "symlink"]


class Problem(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: ProblemKind
    location: SourceLocation
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.kind}: {self.message}"


class StoryError(InputError):
    """Base class: a problem tied to a place in a story (or imported) file."""

    def __init__(self, message: str, location: SourceLocation) -> None:
        super().__init__(f"{location}: {message}")
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class StorySyntaxError(StoryError):
    """The file cannot be parsed (syntax error, bad encoding, too large)."""


class StoryEncodingError(StorySyntaxError):
    """The file is not valid UTF-8."""


class StoryTooLargeError(StorySyntaxError):
    """The file is larger than the configured byte limit."""


class StoryRenderError(StoryError):
    """Evaluation or JSX rendering failed."""


class StoryImportError(StoryError):
    """A module import cannot be resolved, is cyclic, or names a missing export."""


class StorySymlinkError(StoryImportError):
    """A story, import or tokens file is a symlink (or under one) that leaves the story root."""


class DiscoveryError(InputError):
    """Raised by strict discovery; lists every problem found across all files."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        lines = [f"{len(self.problems)} story discovery problem(s):"]
        lines += [str(p) for p in self.problems]
        super().__init__("\n".join(lines))
