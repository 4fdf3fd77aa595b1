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

import gc
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from worldagent import safejson
from worldagent.errors import InputError

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
# Errors reported one by one; beyond this, a single summary error counts the rest.
MAX_REPORTED_ERRORS = 1000

Scalar = str | int | float | bool
Value = str | int | float | bool | None | list[Any] | dict[str, Any]

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


class CallParseError(InputError):
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


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cycle collector while parsing: the parser builds no cycles, and on hostile input
    (tens of thousands of small blocks) collector passes cost up to half the parse time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_calls(text: str) -> ParsedOutput:
    with _no_cyclic_gc():
        blocks, rest, errors = _parse_blocks(text, CALL_START, CALL_END, "call")
        return ParsedOutput([ToolCall(name, args) for name, args in blocks], rest, errors)


def parse_responses(text: str) -> ParsedResponses:
    with _no_cyclic_gc():
        blocks, rest, errors = _parse_blocks(text, RESPONSE_START, RESPONSE_END, "response")
        return ParsedResponses([ToolResponse(name, body) for name, body in blocks], rest, errors)


class _Malformed(Exception):
    """A problem: ``args`` is (offset, detail, block name once read or None, where the block's
    last string value began or -1). Name and position are passed at the raise site, and kept
    in ``args`` only, because this is raised once per block on hostile input: catching and
    re-raising to fill them in, or a Python ``__init__``, would cost more than the parse."""


class _Finder:
    """``str.find`` for one needle, remembering its last answer.

    Recovery re-asks for the same marker from nearby positions; answering from the cache
    (in particular "no more occurrences") keeps the total search work linear. One finder per
    needle (rather than a dict of them) keeps a cache hit down to two comparisons.
    """

    __slots__ = ("text", "needle", "origin", "found")

    def __init__(self, text: str, needle: str) -> None:
        self.text = text
        self.needle = needle
        self.origin = len(text) + 1  # empty cache: no search starts this far in
        self.found = -1

    def find(self, start: int) -> int:
        found = self.found
        if self.origin <= start and (start <= found or found < 0):
            return found
        found = self.text.find(self.needle, start)
        self.origin, self.found = start, found
        return found


def _parse_blocks(
    text: str, start_marker: str, end_marker: str, kind: str
) -> tuple[list[tuple[str, dict[str, Value]]], str, list[CallParseError]]:
    find_start = _Finder(text, start_marker).find
    find_escape = _Finder(text, ESCAPE).find
    # Every good block ends with exactly this, so it bounds where the current block can end.
    terminator = "}" + end_marker
    find_end = _Finder(text, terminator).find
    last_end = text.rfind(terminator)
    head, skip = kind + ":", len(start_marker)
    blocks: list[tuple[str, dict[str, Value]]] = []
    pieces: list[str] = []
    errors: list[CallParseError] = []
    pos, window, failures, streak, unreported = 0, -2, 0, 0, 0
    start = find_start(0)
    # Each branch below sets ``pos`` (text consumed so far) and ``start`` (the next block).
    while start >= 0:
        if start > pos:  # recovery usually resumes right at a start marker
            pieces.append(text[pos:start])
        end = find_end(start)
        if end != window:
            window, failures = end, 0
        if failures >= MAX_RETRIES or streak >= MAX_STREAK:  # cheap test first: rarely true
            jump = _skip_target(text, start_marker, start, end, last_end, failures, streak)
            if jump > start:
                errors.append(_skipped(text, start_marker, kind, start, jump))
                pieces.append(text[start:jump])
                pos, start, streak = jump, jump, 0  # rfind put a start marker at jump
                continue
        try:
            name, arguments, block_end = _read_block(text, start + skip, head, end_marker, find_escape)
        except _Malformed as bad:
            offset, detail, name, last_open = bad.args
            if len(errors) < MAX_REPORTED_ERRORS:
                errors.append(_to_error(text, offset, detail, name, kind, start))
            else:  # nobody reads the 1001st error; building each one is a third of the cost
                unreported += 1
        else:
            blocks.append((name, arguments))
            pos, streak = block_end, 0
            start = find_start(pos)
            continue
        failures += 1
        streak += 1
        if end < 0:
            # Nothing can be terminated any more: one summary instead of a parse per block.
            pos, resume = len(text), -1
            if (more := text.count(start_marker, start + 1)) > 0:
                errors.append(_skipped(text, start_marker, kind, start + 1, pos, more))
        else:
            # Markers can only hide inside string values (structure has no '<'), and every
            # earlier string was well delimited, so only the last string opened may have
            # swallowed a real block; retrying from there re-reads each region a bounded
            # number of times.
            resume = find_start(max(start + 1, last_open))
            pos = resume if resume >= 0 else len(text)
        pieces.append(text[start:pos])
        start = resume
    pieces.append(text[pos:])
    if unreported:
        errors.append(
            CallParseError(len(text), f"{unreported} more malformed {kind} block(s) not reported individually")
        )
    return blocks, "".join(pieces), errors


