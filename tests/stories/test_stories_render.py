from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from story_helpers import PRELUDE, WriteFn

from worldagent.stories.errors import StoryImportError, StoryRenderError, StorySyntaxError
from worldagent.stories.render import UNDEFINED, JsFunction, RenderedStory, load_module, render_story

STORY = "c/c.stories.tsx"


def render(tmp_path: Path, write: WriteFn, body: str, export: str = "s", **kw: object) -> RenderedStory:
    write(STORY, PRELUDE + body)
    return render_story(Path(STORY), export, tmp_path, **kw)  # type: ignore[arg-type]


def html_of(tmp_path: Path, write: WriteFn, template: str, args: str = "{}", prelude: str = "") -> str:
    body = f"{prelude}\nexport const s = story({{ intent: 'x', template: {template}, args: {args} }})\n"
    return render(tmp_path, write, body).html


def test_destructured_defaults_and_rest_spread(tmp_path: Path, write: WriteFn) -> None:
    prelude = """
const Btn: FT<{ label?: string }> = ({ label = 'Go', type = 'button', ...rest }) => (
  <button type={type} {...rest}>{label}</button>
)"""
    html = html_of(tmp_path, write, "Btn", "{ id: 'b1', 'aria-label': 'Go now', type: undefined }", prelude)
    assert html == '<button type="button" id="b1" aria-label="Go now">Go</button>'


def test_join_styles_skips_false_entries(tmp_path: Path, write: WriteFn) -> None:
    prelude = """
const styles = createStyles({ a: { color: 'red' }, b: { paddingTop: 4 } })
const T = ({ on = false }) => <div id='d' {...joinStyles(styles.a, on && styles.b, undefined, false, null)} />"""
    off = render(tmp_path, write, prelude + "\nexport const s = story({ intent: 'x', template: T })\n")
    assert re.fullmatch(r'<div id="d" class="a_[0-9a-f]{8}"></div>', off.html)
    assert off.stylesheets == [re.search(r"a_[0-9a-f]{8}", off.html).group(0).join([".", "{color:red;}"])]
    on = render(
        tmp_path, write, prelude + "\nexport const s = story({ intent: 'x', template: T, args: { on: true } })\n"
    )
    assert re.fullmatch(r'<div id="d" class="a_[0-9a-f]{8} b_[0-9a-f]{8}"></div>', on.html)
    assert any("{padding-top:4;}" in s for s in on.stylesheets)


def test_boolean_and_aria_attributes(tmp_path: Path, write: WriteFn) -> None:
    template = """() => <input disabled={true} required={false} aria-checked={false} aria-hidden={true}
      data-on={true} data-off={false} hidden={null} title={undefined} checked tabIndex={-1} maxLength={10} />"""
    html = html_of(tmp_path, write, template)
    assert (
        html
        == '<input disabled aria-checked="false" aria-hidden="true" data-on="true" checked tabindex="-1" maxLength="10">'
    )


def test_children_nesting(tmp_path: Path, write: WriteFn) -> None:
    prelude = """
const Card: FT<{ title: string }> = ({ title, children }) => (
  <section>
    <h2>{title}</h2>
    {children}
  </section>
)
const Page = () => (
  <Card title='Outer'>
    <Card title='Inner'><p>Body text</p></Card>
    <span>tail</span>
  </Card>
)"""
    html = html_of(tmp_path, write, "Page", prelude=prelude)
    assert html == (
        "<section><h2>Outer</h2><section><h2>Inner</h2><p>Body text</p></section><span>tail</span></section>"
    )


def test_children_arg_is_passed_to_template(tmp_path: Path, write: WriteFn) -> None:
    prelude = "const B: FT = ({ children }) => <b>{children}</b>"
    assert html_of(tmp_path, write, "B", "{ children: 'Save & close' }", prelude) == "<b>Save &amp; close</b>"


def test_map_with_template_literal_ids(tmp_path: Path, write: WriteFn) -> None:
    prelude = """
const List = ({ items, prefix = 'item' }) => (
  <ul>{items.map((item, i) => <li id={`${prefix}-${i}-${item.toLowerCase()}`}>{item}</li>)}</ul>
)"""
    html = html_of(tmp_path, write, "List", "{ items: ['Apple', 'Pear'] }", prelude)
    assert html == '<ul><li id="item-0-apple">Apple</li><li id="item-1-pear">Pear</li></ul>'


