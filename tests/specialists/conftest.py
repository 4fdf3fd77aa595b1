"""Specialists fixtures: a tiny builtin base (built once, seconds) and live servers on loopback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from specialists_helpers import Server, tiny_base_settings  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def generated_datasets() -> None:
    """Overrides the suite-wide fixture: the specialists tests need none of the world-agent datasets."""
    return None


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The builtin fallback (the default base_model is missing on a fresh clone), with test-sized tiny params."""
    from worldagent.specialists.modeling import resolve_base

    root = tmp_path_factory.mktemp("base")
    return resolve_base(str(root / "models/world_agent/base"), *tiny_base_settings(), root / "cache")


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in reversed(started):
        server.stop()
