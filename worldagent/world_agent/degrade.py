"""Rule-driven degradations of a reference solution: the rejected sides of preference pairs.

Each degradation rewrites the TSX/TS source through the tree-sitter syntax tree (never with
regexes) the way a careless agent would: div soup, dropped ARIA, no keyboard support, inline
styles, hard-coded colours, missing labels, and ``copied-args``: one argument of the story as the
existing story in the prompt sets it (what an agent that copies that story writes). The
generate stage keeps a pair only when the story runner confirms the degraded side scores strictly
lower than the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import tree_sitter as ts
import tree_sitter_typescript as tst

from worldagent.stories.discover import object_props, story_config

_TSX = ts.Parser(ts.Language(tst.language_tsx()))
_TS = ts.Parser(ts.Language(tst.language_typescript()))

SEMANTIC_TAGS = frozenset(
    {
        "button",
        "a",
        "nav",
        "article",
        "section",
        "header",
        "footer",
        "fieldset",
        "legend",
        "ul",
        "ol",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
    }
)
KEYBOARD_FOCUSABLE_FIELDS = frozenset({"input", "select", "textarea"})
LABEL_ATTRIBUTES = frozenset({"htmlFor", "aria-label", "aria-labelledby"})
INLINE_STYLE = "style='padding: 0.5rem; border-radius: 0.25rem'"


@dataclass(frozen=True)
class Solution:
    """The files an agent writes for one intent: template module, styles and story file."""

    files: Mapping[str, str]  # sandbox-relative posix path -> source text
    template_path: str | None
    style_paths: tuple[str, ...]
    story_path: str
    given: Mapping[str, str] = field(default_factory=dict)  # files already in the sandbox, not written

    def replace(self, path: str, content: str) -> Solution:
        files = dict(self.files)
        files[path] = content
        return Solution(files, self.template_path, self.style_paths, self.story_path, self.given)


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


def _apply(source: str, edits: list[_Edit]) -> str:
    data = source.encode("utf-8")
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for before, after in zip(ordered, ordered[1:], strict=False):
        if after.start < before.end:
            raise ValueError(
                f"overlapping source edits at bytes {before.start}-{before.end} and {after.start}-{after.end}"
            )
    for edit in reversed(ordered):
        data = data[: edit.start] + edit.text.encode("utf-8") + data[edit.end :]
    return data.decode("utf-8")


def _walk(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8")


def _opening(node: ts.Node) -> ts.Node:
    """The node that carries a JSX element's name and attributes."""
    return node.child_by_field_name("open_tag") or node if node.type == "jsx_element" else node


def _jsx_elements(root: ts.Node) -> Iterator[ts.Node]:
    for node in _walk(root):
        if node.type in ("jsx_element", "jsx_self_closing_element"):
            yield node


def _tag_name(element: ts.Node) -> ts.Node | None:
    opening = _opening(element)
    return opening.child_by_field_name("name")


def _tag_nodes(element: ts.Node) -> list[ts.Node]:
    """Name nodes of the opening and (if present) closing tag."""
    names = [_tag_name(element)]
    if element.type == "jsx_element":
        closing = element.child_by_field_name("close_tag")
        if closing is not None:
            names.append(closing.child_by_field_name("name"))
    return [name for name in names if name is not None]


def _attributes(element: ts.Node) -> list[ts.Node]:
    return _opening(element).children_by_field_name("attribute")


def _attribute_name(attribute: ts.Node) -> str | None:
    if attribute.type != "jsx_attribute" or attribute.child_count == 0:
        return None
    return _text(attribute.children[0])


def _remove_attribute(attribute: ts.Node) -> _Edit:
    # Only the attribute's own bytes: edits at the tag name (renames, inserts) must not overlap.
    return _Edit(attribute.start_byte, attribute.end_byte, "")


def _rename(element: ts.Node, new_tag: str) -> list[_Edit]:
    return [_Edit(name.start_byte, name.end_byte, new_tag) for name in _tag_nodes(element)]


def _insert_attribute(element: ts.Node, attribute_source: str) -> _Edit:
    name = _tag_name(element)
    assert name is not None
    return _Edit(name.end_byte, name.end_byte, f" {attribute_source}")


def _tag(element: ts.Node) -> str:
    name = _tag_name(element)
    return _text(name) if name is not None else ""


def _tsx_edits(source: str, plan: Callable[[ts.Node], list[_Edit]]) -> str:
    tree = _TSX.parse(source.encode("utf-8"))
    return _apply(source, plan(tree.root_node))


def div_soup(source: str) -> str:
    """Replace semantic elements with anonymous divs."""

    def plan(root: ts.Node) -> list[_Edit]:
        edits: list[_Edit] = []
        for element in _jsx_elements(root):
            if _tag(element) in SEMANTIC_TAGS:
                edits.extend(_rename(element, "div"))
        return edits

    return _tsx_edits(source, plan)


