"""The parser must stay linear (and fast) on hostile input."""

from __future__ import annotations

import pytest

from worldagent.tools.bench import adversarial_inputs, bench_parser, time_parse
from worldagent.tools.callformat import ToolCall, parse_calls, render_call

MB = 1 << 20
# Hostile inputs are cut short by the parser's guards (~1-10 ms per MB); inputs made of
# tens of thousands of blocks that each need a real parse attempt are throughput-bound
# (~60-150 ms per MB on a small CI box). Budgets leave slack for a loaded machine.
THROUGHPUT_KINDS = {"valid-calls", "garbage-with-good-calls", "unclosed-string-terminated"}


def _budget(kind: str) -> float:
    return 0.6 if kind in THROUGHPUT_KINDS else 0.1


@pytest.mark.parametrize("kind", sorted(adversarial_inputs(64)))
def test_linear_time(kind: str) -> None:
    small = adversarial_inputs(MB // 4)[kind]
    large = adversarial_inputs(MB)[kind]
    t_small, t_large = time_parse(small, repeat=3), time_parse(large, repeat=3)
    # Quadratic growth would be 16x; allow generous noise above the linear 4x.
    assert t_large <= 10 * t_small + 0.01, (kind, t_small, t_large)
    assert t_large < _budget(kind), (kind, t_large)


def test_named_adversarial_inputs_are_fast() -> None:
    fragments = ("<start_function_call>call:x{a:<escape>" * 30_000)[:MB]
    for text in (fragments, "{" * MB, fragments + render_call(ToolCall("ok", {}))):
        assert time_parse(text, repeat=3) < 0.05


def test_recovers_good_call_after_flood() -> None:
    flood = adversarial_inputs(MB)["trailing-comma"]
    good = ToolCall("ok", {"a": 1})
    parsed = parse_calls(flood + render_call(good))
    assert parsed.calls == [good]
    assert any("skipped" in error.message for error in parsed.errors)


def test_bench_parser_reports_seconds() -> None:
    seconds = bench_parser(64 * 1024, repeat=1)
    assert 0 < seconds < 1


def test_errors_beyond_the_report_limit_are_summarised_and_good_calls_still_found() -> None:
    from worldagent.tools.callformat import MAX_REPORTED_ERRORS, CALL_END, CALL_START, ToolCall, parse_calls, render_call

    broken = f"{CALL_START}call:x{{a:1,,}}{CALL_END}"
    good = render_call(ToolCall("writeStory", {"path": "a.stories.tsx", "content": "x"}))
    text = "".join(broken + (good if i % 100 == 99 else "") for i in range(MAX_REPORTED_ERRORS + 500))
    parsed = parse_calls(text)
    assert len(parsed.calls) == (MAX_REPORTED_ERRORS + 500) // 100
    assert len(parsed.errors) == MAX_REPORTED_ERRORS + 1
    assert parsed.errors[-1].message == "500 more malformed call block(s) not reported individually"
