"""benchmarks.state_stories: new training stories appended to a copy of the stories, checked apart
from the held-out ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.paths import STORIES_DIR
from benchmarks.state_stories import (
    STATE_STORIES,
    added_stories,
    closest_heldout,
    with_state_stories,
    word_overlap,
)
from benchmarks.state_wording import states_set
from worldagent.cli import main as cli
from worldagent.errors import InputError
from worldagent.stories.discover import discover_stories

ROOT = Path(__file__).resolve().parents[2]


def stories_tree(root: Path) -> Path:
    (root / "button").mkdir(parents=True)
    (root / "button" / "button.stories.tsx").write_text("export const a = 1\n", encoding="utf-8")
    (root / "button" / "button.css.ts").write_text("export const styles = {}\n", encoding="utf-8")
    (root / "card").mkdir()
    (root / "card" / "card.stories.tsx").write_text("export const c = 3\n", encoding="utf-8")
    return root


def test_each_added_file_is_appended_to_its_component_and_the_rest_is_copied_unchanged(tmp_path: Path) -> None:
    source = stories_tree(tmp_path / "stories")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "button.tsx").write_text("export const b = 2\n", encoding="utf-8")
    target = tmp_path / "out"
    (target / "stale").mkdir(parents=True)  # an earlier run's copy is replaced, not merged

    assert with_state_stories(source, extra, target) == ["button/button.stories.tsx"]

    assert (target / "button" / "button.stories.tsx").read_text() == "export const a = 1\n\nexport const b = 2\n"
    assert (target / "card" / "card.stories.tsx").read_bytes() == (source / "card" / "card.stories.tsx").read_bytes()
    assert (target / "button" / "button.css.ts").is_file()
    assert not (target / "stale").exists()
    assert (source / "button" / "button.stories.tsx").read_text() == "export const a = 1\n"


def test_an_added_file_without_its_component_is_an_error_naming_it(tmp_path: Path) -> None:
    source = stories_tree(tmp_path / "stories")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "slider.tsx").write_text("export const s = 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"slider\.tsx: .*slider\.stories\.tsx does not exist"):
        with_state_stories(source, extra, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_symbolic_link_in_the_stories_is_refused_not_followed(tmp_path: Path) -> None:
    source = stories_tree(tmp_path / "stories")
    outside = tmp_path / "secret.txt"
    outside.write_text("not a story\n", encoding="utf-8")
    (source / "card" / "link.stories.tsx").symlink_to(outside)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "button.tsx").write_text("export const b = 2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"link\.stories\.tsx: a symbolic link"):
        with_state_stories(source, extra, tmp_path / "out")


def test_the_closest_held_out_intent_is_found_by_shared_words() -> None:
    heldout = [
        {"id": "h#archive", "intent": 'Grey out an "Archive" action'},
        {"id": "h#search", "intent": "A catalogue search box"},
    ]
    added = [
        {"id": "n#far", "intent": 'A ticked "Gift wrap" checkbox'},
        {"id": "n#near", "intent": 'Grey out a "Delete" action'},
    ]
    assert word_overlap('Grey out a "Delete" action', 'Grey out an "Archive" action') == pytest.approx(3 / 5)
    closest = closest_heldout(added, heldout)
    assert [(row[0], row[1]) for row in closest] == [("n#near", "h#archive"), ("n#far", "h#archive")]
    assert closest[0][2] == pytest.approx(3 / 5)
    assert closest[1][2] == 0.0
    with pytest.raises(InputError, match="no held-out stories"):
        closest_heldout(added, [])


def test_added_stories_are_those_the_first_list_does_not_have() -> None:
    before = [{"id": "a"}, {"id": "b"}]
    assert added_stories(before, [{"id": "b"}, {"id": "c", "intent": "x"}]) == [{"id": "c", "intent": "x"}]


def test_the_committed_state_stories_render_pass_and_set_states(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Every story in benchmarks/state_stories/ parses with an intent, passes its own story test
    (assertions and accessibility) in its component's file, and most set a state in their arguments."""
    target = tmp_path / "stories"
    extended = with_state_stories(ROOT / STORIES_DIR, ROOT / STATE_STORIES, target)
    assert len(extended) == len(list((ROOT / STATE_STORIES).glob("*.tsx")))
    before = discover_stories([ROOT / STORIES_DIR], root=ROOT / STORIES_DIR).stories
    after = discover_stories([target], root=target)
    assert not after.problems
    added = added_stories([{"id": s.id} for s in before], [s.model_dump() for s in after.stories])
    assert len(added) >= 60
    assert all(str(story["intent"]).strip() for story in added)
    with_states = [story for story in added if states_set(story["args"])]
    assert len(with_states) >= len(added) // 2
    for story_file in extended:
        assert cli(["story-test", str(target / story_file), "--root", str(target)]) == 0, capsys.readouterr().out
