"""FunctionGemma tool-call format: render and parse calls and responses.

Wire format (what ``google/functiongemma-270m-it`` emits)::

    <start_function_call>call:NAME{key:<escape>text<escape>,n:3,x:1.5,ok:true}<end_function_call>
    <start_function_response>response:NAME{success:true,data:{bytes:12}}<end_function_response>

Values: strings are wrapped in ``<escape>`` markers and may contain anything except the
``<escape>`` token itself; ``true``/``false``/``null`` and numbers are bare; ``{k:v,...}`` and
``[v,...]`` nest (FunctionGemma's chat template writes nested values the same way).

Float representation: ``repr(float)`` (shortest string that round-trips exactly, e.g. ``1.0``,
``1e-07``, ``-0.0``). It always contains ``.`` or an exponent, so a bare token parses back as
``int`` exactly when it is written as an integer. NaN and infinities are not representable.

The parser never uses a backtracking regex: markers are located with ``str.find`` and the only
regexes are single-character-class scanners anchored at a position (or fixed, unambiguous
number grammars applied to a single token), so parsing is linear in the input size. A
malformed block is reported as a :class:`CallParseError` and parsing resumes at the next start
marker, so good calls after (or even inside the text swallowed by) a bad one are still found.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

CALL_START = "<start_function_call>"
CALL_END = "<end_function_call>"
RESPONSE_START = "<start_function_response>"
RESPONSE_END = "<end_function_response>"
ESCAPE = "<escape>"
MARKERS: tuple[str, ...] = (CALL_START, CALL_END, RESPONSE_START, RESPONSE_END, ESCAPE)

# Deep enough for any tool payload; bounds the explicit stack on inputs like "[[[[...".
MAX_DEPTH = 32
# Consecutive malformed blocks tried before the same end marker before skipping ahead to the
# last start marker in front of it (real model output never gets near this).
MAX_RETRIES = 16
# Consecutive malformed blocks overall before skipping ahead to the last terminated block.
MAX_STREAK = 256

Scalar = Union[str, int, float, bool]
Value = Union[str, int, float, bool, None, list[Any], dict[str, Any]]

_WS_CHARS = (" ", "\t", "\r", "\n")
_WS = re.compile(r"[ \t\r\n]*")
# Delimiters end a bare token, so names, keys and bare values can never swallow a marker.
_TOKEN = re.compile(r"[^ \t\r\n,:{}\[\]<>]*")
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Value] = field(default_factory=dict)


@dataclass
class ToolResponse:
    name: str
    response: dict[str, Value] = field(default_factory=dict)


class CallParseError(ValueError):
    """A malformed call/response block (or JSON call); ``offset`` indexes the input text."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(offset, message)
        self.offset = offset
        self.message = message

    def __str__(self) -> str:
        return f"offset {self.offset}: {self.message}"

    def __repr__(self) -> str:
        return f"CallParseError({self.offset!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CallParseError):
            return NotImplemented
        return (self.offset, self.message) == (other.offset, other.message)

    def __hash__(self) -> int:
        return hash((self.offset, self.message))


@dataclass
class ParsedOutput:
    """Calls found, the remaining text (calls removed, malformed blocks kept verbatim), errors."""

    calls: list[ToolCall]
    text: str
    errors: list[CallParseError]


@dataclass
class ParsedResponses:
    responses: list[ToolResponse]
    text: str
    errors: list[CallParseError]


# ---------------------------------------------------------------------------------------------
# Rendering


def render_call(call: ToolCall) -> str:
    """Render one call; ValueError for a bad name, key, value type, or an ``<escape>`` in a value."""
    body = _render_block("call", call.name, call.arguments, "call")
    return f"{CALL_START}{body}{CALL_END}"


def render_calls(calls: Iterable[ToolCall]) -> str:
    return "".join(render_call(call) for call in calls)


def render_response(name: str, response: Mapping[str, Value]) -> str:
    body = _render_block("response", name, response, "response")
    return f"{RESPONSE_START}{body}{RESPONSE_END}"


