from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldagent.tools.callformat import (
    CALL_END,
    CALL_START,
    ESCAPE,
    MARKERS,
    CallParseError,
    ToolCall,
    parse_calls,
    parse_json_call,
    parse_responses,
    render_call,
    render_calls,
    render_response,
)

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
texts = st.text().filter(lambda s: ESCAPE not in s)
floats = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.one_of(texts, st.integers(), floats, st.booleans())
calls = st.builds(ToolCall, names, st.dictionaries(names, scalars, max_size=6))
plain_text = st.text().filter(lambda s: not any(marker in s for marker in MARKERS))


def _typed(value: object) -> object:
    """Compare with types: True == 1 and 0.0 == -0.0 would hide encoding mistakes."""
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), value)
    return (type(value).__name__, value)


def _same(left: list[ToolCall], right: list[ToolCall]) -> bool:
    def key(items: list[ToolCall]) -> list[object]:
        return [(c.name, [(k, _typed(v)) for k, v in c.arguments.items()]) for c in items]

    return left == right and key(left) == key(right)


@settings(max_examples=300)
@given(st.lists(calls, max_size=5))
def test_round_trip(items: list[ToolCall]) -> None:
    parsed = parse_calls(render_calls(items))
    assert parsed.errors == []
    assert parsed.text == ""
    assert _same(parsed.calls, items)


@settings(max_examples=200)
@given(st.lists(st.tuples(plain_text, calls), max_size=4), plain_text)
def test_round_trip_with_surrounding_text(pieces: list[tuple[str, ToolCall]], tail: str) -> None:
    text = "".join(before + render_call(call) for before, call in pieces) + tail
    parsed = parse_calls(text)
    assert parsed.errors == []
    assert _same(parsed.calls, [call for _, call in pieces])
    assert parsed.text == "".join(before for before, _ in pieces) + tail


nested = st.recursive(
    st.none() | scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200)
@given(names, st.dictionaries(names, nested, max_size=4))
def test_nested_round_trip(name: str, body: dict[str, object]) -> None:
    parsed = parse_responses(render_response(name, body))
    assert parsed.errors == [] and parsed.responses[0].response == body


def test_wire_format_matches_functiongemma() -> None:
    call = ToolCall("writeStory", {"path": "a.stories.tsx", "count": 3, "flag": True, "x": 1.5})
    assert render_call(call) == (
        "<start_function_call>call:writeStory{path:<escape>a.stories.tsx<escape>,"
        "count:3,flag:true,x:1.5}<end_function_call>"
    )


def test_float_repr_is_distinct_from_int() -> None:
    parsed = parse_calls(render_call(ToolCall("f", {"a": 3.0, "b": 1e16, "c": -0.0, "d": 3})))
    args = parsed.calls[0].arguments
    assert [type(v) for v in args.values()] == [float, float, float, int]
    assert math.copysign(1.0, args["c"]) == -1.0


def test_string_values_may_contain_structure_and_markers() -> None:
    value = 'a{b}, c:d "q"\n<start_function_call>call:x{}<end_function_call>'
    call = ToolCall("t", {"v": value, "w": ""})
    assert parse_calls("pre " + render_call(call) + " post").calls == [call]


def test_render_rejects_escape_token_naming_argument() -> None:
    with pytest.raises(ValueError, match="'content'"):
        render_call(ToolCall("writeStory", {"path": "x", "content": f"a{ESCAPE}b"}))


@pytest.mark.parametrize("name", ["", "1abc", "a-b", "a b", "a{", "call:x"])
def test_render_rejects_invalid_names(name: str) -> None:
    with pytest.raises(ValueError, match="name"):
        render_call(ToolCall(name, {}))
    with pytest.raises(ValueError, match="argument name"):
        render_call(ToolCall("ok", {name: 1}))


@pytest.mark.parametrize("value", [math.nan, math.inf, object()])
def test_render_rejects_unencodable_values(value: object) -> None:
    with pytest.raises(ValueError, match="'a'"):
        render_call(ToolCall("t", {"a": value}))  # type: ignore[dict-item]


def test_whitespace_between_tokens_is_tolerated() -> None:
    text = f"{CALL_START}call:x {{ a : 1 , b:\n<escape>s<escape> }}{CALL_END}"
    assert parse_calls(text).calls == [ToolCall("x", {"a": 1, "b": "s"})]


