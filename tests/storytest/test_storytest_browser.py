"""axe-core in headless Chromium (marked ``browser``; skipped when Chromium is absent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from worldagent.storytest.runner import (
    BrowserStoryRunner,
    BrowserUnavailableError,
    find_chromium,
    load_axe_source,
)


def _chromium() -> str | None:
    try:
        return find_chromium()
    except BrowserUnavailableError:
        return None


CHROMIUM = _chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium not installed (apt-get install chromium, or set $WORLDAGENT_CHROMIUM)"
)


def test_axe_source_ships_with_axe_playwright_python() -> None:
    src = load_axe_source()
    assert "axe v4" in src[:200]


def test_missing_chromium_error_says_how_to_install(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BrowserUnavailableError, match="apt-get install chromium"):
        find_chromium(tmp_path / "no-chromium")


@pytest.fixture(scope="module")
def browser_runner() -> Iterator[BrowserStoryRunner]:
    runner = BrowserStoryRunner(CHROMIUM)
    try:
        yield runner
    finally:
        runner.close()


@pytest.mark.browser
@needs_chromium
def test_axe_finds_button_name(browser_runner: BrowserStoryRunner) -> None:
    found = browser_runner.axe_violations("<button></button>")
    assert "button-name" in [v.rule for v in found]
    (v,) = [v for v in found if v.rule == "button-name"]
    assert v.target == "button" and v.message


@pytest.mark.browser
@needs_chromium
def test_axe_passes_a_good_page(browser_runner: BrowserStoryRunner) -> None:
    html = (
        '<nav aria-label="Main"><ul><li><a href="/">Home</a></li></ul></nav>'
        '<h1>Settings</h1><label for="n">Name</label><input id="n" type="text">'
        '<button type="button" aria-pressed="false">Dark mode</button>'
    )
    assert browser_runner.axe_violations(html, [".x{color:#111}"]) == []


@pytest.mark.browser
@needs_chromium
def test_browser_runner_on_repository_story(browser_runner: BrowserStoryRunner) -> None:
    pytest.importorskip("worldagent.stories.render")
    from pathlib import Path

    from worldagent.storytest.runner import reference_assertions

    repo = Path(__file__).resolve().parents[2]
    story = Path("data/stories/button/button.stories.tsx")
    expected = reference_assertions(story, "primaryButton", repo)
    r = browser_runner.run(story, "primaryButton", repo, expected)
    assert (r.passed, r.a11yPassed, r.passedAssertions) == (True, True, len(expected)), r.errors


@pytest.mark.browser
@needs_chromium
def test_browser_runner_works_from_inside_a_running_event_loop() -> None:
    import asyncio

    async def inside_loop() -> list:
        with BrowserStoryRunner(CHROMIUM) as runner:
            return runner.axe_violations("<button></button>")

    assert "button-name" in {v.rule for v in asyncio.run(inside_loop())}