def render_value(value: Value, where: str = "value") -> str:
    """Encode one value; ``where`` names it in error messages."""
    if isinstance(value, str):
        if ESCAPE in value:
            raise ValueError(f"{where} contains the reserved token {ESCAPE!r} and cannot be encoded")
        return f"{ESCAPE}{value}{ESCAPE}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)  # not str(): IntEnum members would render their name
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value!r}; only finite floats can be encoded")
        return float.__repr__(value)
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "{" + _render_pairs(value, where, nested=True) + "}"
    if isinstance(value, (list, tuple)):
        items = (render_value(item, f"{where}[{i}]") for i, item in enumerate(value))
        return "[" + ",".join(items) + "]"
    raise ValueError(f"{where} has unsupported type {type(value).__name__}")


def _render_block(kind: str, name: str, payload: Mapping[str, Value], what: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"invalid {what} name {name!r}: must be an identifier")
    if not isinstance(payload, Mapping):
        raise ValueError(f"{what} {name!r}: arguments must be a mapping, got {type(payload).__name__}")
    return f"{kind}:{name}{{{_render_pairs(payload, f'{what} {name!r}', nested=False)}}}"


def _render_pairs(pairs: Mapping[str, Value], where: str, nested: bool) -> str:
    parts = []
    for key, value in pairs.items():
        _check_key(key, where, nested)
        parts.append(f"{key}:{render_value(value, f'argument {key!r} of {where}')}")
    return ",".join(parts)


def _check_key(key: object, where: str, nested: bool) -> None:
    # Top-level argument names are identifiers; nested keys only need to be one bare token.
    ok = isinstance(key, str) and (
        key.isidentifier() if not nested else bool(key) and _TOKEN.fullmatch(key) is not None
    )
    if not ok:
        raise ValueError(f"invalid argument name {key!r} in {where}")


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_calls(text: str) -> ParsedOutput:
    blocks, rest, errors = _parse_blocks(text, CALL_START, CALL_END, "call")
    return ParsedOutput([ToolCall(name, args) for name, args in blocks], rest, errors)


def parse_responses(text: str) -> ParsedResponses:
    blocks, rest, errors = _parse_blocks(text, RESPONSE_START, RESPONSE_END, "response")
    return ParsedResponses([ToolResponse(name, body) for name, body in blocks], rest, errors)


class _Malformed(Exception):
    def __init__(self, offset: int, detail: str) -> None:
        self.offset = offset
        self.detail = detail


