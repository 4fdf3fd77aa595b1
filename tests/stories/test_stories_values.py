from __future__ import annotations

import math

from worldagent.stories.values import (
    UNDEFINED,
    js_add,
    kebab_case,
    loose_equals,
    number_to_string,
    strict_equals,
    to_number,
    truthy,
)


def test_number_to_string_matches_js() -> None:
    cases = {
        1.0: "1",
        -0.0: "0",
        0.5: "0.5",
        1e21: "1e+21",
        1.5e-7: "1.5e-7",
        0.000001: "0.000001",
        123456789012345680000.0: "123456789012345680000",
        2.5e-6: "0.0000025",
        math.nan: "NaN",
        math.inf: "Infinity",
        -math.inf: "-Infinity",
        3: "3",
        -12.25: "-12.25",
        1e100: "1e+100",
    }
    for value, text in cases.items():
        assert number_to_string(value) == text, value


def test_truthiness_and_equality() -> None:
    assert [truthy(v) for v in (0, 0.0, math.nan, "", None, UNDEFINED, False)] == [False] * 7
    assert all(truthy(v) for v in ([], {}, "0", -1, True))
    assert not strict_equals(True, 1) and not strict_equals(None, UNDEFINED)
    assert strict_equals(1, 1.0) and not strict_equals(math.nan, math.nan)
    assert loose_equals(None, UNDEFINED) and loose_equals(True, 1) and loose_equals("2", 2)
    assert not loose_equals(None, 0)


def test_conversions() -> None:
    assert js_add("a", 1.0) == "a1" and js_add(1, 2) == 3 and js_add(None, 1) == 1
    assert js_add([1, 2], "") == "1,2" and js_add(UNDEFINED, "") == "undefined"
    assert to_number(" 12 ") == 12 and math.isnan(to_number("1_0")) and to_number("") == 0
    assert math.isnan(to_number("infinity")) and to_number("0x10") == 16
    assert kebab_case("backgroundColor") == "background-color" and kebab_case("--x") == "--x"
    assert kebab_case("WebkitTransition") == "-webkit-transition"
