"""Plaited 7's API as the renderer sees it: modules, bElement SSR, styles, tokens, story shapes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from story_helpers import WriteFn

from worldagent.stories.errors import StoryImportError, StoryRenderError
from worldagent.stories.render import render_story

UI = (
    "import { story } from 'plaited/testing'\n"
    "import { bElement, createHostStyles, createKeyframes, createStyles, createTokens, joinStyles, type FT }"
    " from 'plaited/ui'\n"
)


def render(tmp_path: Path, write: WriteFn, body: str, export: str = "s", file: str = "a/a.stories.tsx") -> str:
    write(file, UI + body)
    return render_story(Path(file), export, tmp_path).html


def test_belement_renders_declarative_shadow_dom_with_styles_and_light_children(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
const styles = createStyles({ box: { padding: '4px' } })
const El = bElement({
  tag: 'my-box',
  hostStyles: createHostStyles({ display: 'block' }),
  shadowDom: <div {...styles.box}><slot></slot></div>,
})
export const s = story({ intent: 'x', template: () => <El id='b' hidden={false}>Hi <b>there</b></El> })
""",
    )
    match = re.fullmatch(
        r'<my-box id="b"><template shadowrootmode="open" shadowrootdelegatesfocus><style>:host\{display:block;\}'
        r'\.box_[0-9a-f]{8}\{padding:4px;\}</style><div class="box_[0-9a-f]{8}"><slot></slot></div></template>'
        r"Hi <b>there</b></my-box>",
        html,
    )
    assert match, html


def test_belement_options_mode_and_delegates_focus(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
const Closed = bElement({ tag: 'x-closed', mode: 'closed', delegatesFocus: false, shadowDom: <span>c</span> })
export const s = story({ intent: 'x', template: Closed })
""",
    )
    assert html == '<x-closed><template shadowrootmode="closed"><span>c</span></template></x-closed>'


def test_element_as_story_template_with_args_and_typed_story(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
const Toggle = bElement({ tag: 'x-toggle', formAssociated: true, observedAttributes: ['checked'], shadowDom: <input type='checkbox' aria-label='t' /> })
export const s = story<typeof Toggle>({ intent: 'x', template: Toggle, args: { checked: true, value: 'on' } })
""",
    )
    assert html.startswith('<x-toggle checked value="on"><template shadowrootmode="open"')


def test_element_members_and_nested_elements(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
const Inner = bElement({ tag: 'x-inner', shadowDom: <i>in</i> })
const Outer = bElement({ tag: 'x-outer', shadowDom: <section><Inner /></section> })
export const s = story({ intent: 'x', template: () => <p data-tag={Inner.tag}><Outer /></p> })
""",
    )
    assert html.startswith(
        '<p data-tag="x-inner"><x-outer><template shadowrootmode="open" shadowrootdelegatesfocus>'
        "<section><x-inner><template"
    )


def test_bad_element_tag_is_a_located_error(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryRenderError, match=r"a/a\.stories\.tsx:4:12: bElement: tag must be"):
        render(
            tmp_path,
            write,
            "\nconst El = bElement({ tag: 'nohyphen', shadowDom: <p /> })\nexport const s = story({ intent: 'x', template: El })\n",
        )


def test_runtime_only_names_are_accepted_and_not_executed(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
import { bSync, bThread, useSignal } from 'plaited'
import { isTypeOf } from 'plaited/utils'
import sinon from 'sinon'
const spy = sinon.spy()
const store = useSignal(0)
const rule = bThread([bSync({ waitFor: 'x' })], true)
const El = bElement({
  tag: 'x-live',
  shadowDom: <button type='button' p-trigger={{ click: 'go' }}>Go</button>,
  bProgram({ $, trigger }) {
    store.set(1)
    return { go() { trigger({ type: 'go' }); spy() } }
  },
})
export const s = story({ intent: 'x', template: El, async play({ assert }) { assert({ actual: isTypeOf(1, 'number') }) } })
""",
    )
    assert '<button type="button" p-trigger="click:go">Go</button>' in html


