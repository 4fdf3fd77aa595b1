"""The one text policy at every edge: UTF-8 in, and no lone surrogates anywhere in a stored string.

A string that holds a lone surrogate (``"\\ud800"``, which JSON and JavaScript escapes can produce)
is a valid Python ``str`` but not text: it cannot be encoded as UTF-8, so storing it succeeds and
every later write of it (a JSONL file, a database row, an HTTP answer) fails. The edges (files,
JSON bodies, YAML, database rows, story literals) therefore check here and refuse it with the field
named, before anything keeps it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from worldagent.errors import InputError

# A \\uD800-\\uDFFF escape: the only way a JSON text can carry a surrogate (a pair is fine, checked after parsing).
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class TextError(InputError):
    """Bytes that are not UTF-8, or a string that holds a lone surrogate; the message names where."""


def _line_column(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def decode_utf8(data: bytes, where: str) -> str:
    """``data`` as text; invalid UTF-8 is a ``TextError`` naming ``where``, the line, column and byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        line, column = _line_column(data, problem.start)
        raise TextError(f"{where}:{line}:{column}: not UTF-8 text (byte {problem.start}: {problem.reason})") from None


def surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text``, or None (one C-speed pass when there is none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as problem:
        return problem.start
    return None


def check_text(text: str, where: str) -> str:
    """``text`` unchanged; a lone surrogate is a ``TextError`` naming ``where`` and the position."""
    at = surrogate_at(text)
    if at is not None:
        raise TextError(
            f"{where}: character {at} is a lone surrogate (U+{ord(text[at]):04X}), which is not text; "
            "send the character itself or a valid surrogate pair"
        )
    return text


def join_surrogate_pairs(text: str) -> str:
    """``text`` with each high-low surrogate pair (two JavaScript ``\\uXXXX`` escapes of one emoji)
    merged into its character; lone surrogates are kept, for :func:`check_text` to refuse."""
    if surrogate_at(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _field(path: str, key: object) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else str(key))


def first_bad_string(value: Any) -> tuple[str, str] | None:
    """(field path, string) of the first string (key or value) holding a lone surrogate, or None.

    Walks without recursion, so any nesting the parsers accepted is fine.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if surrogate_at(item) is not None:
                return path or "<value>", item
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and surrogate_at(key) is not None:
                    return _field(path, key), key
                stack.append((_field(path, key), child))
        elif isinstance(item, list | tuple):
            stack.extend((_field(path, index), child) for index, child in enumerate(item))
    return None


def has_bad_string(value: Any) -> bool:
    """Whether any string in a JSON-like ``value`` holds a lone surrogate (fast path: one C encode)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (TypeError, ValueError):  # not plain JSON (a tuple key, NaN is fine): walk it
        return first_bad_string(value) is not None
    return False


def check_json(text: str, value: Any, where: str) -> Any:
    """``value`` parsed from the JSON ``text``, checked by :func:`check_value` only when the text holds a
    surrogate escape at all (one regex pass; JSON without escapes cannot carry a lone surrogate)."""
    return check_value(value, where) if SURROGATE_ESCAPE.search(text) else value


def check_value(value: Any, where: str) -> Any:
    """``value`` unchanged when every string in it is text; else a ``TextError`` naming the field."""
    if not has_bad_string(value):
        return value
    found = first_bad_string(value)
    if found is None:
        return value
    field, text = found
    at = surrogate_at(text) or 0
    raise TextError(
        f"{where}: {field}: character {at} is a lone surrogate (U+{ord(text[at]):04X}), which is not text; "
        "send the character itself or a valid surrogate pair"
    )
