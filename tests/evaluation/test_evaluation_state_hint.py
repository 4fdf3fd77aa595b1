"""benchmarks.state_hint: a line under the request naming the states its words predict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.state_hint import from_all, hint_line, hinted_row, leave_one_out, story_id, write_hinted
from worldagent.errors import InputError


def story(name: str, intent: str, **args: object) -> dict:
    return {"id": f"button/button.stories.tsx#{name}", "component": "button", "intent": intent, "args": args}


def row(row_id: str, intent: str) -> dict:
    return {
        "id": row_id,
        "component": "button",
        "intent": intent,
        "messages": [
            {"role": "system", "content": "You write stories."},
            {"role": "user", "content": f"{intent}\n\nWork in `button/`."},
            {"role": "assistant", "content": "<start_function_call>call:runStory{}<end_function_call>"},
        ],
    }


STORIES = [
    story("save", 'A greyed out "Save" button', disabled=True),
    story("send", 'A greyed out "Send" button', disabled=True),
    story("plain", 'A "Print" button'),
]


def test_the_hint_stands_under_the_request_line_and_nothing_else_changes() -> None:
    original = row("button/button.stories.tsx#new", 'A greyed out "Delete" button')
    hinted = hinted_row(original, {"disabled", "busy"})
    assert hinted["messages"][1]["content"] == (
        'A greyed out "Delete" button\nStates these words usually ask for: busy, disabled.\n\nWork in `button/`.'
    )
    assert hinted["messages"][0] == original["messages"][0] and hinted["messages"][2] == original["messages"][2]
    assert original["messages"][1]["content"].count("\n") == 2  # the row read is not modified
    assert hinted_row(original, set()) == original
    assert hint_line(["pressed"]) == "States these words usually ask for: pressed."


def test_a_request_that_does_not_open_its_message_is_an_error_naming_the_row() -> None:
    bad = row("button/button.stories.tsx#odd", "A greyed out button")
    bad["messages"][1]["content"] = "Something else first\n\nA greyed out button"
    with pytest.raises(InputError, match="#odd"):
        hinted_row(bad, {"disabled"})


def test_a_training_row_is_hinted_by_the_other_stories_only() -> None:
    predict = leave_one_out(STORIES, min_support=2, min_precision=0.8)
    # "greyed out" has the support of two stories; leaving one of them out leaves one: no cue.
    assert predict(row("button/button.stories.tsx#save~relabel-2", 'A greyed out "Undo" button')) == set()
    everyone = leave_one_out([*STORIES, story("stop", 'A greyed out "Stop" button', disabled=True)], 2, 0.8)
    assert everyone(row("button/button.stories.tsx#save", 'A greyed out "Save" button')) == {"disabled"}
    assert from_all(STORIES, 2, 0.8)(row("button/button.stories.tsx#new", 'A greyed out "Go" button')) == {"disabled"}
    with pytest.raises(InputError, match="not a training story"):
        predict(row("button/button.stories.tsx#held-out", "A greyed out button"))
    assert story_id({"id": "a/a.stories.tsx#b~relabel-3"}) == "a/a.stories.tsx#b"


def test_a_trajectories_file_is_rewritten_with_counts(tmp_path: Path) -> None:
    source, target = tmp_path / "in.jsonl", tmp_path / "out" / "hinted.jsonl"
    rows = [row("button/button.stories.tsx#new", 'A greyed out "Go" button'), row("button/button.stories.tsx#p", "Hi")]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    counts = write_hinted(source, target, from_all(STORIES, 2, 0.8))
    assert counts == {"hinted": 1, "kept": 1}
    written = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert "usually ask for: disabled." in written[0]["messages"][1]["content"] and written[1] == rows[1]
