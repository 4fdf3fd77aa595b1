from __future__ import annotations

import pytest

from worldagent.storytest.patterns import (
    check_patterns,
    find_hardcoded_colors,
    find_inline_styles,
    scan_colors,
)


def rules(html: str, sources: dict[str, str] | None = None) -> list[str]:
    return [v.rule for v in check_patterns(html, sources or {})]


# ---- inline-style -----------------------------------------------------------------------------


def test_inline_style_in_html() -> None:
    found = check_patterns('<p>ok</p><p style="margin: 0">x</p>', {})
    assert [(v.rule, v.target) for v in found] == [("inline-style", "p:nth-of-type(2)")]
    assert "createStyles" in found[0].message
    assert rules('<button type="button" class="button_ab12">Save</button>') == []


def test_inline_style_with_colour_is_also_a_hardcoded_colour() -> None:
    assert rules('<p style="color: #ff0000">x</p>') == ["inline-style", "hardcoded-color"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("const A = () => <div style={{ color: 'red' }}>x</div>", ["style={{ color: 'red' }}"]),
        ('const A = () => <p className="x" style="margin:0">x</p>', ['style="margin:0"']),
        ("const A = ({s}) => <p\n  id='a'\n  style={s}\n>x</p>", ["style={s}"]),
        ('<div style="a:b"></div>', ['style="a:b"']),
        ("const style = { color: 'red' }", []),
        ("el.style = 'x'", []),
        ("const A = () => <p>Pick a style = bold</p>", []),
        ("export const styles = createStyles({ a: { display: 'flex' } })", []),
        ("const A = () => <div {...styles.box}>x</div>", []),
    ],
)
def test_find_inline_styles(source: str, expected: list[str]) -> None:
    assert find_inline_styles(source) == expected


# ---- hardcoded-color --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "path", "expected"),
    [
        # hex in every length, rgb/hsl functions, named colours in a styles file
        (
            "createStyles({a: {color: '#abc', b: '#abcd', c: '#a1b2c3', d: '#a1b2c3d4'}})",
            "x.css.ts",
            ["#abc", "#abcd", "#a1b2c3", "#a1b2c3d4"],
        ),
        (
            "createStyles({a: {color: 'rgb(0, 0, 0)', bg: 'rgba(0,0,0,.5)', c: 'hsl(10 20% 30%)', d: 'hsla(1,2%,3%,.4)'}})",
            "x.css.ts",
            ["rgb(0, 0, 0)", "rgba(0,0,0,.5)", "hsl(10 20% 30%)", "hsla(1,2%,3%,.4)"],
        ),
        ("createStyles({a: {border: '1px solid Tomato', outline: `2px dashed ${w}`}})", "x.css.ts", ["Tomato"]),
        # allowed values
        (
            "createStyles({a: {color: 'currentColor', bg: 'transparent', c: 'inherit', d: 'var(--button-primary)'}})",
            "x.css.ts",
            [],
        ),
        ("createStyles({a: {color: buttonTokens.primary, bg: 'rgb(var(--rgb))'}})", "x.css.ts", []),
        # token files are exempt
        ("createTokens('b', { primary: { $value: '#1d4ed8' }, fg: { $value: 'white' } })", "b.tokens.ts", []),
        # templates: named colours only as values of colour properties/attributes
        ("story({ intent: 'Create a red button', template: () => <p>Green means go</p> })", "x.stories.tsx", []),
        ("const A = () => <svg fill=\"white\" stroke='#000'/>", "x.stories.tsx", ["white", "#000"]),
        ("const A = () => <p style={{ backgroundColor: 'navy' }}>x</p>", "x.stories.tsx", ["navy"]),
        ("const A = () => <a href=\"#add\" className='text-red-500'>x</a>", "x.stories.tsx", []),
        # comments do not count; JSX text apostrophes do not open strings
        ("// color: '#fff'\n/* '#000' */ const x = 1", "x.stories.tsx", []),
        ("const A = () => <p>Don't use it</p>\nconst c = { color: '#123456' }", "x.stories.tsx", ["#123456"]),
        # template literal parts, including nested expressions
        ("const b = `1px solid ${on ? '#fff' : 'rgb(1,2,3)'}`", "x.stories.tsx", ["#fff", "rgb(1,2,3)"]),
        # plain CSS
        (".a { color: red; background: #fff } /* blue */", "x.css", ["red", "#fff"]),
    ],
)
def test_find_hardcoded_colors(source: str, path: str, expected: list[str]) -> None:
    assert find_hardcoded_colors(source, path) == expected


def test_find_hardcoded_colors_without_path_treats_source_as_template() -> None:
    assert find_hardcoded_colors("const a = { color: 'red', label: 'red' }") == ["red"]


def test_scan_colors_reports_lines() -> None:
    src = "export const styles = createStyles({\n  a: {\n    color: '#fff',\n  },\n})\n"
    assert scan_colors(src, "a.css.ts") == [("#fff", 3)]


def test_hardcoded_color_in_sources() -> None:
    sources = {
        "button/button.css.ts": "createStyles({ a: { color: '#ff0000' } })",
        "button/button.tokens.ts": "createTokens('b', { a: { $value: '#ff0000' } })",
    }
    found = check_patterns("<button>x</button>", sources)
    assert [(v.rule, v.target) for v in found] == [("hardcoded-color", "button/button.css.ts:1")]
    assert "#ff0000" in found[0].message and "tokens" in found[0].message


def test_repository_button_story_sources_are_clean() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "stories" / "button"
    if not root.is_dir():
        pytest.skip("data/stories/button not present")
    sources = {p.name: p.read_text() for p in root.iterdir() if p.suffix in (".ts", ".tsx")}
    assert check_patterns('<button type="button">x</button>', sources) == []


# ---- div-soup ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "native"),
    [
        ('<div role="button" tabindex="0">Save</div>', "<button>"),
        ('<span role="link" tabindex="0">Docs</span>', "<a href>"),
        ('<div role="checkbox" aria-checked="false" tabindex="0">A</div>', "checkbox"),
        ('<div p-trigger="click:save">Save</div>', "<button>"),
        ('<span onclick="go()">Go</span>', "<button>"),
    ],
)
def test_div_soup_interactive(html: str, native: str) -> None:
    found = [v for v in check_patterns("<main>" + html + "</main>", {}) if v.rule == "div-soup"]
    assert len(found) == 1 and native in found[0].message


def test_div_soup_no_semantic_elements() -> None:
    (v,) = check_patterns('<div class="card"><div><span>Title</span></div><div>Body</div></div>', {})
    assert v.rule == "div-soup" and "semantic" in v.message
    assert rules('<div class="card"><h2>Title</h2><div>Body</div></div>') == []
    assert rules('<div role="status">Saved</div>') == []  # a role is semantics
    assert rules("") == []  # nothing rendered: not a div-soup question


def test_semantic_native_elements_pass() -> None:
    assert rules('<ul><li><button type="button" p-trigger="click:pick">A</button></li></ul>') == []


def test_a_lone_span_is_not_div_soup_but_a_structure_of_boxes_is() -> None:
    assert rules('<span class="badge">Draft</span>') == []
    assert rules("<div><span>Name</span><span>Value</span></div>") == ["div-soup"]
