"""The light syntax tree the story interpreter walks.

tree-sitter's tree is converted once per distinct source text (and cached): type-only
syntax, comments and parentheses are dropped, literals are decoded, and function parameters
and JSX parts are precomputed, so evaluation never touches tree-sitter again.
"""

from __future__ import annotations

import functools
import html as _html
from dataclasses import dataclass
from typing import Any

import tree_sitter as ts

from worldagent.stories.parse import decode_escape, number_literal, parse_tsx

__all__ = ["FUNCTION_TYPES", "JsxParts", "Node", "Param", "compile_source"]


class Node:
    """A syntax node stripped of type-only syntax, comments and parentheses."""

    __slots__ = ("type", "kids", "fields", "start_byte", "text", "value", "op", "optional", "tokens")

    def __init__(self, type_: str, start_byte: int) -> None:
        self.type = type_
        self.start_byte = start_byte
        self.kids: list[Node] = []
        self.fields: dict[str, Node] = {}
        self.text: str | None = None
        self.value: Any = None
        self.op: str | None = None
        self.optional = False
        self.tokens: tuple[str, ...] = ()


_DROP = frozenset(
    {
        "comment",
        "type_annotation",
        "type_arguments",
        "type_parameters",
        "asserts_annotation",
        "type_predicate_annotation",
        "accessibility_modifier",
    }
)
_OPAQUE = frozenset(
    {
        "type_alias_declaration",
        "interface_declaration",
        "ambient_declaration",
        "enum_declaration",
    }
)
_UNWRAP = frozenset(
    {
        "as_expression",
        "satisfies_expression",
        "non_null_expression",
        "parenthesized_expression",
        "type_assertion",
    }
)
# Anonymous tokens kept where they carry meaning: `const`/`let`, `of`/`in`, `await`, `default`...
_KEEP_TOKS = frozenset(
    {"import_statement", "import_specifier", "export_statement", "lexical_declaration", "for_in_statement"}
)
FUNCTION_TYPES = frozenset(
    {"arrow_function", "function_expression", "function", "function_declaration", "method_definition"}
)


def _convert(cur: ts.TreeCursor, src: bytes) -> Node:
    node = cur.node
    n = Node(node.type, node.start_byte)
    if n.type not in _OPAQUE and cur.goto_first_child():
        tokens: list[str] = []
        while True:
            _convert_child(cur, src, n, tokens)
            if not cur.goto_next_sibling():
                break
        cur.goto_parent()
        if n.type in _KEEP_TOKS:
            n.tokens = tuple(tokens)
    elif node.child_count == 0:
        n.text = src[node.start_byte : node.end_byte].decode("utf-8")
    if n.type in ("string", "template_string", "jsx_text"):
        n.text = src[node.start_byte : node.end_byte].decode("utf-8")
    return _finish(n)


def _convert_child(cur: ts.TreeCursor, src: bytes, n: Node, tokens: list[str]) -> None:
    child = cur.node
    ctype = child.type
    if not child.is_named:
        if ctype == "?.":
            n.optional = True
        elif cur.field_name == "operator":
            n.op = ctype
            if n.type == "update_expression" and not n.kids:
                n.value = "prefix"  # `++i`: the operator comes before its argument
        tokens.append(ctype)
        return
    if ctype == "optional_chain":
        n.optional = True
        return
    if ctype in _DROP:
        return
    fname = cur.field_name
    k = _convert(cur, src)
    n.kids.append(k)
    if fname and fname not in n.fields:
        n.fields[fname] = k


def _finish(n: Node) -> Node:
    t = n.type
    if t in _UNWRAP and n.kids:
        return n.kids[0]
    if t == "number":
        n.value = number_literal(n.text or "")
    elif t == "string":
        n.value = "".join(_string_part(k) for k in n.kids)
    elif t in ("string_fragment", "escape_sequence"):
        n.value = _string_part(n)
    elif t in FUNCTION_TYPES:
        n.value = _params(n)
    elif t in ("jsx_element", "jsx_self_closing_element"):
        n.value = _jsx_parts(n)
    elif t == "jsx_attribute":
        n.value = _jsx_attribute(n)
    return n


def _string_part(k: Node) -> str:
    text = k.text or ""
    return decode_escape(text) if k.type == "escape_sequence" else text


@dataclass(frozen=True)
class Param:
    rest: bool
    pattern: Node
    default: Node | None


def _params(fn: Node) -> tuple[Param, ...]:
    single = fn.fields.get("parameter")
    if single is not None:
        return (Param(False, single, None),)
    formal = fn.fields.get("parameters")
    if formal is None:
        return ()
    out: list[Param] = []
    for p in formal.kids:
        pattern = p.fields.get("pattern", p)
        if pattern.type == "rest_pattern":
            out.append(Param(True, pattern.kids[0], None))
        elif pattern.type == "this":
            continue
        else:
            out.append(Param(False, pattern, p.fields.get("value")))
    return tuple(out)


@dataclass(frozen=True)
class JsxParts:
    name: Node | None
    attrs: tuple[Node, ...]
    children: tuple[Node, ...]


def _jsx_parts(n: Node) -> JsxParts:
    if n.type == "jsx_self_closing_element":
        name = n.fields.get("name")
        return JsxParts(name, tuple(k for k in n.kids if k is not name), ())
    opening = n.fields.get("open_tag")
    closing = n.fields.get("close_tag")
    name = opening.fields.get("name") if opening is not None else None
    attrs = tuple(k for k in opening.kids if k is not name) if opening is not None else ()
    body = [k for k in n.kids if k is not opening and k is not closing]
    return JsxParts(name, attrs, tuple(_merge_text(body)))


def _merge_text(body: list[Node]) -> list[Node]:
    """Join adjacent text and entity nodes and apply JSX whitespace rules."""
    out: list[Node] = []
    run: list[Node] = []

    def flush() -> None:
        if not run:
            return
        raw = "".join(
            _html.unescape(k.text or "") if k.type == "html_character_reference" else (k.text or "") for k in run
        )
        text = _clean_jsx_text(raw)
        if text:
            node = Node("jsx_text_run", run[0].start_byte)
            node.value = text
            out.append(node)
        run.clear()

    for k in body:
        if k.type in ("jsx_text", "html_character_reference"):
            run.append(k)
        else:
            flush()
            out.append(k)
    flush()
    return out


def _clean_jsx_text(raw: str) -> str:
    # Babel's cleanJSXElementLiteralChild: trim lines, drop blank ones, join with a space.
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # Babel starts lastNonEmptyLine at 0: a lone " " between two expressions stays one space.
    last_non_empty = max((i for i, line in enumerate(lines) if line.strip(" \t")), default=0)
    parts: list[str] = []
    for i, line in enumerate(lines):
        text = line.replace("\t", " ")
        if i != 0:
            text = text.lstrip(" ")
        if i != len(lines) - 1:
            text = text.rstrip(" ")
        if text:
            parts.append(text if i == last_non_empty else text + " ")
    return "".join(parts)


def _jsx_attribute(n: Node) -> tuple[str, Node | None]:
    name = n.kids[0]
    key = ":".join(k.text or "" for k in name.kids) if name.type == "jsx_namespace_name" else name.text or ""
    return key, (n.kids[1] if len(n.kids) > 1 else None)


@functools.lru_cache(maxsize=256)
def compile_source(source: bytes, tsx: bool) -> Node:
    # Content-keyed: identical bytes share one immutable light tree.
    tree = parse_tsx(source, "x.tsx" if tsx else "x.ts")
    return _convert(tree.walk(), source)