def _skip_target(text: str, marker: str, start: int, end: int, last_end: int, failures: int, streak: int) -> int:
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


def _skipped(text: str, marker: str, kind: str, begin: int, stop: int, count: int | None = None) -> CallParseError:
    """Summary for start markers not parsed one by one (see _skip_target and the no-terminator
    case in _parse_blocks): bounds the work on hostile input."""
    count = text.count(marker, begin, stop) if count is None else count
    return CallParseError(
        begin, f"skipped {count} further malformed {kind} block(s) between offsets {begin} and {stop}"
    )


def _to_error(text: str, offset: int, detail: str, name: str | None, kind: str, start: int) -> CallParseError:
    # What was found is quoted here, once per reported error, rather than at each raise site.
    found = repr(text[offset : offset + 20]) if offset < len(text) else "end of input"
    where = f"{kind} {name!r} starting at offset {start}" if name else f"{kind} starting at offset {start}"
    return CallParseError(offset, f"malformed {where}: {detail}, found {found}")


def _read_block(
    text: str, pos: int, head: str, end_marker: str, find_escape: Callable[[int], int]
) -> tuple[str, dict[str, Value], int]:
    """Read one block from just after its start marker: (name, arguments, position after it).

    Raises _Malformed at the first problem. Deliberately one flat loop over local variables
    that tries the common shape (no whitespace; ``key:<escape>``, a bare token) with a
    ``startswith`` before anything general, and leaves only nested containers to
    _read_nested: hostile input can hold tens of thousands of tiny malformed blocks, and
    per-token function calls would dominate the parse time.
    """
    if not text.startswith(head, pos):
        raise _Malformed(pos, f"expected {head!r}", None, -1)
    token, ws = _TOKEN.match, _WS.match
    pos += len(head)
    name_end = token(text, pos).end()  # type: ignore[union-attr]
    name = text[pos:name_end]
    if not name.isidentifier():
        raise _Malformed(pos, f"invalid name {name!r}" if name else "missing name", None, -1)
    pos = _skip_ws(text, name_end)
    if not text.startswith("{", pos):
        raise _Malformed(pos, "expected '{'", name, -1)
    arguments: dict[str, Value] = {}
    last_open = -1  # where the last string value began, for recovery
    pos = _skip_ws(text, pos + 1)
    if not text.startswith("}", pos):
        while True:  # at a key, just after '{' or ',' and any whitespace
            key_end = token(text, pos).end()  # type: ignore[union-attr]
            key = text[pos:key_end]
            if not key.isidentifier():
                detail = f"invalid argument name {key!r}" if key else "expected an argument name"
                raise _Malformed(pos, detail, name, last_open)
            if key in arguments:
                raise _Malformed(pos, f"duplicate argument {key!r}", name, last_open)
            pos = key_end
            if not text.startswith(":", pos):
                pos = _skip_ws(text, pos)
                if not text.startswith(":", pos):
                    raise _Malformed(pos, f"expected ':' after argument {key!r}", name, last_open)
            pos += 1
            if text.startswith(_WS_CHARS, pos):
                pos = ws(text, pos).end()  # type: ignore[union-attr]
            if text.startswith(ESCAPE, pos):
                last_open = pos
                close = find_escape(pos + len(ESCAPE))
                if close < 0:
                    raise _Malformed(pos, _unterminated(key), name, last_open)
                arguments[key] = text[pos + len(ESCAPE) : close]
                pos = close + len(ESCAPE)
            elif text.startswith(_OPENERS, pos):
                arguments[key], pos, last_open = _read_nested(text, pos, name, find_escape, last_open)
            else:
                end = token(text, pos).end()  # type: ignore[union-attr]
                value = _bare_value(text[pos:end])
                if value is _INVALID:
                    raise _Malformed(pos, _bad_token(text[pos:end], key), name, last_open)
                arguments[key] = value
                pos = end
            if text.startswith(_WS_CHARS, pos):
                pos = ws(text, pos).end()  # type: ignore[union-attr]
            if not text.startswith(",", pos):
                break
            pos += 1
            if text.startswith(_WS_CHARS, pos):
                pos = ws(text, pos).end()  # type: ignore[union-attr]
        if not text.startswith("}", pos):
            raise _Malformed(pos, "expected ',' or '}'", name, last_open)
    pos += 1
    if not text.startswith(end_marker, pos):
        raise _Malformed(pos, f"expected {end_marker!r} right after '}}'", name, last_open)
    return name, arguments, pos + len(end_marker)


