"""Smoke test over the real story corpus in data/stories (skipped while it is tiny)."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldagent.stories.discover import discover_stories
from worldagent.stories.render import render_story

CORPUS = Path(__file__).resolve().parents[2] / "data" / "stories"


def _components() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_dir() and any(p.glob("*.stories.tsx")))


pytestmark = pytest.mark.skipif(len(_components()) < 2, reason="fewer than 2 components in data/stories")


def test_corpus_discovers_without_problems() -> None:
    d = discover_stories([CORPUS], CORPUS)
    assert d.problems == [], "\n".join(str(p) for p in d.problems)
    assert {s.component for s in d.stories} == {p.name for p in _components()}
    assert all(s.intent_source != "export-name" for s in d.stories)


def test_every_corpus_story_renders() -> None:
    d = discover_stories([CORPUS], CORPUS)
    for record in d.stories:
        first = render_story(Path(record.file), record.export, CORPUS)
        assert first.html.startswith("<"), record.id
        assert first == render_story(CORPUS / record.file, record.export, CORPUS), record.id