def missing_aria(source: str) -> str:
    """Drop every role and aria-* attribute."""

    def plan(root: ts.Node) -> list[_Edit]:
        edits: list[_Edit] = []
        for element in _jsx_elements(root):
            for attribute in _attributes(element):
                name = _attribute_name(attribute)
                if name is not None and (name == "role" or name.startswith("aria-")):
                    edits.append(_remove_attribute(attribute))
        return edits

    return _tsx_edits(source, plan)


def no_keyboard(source: str) -> str:
    """Buttons and links become spans with a role but no tab stop; fields leave the tab order."""

    def plan(root: ts.Node) -> list[_Edit]:
        edits: list[_Edit] = []
        for element in _jsx_elements(root):
            tag = _tag(element)
            has_role = any(_attribute_name(a) == "role" for a in _attributes(element))
            if tag in ("button", "a"):
                edits.extend(_rename(element, "span"))
                if not has_role:
                    edits.append(_insert_attribute(element, f"role='{'button' if tag == 'button' else 'link'}'"))
                edits.extend(
                    _remove_attribute(a)
                    for a in _attributes(element)
                    if _attribute_name(a) in ("href", "tabIndex", "type")
                )
            elif tag in KEYBOARD_FOCUSABLE_FIELDS:
                edits.append(_insert_attribute(element, "tabIndex={-1}"))
        return edits

    return _tsx_edits(source, plan)


def _is_style_spread(attribute: ts.Node) -> bool:
    if attribute.type != "jsx_expression":
        return False
    spread = next((c for c in attribute.children if c.type == "spread_element"), None)
    if spread is None or spread.child_count < 2:
        return False
    argument = spread.children[1]
    if argument.type == "member_expression":
        head = argument.child_by_field_name("object")
        return head is not None and _text(head) == "styles"
    if argument.type == "call_expression":
        function = argument.child_by_field_name("function")
        return function is not None and _text(function) == "joinStyles"
    return False


def inline_style(source: str) -> str:
    """Replace createStyles spreads with inline style attributes."""

    def plan(root: ts.Node) -> list[_Edit]:
        return [
            _Edit(attribute.start_byte, attribute.end_byte, INLINE_STYLE)
            for element in _jsx_elements(root)
            for attribute in _attributes(element)
            if _is_style_spread(attribute)
        ]

    return _tsx_edits(source, plan)


def _token_values(tokens_source: str) -> dict[tuple[str, str], str]:
    """Map (exported tokens identifier, key) -> literal value from a createTokens module."""
    tree = _TS.parse(tokens_source.encode("utf-8"))
    values: dict[tuple[str, str], str] = {}
    for node in _walk(tree.root_node):
        if node.type != "variable_declarator":
            continue
        name = node.child_by_field_name("name")
        call = node.child_by_field_name("value")
        if name is None or call is None or call.type != "call_expression":
            continue
        arguments = call.child_by_field_name("arguments")
        objects = [c for c in (arguments.named_children if arguments else []) if c.type == "object"]
        if not objects:
            continue
        for pair in objects[0].named_children:
            key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            if pair.type != "pair" or key is None or value is None or value.type != "object":
                continue
            for inner in value.named_children:
                inner_key, inner_value = inner.child_by_field_name("key"), inner.child_by_field_name("value")
                if (
                    inner.type == "pair"
                    and inner_key is not None
                    and _text(inner_key) == "$value"
                    and inner_value is not None
                    and inner_value.type == "string"
                ):
                    values[(_text(name), _text(key))] = _text(inner_value)[1:-1]
    return values


def hardcoded_colors(styles_source: str, tokens_sources: Mapping[str, str]) -> str:
    """Inline each token reference in a createStyles module as the colour literal it stands for."""
    values: dict[tuple[str, str], str] = {}
    for source in tokens_sources.values():
        values.update(_token_values(source))
    tree = _TS.parse(styles_source.encode("utf-8"))
    edits: list[_Edit] = []
    for node in _walk(tree.root_node):
        if node.type != "member_expression":
            continue
        head, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if head is None or prop is None:
            continue
        literal = values.get((_text(head), _text(prop)))
        if literal is not None:
            edits.append(_Edit(node.start_byte, node.end_byte, f"'{literal}'"))
    return _apply(styles_source, edits)


def missing_label(source: str) -> str:
    """Remove <label> elements (keeping wrapped fields) and every naming attribute."""

    def plan(root: ts.Node) -> list[_Edit]:
        edits: list[_Edit] = []
        removed: list[ts.Node] = []
        for element in _jsx_elements(root):
            if any(r.start_byte <= element.start_byte and element.end_byte <= r.end_byte for r in removed):
                continue
            if _tag(element) == "label":
                kept = [c for c in element.named_children if c.type in ("jsx_element", "jsx_self_closing_element")]
                edits.append(_Edit(element.start_byte, element.end_byte, "".join(_text(c) for c in kept) or "<></>"))
                removed.append(element)
                continue
            edits.extend(_remove_attribute(a) for a in _attributes(element) if _attribute_name(a) in LABEL_ATTRIBUTES)
        return edits

    return _tsx_edits(source, plan)