def test_nested_values_and_responses_round_trip() -> None:
    body = {"success": True, "data": {"errors": ["a: b (c)"], "n": 2, "none": None, "l": [[], {}]}}
    text = "before" + render_response("runStory", body) + "after"
    parsed = parse_responses(text)
    assert parsed.errors == [] and parsed.text == "beforeafter"
    assert parsed.responses[0].name == "runStory" and parsed.responses[0].response == body
    # Responses are not calls and vice versa.
    assert parse_calls(text).calls == [] and parse_calls(text).text == text


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (f"{CALL_START}call:x{{a:1,}}{CALL_END}", "expected an argument name"),
        (f"{CALL_START}call:x{{a:1}} {CALL_END}", "right after '}'"),
        (f"{CALL_START}call:1x{{}}{CALL_END}", "invalid name '1x'"),
        (f'{CALL_START}call:x{{a:"s"}}{CALL_END}', "invalid value '\"s\"' for argument 'a'"),
        (f"{CALL_START}call:x{{a:1,a:2}}{CALL_END}", "duplicate argument 'a'"),
        (f"{CALL_START}call:x{{1:2}}{CALL_END}", "invalid argument name '1'"),
        (f"{CALL_START}call:x{{a:[1}}{CALL_END}", "expected ',' or ']'"),
        (f"{CALL_START}cal:x{{}}{CALL_END}", "expected 'call:'"),
        (f"{CALL_START}call:x{{a:{ESCAPE}open}}{CALL_END}", "unterminated string for argument 'a'"),
        (f"{CALL_START}call:x{{a:nan}}{CALL_END}", "invalid value 'nan'"),
        (f"{CALL_START}call:x{{a:}}{CALL_END}", "missing value for argument 'a'"),
        (f"{CALL_START}call:x{{a:1}}", "expected '<end_function_call>'"),
    ],
)
def test_malformed_call_reports_offset_and_reason(bad: str, fragment: str) -> None:
    parsed = parse_calls("hi " + bad)
    assert parsed.calls == []
    assert len(parsed.errors) == 1
    error = parsed.errors[0]
    assert isinstance(error, CallParseError) and fragment in error.message
    assert 3 <= error.offset <= len(bad) + 3
    assert parsed.text == "hi " + bad  # malformed blocks stay in the text


def test_good_calls_survive_malformed_neighbours() -> None:
    good1, good2 = ToolCall("a", {"x": 1}), ToolCall("b", {"y": "z"})
    text = (
        f"{CALL_START}call:x{{a:1,}}{CALL_END} {render_call(good1)}"
        f"{CALL_START}call:y{{p:{ESCAPE}unclosed{CALL_END} mid {render_call(good2)} end"
    )
    parsed = parse_calls(text)
    assert parsed.calls == [good1, good2]
    assert len(parsed.errors) == 2
    assert parsed.text.endswith(" end") and render_call(good1) not in parsed.text


def test_unclosed_escape_swallowing_next_call_is_recovered() -> None:
    good = ToolCall("y", {"b": "v"})
    text = f"{CALL_START}call:x{{a:{ESCAPE}oops{CALL_END} good {render_call(good)} tail"
    parsed = parse_calls(text)
    assert parsed.calls == [good]
    assert "malformed call 'x'" in parsed.errors[0].message


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    parsed = parse_calls(f"{CALL_START}call:x{{a:" + "[" * 100_000)
    assert parsed.calls == [] and "nesting deeper" in parsed.errors[0].message


def test_parse_json_call() -> None:
    assert parse_json_call('{"name": "runStory", "arguments": {"path": "a.stories.tsx"}}') == ToolCall(
        "runStory", {"path": "a.stories.tsx"}
    )
    wrapped = '{"type": "function", "function": {"name": "f", "arguments": "{\\"n\\": 2}"}}'
    assert parse_json_call(wrapped) == ToolCall("f", {"n": 2})


def test_parse_json_call_errors() -> None:
    with pytest.raises(CallParseError, match=r"invalid JSON in tool call at line 2 col 10: Expecting value") as info:
        parse_json_call('{"name": "f",\n "args": }')
    assert info.value.offset == 23
    with pytest.raises(CallParseError, match="must be a JSON object"):
        parse_json_call("[1]")
    with pytest.raises(CallParseError, match="'name' must be an identifier"):
        parse_json_call('{"name": "a b", "arguments": {}}')
    with pytest.raises(CallParseError, match="must be an object, got array"):
        parse_json_call('{"name": "f", "arguments": []}')
    with pytest.raises(CallParseError, match="invalid JSON in arguments of tool call 'f' at line 1 col 2"):
        parse_json_call('{"name": "f", "arguments": "{oops"}')


soup = st.lists(
    st.sampled_from(
        [*MARKERS, "call:", "response:", "x", "a", ":", ",", "{", "}", "[", "]", " ", "1", "-2.5", "true", "null", '"']
    )
    | st.text(max_size=3),
    max_size=40,
).map("".join)


@settings(max_examples=500)
@given(soup)
def test_parser_never_raises_and_calls_re_render(text: str) -> None:
    parsed = parse_calls(text)
    assert _same(parse_calls(render_calls(parsed.calls)).calls, parsed.calls)
    assert all(isinstance(error, CallParseError) for error in parsed.errors)
    assert len(parsed.text) <= len(text)
    parse_responses(text)
