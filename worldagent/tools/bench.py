"""Adversarial inputs and a timing helper for the call parser (used by tests and benchmarks/)."""

from __future__ import annotations

import time
from collections.abc import Callable

from worldagent.tools.callformat import CALL_END, CALL_START, ESCAPE, ToolCall, parse_calls, render_call

_VALID = render_call(ToolCall("writeStory", {"path": "a.stories.tsx", "content": "x{y}:z,", "n": 3}))

# Each pattern is repeated to the requested size; all are pathological for naive parsers.
_PATTERNS: dict[str, str] = {
    "unclosed-escape": f"{CALL_START}call:x{{a:{ESCAPE}",
    "unclosed-call": f"{CALL_START}call:x{{",
    "start-markers": CALL_START,
    "end-markers": CALL_END,
    "escapes": ESCAPE,
    "braces": "{",
    "valid-calls": _VALID + " text ",
    # Each block ends with the real terminator but is malformed, so each must be tried.
    "terminated-garbage": f"{CALL_START}}}{CALL_END}",
    "trailing-comma": f"{CALL_START}call:x{{a:1,}}{CALL_END}",
    "unclosed-string-terminated": f"{CALL_START}call:x{{a:{ESCAPE}}}{CALL_END}",
    # Defeats the skip-ahead guard: a good call just before each streak limit.
    "garbage-with-good-calls": f"{CALL_START}call:x{{a:1,}}{CALL_END}" * 200 + _VALID,
}

# Single huge constructs: one start followed by a long run.
_PREFIXED: dict[str, tuple[str, str]] = {
    "open-string-with-markers": (f"{CALL_START}call:x{{a:{ESCAPE}", f"{CALL_START}}}{CALL_END}"),
    "deep-nesting": (f"{CALL_START}call:x{{a:", "["),
    "long-name": (f"{CALL_START}call:", "a"),
    "long-number": (f"{CALL_START}call:x{{a:", "1"),
    "whitespace": (f"{CALL_START}call:x{{a:1", " "),
}


def adversarial_inputs(size_bytes: int) -> dict[str, str]:
    """ASCII inputs of ``size_bytes`` characters, keyed by a short description."""
    inputs = {name: _repeat(unit, size_bytes) for name, unit in _PATTERNS.items()}
    for name, (head, unit) in _PREFIXED.items():
        inputs[name] = head + _repeat(unit, size_bytes - len(head))
    return inputs


def bench_parser(size_bytes: int = 1 << 20, repeat: int = 3) -> float:
    """Worst case over :func:`adversarial_inputs` of the best-of-``repeat`` parse time, seconds."""
    return max(time_parse(text, repeat) for text in adversarial_inputs(size_bytes).values())


def time_parse(text: str, repeat: int = 3, parse: Callable[[str], object] = parse_calls) -> float:
    best = float("inf")
    for _ in range(max(1, repeat)):
        began = time.perf_counter()
        parse(text)
        best = min(best, time.perf_counter() - began)
    return best


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[: max(0, size)]