def test_conditional_and_ternary(tmp_path: Path, write: WriteFn) -> None:
    prelude = """
const T = ({ show, count, mode }) => (
  <div>
    {show && <em>shown</em>}
    {!show && <em>hidden</em>}
    {count && <b>never</b>}
    {mode === 'a' ? <i>A</i> : mode === 'b' ? <i>B</i> : null}
    {count ?? 'nullish'}{count || 'falsy'}
  </div>
)"""
    html = html_of(tmp_path, write, "T", "{ show: true, count: 0, mode: 'b' }", prelude)
    assert html == "<div><em>shown</em>0<i>B</i>0falsy</div>"
    html = html_of(tmp_path, write, "T", "{ show: false, mode: 'z' }", prelude)
    assert html == "<div><em>hidden</em>nullishfalsy</div>"


def test_fragments(tmp_path: Path, write: WriteFn) -> None:
    prelude = "const Pair = ({ a, b }) => <><dt>{a}</dt><dd>{b}</dd></>"
    html = html_of(tmp_path, write, "() => <dl><Pair a='k' b='v' /><></></dl>", prelude=prelude)
    assert html == "<dl><dt>k</dt><dd>v</dd></dl>"


def test_escaping_text_and_attributes(tmp_path: Path, write: WriteFn) -> None:
    template = """() => <p title={'<&">'} data-raw="a &amp; b">{'<a & "b">'} 5 &lt; 6 {"&amp;"}</p>"""
    html = html_of(tmp_path, write, template)
    assert html == '<p title="&lt;&amp;&quot;&gt;" data-raw="a &amp; b">&lt;a &amp; "b"&gt; 5 &lt; 6 &amp;amp;</p>'


def test_void_elements(tmp_path: Path, write: WriteFn) -> None:
    html = html_of(
        tmp_path,
        write,
        "() => <div><img src='a.png' alt='' /><br /><hr /><input type='text' /><meta charset='utf-8' /><link rel='x' /></div>",
    )
    assert html == '<div><img src="a.png" alt=""><br><hr><input type="text"><meta charset="utf-8"><link rel="x"></div>'


def test_jsx_whitespace_rules(tmp_path: Path, write: WriteFn) -> None:
    template = """() => (
  <p>
    Hello,
      world <b>bold</b> and {'x'}
    end
  </p>
)"""
    assert html_of(tmp_path, write, template) == "<p>Hello, world <b>bold</b> and xend</p>"


def test_attribute_mapping_class_merging_and_order(tmp_path: Path, write: WriteFn) -> None:
    prelude = "const styles = createStyles({ box: { display: 'flex' } })"
    template = "() => <label htmlFor='f' className='a' {...styles.box} tabIndex={0} class='z'>x</label>"
    html = html_of(tmp_path, write, template, prelude=prelude)
    assert re.fullmatch(r'<label for="f" class="a box_[0-9a-f]{8} z" tabindex="0">x</label>', html)


def test_p_trigger_style_object_and_handlers(tmp_path: Path, write: WriteFn) -> None:
    template = """() => <div p-trigger={{ click: 'toggle', keydown: 'move' }} p-target='panel'
      style={{ backgroundColor: 'red', fontSize: '2px', margin: undefined }}>x</div>"""
    html = html_of(tmp_path, write, template)
    assert (
        html
        == '<div p-trigger="click:toggle keydown:move" p-target="panel" style="background-color: red; font-size: 2px;">x</div>'
    )


def test_create_tokens_refs_render_vars_into_stylesheets(tmp_path: Path, write: WriteFn) -> None:
    write(
        "c/c.tokens.ts",
        "import { createTokens } from 'plaited'\nexport const brandTokens = createTokens('brand', { primaryText: { $value: '#ffffff' } })\n",
    )
    write(
        "c/c.css.ts",
        """import { createStyles } from 'plaited'
import { brandTokens } from './c.tokens'
export const styles = createStyles({
  cta: { color: brandTokens.primaryText, border: `1px solid ${brandTokens.primaryText}`, backgroundColor: { $default: 'transparent', ':hover': brandTokens.primaryText } },
})
""",
    )
    body = "import { styles } from './c.css.ts'\nexport const s = story({ intent: 'x', template: () => <a href='#' {...styles.cta}>Go</a> })\n"
    r = render(tmp_path, write, body)
    cls = re.search(r'class="(cta_[0-9a-f]{8})"', r.html).group(1)
    assert r.stylesheets == [
        f".{cls}{{color:var(--brand-primary-text);border:1px solid var(--brand-primary-text);background-color:transparent;}}"
        f".{cls}:hover{{background-color:var(--brand-primary-text);}}",
        ":root{--brand-primary-text:#ffffff;}",
    ]


