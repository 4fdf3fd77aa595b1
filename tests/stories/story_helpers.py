"""Shared bits for the worldagent.stories tests (a unique module name, not conftest)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

PRELUDE = (
    "import { type FT, createStyles, createTokens, joinStyles } from 'plaited'\n"
    "import { story } from 'plaited/testing'\n"
)

WriteFn = Callable[[str, str], Path]
