"""The step budget counts work, not calls (issue 84, item 2): builtins are charged by the elements
and characters they walk, so one counted call cannot hide 10^5 comparisons. The checks assert
the budget error (or a render), never wall time."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from story_helpers import WriteFn

from worldagent.stories.errors import StoryRenderError
from worldagent.stories.jslib import CHARS_PER_STEP
from worldagent.stories.render import render_story

HEAD = "import { story } from 'plaited/testing'\n"
FILE = "w/w.stories.tsx"
BUDGET = "evaluation step budget exceeded"
MAX_STEPS = 40_000

# Each builtin, called once per element of `a` (an array of n elements) inside `a.map(...)`, and
# the least work one call must be charged: n for an array walk, n / CHARS_PER_STEP for a string
# scan of `s` (n - 1 characters).
ARRAY_CALLS = {
    "a.indexOf(-1)": lambda n: n,
    "a.includes(-1)": lambda n: n,
    "a.join('')": lambda n: n,
    "a.slice(0)": lambda n: n,
    "a.concat(a).length": lambda n: 2 * n,
    "a.filter((x) => false).length": lambda n: n,
    "a.map((x) => 0).length": lambda n: n,
    "[...a].length": lambda n: n,
    "Math.max(...a)": lambda n: n,
    "Array.from(a).length": lambda n: n,
    "Object.keys(a).length": lambda n: n,
    "a.keys().length": lambda n: n,
    "String(a).length": lambda n: n,
}
STRING_CALLS = {
    "s.indexOf('y')": lambda n: n // CHARS_PER_STEP,
    "s.includes('y')": lambda n: n // CHARS_PER_STEP,
    "s.split('x').length": lambda n: n,
    "s.slice(1).length": lambda n: n // CHARS_PER_STEP,
    "s.toUpperCase().length": lambda n: n // CHARS_PER_STEP,
    "(s + s).length": lambda n: 2 * n // CHARS_PER_STEP,
    "`${s}`.length": lambda n: n // CHARS_PER_STEP,
}
CALLS = {**ARRAY_CALLS, **STRING_CALLS}


def setup_work(n: int) -> int:
    """At most what the story's first three lines cost: `Array(n)`, `a.join('x')`, the `map`."""
    return 4 * n + 100


def story(n: int, call: str) -> str:
    return (
        HEAD + f"const a = Array({n})\nconst s = a.join('x')\nconst r = a.map(() => {call})\n"
        "export const s1 = story({ intent: 'x', template: () => <p>{r.length}</p> })\n"
    )


def outcome(root: Path, write: WriteFn, source: str, max_steps: int = MAX_STEPS) -> str | StoryRenderError:
    write(FILE, source)
    try:
        return render_story(Path(FILE), "s1", root, max_steps=max_steps).html
    except StoryRenderError as error:
        return error


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=st.sampled_from(sorted(CALLS)), n=st.integers(min_value=0, max_value=9_000))
def test_a_builtin_in_a_map_renders_or_spends_the_budget(tmp_path: Path, write: WriteFn, call: str, n: int) -> None:
    result = outcome(tmp_path, write, story(n, call))
    least_work = n * CALLS[call](n)
    if least_work > MAX_STEPS:
        # Charged at least its work: the budget must run out, at a located expression.
        assert isinstance(result, StoryRenderError), f"{call} x {n} rendered within {MAX_STEPS} steps"
        assert BUDGET in result.message and result.location.file == FILE
        if setup_work(n) < MAX_STEPS:  # the setup fits: it is the builtins in the map that spend it
            assert result.location.line == 4, result
    else:
        # Otherwise: it renders, or the only refusal is the budget (never another error).
        assert result == f"<p>{n}</p>" or (isinstance(result, StoryRenderError) and BUDGET in result.message)


@pytest.mark.parametrize("call", sorted(CALLS))
def test_small_inputs_render_within_the_default_budget(tmp_path: Path, write: WriteFn, call: str) -> None:
    # Charging by work must not refuse ordinary stories: 50 elements, every builtin, renders.
    assert outcome(tmp_path, write, story(50, call), max_steps=200_000) == "<p>50</p>"


def test_the_indexof_in_map_story_ends_with_the_budget_error(tmp_path: Path, write: WriteFn) -> None:
    # Issue 84's 452-byte story: indexOf over 65,536 elements once per element (4 * 10^9 compares).
    body = HEAD + "let s = 'x,'\nfor (let i = 0; i < 16; i++) s = s + s\nconst a = s.split(',')\n"
    body += "const b = a.map((x, i) => a.indexOf(i))\n"
    body += "export const s1 = story({ intent: 'x', template: () => <p>{b.length}</p> })\n"
    write(FILE, body)
    with pytest.raises(StoryRenderError, match=rf"^w/w\.stories\.tsx:5:\d+: {BUDGET}"):
        render_story(Path(FILE), "s1", tmp_path)


@pytest.mark.parametrize(
    "expr",
    [
        # a list holding one 50,000-element list 50,000 times, written as children, as a string,
        # and handed to a host function (joinStyles walks it)
        "<p>{grid}</p>",
        "<p>{`${grid}`}</p>",
        "<p {...joinStyles(grid)} />",
    ],
)
def test_a_shared_list_many_times_over_is_charged_by_its_whole_size(tmp_path: Path, write: WriteFn, expr: str) -> None:
    body = "import { joinStyles } from 'plaited'\n" + HEAD
    body += "const a = Array(50000)\nconst grid = a.map(() => a)\n"
    body += f"export const s1 = story({{ intent: 'x', template: () => {expr} }})\n"
    write(FILE, body)
    with pytest.raises(StoryRenderError) as info:
        render_story(Path(FILE), "s1", tmp_path)
    assert info.value.location.file == FILE and info.value.location.line == 5
    assert any(m in info.value.message for m in ("too many values written as children", "string too long", BUDGET))


def test_a_cyclic_object_passed_to_a_builtin_is_not_walked_forever(tmp_path: Path, write: WriteFn) -> None:
    body = HEAD + "const o = { n: 1 }\no.self = o\nconst out = Object.keys(o).join()\n"
    body += "export const s1 = story({ intent: 'x', template: () => <p>{out}</p> })\n"
    write(FILE, body)
    assert render_story(Path(FILE), "s1", tmp_path).html == "<p>n,self</p>"
