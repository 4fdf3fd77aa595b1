"""A story's `play` run on its rendered page: asserts that hold, fail, or cannot be checked here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldagent.cli import main
from worldagent.stories.discover import discover_stories
from worldagent.storytest.play import deep_equal, run_play

PROJECT = Path(__file__).resolve().parents[2]
STORIES = PROJECT / "data" / "stories"

_PAGE = """import { story } from 'plaited/testing'

const Form = () => (
  <form aria-label='Settings'>
    <ul>
      <li>Alpha</li>
      <li class='pick'>Beta</li>
      <li>Gamma</li>
    </ul>
    <label for='email'>Email</label>
    <input id='email' type='email' required placeholder='you@example.com' />
    <select id='size' aria-label='Size'>
      <option value='s'>Small</option>
      <option value='m' selected>Medium</option>
    </select>
    <select id='pace' aria-label='Pace'>
      <option value='slow'>Slow</option>
      <option value='fast'>Fast</option>
    </select>
    <button type='button' disabled data-testid='save'>Save</button>
    <div id='note' aria-live='polite'>Saved</div>
  </form>
)

export const settings = story({
  intent: 'A settings form',
  template: Form,
  play: async ({ assert, findByAttribute, findByText, findByTestId }) => {
    PLAY
  },
})
"""


def _story(tmp_path: Path, play: str) -> Path:
    path = tmp_path / "form" / "form.stories.tsx"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_PAGE.replace("PLAY", play))
    return path


def _run(tmp_path: Path, play: str):  # type: ignore[no-untyped-def]
    return run_play(_story(tmp_path, play), "settings", tmp_path)


def test_asserts_on_what_the_static_page_answers_hold(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
    const save = await findByTestId('save')
    const email = await findByAttribute('id', 'email')
    const size = await findByAttribute('id', 'size')
    const form = await findByAttribute('aria-label', 'Settings')
    assert({ given: 'a pending form', should: 'disable Save', actual: save?.disabled, expected: true })
    assert({ given: 'a button', should: 'name its tag', actual: save?.tagName, expected: 'BUTTON' })
    assert({ given: 'an email field', should: 'be required', actual: email?.required, expected: true })
    assert({ given: 'an email field', should: 'hint', actual: email?.placeholder, expected: 'you@example.com' })
    assert({ given: 'a size choice', should: 'read Medium', actual: size?.value, expected: 'm' })
    assert({ given: 'Medium chosen', should: 'not select Small', actual: size?.querySelector('option')?.selected, expected: false })
    const pace = await findByAttribute('id', 'pace')
    assert({ given: 'nothing marked', should: 'read the first option', actual: pace?.value, expected: 'slow' })
    assert({ given: 'nothing marked', should: 'select the first option', actual: pace?.querySelector('option')?.selected, expected: true })
    assert({ given: 'three items', should: 'list three', actual: form?.querySelectorAll('ul li').length, expected: 3 })
    assert({ given: 'a list', should: 'end with Gamma', actual: form?.querySelector('li:last-child')?.textContent, expected: 'Gamma' })
    assert({ given: 'a class', should: 'find Beta', actual: form?.querySelector('li.pick')?.textContent, expected: 'Beta' })
    assert({ given: 'no table', should: 'find nothing', actual: form?.querySelector('table'), expected: null })
    assert({ given: 'one picked', should: 'leave two', actual: form?.querySelectorAll('li:not(.pick)').length, expected: 2 })
    assert({ given: 'Save disabled', should: 'enable no button', actual: form?.querySelector('button:not([disabled])'), expected: null })
    assert({ given: 'a note', should: 'be found by its text', actual: (await findByText('Saved'))?.id, expected: 'note' })
    assert({ given: 'no such text', should: 'find nothing', actual: await findByText('Sav'), expected: undefined })
    assert({ given: 'a live region', should: 'be polite', actual: (await findByText('Saved'))?.getAttribute('aria-live'), expected: 'polite' })
    assert({ given: 'no such attribute', should: 'read null', actual: save?.getAttribute('aria-pressed'), expected: null })
""",
    )
    assert result is not None
    assert (result.asserts_passed, result.failure, result.unchecked) == (18, None, None)
    assert result.passed