class _Finder:
    """``str.find`` with a one-entry cache per needle.

    Recovery re-asks for the same marker from nearby positions; answering from the cache
    (in particular "no more occurrences") keeps the total search work linear.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._cache: dict[str, tuple[int, int]] = {}

    def find(self, needle: str, start: int) -> int:
        hit = self._cache.get(needle)
        if hit is not None:
            origin, found = hit
            if origin <= start and (found < 0 or start <= found):
                return found
        found = self.text.find(needle, start)
        self._cache[needle] = (start, found)
        return found


def _parse_blocks(
    text: str, start_marker: str, end_marker: str, kind: str
) -> tuple[list[tuple[str, dict[str, Value]]], str, list[CallParseError]]:
    finder = _Finder(text)
    # Every good block ends with exactly this, so it bounds where the current block can end.
    terminator = "}" + end_marker
    last_end = text.rfind(terminator)
    blocks: list[tuple[str, dict[str, Value]]] = []
    pieces: list[str] = []
    errors: list[CallParseError] = []
    pos, window, failures, streak = 0, -2, 0, 0
    while (start := finder.find(start_marker, pos)) >= 0:
        pieces.append(text[pos:start])
        end = finder.find(terminator, start)
        if end != window:
            window, failures = end, 0
        jump = _skip_target(text, start_marker, start, end, last_end, failures, streak)
        if jump > start:
            errors.append(_skipped(text, start_marker, kind, start, jump))
            pieces.append(text[start:jump])
            pos, streak = jump, 0
            continue
        reader = _Reader(text, start + len(start_marker), finder)
        try:
            blocks.append(reader.read_block(kind, end_marker))
            pos, streak = reader.pos, 0
            continue
        except _Malformed as bad:
            errors.append(_to_error(bad, kind, reader.name, start))
        failures += 1
        streak += 1
        if end < 0:
            # Nothing can be terminated any more: one summary instead of a parse per block.
            pos = len(text)
            if (more := text.count(start_marker, start + 1)) > 0:
                errors.append(_skipped(text, start_marker, kind, start + 1, pos, more))
        else:
            pos = _resume_point(finder, start_marker, start, reader.last_open)
        pieces.append(text[start:pos])
    pieces.append(text[pos:])
    return blocks, "".join(pieces), errors


def _skip_target(
    text: str, marker: str, start: int, end: int, last_end: int, failures: int, streak: int
) -> int:
    """Where to jump ahead to on hostile input (a position <= start means: parse normally).

    Too many failures before one terminator: only the last start marker in front of it can
    still end there. A long streak of failures overall: go to the last start marker in front of
    the last terminator, since block-by-block recovery is no longer worth its cost.
    """
    if end < 0:
        return -1  # the caller gives up on the rest in one step
    if failures >= MAX_RETRIES:
        return text.rfind(marker, start, end)
    if streak >= MAX_STREAK:
        return text.rfind(marker, start, last_end)
    return -1


def _skipped(
    text: str, marker: str, kind: str, begin: int, stop: int, count: int | None = None
) -> CallParseError:
    """Summary for start markers not parsed one by one (see _skip_target and the no-terminator
    case in _parse_blocks): bounds the work on hostile input."""
    count = text.count(marker, begin, stop) if count is None else count
    return CallParseError(
        begin, f"skipped {count} further malformed {kind} block(s) between offsets {begin} and {stop}"
    )


def _resume_point(finder: _Finder, start_marker: str, start: int, last_open: int) -> int:
    # Markers can only hide inside string values (structure has no '<'), and every earlier
    # string was well delimited, so only the last string opened may have swallowed a real
    # block; retrying from there re-reads each region a bounded number of times.
    nxt = finder.find(start_marker, max(start + 1, last_open))
    return nxt if nxt >= 0 else len(finder.text)


def _to_error(bad: _Malformed, kind: str, name: str | None, start: int) -> CallParseError:
    label = f"{kind} {name!r}" if name else kind
    return CallParseError(bad.offset, f"malformed {label} starting at offset {start}: {bad.detail}")


class _Reader:
    """Reads one block; raises _Malformed at the first problem.

    Deliberately one flat loop over local variables: hostile input can hold tens of thousands
    of tiny malformed blocks, and per-token method calls would dominate the parse time.
    """

    def __init__(self, text: str, pos: int, finder: _Finder) -> None:
        self.text = text
        self.pos = pos
        self.finder = finder
        self.name: str | None = None  # for error messages
        self.last_open = -1  # where the last string value began, for recovery

    def read_block(self, kind: str, end_marker: str) -> tuple[str, dict[str, Value]]:
        text, pos = self.text, self.pos
        head = kind + ":"
        if not text.startswith(head, pos):
            raise self._fail(pos, f"expected {head!r}")
        pos += len(head)
        name_end = _TOKEN.match(text, pos).end()  # type: ignore[union-attr]
        name = text[pos:name_end]
        if not name.isidentifier():
            raise self._fail(pos, f"invalid name {name!r}" if name else "missing name")
        self.name = name
        pos = _skip_ws(text, name_end)
        if not text.startswith("{", pos):
            raise self._fail(pos, "expected '{'")
        root: dict[str, Value] = {}
        pos = self._read_container(root, pos + 1)
        if not text.startswith(end_marker, pos):
            raise self._fail(pos, f"expected {end_marker!r} right after '}}'")
        self.pos = pos + len(end_marker)
        return name, root

    def _read_container(self, root: dict[str, Value], pos: int) -> int:
        """Fill ``root`` from just after its '{'; return the position after its '}'.

        An explicit stack, so deep nesting cannot hit the recursion limit.
        """
        text, token = self.text, _TOKEN.match
        stack: list[Any] = [root]
        top: Any = root
        opened = True  # just after a bracket: a closer is allowed, a ',' is not
        while True:
            pos = _skip_ws(text, pos)
            char = text[pos : pos + 1]
            closer = "}" if type(top) is dict else "]"
            if char == closer:
                stack.pop()
                if not stack:
                    return pos + 1
                top, opened = stack[-1], False
                pos += 1
                continue
            if not opened:
                if char != ",":
                    raise self._fail(pos, f"expected ',' or {closer!r}")
                pos = _skip_ws(text, pos + 1)
            key = None
            if type(top) is dict:
                key_end = token(text, pos).end()  # type: ignore[union-attr]
                key = text[pos:key_end]
                if not key:
                    raise self._fail(pos, "expected an argument name")
                if top is root and not key.isidentifier():
                    raise self._fail(pos, f"invalid argument name {key!r}")
                if key in top:
                    raise self._fail(pos, f"duplicate argument {key!r}")
                pos = _skip_ws(text, key_end)
                if not text.startswith(":", pos):
                    raise self._fail(pos, f"expected ':' after argument {key!r}")
                pos = _skip_ws(text, pos + 1)
            value, child, pos = self._read_value(pos, key)
            if type(top) is dict:
                top[key] = value
            else:
                top.append(value)
            opened = child is not None
            if opened:
                if len(stack) >= MAX_DEPTH:
                    raise self._fail(pos, f"nesting deeper than {MAX_DEPTH} levels")
                stack.append(child)
                top = child

    def _read_value(self, pos: int, key: str | None) -> tuple[Value, Any, int]:
        """Return (value, container-to-fill-or-None, position after the value)."""
        text = self.text
        char = text[pos : pos + 1]
        if char == "<" and text.startswith(ESCAPE, pos):
            self.last_open = pos
            begin = pos + len(ESCAPE)
            close = self.finder.find(ESCAPE, begin)
            if close < 0:
                raise self._fail(pos, f"unterminated string for {_what(key)}: no closing {ESCAPE}")
            return text[begin:close], None, close + len(ESCAPE)
        if char == "{":
            obj: dict[str, Value] = {}
            return obj, obj, pos + 1
        if char == "[":
            items: list[Value] = []
            return items, items, pos + 1
        end = _TOKEN.match(text, pos).end()  # type: ignore[union-attr]
        if end == pos:
            raise self._fail(pos, f"missing value for {_what(key)}")
        return _bare_value(text[pos:end], key, self, pos), None, end

    def _fail(self, pos: int, detail: str) -> _Malformed:
        snippet = self.text[pos : pos + 20]
        found = repr(snippet) if snippet else "end of input"
        return _Malformed(pos, f"{detail}, found {found}")


def _skip_ws(text: str, pos: int) -> int:
    # The regex call costs more than the check, and structure rarely has whitespace.
    if text.startswith(_WS_CHARS, pos):
        return _WS.match(text, pos).end()  # type: ignore[union-attr]
    return pos


def _what(key: str | None) -> str:
    return f"argument {key!r}" if key is not None else "list item"


def _bare_value(token: str, key: str | None, reader: _Reader, pos: int) -> Value:
    if token in ("true", "false"):
        return token == "true"
    if token == "null":
        return None
    try:
        if _INT.fullmatch(token):
            return int(token)
        if _FLOAT.fullmatch(token):
            number = float(token)
            if math.isfinite(number):
                return number
    except ValueError:  # e.g. more digits than int() accepts
        pass
    shown = token if len(token) <= 30 else token[:30] + "..."
    raise reader._fail(
        pos, f"invalid value {shown!r} for {_what(key)} (strings must be wrapped in {ESCAPE})"
    )


# ---------------------------------------------------------------------------------------------
# JSON tool calls


def parse_json_call(text: str) -> ToolCall:
    """Parse ``{"name": ..., "arguments": {...}}`` (also an OpenAI ``{"function": {...}}`` item,
    and ``arguments`` given as a JSON string). Raises CallParseError with a clear message."""
    obj = _load_json(text, "tool call")
    if isinstance(obj, dict) and "name" not in obj and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    if not isinstance(obj, dict):
        raise CallParseError(0, f"tool call must be a JSON object, got {_json_type(obj)}")
    name = obj.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise CallParseError(0, f"tool call 'name' must be an identifier string, got {name!r}")
    arguments = obj.get("arguments", {})
    if isinstance(arguments, str):
        arguments = _load_json(arguments, f"arguments of tool call {name!r}")
    if not isinstance(arguments, dict):
        raise CallParseError(
            0, f"'arguments' of tool call {name!r} must be an object, got {_json_type(arguments)}"
        )
    return ToolCall(name, arguments)


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CallParseError(
            exc.pos, f"invalid JSON in {what} at line {exc.lineno} col {exc.colno}: {exc.msg}"
        ) from None


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")