def test_render_is_deterministic(tmp_path: Path, write: WriteFn) -> None:
    prelude = "const styles = createStyles({ a: { color: 'red' }, b: { color: 'blue' } })\nconst T = ({ n }) => <ul {...styles.a}>{[1, 2, 3].map((i) => <li {...styles.b}>{i * n}</li>)}</ul>"
    first = render(
        tmp_path, write, prelude + "\nexport const s = story({ intent: 'x', template: T, args: { n: 1.5 } })\n"
    )
    second = render_story(Path(STORY), "s", tmp_path)
    assert first == second
    assert "<li" in first.html and ">4.5</li>" in first.html


def test_js_values_and_operators(tmp_path: Path, write: WriteFn) -> None:
    template = """() => {
  const o = { a: { b: 2 }, list: [1, 2, 3] }
  const missing = undefined
  const parts = [
    1.0, 0.1 + 0.2, 'n' + 1, 1 + 2 + 'x', 7 % 3, -7 % 3, 1 / 0, 10 / 4,
    1 === 1.0, 1 === '1', 1 == '1', null == undefined, null === undefined,
    missing?.deep.chain, o.a?.b, o['list'].length, o.list.includes(2), o.list.filter((x) => x > 1).join('-'),
    Math.round(2.5), Math.max(1, 9, 3), String(null), Number('42'), Boolean(''), typeof missing,
    0 || 'or', '' ?? 'nn', [1, [2, 3]].join(), `${[1, 2]}`,
  ]
  return <p>{parts.map((p) => String(p)).join('|')}</p>
}"""
    html = html_of(tmp_path, write, template)
    expected = [
        "1",
        "0.30000000000000004",
        "n1",
        "3x",
        "1",
        "-1",
        "Infinity",
        "2.5",
        "true",
        "false",
        "true",
        "true",
        "false",
        "undefined",
        "2",
        "3",
        "true",
        "2-3",
        "3",
        "9",
        "null",
        "42",
        "false",
        "undefined",
        "or",
        "",
        "1,2,3",
        "1,2",
    ]
    assert html == "<p>" + "|".join(expected) + "</p>"


def test_block_bodies_if_and_function_args(tmp_path: Path, write: WriteFn) -> None:
    prelude = """
const label = (n: number): string => {
  if (n === 0) return 'none'
  else if (n === 1) {
    return 'one'
  }
  const many = `${n} items`
  return many
}
const T = ({ counts = [0, 1, 5] }: { counts?: number[] }) => <p>{counts.map((c) => label(c) as string).join(', ')}</p>"""
    assert html_of(tmp_path, write, "T", prelude=prelude) == "<p>none, one, 5 items</p>"


def test_args_absent_means_empty_props(tmp_path: Path, write: WriteFn) -> None:
    r = render(
        tmp_path,
        write,
        "const T = (props) => <p>{Object.keys(props).length}</p>\nexport const s = story({ description: 'desc', template: T })\n",
    )
    assert r.html == "<p>0</p>"
    assert r.intent == "desc"


def test_component_recursion_is_bounded(tmp_path: Path, write: WriteFn) -> None:
    start = time.perf_counter()
    with pytest.raises(StoryRenderError, match="component recursion") as info:
        render(
            tmp_path,
            write,
            "const R: FT = () => <div><span><R /></span></div>\nexport const s = story({ intent: 'x', template: R })\n",
        )
    assert time.perf_counter() - start < 2
    assert str(info.value).startswith(f"{STORY}:3:")


def test_function_recursion_and_depth_parameter(tmp_path: Path, write: WriteFn) -> None:
    body = "const f = (n) => f(n + 1)\nconst T = () => <p>{f(0)}</p>\nexport const s = story({ intent: 'x', template: T })\n"
    with pytest.raises(StoryRenderError, match="recursion depth limit exceeded \\(8 frames\\)"):
        render(tmp_path, write, body, max_depth=8)