def test_the_first_failed_assert_fails_the_play_and_ends_it(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
    const save = await findByText('Save')
    assert({ given: 'a button', should: 'read Save', actual: save?.textContent, expected: 'Save' })
    assert({ given: 'a pending form', should: 'enable Save', actual: save?.disabled, expected: false })
    assert({ given: 'never reached', should: 'not count', actual: 1, expected: 1 })
""",
    )
    assert result is not None and not result.passed
    assert result.asserts_passed == 1
    assert result.failure == "given a pending form: should enable Save: expected false, got true"


def test_an_assert_without_its_four_keys_fails_as_plaiteds_does(tmp_path: Path) -> None:
    result = _run(tmp_path, "assert({ given: 'a form', should: 'exist', actual: true })")
    assert result is not None and result.failure == "assert: missing expected"


def test_what_a_static_page_cannot_answer_stops_the_play_unchecked_not_failed(tmp_path: Path) -> None:
    event = _run(
        tmp_path,
        """
    const save = await findByText('Save')
    assert({ given: 'a button', should: 'read Save', actual: save?.textContent, expected: 'Save' })
    await fireEvent(save, 'click')
    assert({ given: 'a click', should: 'never be judged', actual: 1, expected: 2 })
""".replace("findByTestId })", "findByTestId, fireEvent })"),
    )
    assert event is not None and event.passed and event.asserts_passed == 1
    assert event.unchecked is not None and "fireEvent" in event.unchecked
    unmodelled = _run(
        tmp_path, "assert({ given: 'a', should: 'b', actual: (await findByText('Save'))?.offsetWidth, expected: 0 })"
    )
    assert unmodelled is not None and unmodelled.passed and unmodelled.asserts_passed == 0
    assert unmodelled.unchecked == "<button>.offsetWidth is a property this runner does not model"
    selector = _run(tmp_path, "(await findByText('Alpha'))?.querySelector('ul > li')")
    assert selector is not None and selector.passed and "beyond what this runner models" in (selector.unchecked or "")


def test_a_story_without_play_has_no_play_result(tmp_path: Path) -> None:
    path = _story(tmp_path, "")
    path.write_text(path.read_text().replace("play: async", "playLater: async"))
    assert run_play(path, "settings", tmp_path) is None


def test_deep_equal_compares_arrays_and_objects_by_value_and_primitives_strictly() -> None:
    assert deep_equal([1, {"a": "x"}], [1, {"a": "x"}])
    assert not deep_equal([1, 2], [1, 2, 3])
    assert not deep_equal({"a": 1}, {"a": 1, "b": 2})
    assert not deep_equal(1, "1")
    assert deep_equal(None, None)


def test_every_play_of_the_projects_stories_holds_on_its_own_page() -> None:
    """The stories' own plays are written for their pages: none may fail here (a wrong property,
    finder or selector model would fail some), and every one is checked, none stopped unchecked."""
    discovery = discover_stories([STORIES], root=STORIES)
    results = [run_play(STORIES / s.file, s.export, STORIES) for s in discovery.stories]
    played = [r for r in results if r is not None]
    assert [r.failure for r in played if r.failure] == []
    checked = [r for r in played if r.unchecked is None]
    assert len(played) >= 150 and len(checked) == len(played)
    assert sum(r.asserts_passed for r in checked) >= len(checked)


def test_story_test_play_fails_a_story_whose_play_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _story(
        tmp_path,
        "assert({ given: 'a form', should: 'be enabled', actual: (await findByText('Save'))?.disabled, expected: false })",
    )
    assert main(["story-test", str(path)]) == 0  # without --play the play is not run
    capsys.readouterr()
    assert main(["story-test", str(path), "--play"]) == 1
    out = capsys.readouterr().out
    assert (
        "FAIL" in out
        and "play: 0 asserts held; failed: given a form: should be enabled: expected false, got true" in out
    )
    assert "1 stories: 1 rendered, 0 passed, 1 failed, 0 errors; 1 plays run, 0 unchecked" in out
    assert main(["story-test", str(path), "--play", "--json"]) == 1
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert record["play"] == {
        "asserts_passed": 0,
        "failure": "given a form: should be enabled: expected false, got true",
        "unchecked": None,
    }