def _read_nested(
    text: str, pos: int, name: str, find_escape: Callable[[int], int], last_open: int
) -> tuple[Value, int, int]:
    """Read the '{' or '[' container at ``pos`` inside the top-level arguments: (value,
    position after it, where the last string value began).

    An explicit stack, so deep nesting cannot hit the recursion limit.
    """
    token = _TOKEN.match
    stack: list[Any] = []
    child: Any = {} if text.startswith("{", pos) else []
    result, pos = child, pos + 1
    while True:
        if child is not None:  # just opened a container: a closer is allowed, a ',' is not
            if len(stack) + 1 >= MAX_DEPTH:  # + 1: the top-level arguments
                raise _Malformed(pos, f"nesting deeper than {MAX_DEPTH} levels", name, last_open)
            stack.append(child)
            top, opened = child, True
        pos = _skip_ws(text, pos)
        closer = "}" if type(top) is dict else "]"
        if text.startswith(closer, pos):
            stack.pop()
            if not stack:
                return result, pos + 1, last_open
            top, opened, child = stack[-1], False, None
            pos += 1
            continue
        if not opened:
            if not text.startswith(",", pos):
                raise _Malformed(pos, f"expected ',' or {closer!r}", name, last_open)
            pos = _skip_ws(text, pos + 1)
        key = None
        if type(top) is dict:
            key_end = token(text, pos).end()  # type: ignore[union-attr]
            key = text[pos:key_end]
            if not key:
                raise _Malformed(pos, "expected an argument name", name, last_open)
            if key in top:
                raise _Malformed(pos, f"duplicate argument {key!r}", name, last_open)
            pos = _skip_ws(text, key_end)
            if not text.startswith(":", pos):
                raise _Malformed(pos, f"expected ':' after argument {key!r}", name, last_open)
            pos = _skip_ws(text, pos + 1)
        child = None
        if text.startswith(ESCAPE, pos):
            last_open = pos
            close = find_escape(pos + len(ESCAPE))
            if close < 0:
                raise _Malformed(pos, _unterminated(key), name, last_open)
            value: Value = text[pos + len(ESCAPE) : close]
            pos = close + len(ESCAPE)
        elif text.startswith(_OPENERS, pos):
            value = child = {} if text.startswith("{", pos) else []
            pos += 1
        else:
            end = token(text, pos).end()  # type: ignore[union-attr]
            value = _bare_value(text[pos:end])
            if value is _INVALID:
                raise _Malformed(pos, _bad_token(text[pos:end], key), name, last_open)
            pos = end
        if key is not None:
            top[key] = value
        else:
            top.append(value)
        opened = False


def _skip_ws(text: str, pos: int) -> int:
    # The regex call costs more than the check, and structure rarely has whitespace.
    if text.startswith(_WS_CHARS, pos):
        return _WS.match(text, pos).end()  # type: ignore[union-attr]
    return pos


def _what(key: str | None) -> str:
    return f"argument {key!r}" if key is not None else "list item"


def _unterminated(key: str | None) -> str:
    return f"unterminated string for {_what(key)}: no closing {ESCAPE}"


_OPENERS = ("{", "[")
# What _bare_value returns for a token that is no value (None cannot say so: it is ``null``).
_INVALID: Any = object()
_KEYWORDS: dict[str, Value] = {"true": True, "false": False, "null": None}


def _bare_value(token: str) -> Value:
    """The value of a bare token (possibly empty), or _INVALID."""
    if token in _KEYWORDS:
        return _KEYWORDS[token]
    try:
        # isascii() and isdigit() is _INT without the sign: skips the regex for the common case.
        if (token.isascii() and token.isdigit()) or _INT.fullmatch(token):
            return int(token)
        if _FLOAT.fullmatch(token):
            number = float(token)
            if math.isfinite(number):
                return number
    except ValueError:  # e.g. more digits than int() accepts
        pass
    return _INVALID


def _bad_token(token: str, key: str | None) -> str:
    if not token:
        return f"missing value for {_what(key)}"
    shown = token if len(token) <= 30 else token[:30] + "..."
    return f"invalid value {shown!r} for {_what(key)} (strings must be wrapped in {ESCAPE})"


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
        raise CallParseError(0, f"'arguments' of tool call {name!r} must be an object, got {_json_type(arguments)}")
    return ToolCall(name, arguments)


def _load_json(text: str, what: str) -> Any:
    try:
        return safejson.loads(text, MAX_DEPTH)  # the same depth limit as the call syntax
    except json.JSONDecodeError as exc:  # JSONDepthError included
        raise CallParseError(
            exc.pos, f"invalid JSON in {what} at line {exc.lineno} col {exc.colno}: {exc.msg}"
        ) from None


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")
