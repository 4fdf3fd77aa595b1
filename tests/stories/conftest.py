from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from story_helpers import WriteFn


@pytest.fixture
def write(tmp_path: Path) -> WriteFn:
    """Write `text` (dedented) to `tmp_path / rel` and return the path."""

    def _write(rel: str, text: str) -> Path:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write
