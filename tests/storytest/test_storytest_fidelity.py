"""The Python accessibility rules agree with axe-core in headless Chromium on the Plaited fixture
corpus and the bundled corpus (page-level verdicts >= 97%, precision >= 0.95 for every rule),
as ``python -m benchmarks.a11y_differential`` measures them."""

from __future__ import annotations

import pytest

from benchmarks.a11y_differential import (
    AGREEMENT_TARGET,
    FIXTURES,
    PRECISION_TARGET,
    STORIES,
    check_pages,
    story_pages,
)
from worldagent.storytest.differential import AxeSession, compare
from worldagent.storytest.runner import BrowserUnavailableError, find_chromium


def _chromium() -> str | None:
    try:
        return find_chromium()
    except BrowserUnavailableError:
        return None


CHROMIUM = _chromium()


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (apt-get install chromium)")
def test_python_rules_agree_with_axe_core_on_the_fixture_and_bundled_corpora() -> None:
    errors: list[str] = []
    pages = story_pages(FIXTURES, "fixtures", errors) + story_pages(STORIES, "bundled", errors)
    with AxeSession(CHROMIUM) as axe:
        verdicts = check_pages(pages, axe).verdicts
    assert not errors
    fixtures = [v for v in verdicts if v.kind == "fixtures"]
    assert len(fixtures) >= 40
    differing = [(v.page_id, sorted(v.python), sorted(v.axe)) for v in verdicts if v.python != v.axe]
    assert compare(fixtures)[0] >= AGREEMENT_TARGET, differing
    agreement, scores = compare(verdicts)
    assert agreement >= AGREEMENT_TARGET, differing
    low = {rule: score.precision for rule, score in scores.items() if score.precision < PRECISION_TARGET}
    assert not low, (low, differing)
    # The fixture corpus exercises the rules across shadow roots: several must fire, and agree.
    assert sum(s.true_positive for s in compare(fixtures)[1].values()) >= 15
