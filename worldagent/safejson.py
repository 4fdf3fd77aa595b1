"""JSON from input, parsed with a nesting limit: deep nesting is a parse error, never a RecursionError.

Python's ``json`` recurses once per nesting level, so ``[[[[...]]]]`` 100,000 deep raises
``RecursionError`` (an internal error, a 500 in a service) instead of the parse error callers
document, and rows nested a few hundred deep that do parse break later code that walks them.
``loads`` measures the depth first in one linear pass and raises ``JSONDepthError``, a
``json.JSONDecodeError`` (so every ``except json.JSONDecodeError`` already reports it) that is also
the project's ``InputError``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from worldagent.errors import InputError

# Deep enough for any real row (chat messages, page snapshots, tool calls nest < 10 levels).
MAX_DEPTH = 64


class JSONDepthError(json.JSONDecodeError, InputError):
    """JSON nested deeper than allowed; ``pos``/``lineno``/``colno`` point at the first bracket too deep."""


# A JSON string (skipped whole, in C) or one bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def depth_exceeded_at(text: str, max_depth: int = MAX_DEPTH) -> int | None:
    """The offset of the first ``[``/``{`` nested deeper than ``max_depth`` (outside strings), or None.

    Linear; only brackets and strings are visited, and text with few brackets is not scanned at all.
    """
    if text.count("[") + text.count("{") <= max_depth:
        return None
    depth = 0
    for match in _TOKEN.finditer(text):
        char = match.group()
        if char in ("[", "{"):
            depth += 1
            if depth > max_depth:
                return match.start()
        elif char in ("]", "}"):
            depth -= 1
    return None


def check_depth(text: str, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``JSONDepthError`` when ``text`` nests deeper than ``max_depth``."""
    pos = depth_exceeded_at(text, max_depth)
    if pos is not None:
        raise JSONDepthError(f"JSON nested deeper than {max_depth} levels", text, pos)


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` for input: ``JSONDepthError`` (a ``JSONDecodeError``) beyond ``max_depth`` levels."""
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    check_depth(text, max_depth)
    return json.loads(text)


def value_depth(value: Any, max_depth: int = MAX_DEPTH) -> int:
    """Nesting depth of an already parsed value (lists and dicts), counted without recursion.

    Stops counting at ``max_depth + 1``, so the cost is bounded by the value's size.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            depth += 1
            deepest = max(deepest, depth)
            if depth > max_depth:
                return depth
            stack.extend((child, depth) for child in (item.values() if isinstance(item, dict) else item))
    return deepest