def test_rendering_a_runtime_only_value_is_a_located_error(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(
        StoryRenderError, match=r"a\.stories\.tsx:\d+:\d+: 'useSignal\(\)\.get\(\)' is a runtime-only value"
    ):
        render(
            tmp_path,
            write,
            "import { useSignal } from 'plaited'\nconst n = useSignal(0)\n"
            "export const s = story({ intent: 'x', template: () => <p>{n.get()}</p> })\n",
        )


def test_other_packages_stay_unsupported(tmp_path: Path, write: WriteFn) -> None:
    with pytest.raises(StoryImportError, match="unsupported module 'react'.*'plaited/ui'"):
        render(
            tmp_path,
            write,
            "import React from 'react'\nexport const s = story({ intent: 'x', template: () => <p /> })\n",
        )


def test_ui_subpath_imports(tmp_path: Path, write: WriteFn) -> None:
    write(
        "a/a.stories.tsx",
        "import { story } from 'plaited/testing.ts'\nimport { bElement } from 'plaited/ui/b-element.ts'\n"
        "const El = bElement({ tag: 'x-a', shadowDom: <p>a</p> })\nexport const s = story({ intent: 'x', template: El })\n",
    )
    assert render_story(Path("a/a.stories.tsx"), "s", tmp_path).html.startswith("<x-a>")


def test_tokens_keyframes_and_join_styles(tmp_path: Path, write: WriteFn) -> None:
    write(
        "a/a.tokens.ts",
        "import { createTokens } from 'plaited/ui'\n"
        "export const { brand } = createTokens('brand', { primaryInk: { $value: '#112233' }, space: { sm: { $value: '4px' } } })\n",
    )
    body = """import { brand } from './a.tokens.ts'
const { fadeIn } = createKeyframes('fadeIn', { from: { opacity: '0' }, to: { opacity: '1' } })
const styles = createStyles({ t: { color: brand.primaryInk, padding: brand.space.sm, animationName: fadeIn.id } })
export const s = story({ intent: 'x', template: () => <p data-v={brand.primaryInk()} {...joinStyles(styles.t, fadeIn)}>t</p> })
"""
    write("a/a.stories.tsx", UI + body)
    rendered = render_story(Path("a/a.stories.tsx"), "s", tmp_path)
    assert 'data-v="var(--brand-primary-ink)"' in rendered.html
    sheets = "".join(rendered.stylesheets)
    assert ":root{--brand-primary-ink:#112233;}" in sheets and ":root{--brand-space-sm:4px;}" in sheets
    assert re.search(r"@keyframes fadeIn[0-9a-f]{6}\{from\{opacity:0;\}to\{opacity:1;\}\}", sheets)
    assert re.search(r"animation-name:fadeIn[0-9a-f]{6};", sheets)


def test_host_styles_compound_selectors(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
const El = bElement({
  tag: 'x-h',
  hostStyles: createHostStyles({ '--fill': { $default: 'blue', $compoundSelectors: { ':state(checked)': 'red' } } }),
  shadowDom: <span>h</span>,
})
export const s = story({ intent: 'x', template: El })
""",
    )
    assert "<style>:host{--fill:blue;}:host(:state(checked)){--fill:red;}</style>" in html


def test_legacy_plaited_module_keeps_the_bundled_dialect(tmp_path: Path, write: WriteFn) -> None:
    write(
        "a/a.stories.tsx",
        "import { story } from 'plaited/testing'\nimport { createTokens, bElement } from 'plaited'\n"
        "const t = createTokens('k', { ink: { $value: 'red' } })\n"
        "const El = bElement({ tag: 'x-l', shadowDom: <p /> })\n"
        "export const s = story({ intent: 'x', template: () => <p data-c={t.ink}><El /></p> })\n",
    )
    html = render_story(Path("a/a.stories.tsx"), "s", tmp_path).html
    assert html.startswith('<p data-c="var(--k-ink)"><x-l>')


def test_function_templates_use_push_and_method_shorthand(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
const List: FT<{ items: string[] }> = ({ items }) => {
  const out: string[] = []
  out.push(...items, 'end')
  return <ul>{out.map((i) => <li>{i}</li>)}</ul>
}
const api = { label() { return 'x' } }
export const s = story({ intent: 'x', template: List, args: { items: ['a'] }, parameters: { api } })
""",
    )
    assert html == "<ul><li>a</li><li>end</li></ul>"


def test_other_stories_of_a_file_still_render_when_one_fails(tmp_path: Path, write: WriteFn) -> None:
    body = """
import { useSignal } from 'plaited'
const n = useSignal(0)
export const bad = story({ intent: 'x', template: () => <p>{n}</p> })
export const good = story({ intent: 'y', template: () => <p>ok</p> })
"""
    with pytest.raises(StoryRenderError, match="runtime-only"):
        render(tmp_path, write, body, "bad")
    assert render(tmp_path, write, body, "good") == "<p>ok</p>"


def test_ts_specifier_resolves_a_tsx_module_and_join_styles_takes_tokens(tmp_path: Path, write: WriteFn) -> None:
    write(
        "a/el.tsx",
        "import { bElement, createTokens, createHostStyles, joinStyles } from 'plaited/ui'\n"
        "const { c } = createTokens('c', { fill: { $value: 'blue' } })\n"
        "export const El = bElement({ tag: 'x-el', hostStyles: joinStyles(c.fill, createHostStyles({ color: c.fill })), shadowDom: <b>e</b> })\n",
    )
    html = render(
        tmp_path, write, "import { El } from './el.ts'\nexport const s = story({ intent: 'x', template: El })\n"
    )
    assert "<style>:root{--c-fill:blue;}:host{color:var(--c-fill);}</style>" in html


def test_style_objects_expose_class_names_and_stylesheets(tmp_path: Path, write: WriteFn) -> None:
    html = render(
        tmp_path,
        write,
        """
const styles = createStyles({ before: { textDecoration: 'underline' } })
const { stylesheets, classNames } = styles.before
const Inner: FT = (attrs) => <div {...attrs}>x</div>
export const s = story({ intent: 'x', template: () => (
  <x-host>
    <template shadowrootmode='open'>
      <style>{stylesheets.join('')}</style>
      <Inner classNames={classNames} />
    </template>
  </x-host>
) })
""",
    )
    assert re.fullmatch(
        r'<x-host><template shadowrootmode="open"><style>\.before_[0-9a-f]{8}\{text-decoration:underline;\}'
        r'</style><div class="before_[0-9a-f]{8}">x</div></template></x-host>',
        html,
    ), html
