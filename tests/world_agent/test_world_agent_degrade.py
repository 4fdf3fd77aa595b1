"""Degradations rewrite the TSX/TS source through the syntax tree, one rule each."""

from __future__ import annotations

import pytest
import tree_sitter as ts
import tree_sitter_typescript as tst

from worldagent.world_agent.degrade import (
    Solution,
    copied_args,
    degradations,
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


STORY_ONE_LINE = """export const archive = story({
  intent: 'A secondary "Archive" action',
  template: Button,
  args: { variant: 'secondary', children: 'Archive' },
})
"""
STORY_PER_LINE = """export const bio = story({
  intent: 'A "Short bio" field',
  args: {
    id: 'bio',
    label: 'Short bio',
  },
})
"""
EXAMPLE = """export const save = story({
  intent: 'A "Save" action',
  args: { variant: 'primary', disabled: true, label: 'Save changes', "aria-busy": 'true' },
})
"""


def test_copied_args_adds_or_replaces_one_argument_per_variant_in_the_layout_the_story_has() -> None:
    one_line = copied_args(STORY_ONE_LINE, [EXAMPLE])
    assert one_line == [
        STORY_ONE_LINE.replace("variant: 'secondary'", "variant: 'primary'"),
        STORY_ONE_LINE.replace("children: 'Archive' }", "children: 'Archive', disabled: true }"),
        STORY_ONE_LINE.replace("children: 'Archive' }", "children: 'Archive', label: 'Save changes' }"),
        STORY_ONE_LINE.replace("children: 'Archive' }", "children: 'Archive', \"aria-busy\": 'true' }"),
    ]
    per_line = copied_args(STORY_PER_LINE, [EXAMPLE])
    assert per_line[0] == STORY_PER_LINE.replace(
        "    label: 'Short bio',\n", "    label: 'Short bio',\n    variant: 'primary',\n"
    )
    assert STORY_PER_LINE.replace("label: 'Short bio'", "label: 'Save changes'") in per_line
    assert all(parses(variant) for variant in one_line + per_line)


def test_copied_args_takes_each_key_once_and_needs_an_args_object() -> None:
    twice = copied_args(STORY_ONE_LINE, [EXAMPLE, EXAMPLE.replace("'primary'", "'danger'")])
    assert twice == copied_args(STORY_ONE_LINE, [EXAMPLE])  # the first example's value of a key wins
    assert copied_args(STORY_ONE_LINE, [STORY_ONE_LINE]) == []  # the same arguments: nothing to copy
    assert copied_args("export const a = story({ template: A })\n", [EXAMPLE]) == []
    assert copied_args(STORY_ONE_LINE, ["export const b = story({ args: makeArgs() })\n"]) == []
    empty = copied_args("export const a = story({ args: {} })\n", [EXAMPLE])
    assert empty[0] == "export const a = story({ args: { variant: 'primary' } })\n"


def test_degradations_makes_one_solution_per_copied_argument_and_only_touches_the_story() -> None:
    solution = Solution(
        {"x/x.template.tsx": TEMPLATE, "x/archive.stories.tsx": STORY_ONE_LINE},
        "x/x.template.tsx",
        (),
        "x/archive.stories.tsx",
    )
    copies = degradations(solution, "copied-args", {}, [EXAMPLE])
    assert len(copies) == 4
    assert all(c.files["x/x.template.tsx"] == TEMPLATE != c.files["x/archive.stories.tsx"] for c in copies)
    assert degradations(solution, "copied-args", {}, []) == []
    assert degradations(solution, "div-soup", {}, [EXAMPLE]) == [degrade(solution, "div-soup", {})]
    with pytest.raises(ValueError, match="copied-args copies from the prompt's example stories"):
        degrade(solution, "copied-args", {})
