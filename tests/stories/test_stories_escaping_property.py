from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from story_helpers import PRELUDE

from worldagent.stories.render import render_story


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.attrs: list[tuple[str, str | None]] = []
        self.text = ""
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text += data


_TEXT = st.lists(st.sampled_from([*"ab <>&\"'=/;#x{}", "&amp;", "</p>", "é"]), max_size=30).map("".join)


@settings(max_examples=60, deadline=None)
@given(title=_TEXT, body=_TEXT)
def test_any_text_round_trips_through_html(title: str, body: str) -> None:
    root = Path("/nonexistent-root-for-overlay")
    source = PRELUDE + (
        f"const T = ({{ title, body }}) => <p title={{title}}>{{body}}</p>\n"
        f"export const s = story({{ intent: 'x', template: T, args: {{ title: {json.dumps(title)}, body: {json.dumps(body)} }} }})\n"
    )
    html = render_story(Path("c/c.stories.tsx"), "s", root, overlay={"c/c.stories.tsx": source}).html
    parsed = _Collect()
    parsed.feed(html)
    parsed.close()
    assert parsed.tags == ["p"]
    assert parsed.attrs == [("title", title)]
    assert parsed.text == body
