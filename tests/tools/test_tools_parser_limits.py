"""The parser on hostile input: it always answers, and recovers the good calls (its speed is a benchmark)."""

from __future__ import annotations

import pytest

from worldagent.tools.bench import adversarial_inputs, bench_parser
from worldagent.tools.callformat import ToolCall, parse_calls, render_call

MB = 1 << 20


@pytest.mark.parametrize("kind", sorted(adversarial_inputs(64)))
def test_every_adversarial_input_parses_to_a_result(kind: str) -> None:
    # How fast, and that the time grows linearly, is measured by `python -m benchmarks`.
    parsed = parse_calls(adversarial_inputs(MB // 4)[kind])
    assert isinstance(parsed.calls, list) and isinstance(parsed.errors, list)


def test_recovers_good_call_after_flood() -> None:
    flood = adversarial_inputs(MB)["trailing-comma"]
    good = ToolCall("ok", {"a": 1})
    parsed = parse_calls(flood + render_call(good))
    assert parsed.calls == [good]
    assert any("skipped" in error.message for error in parsed.errors)


def test_bench_parser_reports_seconds() -> None:
    assert bench_parser(64 * 1024, repeat=1) > 0


def test_errors_beyond_the_report_limit_are_summarised_and_good_calls_still_found() -> None:
    from worldagent.tools.callformat import (
        CALL_END,
        CALL_START,
        MAX_REPORTED_ERRORS,
        ToolCall,
        parse_calls,
        render_call,
    )

    broken = f"{CALL_START}call:x{{a:1,,}}{CALL_END}"
    good = render_call(ToolCall("writeStory", {"path": "a.stories.tsx", "content": "x"}))
    text = "".join(broken + (good if i % 100 == 99 else "") for i in range(MAX_REPORTED_ERRORS + 500))
    parsed = parse_calls(text)
    assert len(parsed.calls) == (MAX_REPORTED_ERRORS + 500) // 100
    assert len(parsed.errors) == MAX_REPORTED_ERRORS + 1
    assert parsed.errors[-1].message == "500 more malformed call block(s) not reported individually"
