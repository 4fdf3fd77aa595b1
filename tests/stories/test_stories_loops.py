"""The statements Plaited's own stories use (issue 85): loops with break/continue and labels,
assignments, classes and `new` in imported modules, `Array.from`, `story.only`/`story.skip`,
and the repository's relative imports. Each test renders a story and checks its markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from story_helpers import WriteFn

from worldagent.stories.discover import discover_stories
from worldagent.stories.errors import StoryImportError, StoryRenderError
from worldagent.stories.render import render_story

HEAD = "import { story } from 'plaited/testing'\n"
FILE = "l/l.stories.tsx"


def render(tmp_path: Path, write: WriteFn, body: str, expr: str = "out", **limits: int) -> str:
    """Render a story whose template writes `expr` (evaluated after `body`) into a <p>."""
    write(FILE, HEAD + body + f"\nexport const s = story({{ intent: 'x', template: () => <p>{{{expr}}}</p> }})\n")
    return render_story(Path(FILE), "s", tmp_path, **limits).html


def text(tmp_path: Path, write: WriteFn, body: str, expr: str = "out") -> str:
    html = render(tmp_path, write, body, expr)
    assert html.startswith("<p>") and html.endswith("</p>"), html
    return html[3:-4]


# ------------------------------------------------------------------------------------- loops


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # for with let, condition and increment
        ("let out = ''\nfor (let i = 0; i < 4; i++) { out += i }", "0123"),
        # continue still runs the increment; break ends the loop
        ("let out = ''\nfor (let i = 0; i < 10; i++) { if (i % 2) continue; if (i > 6) break; out += i }", "0246"),
        # empty header parts: for (;;) with a break
        ("let out = 0\nfor (;;) { out++; if (out === 3) break }", "3"),
        # for...of over an array, with destructuring
        ("let out = ''\nfor (const [k, v] of [['a', 1], ['b', 2]]) out += k + v", "a1b2"),
        # for...of over a string
        ("let out = ''\nfor (const ch of 'abc') out = ch + out", "cba"),
        # for...in over an object, an array and a string (keys are strings)
        ("let out = ''\nfor (const k in { x: 1, y: 2 }) out += k", "xy"),
        ("let out = ''\nfor (const k in [5, 6, 7]) out += typeof k + k", "string0string1string2"),
        ("let out = 0\nfor (const k in null) out++", "0"),
        # for...in/of assigning an existing binding
        ("let k = ''\nlet out = ''\nfor (k of ['p', 'q']) out += k\nout += k", "pqq"),
        # while and do...while (the body of a do runs once even when the condition is false)
        ("let out = 0\nlet n = 5\nwhile (n > 0) { out += n; n-- }", "15"),
        ("let out = 0\ndo { out++ } while (false)", "1"),
        ("let out = ''\nlet i = 0\ndo { i++; if (i === 2) continue; out += i } while (i < 4)", "134"),
        # labels: break and continue an outer loop from an inner one
        (
            "let out = ''\nouter: for (let i = 0; i < 3; i++) {\n"
            "  for (let j = 0; j < 3; j++) { if (j === 1) continue outer; if (i === 2) break outer; out += `${i}${j}` }\n}",
            "0010",
        ),
        # a labelled block left with break
        ("let out = 'a'\nblock: { out += 'b'; if (out) break block; out += 'c' }\nout += 'd'", "abd"),
        # nested loops: an unlabelled break leaves only the inner one
        (
            "let out = ''\nfor (const a of [1, 2]) { for (const b of [1, 2, 3]) { if (b === 2) break; out += `${a}${b}` } }",
            "1121",
        ),
        # an array is read live: elements pushed during for...of are visited
        ("const xs = [1]\nlet out = ''\nfor (const x of xs) { out += x; if (x < 3) xs.push(x + 1) }", "123"),
    ],
)
def test_loops_compute_like_javascript(tmp_path: Path, write: WriteFn, body: str, expected: str) -> None:
    assert text(tmp_path, write, body) == expected


def test_let_in_a_for_loop_is_a_new_binding_per_iteration(tmp_path: Path, write: WriteFn) -> None:
    # Closures made in each pass keep that pass's value, as in JS (not the last one).
    body = "const fns = []\nfor (let i = 0; i < 3; i++) fns.push(() => i)\nconst out = fns.map((f) => f()).join(',')"
    assert text(tmp_path, write, body) == "0,1,2"
    body = "const fns = []\nfor (const x of ['a', 'b']) fns.push(() => x)\nconst out = fns.map((f) => f()).join('')"
    assert text(tmp_path, write, body) == "ab"


def test_a_return_inside_a_loop_leaves_the_function(tmp_path: Path, write: WriteFn) -> None:
    body = (
        "const first = (xs) => { for (const x of xs) { while (true) { if (x > 1) return x; break } } return -1 }\n"
        "const out = `${first([1, 5, 9])} ${first([])}`"
    )
    assert text(tmp_path, write, body) == "5 -1"


def test_loops_at_module_level_build_a_table_as_the_tic_tac_toe_board_does(tmp_path: Path, write: WriteFn) -> None:
    # Plaited's bp-coordination board (tic-tac-toe-board.tsx:28): a module-level for...of that
    # fills an object with runtime-only b-threads.
    body = (
        "import { bSync, bThread } from 'plaited'\n"
        "const squares = [0, 1, 2]\n"
        "const taken = {}\n"
        "for (const square of squares) {\n"
        "  taken[`(${square}) taken`] = bThread([bSync({ waitFor: ({ detail }) => square === detail?.square })], true)\n"
        "}\n"
        "const out = Object.keys(taken).join(' ')"
    )
    assert text(tmp_path, write, body) == "(0) taken (1) taken (2) taken"


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ("const f = () => { break }\nconst out = f()", "'break' outside a loop", 2),
        ("const f = () => { continue }\nconst out = f()", "'continue' outside a loop", 2),
        ("const f = () => { for (;;) { break nowhere } }\nconst out = f()", "'break nowhere' outside a loop", 2),
        ("for (const i = 0; i < 2; i++) {}\nconst out = 1", "assignment to constant variable 'i'", 2),
        ("for (const x of [1, 2]) { x = 3 }\nconst out = 1", "assignment to constant variable 'x'", 2),
        ("for (const x of 5) {}\nconst out = 1", "number is not iterable", 2),
        ("for (const x of { a: 1 }) {}\nconst out = 1", "an object is not iterable", 2),
    ],
)
def test_misplaced_jumps_and_bad_loops_are_located_errors(
    tmp_path: Path, write: WriteFn, body: str, message: str, line: int
) -> None:
    with pytest.raises(StoryRenderError) as info:
        render(tmp_path, write, body)
    assert message in info.value.message
    assert info.value.location.file == FILE and info.value.location.line == line


@pytest.mark.parametrize(
    "loop",
    [
        "while (true) {}",
        "for (;;) { continue }",
        "do { } while (1)",
        "let i = 0\nfor (const x of [1]) { while (true) { i++ } }",
        "outer: for (;;) { for (;;) { continue outer } }",
    ],
)
def test_an_endless_loop_spends_the_step_budget_at_the_loop(tmp_path: Path, write: WriteFn, loop: str) -> None:
    with pytest.raises(StoryRenderError, match=r"^l/l\.stories\.tsx:\d+:\d+: evaluation step budget exceeded"):
        render(tmp_path, write, loop + "\nconst out = 1", max_steps=5_000)


# ---------------------------------------------------------------------------------- assignment


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("let a = 1\nlet b = a++\nlet c = ++a\nconst out = `${a} ${b} ${c}`", "3 1 3"),
        ("let a = 5\nconst b = a--\nconst out = `${a} ${b} ${--a}`", "4 5 3"),
        ("let out = 'a'\nout += 'b'\nout += 1", "ab1"),
        ("let n = 10\nn -= 3\nn *= 2\nn /= 7\nn %= 3\nconst out = n", "2"),
        (
            "let a = null\na ??= 'set'\nlet b = 'keep'\nb ||= 'no'\nlet c = 1\nc &&= 'and'\nconst out = `${a} ${b} ${c}`",
            "set keep and",
        ),
        ("let a = 1\nlet b = 2;\n[a, b] = [b, a]\nconst out = `${a}${b}`", "21"),
        ("let x\nlet y\n({ x, y = 'd' } = { x: 'c' })\nconst out = x + y", "cd"),
        ("const o = { n: 1 }\no.n += 1\no['m'] = o.n * 10\no.k ??= 'k'\nconst out = `${o.n} ${o.m} ${o.k}`", "2 20 k"),
        ("const xs = []\nxs[2] = 'c'\nconst out = `${xs.length} ${xs[0] === undefined} ${xs[2]}`", "3 true c"),
        ("const xs = [1, 2, 3]\nxs.length = 1\nconst out = xs.join()", "1"),
        ("const acc = {}\n;[['a', 1], ['b', 2]].forEach?.((p) => p)\nconst out = Object.keys(acc).length", "0"),
        ("let i = 0\nconst f = () => { i = i + 1; return i }\nf()\nf()\nconst out = i", "2"),
        ("let a, b\na = b = 4\nconst out = a + b", "8"),
        ("let i = 0, j = 10\nfor (; i < j; i++, j--) {}\nconst out = `${i} ${j}`", "5 5"),
    ],
)
def test_assignments_update_bindings_and_members(tmp_path: Path, write: WriteFn, body: str, expected: str) -> None:
    assert text(tmp_path, write, body) == expected


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("const a = 1\na = 2\nconst out = a", "assignment to constant variable 'a'"),
        ("import { bThread } from 'plaited'\nbThread = 1\nconst out = 1", "assignment to constant variable 'bThread'"),
        ("nope = 1\nconst out = 1", "nope is not defined"),
        ("Math = 1\nconst out = 1", "cannot assign to the global 'Math'"),
        ("Math.max = 1\nconst out = 1", "read-only host object"),
        ("const u = undefined\nu.x = 1\nconst out = 1", "cannot set properties of undefined (setting 'x')"),
        ("const s = 'str'\ns.x = 1\nconst out = 1", "cannot set property 'x' on string"),
        ("const xs = []\nxs[100000] = 1\nconst out = 1", "array too long"),
    ],
)
def test_refused_assignments_are_located_errors(tmp_path: Path, write: WriteFn, body: str, message: str) -> None:
    with pytest.raises(StoryRenderError) as info:
        render(tmp_path, write, body)
    assert message in info.value.message
    assert info.value.location.file == FILE


def test_an_assignment_in_one_render_never_reaches_the_next(tmp_path: Path, write: WriteFn) -> None:
    # Module state is per render: a counter bumped at module level starts afresh every time.
    body = "let n = 0\nn++\nconst out = n"
    assert [text(tmp_path, write, body) for _ in range(2)] == ["1", "1"]


# ------------------------------------------------------------------------- classes and `new`


def test_an_imported_module_with_a_class_and_a_weak_map_loads(tmp_path: Path, write: WriteFn) -> None:
    # Plaited's delegated-listener.stories.tsx imports '../delegated-listener.ts', which exports a
    # class and `new WeakMap()`; the template does not use them, the play does.
    write(
        "src/ui/delegated-listener.ts",
        "export class DelegatedListener<T extends Event = Event> {\n"
        "  callback: (ev: T) => void\n"
        "  constructor(callback: (ev: T) => void) { this.callback = callback }\n"
        "  handleEvent(evt: T) { void this.callback(evt) }\n"
        "}\n"
        "export const delegates = new WeakMap<EventTarget>()\n",
    )
    write(
        "src/ui/tests/d.stories.tsx",
        HEAD + "import { DelegatedListener, delegates } from '../delegated-listener.ts'\n"
        "const listener = new DelegatedListener(() => {})\n"
        "export const s = story({ intent: 'x', template: () => <button type='button'>click me</button>,\n"
        "  play: async () => { delegates.set(null, listener) } })\n",
    )
    html = render_story(Path("src/ui/tests/d.stories.tsx"), "s", tmp_path).html
    assert html == '<button type="button">click me</button>'


def test_class_instances_are_runtime_only_when_rendered(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryRenderError, match="runtime-only value"):
        render(tmp_path, write, "class Box {}\nconst out = new Box()")


def test_new_of_an_unmodelled_constructor_is_a_located_error(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryRenderError, match=r"^l/l\.stories\.tsx:3:13: unsupported constructor: new Point"):
        render(tmp_path, write, "const Point = (x) => ({ x })\nconst out = new Point(1)")
    with pytest.raises(StoryRenderError, match=r"^l/l\.stories\.tsx:2:17: Map is not defined"):
        render(tmp_path, write, "const out = new Map()")


def test_an_unresolved_relative_import_names_the_specifier(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryImportError, match=r"^l/l\.stories\.tsx:2:\d+: cannot resolve import '\.\./gone\.ts'"):
        render(tmp_path, write, "import { x } from '../gone.ts'\nconst out = x")


def test_a_js_specifier_resolves_to_the_typescript_module(tmp_path: Path, write: WriteFn) -> None:
    write("l/util.ts", "export const answer = 42\n")
    assert text(tmp_path, write, "import { answer } from './util.js'\nconst out = answer") == "42"


# ----------------------------------------------------------------- Array.from, story.only/skip


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("Array.from(Array(4).keys()).join('')", "0123"),
        ("Array.from({ length: 3 }, (_, i) => i * 2).join()", "0,2,4"),
        ("Array.from('ab').join('-')", "a-b"),
        ("Array(2, 3).join()", "2,3"),
        ("Array.of(7).concat([8]).join()", "7,8"),
        ("['a', 'b'].entries().map(([i, v]) => i + v).join()", "0a,1b"),
    ],
)
def test_array_constructors(tmp_path: Path, write: WriteFn, expr: str, expected: str) -> None:
    assert text(tmp_path, write, f"const out = {expr}") == expected


def test_story_only_and_skip_are_discovered_and_render(tmp_path: Path, write: WriteFn) -> None:
    write(
        FILE,
        HEAD + "export const a = story.only({ intent: 'only one', template: () => <p>a</p> })\n"
        "export const b = story.skip({ intent: 'skipped one', template: () => <p>b</p> })\n"
        "export const c = story({ intent: 'plain one', template: () => <p>c</p> })\n",
    )
    discovery = discover_stories([tmp_path], root=tmp_path)
    assert [r.export for r in discovery.stories] == ["a", "b", "c"]
    assert [render_story(Path(FILE), e, tmp_path).html for e in "abc"] == ["<p>a</p>", "<p>b</p>", "<p>c</p>"]


# ------------------------------------------------------------------------------ switch, throw


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", "one-or-two;"), ("2", "one-or-two;"), ("3", "three;other;"), ("'1'", "other;"), ("9", "other;")],
)
def test_switch_matches_strictly_and_falls_through_until_break(
    tmp_path: Path, write: WriteFn, value: str, expected: str
) -> None:
    body = (
        f"let out = ''\nswitch ({value}) {{\n  case 1:\n  case 2: out += 'one-or-two;'; break\n"
        "  case 3: out += 'three;'\n  default: out += 'other;'\n}"
    )
    assert text(tmp_path, write, body) == expected


def test_continue_inside_a_switch_continues_the_enclosing_loop(tmp_path: Path, write: WriteFn) -> None:
    body = (
        "let out = ''\nfor (const x of [1, 2, 3]) {\n  switch (x) { case 2: continue; default: break }\n  out += x\n}"
    )
    assert text(tmp_path, write, body) == "13"


@pytest.mark.parametrize(
    ("statement", "message"),
    [("throw new Error('bad square')", "uncaught Error: bad square"), ("throw 'plain'", "uncaught exception: plain")],
)
def test_throw_ends_the_render_with_its_message(tmp_path: Path, write: WriteFn, statement: str, message: str) -> None:
    with pytest.raises(StoryRenderError, match=rf"^l/l\.stories\.tsx:3:3: {message}$"):
        render(tmp_path, write, f"const f = () => {{\n  {statement}\n}}\nconst out = f()")


def test_one_space_between_two_expressions_stays_one_space(tmp_path: Path, write: WriteFn) -> None:
    # Babel's JSX text rule: `{a} {b}` is "a b" (it was written "a  b").
    write(FILE, HEAD + "export const s = story({ intent: 'x', template: () => <p>{'a'} {'b'}{' '}c</p> })\n")
    assert render_story(Path(FILE), "s", tmp_path).html == "<p>a b c</p>"
