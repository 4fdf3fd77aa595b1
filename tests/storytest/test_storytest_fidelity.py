"""The Python runner agrees with axe-core in headless Chromium on the Plaited fixture corpus and
the bundled corpus (page-level verdicts >= 97%, precision >= 0.95 for every rule it reports)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.storytest_fidelity import (
    AGREEMENT_TARGET,
    BUNDLED,
    FIXTURES,
    PRECISION_TARGET,
    measure_fidelity,
    render_rate,
)
from worldagent.storytest.runner import BrowserStoryRunner, BrowserUnavailableError, find_chromium


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
    with BrowserStoryRunner(CHROMIUM) as browser:
        fidelity = measure_fidelity({"fixtures": FIXTURES, "bundled": BUNDLED}, browser)
    assert not fidelity.render_errors
    assert len([p for p in fidelity.pages if p.corpus == "fixtures"]) >= 40
    differing = [(p.file, p.export, p.python_rules, p.axe_rules) for p in fidelity.disagreements()]
    assert fidelity.agreement("fixtures") >= AGREEMENT_TARGET, differing
    assert fidelity.agreement() >= AGREEMENT_TARGET, differing
    low = {
        rule: score.precision for rule, score in fidelity.rule_scores().items() if score.precision < PRECISION_TARGET
    }
    assert not low, (low, differing)
    # The fixture corpus exercises the rules across shadow roots: several must fire, and agree.
    assert sum(s.true_positive for s in fidelity.rule_scores().values()) >= 15


def test_render_rate_names_each_failure_with_its_location(tmp_path: Path) -> None:
    assert render_rate(FIXTURES)["rate"] == 1.0
    (tmp_path / "a.stories.tsx").write_text(
        "import { story } from 'plaited/testing'\n\n"
        "export const a = story({ intent: 'a', template: () => <X /> })\n"
        "export const b = story({ intent: 'b', template: () => <p>b</p> })\n"
    )
    rate = render_rate(tmp_path)
    assert (rate["stories"], rate["rendered"]) == (2, 1)
    (failure,) = rate["failures"]
    assert failure.startswith("a: a.stories.tsx:3:56: unknown component <X>")