def test_step_budget_stops_runaway_work(tmp_path: Path, write: WriteFn) -> None:
    body = (
        "const xs = [" + ", ".join(str(i) for i in range(100)) + "]\n"
        "const T = () => <p>{xs.map(() => xs.map(() => xs.map(() => 1)))}</p>\n"
        "export const s = story({ intent: 'x', template: T })\n"
    )
    start = time.perf_counter()
    with pytest.raises(StoryRenderError, match="step budget"):
        render(tmp_path, write, body)
    assert time.perf_counter() - start < 5
    with pytest.raises(StoryRenderError, match="step budget exceeded \\(50 "):
        render_story(Path(STORY), "s", tmp_path, max_steps=50)


def test_exponential_string_growth_is_refused(tmp_path: Path, write: WriteFn) -> None:
    body = "const g = (s, n) => n ? g(s + s, n - 1) : s\nexport const s = story({ intent: 'x', template: () => <p>{g('ab', 60)}</p> })\n"
    with pytest.raises(StoryRenderError, match="string too long"):
        render(tmp_path, write, body)


def test_deeply_nested_expression_is_an_error_not_a_crash(tmp_path: Path, write: WriteFn) -> None:
    nested = "[" * 20000 + "]" * 20000
    with pytest.raises((StoryRenderError, StorySyntaxError)):
        render(
            tmp_path,
            write,
            f"const deep = {nested}\nexport const s = story({{ intent: 'x', template: () => <p /> }})\n",
        )


def test_unknown_component_names_tag_and_location(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryRenderError) as info:
        render(
            tmp_path, write, "export const s = story({ intent: 'x', template: () => <div>\n  <Missing />\n</div> })\n"
        )
    assert "<Missing>" in info.value.message
    assert (info.value.location.file, info.value.location.line, info.value.location.col) == (STORY, 4, 4)
    assert str(info.value).startswith(f"{STORY}:4:4: ")


def test_unsupported_syntax_names_node_type(tmp_path: Path, write: WriteFn) -> None:
    body = "const T = () => {\n  try {} finally {}\n  return <p />\n}\nexport const s = story({ intent: 'x', template: T })\n"
    with pytest.raises(StoryRenderError, match=r"^c/c\.stories\.tsx:4:3: unsupported syntax: try_statement$"):
        render(tmp_path, write, body)


def test_undefined_variable_and_null_member(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryRenderError, match="nope is not defined"):
        render(tmp_path, write, "export const s = story({ intent: 'x', template: () => <p>{nope}</p> })\n")
    with pytest.raises(StoryRenderError, match="cannot read properties of null"):
        render(
            tmp_path, write, "const o = null\nexport const s = story({ intent: 'x', template: () => <p>{o.x}</p> })\n"
        )


def test_missing_export_and_non_story_export(tmp_path: Path, write: WriteFn) -> None:
    write(STORY, PRELUDE + "export const notStory = 1\n")
    with pytest.raises(StoryRenderError, match="no export named 'absent'"):
        render_story(Path(STORY), "absent", tmp_path)
    with pytest.raises(StoryRenderError, match="not a story"):
        render_story(Path(STORY), "notStory", tmp_path)


def test_overlay_replaces_disk_file(tmp_path: Path, write: WriteFn) -> None:
    write(
        "c/c.css.ts",
        "import { createStyles } from 'plaited'\nexport const styles = createStyles({ a: { color: 'red' } })\n",
    )
    body = "import { styles } from './c.css.ts'\nexport const s = story({ intent: 'x', template: () => <p {...styles.a}>Disk</p> })\n"
    render(tmp_path, write, body)
    overlay = {
        "c/c.stories.tsx": PRELUDE + "import { styles } from './c.css.ts'\nimport { extra } from './extra.css'\n"
        "export const s = story({ intent: 'o', template: () => <p {...joinStyles(styles.a, extra.b)}>Overlay</p> })\n",
        "./c/c.css.ts": "import { createStyles } from 'plaited'\nexport const styles = createStyles({ a: { color: 'green' } })\n",
        "c/extra.css.ts": "import { createStyles } from 'plaited'\nexport const extra = createStyles({ b: { margin: 0 } })\n",
    }
    r = render_story(Path(STORY), "s", tmp_path, overlay=overlay)
    assert ">Overlay</p>" in r.html and r.intent == "o"
    assert any("color:green" in s for s in r.stylesheets) and not any("color:red" in s for s in r.stylesheets)
    assert any("margin:0" in s for s in r.stylesheets)
    assert "Disk" in (tmp_path / STORY).read_text()  # disk untouched
    assert ">Disk</p>" in render_story(tmp_path / STORY, "s", tmp_path).html