TSX_DEGRADATIONS: dict[str, Callable[[str], str]] = {
    "div-soup": div_soup,
    "missing-aria": missing_aria,
    "no-keyboard": no_keyboard,
    "inline-style": inline_style,
    "missing-label": missing_label,
}
COPIED_ARGS = "copied-args"
DEGRADATIONS = (*TSX_DEGRADATIONS, "hardcoded-color", COPIED_ARGS)


def _story_args(root: ts.Node) -> ts.Node | None:
    """The ``args`` object of the first ``story({...})`` call, if it has one."""
    for node in _walk(root):
        config = story_config(node) if node.type == "call_expression" else None
        if config is not None:
            args = object_props(config).get("args")
            return args if args is not None and args.type == "object" else None
    return None


def _arg_entry(value: ts.Node) -> ts.Node:
    """The whole ``key: value`` entry of a value ``object_props`` found (a shorthand entry is its own value)."""
    return value if value.type == "shorthand_property_identifier" or value.parent is None else value.parent


def _insert_entry(args: ts.Node, entry_source: str) -> _Edit:
    """Append ``entry_source`` to an object literal in the layout it already has (one line or one entry
    per line, with or without a trailing comma)."""
    entries = [child for child in args.named_children if child.type != "comment"]
    if not entries:
        return _Edit(args.start_byte, args.end_byte, f"{{ {entry_source} }}")
    last = entries[-1]
    trailing = last.next_sibling is not None and last.next_sibling.type == ","
    after = last.next_sibling.end_byte if trailing and last.next_sibling is not None else last.end_byte
    if "\n" in _text(args):
        indent = " " * last.start_point[1]
        return _Edit(after, after, f"{'' if trailing else ','}\n{indent}{entry_source}{',' if trailing else ''}")
    return _Edit(after, after, f" {entry_source}," if trailing else f", {entry_source}")


def copied_args(source: str, example_sources: Sequence[str]) -> list[str]:
    """``source`` once per argument an example story's ``args`` has and ``source``'s ``args`` has
    differently, with the example's argument copied in: added where ``source`` lacks the key, its
    value replaced where the values differ (in the examples' order, each key once). Each variant
    differs from ``source`` in exactly one argument."""
    tree = _TSX.parse(source.encode("utf-8"))
    args = _story_args(tree.root_node)
    if args is None:
        return []
    present = object_props(args)
    seen: set[str] = set()
    variants = []
    for example in example_sources:
        example_args = _story_args(_TSX.parse(example.encode("utf-8")).root_node)
        for key, theirs in object_props(example_args).items() if example_args is not None else []:
            if key in seen:
                continue
            seen.add(key)
            if key not in present:
                variants.append(_apply(source, [_insert_entry(args, _text(_arg_entry(theirs)))]))
                continue
            ours = present[key]
            shorthand = "shorthand_property_identifier" in (ours.type, theirs.type)
            if not shorthand and _text(ours) != _text(theirs):
                variants.append(_apply(source, [_Edit(ours.start_byte, ours.end_byte, _text(theirs))]))
    return variants


def degradations(
    solution: Solution, rule: str, tokens_sources: Mapping[str, str], example_sources: Sequence[str] = ()
) -> list[Solution]:
    """Every degraded solution ``rule`` makes of ``solution``: one for the rewrite rules (none when it
    changes nothing), one per copyable argument for ``copied-args`` (``example_sources``: the stories
    the prompt shows)."""
    if rule == COPIED_ARGS:
        story = solution.files[solution.story_path]
        return [solution.replace(solution.story_path, variant) for variant in copied_args(story, example_sources)]
    degraded = degrade(solution, rule, tokens_sources)
    return [] if degraded is None else [degraded]


def degrade(solution: Solution, rule: str, tokens_sources: Mapping[str, str]) -> Solution | None:
    """Apply one degradation to every file it concerns; None when it changes nothing."""
    if rule == "hardcoded-color":
        targets = solution.style_paths
        rewrite: Callable[[str], str] = lambda source: hardcoded_colors(source, tokens_sources)  # noqa: E731
    elif rule in TSX_DEGRADATIONS:
        targets = tuple(p for p in (solution.template_path, solution.story_path) if p is not None)
        rewrite = TSX_DEGRADATIONS[rule]
    elif rule == COPIED_ARGS:
        raise ValueError(f"{COPIED_ARGS} copies from the prompt's example stories: call degradations()")
    else:
        raise ValueError(f"unknown degradation {rule!r}; known: {', '.join(DEGRADATIONS)}")
    degraded = solution
    for path in targets:
        new_source = rewrite(solution.files[path])
        if new_source != solution.files[path]:
            degraded = degraded.replace(path, new_source)
    return None if degraded == solution else degraded
