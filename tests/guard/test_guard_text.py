"""The one text policy: invalid UTF-8 and lone surrogates are an error at the edge, naming where."""

from __future__ import annotations

import json

import pytest

from worldagent.guard.text import TextError, check_text, check_value, decode_utf8, first_bad_string, has_bad_string


def test_decode_names_line_column_and_byte() -> None:
    assert decode_utf8("ünï".encode(), "f") == "ünï"
    with pytest.raises(TextError, match=r"^f:2:2: not UTF-8 text \(byte 4"):
        decode_utf8(b"ab\nc\xc3(", "f")


def test_lone_surrogate_from_a_json_escape_is_refused_with_its_field() -> None:
    value = json.loads('{"steps": [{"action": "ok"}, {"action": "click \\ud800"}]}')
    with pytest.raises(TextError, match=r"^body: steps\[1\]\.action: character 6 is a lone surrogate \(U\+D800\)"):
        check_value(value, "body")


def test_keys_are_checked_too() -> None:
    assert first_bad_string({"a": {"\udfff": 1}}) == ("a.\udfff", "\udfff")


def test_pairs_and_plain_text_pass() -> None:
    value = json.loads('{"emoji": "\\ud83d\\ude00", "n": [1, 2.5, null, true]}')
    assert check_value(value, "body") is value
    assert check_text("plain", "x") == "plain"
    assert not has_bad_string(value)


def test_check_text_names_position() -> None:
    with pytest.raises(TextError, match="intent: character 3 is a lone surrogate"):
        check_text("abc\ud800", "intent")


def test_deep_values_are_walked_without_recursion() -> None:
    value: object = "\ud800"
    for _ in range(100_000):
        value = [value]
    assert first_bad_string(value) is not None
