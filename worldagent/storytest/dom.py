"""A light, forgiving HTML tree built with the standard library's ``html.parser``.

The story renderer produces small HTML fragments; the rules in this package walk them
many times per second, so the tree is deliberately minimal: ``Element`` objects with a
lower-cased tag, a dict of lower-cased attribute names, and children that are either
``Element`` or ``str`` (text, entities already decoded).

Tolerated input: void elements (``<img>``, ``<input>`` ...), self-closing syntax on any tag,
unclosed tags (closed at the end, or implicitly by a matching ancestor's end tag), stray end
tags (ignored), and the usual implicit closes (``<li>`` closes an open ``<li>``, ``<p>`` is
closed by a block-level start tag, ``<option>``/``<tr>``/``<td>`` siblings).

Declarative shadow DOM (``<template shadowrootmode=...>`` as a host's first template child,
as Plaited's server-side rendering writes custom elements) is flattened the way assistive
technology and axe-core see it: the host's children become its shadow tree, each ``<slot>``
replaced by the light-DOM nodes assigned to it (or its fallback content). Every element
records its tree ``scope`` (0 for the document, one number per shadow root) so that id
references resolve inside the shadow root they live in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser

__all__ = ["Element", "VOID_ELEMENTS", "parse_html", "iter_elements", "text_content"]

VOID_ELEMENTS: frozenset[str] = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)

# Start tags that implicitly close an open <p> (HTML "close a p element").
_CLOSES_P: frozenset[str] = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "details",
        "dialog",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "ul",
    }
)
# tag -> (tags it closes when still open as the current node's ancestors, scope-stopping tags)
_IMPLICIT_CLOSE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu"})),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl"})),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl"})),
    "option": (frozenset({"option"}), frozenset({"select", "datalist", "optgroup"})),
    "optgroup": (frozenset({"optgroup", "option"}), frozenset({"select"})),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table", "thead", "tbody", "tfoot"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
}


class Element:
    """One element. ``children`` holds ``Element`` and ``str`` (text) nodes in order."""

    __slots__ = ("tag", "attrs", "children", "parent", "sourceline", "index", "scope", "shadow_host")

    def __init__(
        self,
        tag: str,
        attrs: dict[str, str] | None = None,
        parent: Element | None = None,
        sourceline: int = 0,
    ) -> None:
        self.tag = tag
        self.attrs: dict[str, str] = attrs if attrs is not None else {}
        self.children: list[Element | str] = []
        self.parent = parent
        self.sourceline = sourceline
        self.index = 0  # document order (pre-order) among elements, set by the parser
        self.scope = 0  # tree scope: 0 is the document, else the shadow root's number
        # For a shadow host: {"mode": ..., "delegatesfocus": bool}; None for other elements.
        self.shadow_host: dict[str, object] | None = None

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Element {self.tag} {self.attrs!r} children={len(self.children)}>"

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attrs.get(name, default)

    @property
    def elements(self) -> list[Element]:
        """Element children only."""
        return [c for c in self.children if isinstance(c, Element)]

    def iter(self) -> Iterator[Element]:
        """Pre-order iteration over this element's descendants (not including itself)."""
        return iter_elements(self)

    def text_content(self) -> str:
        return text_content(self)

    def ancestors(self) -> Iterator[Element]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


def iter_elements(root: Element) -> Iterator[Element]:
    """Pre-order, document-order iteration over the descendants of ``root``."""
    stack: list[Element | str] = list(reversed(root.children))
    while stack:
        node = stack.pop()
        if isinstance(node, Element):
            yield node
            if node.children:
                stack.extend(reversed(node.children))


