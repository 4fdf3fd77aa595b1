"""benchmarks.state_paraphrase: relabelled copies that word their states another way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.state_paraphrase import STATE_PHRASES, reword_row, reword_states, write_reworded


def copy_row(intent: str, row_id: str = "button/button.stories.tsx#archive~relabel-1") -> dict[str, object]:
    story_intent = intent.replace("'", "\\'")
    answer = f"export const archive = story({{\n  intent: '{story_intent}',\n  args: {{ disabled: true }},\n}})"
    return {
        "id": row_id,
        "intent": intent,
        "relabelled": {"Save": "Archive"},
        "messages": [
            {"role": "system", "content": "You write stories."},
            {"role": "user", "content": f"{intent}\n\nExport the story as `archive`."},
            {"role": "assistant", "content": answer},
        ],
    }


def test_a_state_phrase_becomes_another_of_its_group_and_the_article_agrees() -> None:
    intent = 'Create a disabled "Archive" button'
    reworded = reword_states(intent, "some-copy")
    assert reworded != intent and reworded.endswith('"Archive" button')
    phrase = reworded.removeprefix("Create ").removesuffix(' "Archive" button')
    article, word = phrase.split(" ", 1)
    assert word in STATE_PHRASES["disabled"] and word != "disabled"
    assert article == ("an" if word[0] in "aeiou" else "a")
    assert reword_states(intent, "some-copy") == reworded  # the copy's id picks the same phrase every time


def test_greyed_out_is_replaced_whole_and_words_inside_other_words_are_not() -> None:
    for key in ("k1", "k2", "k3", "k4"):
        reworded = reword_states("A button greyed out while it saves", key)
        assert "greyed" not in reworded and "out out" not in reworded
    assert (
        reword_states("An undisabled-looking pin and a ticketed row", "k")
        == "An undisabled-looking pin and a ticketed row"
    )
    assert reword_states("Mandatory field", "k")[0].isupper()


def test_a_copy_is_reworded_in_its_request_and_its_story_only() -> None:
    row = copy_row("Build a disabled 'Archive' button")
    changed = reword_row(row)
    assert changed is not None
    new = str(changed["intent"])
    assert new != row["intent"] and new in changed["messages"][1]["content"]
    assert f"intent: '{new.replace(chr(39), chr(92) + chr(39))}'" in changed["messages"][2]["content"]
    assert "disabled: true" in changed["messages"][2]["content"]  # the story's arguments are untouched
    assert changed["messages"][0] == row["messages"][0]


def original(intent: str) -> dict[str, object]:
    return {key: value for key, value in copy_row(intent).items() if key != "relabelled"}


@pytest.mark.parametrize(
    "row",
    [
        original("Build a disabled button"),  # the story as written keeps its own words
        copy_row("Build a plain button"),  # no state phrase
        {**copy_row("Build a disabled button"), "messages": [{"role": "user", "content": "no intent here"}]},
    ],
)
def test_originals_rows_without_a_state_and_rows_missing_their_intent_are_kept(row: dict[str, object]) -> None:
    assert reword_row(row) is None


def test_the_file_keeps_every_row_in_order(tmp_path: Path) -> None:
    source, target = tmp_path / "in.jsonl", tmp_path / "out" / "trajectories.jsonl"
    rows = [
        copy_row("Build a disabled button"),
        {k: v for k, v in copy_row("A plain one").items() if k != "relabelled"},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    counts = write_reworded(source, target)
    assert counts == {"reworded": 1, "kept": 1}
    written = [json.loads(line) for line in target.read_text().splitlines()]
    assert [row["id"] for row in written] == [row["id"] for row in rows]
    assert written[1] == rows[1] and written[0]["intent"] != rows[0]["intent"]