def test_import_cycle_is_an_error(tmp_path: Path, write: WriteFn) -> None:
    write("c/a.ts", "import { b } from './b.ts'\nexport const a = 1\n")
    write("c/b.ts", "import { a } from './a'\nexport const b = 2\n")
    with pytest.raises(StoryImportError, match=r"import cycle: c/a\.ts -> c/b\.ts -> c/a\.ts"):
        render(
            tmp_path,
            write,
            "import { a } from './a.ts'\nexport const s = story({ intent: 'x', template: () => <p>{a}</p> })\n",
        )


def test_bad_imports(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryImportError, match="cannot resolve import './nope.css.ts'"):
        render(
            tmp_path,
            write,
            "import { styles } from './nope.css.ts'\nexport const s = story({ intent: 'x', template: () => <p /> })\n",
        )
    write("c/x.ts", "export const y = 1\n")
    with pytest.raises(StoryImportError, match="has no export 'z'"):
        render(
            tmp_path, write, "import { z } from './x'\nexport const s = story({ intent: 'x', template: () => <p /> })\n"
        )
    with pytest.raises(StoryImportError, match="unsupported module 'react'"):
        render(
            tmp_path,
            write,
            "import React from 'react'\nexport const s = story({ intent: 'x', template: () => <p /> })\n",
        )


def test_syntax_error_in_story_is_reported(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StorySyntaxError, match=r"^c/c\.stories\.tsx:3:"):
        render(tmp_path, write, "export const s = story({ intent: 'x', template: () => <div> })\n")


def test_load_module_namespace(tmp_path: Path, write: WriteFn) -> None:
    write(
        "m/mod.tsx",
        "type P = { a: number }\ninterface Q { b: string }\nconst data = { list: [1, null], flag: true } satisfies object\nexport const f = (p: P) => p.a\nexport function g() { return data }\n",
    )
    module = load_module(Path("m/mod.tsx"), tmp_path)
    assert module.file == "m/mod.tsx"
    assert module.namespace["data"] == {"list": [1, None], "flag": True}
    assert isinstance(module.exports["f"], JsFunction) and isinstance(module.exports["g"], JsFunction)
    assert set(module.exports) == {"f", "g"}
    assert UNDEFINED is not None and not UNDEFINED


def test_rendered_story_reports_every_module_it_evaluated(tmp_path: Path) -> None:
    card = tmp_path / "card"
    card.mkdir()
    (card / "card.tokens.ts").write_text(
        "import { createTokens } from 'plaited'\nexport const t = createTokens('card', { ink: { $value: '#000000' } })\n"
    )
    (card / "card.css.ts").write_text(
        "import { createStyles } from 'plaited'\nimport { t } from './card.tokens.ts'\nexport const styles = createStyles({ box: { color: t.ink } })\n"
    )
    (card / "card.stories.tsx").write_text(
        "import { story } from 'plaited/testing'\nimport { styles } from './card.css.ts'\n"
        "export const plain = story({ intent: 'a card', template: () => <article {...styles.box}>Hi</article> })\n"
    )
    overlay = {
        "card/card.css.ts": "import { createStyles } from 'plaited'\nexport const styles = createStyles({ box: { padding: '1px' } })\n"
    }
    rendered = render_story(card / "card.stories.tsx", "plain", tmp_path, overlay=overlay)
    assert sorted(rendered.sources) == ["card/card.css.ts", "card/card.stories.tsx"]
    assert rendered.sources["card/card.css.ts"] == overlay["card/card.css.ts"]
    assert sorted(render_story(card / "card.stories.tsx", "plain", tmp_path).sources) == [
        "card/card.css.ts",
        "card/card.stories.tsx",
        "card/card.tokens.ts",
    ]