def text_content(node: Element) -> str:
    """Concatenated text of all descendant text nodes (like DOM ``textContent``)."""
    parts: list[str] = []
    stack: list[Element | str] = list(reversed(node.children))
    while stack:
        child = stack.pop()
        if isinstance(child, str):
            parts.append(child)
        elif child.children:
            stack.extend(reversed(child.children))
    return "".join(parts)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document")
        self.stack: list[Element] = [self.root]
        self.count = 0

    # -- helpers ---------------------------------------------------------------------------
    def _open(self, tag: str, attrs: list[tuple[str, str | None]], void: bool) -> None:
        if tag in _CLOSES_P:
            self._close_p()
        rule = _IMPLICIT_CLOSE.get(tag)
        if rule is not None:
            closes, scope = rule
            for i in range(len(self.stack) - 1, 0, -1):
                t = self.stack[i].tag
                if t in closes:
                    del self.stack[i:]
                    break
                if t in scope:
                    break
        parent = self.stack[-1]
        amap: dict[str, str] = {}
        for name, value in attrs:
            if name not in amap:  # first occurrence wins, as in browsers
                amap[name] = "" if value is None else value
        el = Element(tag, amap, parent, self.getpos()[0])
        self.count += 1
        el.index = self.count
        parent.children.append(el)
        if not void:
            self.stack.append(el)

    def _close_p(self) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            t = self.stack[i].tag
            if t == "p":
                del self.stack[i:]
                return
            if t in ("button", "table", "td", "th", "li", "div", "section", "article"):
                return

    # -- HTMLParser callbacks ----------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, tag in VOID_ELEMENTS)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, True)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID_ELEMENTS:
            return
        stack = self.stack
        for i in range(len(stack) - 1, 0, -1):
            if stack[i].tag == tag:
                del stack[i:]
                return
        # stray end tag: ignored (</p> without <p> would create an empty p in browsers)

    def handle_data(self, data: str) -> None:
        if not data:
            return
        children = self.stack[-1].children
        if children and isinstance(children[-1], str):
            children[-1] = children[-1] + data
        else:
            children.append(data)


# A tag, comment or declaration opener: what html.parser rescans to the end of input on each
# `<` when no `>` follows (quadratic); HTML drops such an unterminated tag at end of file anyway.
_TAG_OPEN = re.compile(r"<[A-Za-z/!?]")


def _drop_unterminated_tag(html: str) -> str:
    last_close = html.rfind(">")
    found = _TAG_OPEN.search(html, last_close + 1)
    return html if found is None else html[: found.start()]


def parse_html(html: str) -> Element:
    """Parse ``html`` into a tree rooted at a synthetic ``#document`` element (shadow roots flattened)."""
    builder = _TreeBuilder()
    builder.feed(_drop_unterminated_tag(html))
    builder.close()
    flatten_shadow_roots(builder.root)
    return builder.root


def _declarative_shadow_root(host: Element) -> Element | None:
    for child in host.children:
        if isinstance(child, Element) and child.tag == "template" and "shadowrootmode" in child.attrs:
            return child
    return None


def flatten_shadow_roots(root: Element) -> None:
    """Replace every declarative shadow root by its flattened tree (children first, so nesting works)."""
    hosts = [el for el in iter_elements(root) if el.tag != "template" and _declarative_shadow_root(el) is not None]
    next_scope = 1
    for host in reversed(hosts):  # innermost first: a pass-through <slot> moves into the inner tree
        template = _declarative_shadow_root(host)
        if template is None:
            continue
        _flatten_one(host, template, next_scope)
        next_scope += 1


def _slot_name(node: Element | str) -> str | None:
    """The slot a light-DOM node is assigned to ("" = default), or None for whitespace text."""
    if isinstance(node, str):
        return "" if node.strip() else None
    return node.attrs.get("slot", "")


def _flatten_one(host: Element, template: Element, scope: int) -> None:
    light = [c for c in host.children if c is not template]
    assigned: dict[str, list[Element | str]] = {}
    for node in light:
        name = _slot_name(node)
        if name is not None:
            assigned.setdefault(name, []).append(node)
    shadow = template.children
    for el in [*iter_elements(template)]:
        if el.scope == 0:
            el.scope = scope
    used: set[str] = set()
    _replace_slots(shadow, template, assigned, used)
    host.children = shadow
    for child in shadow:
        if isinstance(child, Element):
            child.parent = host
    host.shadow_host = {
        "mode": template.attrs.get("shadowrootmode", "open"),
        "delegatesfocus": "shadowrootdelegatesfocus" in template.attrs,
    }


def _replace_slots(
    children: list[Element | str], parent: Element, assigned: dict[str, list[Element | str]], used: set[str]
) -> None:
    i = 0
    while i < len(children):
        node = children[i]
        if isinstance(node, Element) and node.tag == "slot" and node.shadow_host is None:
            name = node.attrs.get("name", "")
            nodes = assigned.get(name) if name not in used else None
            if nodes:
                used.add(name)
                replacement = nodes
            else:
                _replace_slots(node.children, node, assigned, used)
                replacement = node.children  # fallback content
            for new in replacement:
                if isinstance(new, Element):
                    new.parent = parent
            children[i : i + 1] = replacement
            i += len(replacement)
            continue
        if isinstance(node, Element) and node.children:
            _replace_slots(node.children, node, assigned, used)
        i += 1
