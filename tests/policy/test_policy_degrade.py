"""Degradations rewrite the TSX/TS source through the syntax tree, one rule each."""

from __future__ import annotations

import pytest
import tree_sitter as ts
import tree_sitter_typescript as tst

from worldagent.policy.degrade import (
    Solution,
    degrade,
    div_soup,
    hardcoded_colors,
    inline_style,
    missing_aria,
    missing_label,
    no_keyboard,
)

TEMPLATE = """import { type FT, joinStyles } from 'plaited'
import { styles } from './x.css.ts'

export const Field: FT<{ id: string }> = ({ id, children }) => (
  <section aria-label='Settings'>
    <label htmlFor={id} {...styles.label}>Name</label>
    <input id={id} aria-describedby={`${id}-help`} {...joinStyles(styles.input, false && styles.error)} />
    <p id={`${id}-help`}>Your name</p>
    <button type='button' aria-pressed='true' p-trigger={{ click: 'toggle' }} {...styles.button}>{children}</button>
    <a href='/home'>Home</a>
  </section>
)
"""

TOKENS = """import { createTokens } from 'plaited'
export const xTokens = createTokens('x', { ink: { $value: '#112233' }, paper: { $value: '#ffffff' } })
"""
STYLES = """import { createStyles } from 'plaited'
import { xTokens } from './x.tokens.ts'
export const styles = createStyles({ button: { color: xTokens.ink, backgroundColor: xTokens.paper, padding: '1rem' } })
"""


def parses(source: str, tsx: bool = True) -> bool:
    language = tst.language_tsx() if tsx else tst.language_typescript()
    return not ts.Parser(ts.Language(language)).parse(source.encode()).root_node.has_error


def test_div_soup_replaces_semantic_elements_with_divs() -> None:
    out = div_soup(TEMPLATE)
    assert parses(out)
    assert "<section" not in out and "<button" not in out and "</button>" not in out and "<a " not in out
    assert out.count("<div") == 3 and "<label" in out and "<input" in out


def test_missing_aria_drops_roles_and_aria_attributes_only() -> None:
    out = missing_aria(TEMPLATE)
    assert parses(out)
    assert "aria-" not in out
    assert "htmlFor={id}" in out and "p-trigger" in out


def test_no_keyboard_turns_controls_into_spans_and_fields_out_of_tab_order() -> None:
    out = no_keyboard(TEMPLATE)
    assert parses(out)
    assert "<span role='button'" in out and "<span role='link'" in out
    assert "href=" not in out and "type='button'" not in out
    assert "<input tabIndex={-1}" in out


def test_inline_style_replaces_style_spreads() -> None:
    out = inline_style(TEMPLATE)
    assert parses(out)
    assert "styles." not in out.split("\n", 3)[3] and out.count("style='") == 3


def test_hardcoded_colors_inlines_token_values() -> None:
    out = hardcoded_colors(STYLES, {"x/x.tokens.ts": TOKENS})
    assert parses(out, tsx=False)
    assert "color: '#112233'" in out and "backgroundColor: '#ffffff'" in out and "xTokens.ink" not in out


def test_missing_label_removes_labels_and_naming_attributes() -> None:
    out = missing_label(TEMPLATE)
    assert parses(out)
    assert "<label" not in out and "htmlFor" not in out and "aria-label" not in out


def test_wrapping_label_keeps_the_field() -> None:
    source = "const A = () => <label>Email <input type='email' /></label>\n"
    assert missing_label(source) == "const A = () => <input type='email' />\n"


def test_degrade_touches_only_the_files_a_rule_concerns() -> None:
    solution = Solution(
        {"x/x.css.ts": STYLES, "x/x.template.tsx": TEMPLATE, "x/s.stories.tsx": "export const s = 1\n"},
        "x/x.template.tsx",
        ("x/x.css.ts",),
        "x/s.stories.tsx",
    )
    colour = degrade(solution, "hardcoded-color", {"x/x.tokens.ts": TOKENS})
    assert colour is not None and colour.files["x/x.template.tsx"] == TEMPLATE and colour.files["x/x.css.ts"] != STYLES
    soup = degrade(solution, "div-soup", {})
    assert soup is not None and soup.files["x/x.css.ts"] == STYLES and soup.files["x/x.template.tsx"] != TEMPLATE
    assert (
        degrade(Solution({"a.stories.tsx": "export const a = 1\n"}, None, (), "a.stories.tsx"), "div-soup", {}) is None
    )
    with pytest.raises(ValueError, match="unknown degradation 'bold'"):
        degrade(solution, "bold", {})
