"""find_inline_styles is linear: its forward tag scan agrees with the backward reference on any text."""

from __future__ import annotations

import random

from worldagent.storytest.patterns import _inside_tag, _tag_states, find_inline_styles


def test_forward_tag_states_match_the_backward_scan_on_random_text() -> None:
    rng = random.Random(12)
    alphabet = ["<", ">", "=", "{", "}", ";", "a", " ", "style=", "<div ", "=>", "'", "\n"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        positions = list(range(len(text) + 1))
        assert _tag_states(text, positions) == [_inside_tag(text, pos) for pos in positions], text


def test_limit_stops_after_that_many_and_results_are_unchanged() -> None:
    source = "<div style={{ color: 'red' }}>x</div><p style='a'>y</p><a style={s}>z</a>"
    found = find_inline_styles(source)
    assert found == ["style={{ color: 'red' }}", "style='a'", "style={s}"]
    assert find_inline_styles(source, limit=2) == found[:2]
    assert find_inline_styles("const style = {a: 1}; el.style = x") == []


def test_many_style_words_outside_tags_find_nothing() -> None:
    assert find_inline_styles("a style={1} " * 20_000) == []  # was quadratic (seconds per 32 KB)
