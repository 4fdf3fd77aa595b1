"""Differential testing of the Python accessibility rules against axe-core in headless Chromium.

Pages nobody tuned the rules to come from two sources, both seeded:

- ``generate_page``: random, grammar-shaped HTML (roles, ARIA attributes and values, labels,
  nesting, lists, ids and id references, hidden content, declarative shadow roots,
  form-associated elements). The grammar only writes markup the HTML parser keeps as written
  (no ``<a>`` in ``<a>``, no block in ``<p>``...), so both checkers see the same tree.
- ``mutate``: one or two edits of a rendered story (remove or swap an attribute, change a role,
  duplicate an id, nest an interactive element, move a label, empty a name, add an ARIA
  attribute).

``AxeSession`` runs axe-core once per page in one Chromium page (``setHTMLUnsafe`` on the body,
so declarative shadow roots attach), many pages per round trip. ``compare`` scores the rules
both implement (``MAPPED_RULES``) at page granularity, and ``shrink`` reduces a disagreeing page
to a minimal one that still disagrees the same way.

axe's "needs review" results (``incomplete``) are not violations here, as in the browser
runner: a rule axe only asks a human about does not fail a page.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from typing import Any

from worldagent.storytest.a11y_rules import AXE_RULES, check_accessibility

__all__ = [
    "MAPPED_RULES",
    "AxeSession",
    "Node",
    "PageVerdicts",
    "RuleScore",
    "compare",
    "generate_page",
    "mutate",
    "parse_fragment",
    "python_rules",
    "serialize",
    "shrink",
]

# The axe-core rules the Python checker implements (the same ids); its own pattern rules
# (interactive-handler, focusable-interactive) have no axe counterpart and stay out.
MAPPED_RULES: tuple[str, ...] = AXE_RULES

VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)


# ---------------------------------------------------------------------------------------------
# A minimal tree that serializes back to the same markup (shadow templates included)
# ---------------------------------------------------------------------------------------------


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    def walk(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()


def serialize(nodes: Sequence[Node | str]) -> str:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, str):
            out.append(escape(n, quote=False))
            continue
        attrs = "".join(f' {k}="{escape(v)}"' if v != "" else f" {k}" for k, v in n.attrs.items())
        out.append(f"<{n.tag}{attrs}>")
        if n.tag not in VOID:
            out.append(serialize(n.children))
            out.append(f"</{n.tag}>")
    return "".join(out)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_fragment(html: str) -> list[Node | str]:
    """Rendered story HTML as a ``Node`` list (the renderer writes well-formed markup)."""
    b = _Builder()
    b.feed(html)
    b.close()
    return b.root.children


def _all_nodes(nodes: Sequence[Node | str]) -> list[Node]:
    return [d for n in nodes if isinstance(n, Node) for d in n.walk()]


# ---------------------------------------------------------------------------------------------
# The page grammar
# ---------------------------------------------------------------------------------------------

_WORDS = ("Save", "Open menu", "Next", "Close", "Profile", "Settings", "Search", "Volume", "Help", "Delete")
_IDS = ("a", "b", "c", "d", "name", "hint", "panel", "menu", "x1", "x2")
_INVALID_ROLES = ("buton", "foo", "img-button", "navigation-bar", "tabpanels")
_ABSTRACT_ROLES = ("widget", "command", "landmark", "input", "range", "section", "structure", "select", "window")
_GOOD_ROLES = (
    "button", "link", "checkbox", "switch", "radio", "tab", "tabpanel", "tablist", "menu", "menubar", "menuitem",
    "menuitemcheckbox", "menuitemradio", "listbox", "option", "tree", "treeitem", "group", "radiogroup",
    "progressbar", "meter", "dialog", "alertdialog", "tooltip", "combobox", "textbox", "searchbox", "spinbutton",
    "slider", "list", "listitem", "heading", "img", "region", "navigation", "main", "banner", "status", "alert",
    "none", "presentation", "generic", "separator", "grid", "row", "gridcell", "table", "cell", "rowgroup",
    "columnheader", "note", "article", "figure", "toolbar", "log", "paragraph", "term", "definition",
    "doc-subtitle", "scrollbar", "feed", "math", "application", "search", "form", "complementary",
)  # fmt: skip
_ARIA_VALUES: dict[str, tuple[str, ...]] = {
    "aria-pressed": ("true", "false", "mixed", "yes"),
    "aria-expanded": ("true", "false", "open"),
    "aria-checked": ("true", "false", "mixed", "on"),
    "aria-selected": ("true", "false", "1"),
    "aria-disabled": ("true", "false", "disabled"),
    "aria-hidden": ("true", "false"),
    "aria-level": ("2", "0", "x", "3"),
    "aria-valuenow": ("5", "abc", "50"),
    "aria-valuemin": ("0", "low"),
    "aria-valuemax": ("100", "high"),
    "aria-valuetext": ("half", ""),
    "aria-current": ("page", "true", "yes", "step"),
    "aria-haspopup": ("true", "menu", "dialog", "popup"),
    "aria-live": ("polite", "assertive", "loud"),
    "aria-invalid": ("true", "false", "maybe", "spelling"),
    "aria-orientation": ("horizontal", "vertical", "diagonal"),
    "aria-sort": ("ascending", "up"),
    "aria-autocomplete": ("list", "auto"),
    "aria-required": ("true", "false", "required"),
    "aria-readonly": ("true", "false"),
    "aria-multiselectable": ("true", "false"),
    "aria-modal": ("true", "false"),
    "aria-posinset": ("1", "0"),
    "aria-setsize": ("3", "-1", "x"),
    "aria-colcount": ("4",),
    "aria-rowindex": ("2", "0"),
    "aria-busy": ("true", "false"),
    "aria-atomic": ("true", "nope"),
    "aria-relevant": ("additions text", "all", "changes"),
    "aria-roledescription": ("slide", ""),
    "aria-description": ("more",),
    "aria-placeholder": ("Type",),
    "aria-multiline": ("true",),
    "aria-keyshortcuts": ("Alt+S",),
    "aria-dropeffect": ("copy", "none"),
    "aria-grabbed": ("true",),
    "aria-label": ("Label", "", " "),
}
_IDREF_ATTRS = ("aria-labelledby", "aria-describedby", "aria-controls", "aria-owns", "aria-activedescendant",
                "aria-errormessage", "aria-details", "aria-flowto")  # fmt: skip
_MISSPELLED = ("aria-labeledby", "aria-role", "aria-described", "aria-lable", "aria-disable", "aria-select")
_INPUT_TYPES = ("text", "text", "email", "password", "checkbox", "radio", "range", "number", "search", "button",
                "submit", "reset", "image", "hidden", "date", "color", "file", "tel", "url")  # fmt: skip
_PHRASING = frozenset({"span", "a", "button", "input", "img", "label", "select", "textarea", "b", "em", "strong",
                       "code", "small", "svg", "meter", "progress", "output"})  # fmt: skip


@dataclass
class _Ctx:
    """Where a new element goes: what the parser (and the content model) allows there."""

    phrasing: bool = False  # inside <p>, a heading, <button>, <label>...: phrasing content only
    in_a: bool = False
    in_button: bool = False
    in_label: bool = False
    in_list: bool = False  # the direct parent is a list
    depth: int = 0


class PageGenerator:
    """Random pages: mostly well-formed widgets, each with a small chance of each fault."""

    def __init__(self, rng: random.Random, fault: float = 0.08) -> None:
        self.rng = rng
        self.fault = fault
        self.used_ids: list[str] = []

    def p(self, scale: float = 1.0) -> bool:
        return self.rng.random() < self.fault * scale

    def choice(self, seq: Sequence[Any]) -> Any:
        return self.rng.choice(seq)

    def text(self) -> str:
        return "" if self.p(1.5) else self.choice(_WORDS)

    def page(self) -> list[Node | str]:
        blocks: list[Node | str] = []
        for _ in range(self.rng.randint(1, 5)):
            blocks.append(self.block(_Ctx()))
        return blocks

    # -- elements ------------------------------------------------------------------------------
    def block(self, ctx: _Ctx) -> Node:
        makers: list[Callable[[_Ctx], Node]] = [self.button, self.link, self.img, self.field, self.aria_widget]
        if not ctx.phrasing:
            makers += [self.container, self.container, self.list_, self.heading, self.fieldset, self.shadow_host,
                       self.composite, self.details, self.paragraph]  # fmt: skip
        if ctx.depth >= 3:
            makers = [self.button, self.img, self.field, self.text_span]
        while True:
            maker = self.choice(makers)
            if maker == self.link and ctx.in_a or maker == self.button and (ctx.in_button or ctx.in_a):
                continue
            if maker == self.field and ctx.in_button:
                continue
            break
        node = maker(ctx)
        self.noise(node, ctx)
        return node

    def child(self, ctx: _Ctx, **changes: Any) -> _Ctx:
        base = {**ctx.__dict__, "in_list": False, "depth": ctx.depth + 1}
        base.update(changes)
        return _Ctx(**base)

    def text_span(self, ctx: _Ctx) -> Node:
        return Node("span", {}, [self.choice(_WORDS)])

    def button(self, ctx: _Ctx) -> Node:
        r = self.rng.random()
        if r < 0.55:
            node = Node("button", {"type": "button"}, [self.text()])
        elif r < 0.7:
            node = Node(
                "button", {"type": "button", "aria-label": self.text()}, [Node("span", {"aria-hidden": "true"}, ["×"])]
            )
        elif r < 0.8:
            node = Node("div", {"role": "button", "tabindex": "0"}, [self.text()])
        elif r < 0.87:
            node = Node("input", {"type": self.choice(("button", "submit", "reset")), "value": self.text()})
        else:
            node = Node("button", {"type": "button"}, [Node("img", {"src": "i.png", "alt": self.text()})])
        if self.p(0.7) and node.tag == "button":  # nested interactive content
            node.children.append(self.choice([Node("a", {"href": "#"}, ["x"]), Node("input", {"type": "checkbox", "aria-label": "c"}),
                                              Node("span", {"tabindex": "0"}, ["f"])]))  # fmt: skip
        if self.p():
            node.attrs[self.choice(("aria-pressed", "aria-expanded"))] = self.choice(("true", "false"))
        return node

    def link(self, ctx: _Ctx) -> Node:
        attrs = {"href": "#" + self.choice(_IDS)} if not self.p() else {}
        node = Node("a", attrs, [self.text()])
        if self.p(0.5):
            node.children.append(Node("button", {"type": "button"}, ["b"]))
        return node

    def img(self, ctx: _Ctx) -> Node:
        r = self.rng.random()
        attrs = {"src": "p.png"}
        if r < 0.6:
            attrs["alt"] = self.choice(_WORDS)
        elif r < 0.8:
            attrs["alt"] = ""
        elif r < 0.85:
            attrs["role"] = self.choice(("presentation", "none"))
        elif r < 0.9:
            attrs["aria-label"] = self.text()
        elif r < 0.95:
            return Node("span", {"role": "img", "aria-label": self.text()} if not self.p(3) else {"role": "img"}, ["★"])
        return Node("img", attrs)

    def label_for(self, target: Node, ctx: _Ctx) -> list[Node | str]:
        """``target`` labelled one of the ways HTML offers (or, as a fault, not at all)."""
        r = self.rng.random()
        if self.p(1.5):
            return [target]
        if r < 0.35 or ctx.in_label:
            target.attrs["id"] = self.new_id()
            return [Node("label", {"for": target.attrs["id"]}, [self.text() or "Name"]), target]
        if r < 0.55:
            return [Node("label", {}, [self.text() or "Name", " ", target])]
        if r < 0.7:
            target.attrs["aria-label"] = self.text()
            return [target]
        if r < 0.8:
            ident = self.new_id()
            target.attrs["aria-labelledby"] = ident
            return [Node("span", {"id": ident}, [self.text()]), target]
        if r < 0.9:
            target.attrs["title"] = self.text()
            return [target]
        target.attrs["placeholder"] = self.text()
        return [target]

    def field(self, ctx: _Ctx) -> Node:
        r = self.rng.random()
        if r < 0.6:
            typ = self.choice(_INPUT_TYPES)
            target = Node("input", {"type": typ})
            if typ == "image":
                target.attrs["alt"] = self.text()
            if typ in ("button", "submit", "reset") and self.rng.random() < 0.5:
                target.attrs["value"] = self.text()
        elif r < 0.8:
            target = Node("select", {}, [Node("option", {}, [w]) for w in self.rng.sample(_WORDS, 2)])
            if self.p():
                target.attrs["multiple"] = ""
        else:
            target = Node("textarea")
        if self.p(0.5):
            target.attrs["disabled"] = ""
        parts = self.label_for(target, ctx)
        return parts[0] if len(parts) == 1 else Node("span" if ctx.phrasing else "div", {}, parts)

    def aria_widget(self, ctx: _Ctx) -> Node:
        role = self.choice(("checkbox", "switch", "radio", "slider", "textbox", "searchbox", "spinbutton", "combobox",
                            "progressbar", "meter", "tooltip", "dialog", "alertdialog", "img", "link", "menuitem",
                            "option", "tab", "treeitem", "separator", "scrollbar", "heading", "button"))  # fmt: skip
        attrs: dict[str, str] = {"role": role}
        if role not in ("progressbar", "meter", "tooltip", "dialog", "alertdialog", "img", "separator"):
            attrs["tabindex"] = "0" if not self.p() else "-1"
        required = {"checkbox": ("aria-checked",), "switch": ("aria-checked",), "radio": ("aria-checked",),
                    "slider": ("aria-valuenow",), "spinbutton": (), "combobox": ("aria-expanded",),
                    "meter": ("aria-valuenow",), "heading": ("aria-level",), "scrollbar": ("aria-controls", "aria-valuenow"),
                    "option": ("aria-selected",)}  # fmt: skip
        for a in required.get(role, ()):
            if not self.p(2):
                attrs[a] = {"aria-checked": "false", "aria-expanded": "false", "aria-level": "2",
                            "aria-selected": "false", "aria-controls": self.choice(_IDS)}.get(a, "5")  # fmt: skip
        children: list[Node | str] = []
        if role in ("checkbox", "switch", "radio", "menuitem", "option", "tab", "treeitem", "link", "tooltip",
                    "heading", "button"):  # fmt: skip
            children = [self.text()]
        elif not self.p(2):
            attrs["aria-label"] = self.choice(_WORDS)
        elif self.rng.random() < 0.5:
            attrs["title"] = self.choice(_WORDS)
        tag = "span" if ctx.phrasing else "div"
        return Node(tag, attrs, children)

    def container(self, ctx: _Ctx) -> Node:
        tag = self.choice(
            ("div", "div", "section", "nav", "span", "main", "aside", "header", "footer", "form", "article")
        )
        if ctx.phrasing:
            tag = "span"
        if tag == "form" and ctx.depth:
            tag = "div"
        node = Node(tag)
        if tag == "section" and self.rng.random() < 0.3:
            node.attrs["aria-label"] = self.choice(_WORDS)
        inner = self.child(ctx, phrasing=ctx.phrasing or tag == "span")
        node.children = [self.block(inner) for _ in range(self.rng.randint(1, 3))]
        return node

    def paragraph(self, ctx: _Ctx) -> Node:
        inner = self.child(ctx, phrasing=True)
        kids: list[Node | str] = [self.choice(_WORDS), " "]
        if self.rng.random() < 0.5:
            kids.append(self.block(inner))
        return Node("p", {}, kids)

    def heading(self, ctx: _Ctx) -> Node:
        level = self.rng.randint(1, 6)
        kids: list[Node | str] = [self.text()]
        if self.p():
            kids = [Node("span", {"aria-hidden": "true"}, ["Title"])]
        return Node(f"h{level}", {}, kids)

    def list_(self, ctx: _Ctx) -> Node:
        if self.rng.random() < 0.2:  # an ARIA list
            items: list[Node | str] = [
                Node("div", {"role": "listitem"}, [self.choice(_WORDS)]) for _ in range(self.rng.randint(0, 3))
            ]
            if self.p():
                items.append(Node("div", {}, ["stray"]))
            return Node("div", {"role": "list"}, items)
        tag = self.choice(("ul", "ol", "menu"))
        items = []
        for _ in range(self.rng.randint(1, 3)):
            li = Node("li", {}, [self.choice(_WORDS)])
            if self.rng.random() < 0.3:
                li.children.append(self.block(self.child(ctx, phrasing=False)))
            if self.p():
                li.attrs["role"] = self.choice(("none", "presentation", "option", "menuitem", "listitem", "button"))
            items.append(li)
        if self.p():
            items.insert(
                self.rng.randint(0, len(items)),
                self.choice([Node("div", {}, ["x"]), Node("p", {}, ["y"]), Node("span", {}, ["z"])]),
            )
        if self.p(0.5):
            items.append(Node("template", {}, [Node("li", {}, ["t"])]))
        node = Node(tag, {}, items)
        if self.p():
            node.attrs["role"] = self.choice(("list", "menu", "listbox", "none", "tablist"))
        return node

    def fieldset(self, ctx: _Ctx) -> Node:
        inner = self.child(ctx)
        kids: list[Node | str] = [Node("legend", {}, [self.text()])] if not self.p() else []
        kids += [self.field(inner) for _ in range(self.rng.randint(1, 2))]
        node = Node("fieldset", {}, kids)
        if self.p(0.5):
            node.attrs["disabled"] = ""
        return node

    def details(self, ctx: _Ctx) -> Node:
        kids: list[Node | str] = [Node("summary", {}, [self.text()])]
        kids.append(self.block(self.child(ctx)))
        return Node("details", {"open": ""} if self.rng.random() < 0.5 else {}, kids)

    def shadow_host(self, ctx: _Ctx) -> Node:
        inner = self.child(ctx, in_a=False, in_button=False, in_label=False, phrasing=False)
        shadow: list[Node | str] = [self.block(inner) for _ in range(self.rng.randint(1, 2))]
        light: list[Node | str] = []
        if self.rng.random() < 0.5:
            shadow.insert(self.rng.randint(0, len(shadow)), Node("slot"))
            light = [self.block(self.child(ctx))]
        return Node(
            self.choice(("x-card", "ui-field", "my-widget")),
            {},
            [Node("template", {"shadowrootmode": "open"}, shadow), *light],
        )

    def composite(self, ctx: _Ctx) -> Node:
        kind = self.choice(("tablist", "menu", "listbox", "tree", "radiogroup", "grid", "toolbar", "menubar"))
        item = {"tablist": "tab", "menu": "menuitem", "menubar": "menuitem", "listbox": "option", "tree": "treeitem",
                "radiogroup": "radio", "grid": "row", "toolbar": "button"}[kind]  # fmt: skip
        kids: list[Node | str] = []
        for i in range(self.rng.randint(0 if self.p() else 1, 3)):
            if kind == "grid":
                kids.append(Node("div", {"role": "row"}, [Node("div", {"role": "gridcell"}, [self.choice(_WORDS)])]))
                continue
            attrs = {"role": item, "tabindex": "0" if i == 0 else "-1"}
            if item == "radio":
                attrs["aria-checked"] = "false"
            if item == "option":
                attrs["aria-selected"] = "false"
            if self.p():
                attrs["role"] = self.choice(_GOOD_ROLES)
            kids.append(Node("div", attrs, [self.text()]))
        if self.p():
            kids.append(Node("div", {}, [Node("span", {}, ["Extra"])]))
        attrs = {"role": kind}
        if (
            kind in ("listbox", "tree", "radiogroup", "grid", "menu", "menubar", "tablist", "toolbar")
            and self.rng.random() < 0.6
        ):
            attrs["aria-label"] = self.choice(_WORDS)
        if self.p(0.5):
            attrs["aria-busy"] = "true"
        return Node("div", attrs, kids)

    # -- attribute noise -----------------------------------------------------------------------
    def new_id(self) -> str:
        if self.used_ids and self.p(0.6):
            return self.choice(self.used_ids)  # a duplicate
        ident = f"{self.choice(_IDS)}{len(self.used_ids)}"
        self.used_ids.append(ident)
        return ident

    def noise(self, node: Node, ctx: _Ctx) -> None:
        a = node.attrs
        if self.p():
            a["role"] = self.choice(
                _GOOD_ROLES if self.rng.random() < 0.6 else _INVALID_ROLES + _ABSTRACT_ROLES + ("foo button",)
            )
        if self.p(1.5):
            name = self.choice(tuple(_ARIA_VALUES))
            a[name] = self.choice(_ARIA_VALUES[name])
        if self.p(0.4):
            a[self.choice(_MISSPELLED)] = "x"
        if self.p(0.6):
            ref = self.choice(self.used_ids) if self.used_ids and self.rng.random() < 0.7 else self.choice(_IDS)
            a[self.choice(_IDREF_ATTRS)] = ref
        if self.p(0.7):
            a["id"] = self.new_id()
        if self.p(0.5):
            a["tabindex"] = self.choice(("0", "-1", "1", "2"))
        if self.p(0.5):
            a["aria-hidden"] = "true"
        if self.p(0.3):
            a["hidden"] = ""
        if self.p(0.3):
            a["style"] = "display: none"
        if self.p(0.4):
            a["aria-disabled"] = "true"


def generate_page(rng: random.Random, fault: float = 0.08) -> str:
    """One random page (a body fragment). ``fault`` is each fault's chance per element."""
    return serialize(PageGenerator(rng, fault).page())


# ---------------------------------------------------------------------------------------------
# Mutations of rendered stories
# ---------------------------------------------------------------------------------------------

_INTERACTIVE = (
    lambda: Node("a", {"href": "#"}, ["link"]),
    lambda: Node("button", {"type": "button"}, ["inner"]),
    lambda: Node("input", {"type": "checkbox", "aria-label": "check"}),
    lambda: Node("span", {"tabindex": "0"}, ["focus"]),
)


_RAW_TEXT = frozenset({"textarea", "title", "select", "option", "optgroup", "datalist", "iframe", "noscript"})


def _is_interactive(n: Node) -> bool:
    return n.tag in ("button", "a", "select", "textarea") or n.attrs.get("role") in (
        "button", "link", "tab", "menuitem", "option", "checkbox", "switch", "radio", "treeitem")  # fmt: skip


def mutate(html: str, rng: random.Random, count: int = 1) -> tuple[str, list[str]]:
    """``count`` random edits of a story's HTML; returns the new page and the edits' names."""
    nodes = parse_fragment(html)
    done: list[str] = []
    for _ in range(count):
        elements = [n for n in _all_nodes(nodes) if n.tag not in ("template", "slot", "style", "script")]
        if not elements:
            break
        done.append(_mutate_once(nodes, elements, rng))
    return serialize(nodes), done


def _mutate_once(nodes: list[Node | str], elements: list[Node], rng: random.Random) -> str:
    op = rng.choice(("remove-attr", "swap-attr", "change-role", "duplicate-id", "nest-interactive", "move-label",
                     "empty-name", "add-aria", "remove-attr", "change-role"))  # fmt: skip
    with_attrs = [n for n in elements if n.attrs]
    if op == "remove-attr" and with_attrs:
        n = rng.choice(with_attrs)
        del n.attrs[rng.choice(list(n.attrs))]
    elif op == "swap-attr" and len(with_attrs) >= 2:
        a, b = rng.sample(with_attrs, 2)
        ka, kb = rng.choice(list(a.attrs)), rng.choice(list(b.attrs))
        va, vb = a.attrs.pop(ka), b.attrs.pop(kb)
        a.attrs[kb], b.attrs[ka] = vb, va
    elif op == "change-role":
        n = rng.choice(elements)
        pool = _GOOD_ROLES if rng.random() < 0.8 else _INVALID_ROLES + _ABSTRACT_ROLES
        n.attrs["role"] = rng.choice(pool)
    elif op == "duplicate-id":
        with_id = [n for n in elements if n.attrs.get("id")]
        n = rng.choice(elements)
        n.attrs["id"] = rng.choice(with_id).attrs["id"] if with_id else "dup"
    elif op == "nest-interactive":
        # not into raw-text or option content, which the HTML parser keeps as text
        containers = [n for n in elements if n.tag not in VOID and n.tag not in _RAW_TEXT]
        hosts = [n for n in containers if _is_interactive(n)] or containers
        if hosts:
            host = rng.choice(hosts)
            inner = rng.choice(_INTERACTIVE)()
            if host.tag == "a" and inner.tag == "a" or host.tag == "button" and inner.tag == "button":
                inner = _INTERACTIVE[2]()  # the parser would split an <a> in <a> or <button> in <button>
            host.children.append(inner)
    elif op == "move-label":
        labels = [n for n in elements if n.tag == "label"]
        with_id = [n for n in elements if n.attrs.get("id")]
        if labels and with_id:
            rng.choice(labels).attrs["for"] = rng.choice(with_id).attrs["id"]
        elif labels:
            lab = rng.choice(labels)
            lab.attrs.pop("for", None)
            lab.children = [c for c in lab.children if isinstance(c, str)]
    elif op == "empty-name":
        n = rng.choice(elements)
        n.attrs.pop("aria-label", None)
        n.children = [c for c in n.children if isinstance(c, Node)]
    else:
        op = "add-aria"
        n = rng.choice(elements)
        name = rng.choice(tuple(_ARIA_VALUES) + _MISSPELLED)
        n.attrs[name] = rng.choice(_ARIA_VALUES.get(name, ("x",)))
    return op


# ---------------------------------------------------------------------------------------------
# The two checkers
# ---------------------------------------------------------------------------------------------


def python_rules(html: str) -> set[str]:
    """The mapped rules the Python checker reports on ``html``."""
    return {v.rule for v in check_accessibility(html) if v.rule in MAPPED_RULES}


_AXE_BATCH_JS = """async ({pages, rules}) => {
  const out = [];
  for (const html of pages) {
    document.body.setHTMLUnsafe(html);
    const r = await axe.run(document, {runOnly: {type: 'rule', values: rules}, resultTypes: ['violations']});
    out.push({v: r.violations.map((v) => v.id), i: r.incomplete.map((v) => v.id)});
  }
  document.body.setHTMLUnsafe('');
  return out;
}"""


@dataclass(frozen=True)
class AxeVerdict:
    violations: frozenset[str]
    incomplete: frozenset[str]


class AxeSession:
    """One headless Chromium page with axe-core loaded once; ``run`` checks pages in batches."""

    def __init__(self, chromium_path: str | None = None, batch: int = 32) -> None:
        self.chromium_path = chromium_path
        self.batch = batch
        self._pw: Any = None
        self._browser: Any = None
        self._page: Any = None
        self.rules: list[str] = []
        self.version = ""

    def __enter__(self) -> AxeSession:
        from playwright.sync_api import sync_playwright

        from worldagent.storytest.runner import CHROMIUM_ARGS, _page_document, find_chromium, load_axe_source

        executable = find_chromium(self.chromium_path)
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=executable, headless=True, args=list(CHROMIUM_ARGS)
            )
            context = self._browser.new_context()
            self._page = context.new_page()
            self._page.set_content(_page_document(""), wait_until="load")
            self._page.add_script_tag(content=load_axe_source())
            self.version = str(self._page.evaluate("() => axe.version"))
            enabled = set(self._page.evaluate("() => axe._audit.rules.filter((r) => r.enabled).map((r) => r.id)"))
        except Exception:
            self.__exit__()
            raise
        # Only the rules axe still runs by default (deprecated ones are disabled in 4.12).
        self.rules = [r for r in MAPPED_RULES if r in enabled]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        if self._pw is not None:
            self._pw.stop()
            self._pw = None

    def run(self, pages: Sequence[str]) -> list[AxeVerdict]:
        out: list[AxeVerdict] = []
        for start in range(0, len(pages), self.batch):
            chunk = list(pages[start : start + self.batch])
            raw = self._page.evaluate(_AXE_BATCH_JS, {"pages": chunk, "rules": self.rules})
            out += [AxeVerdict(frozenset(r["v"]), frozenset(r["i"])) for r in raw]
        return out


# ---------------------------------------------------------------------------------------------
# Scores
# ---------------------------------------------------------------------------------------------


@dataclass
class RuleScore:
    true_positive: int = 0
    false_positive: int = 0
    false_negative: int = 0

    @property
    def fires(self) -> int:
        return self.true_positive + self.false_negative

    @property
    def precision(self) -> float:
        flagged = self.true_positive + self.false_positive
        return self.true_positive / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        return self.true_positive / self.fires if self.fires else 1.0


@dataclass
class PageVerdicts:
    page_id: str
    kind: str
    python: frozenset[str]
    axe: frozenset[str]

    @property
    def agree(self) -> bool:
        return bool(self.python) == bool(self.axe)


def compare(pages: Iterable[PageVerdicts]) -> tuple[float, dict[str, RuleScore]]:
    """Page-level agreement (same verdict: clean or not) and per-rule scores (page granularity)."""
    total = same = 0
    scores: dict[str, RuleScore] = {}
    for p in pages:
        total += 1
        same += p.agree
        for rule in p.python | p.axe:
            s = scores.setdefault(rule, RuleScore())
            if rule in p.python and rule in p.axe:
                s.true_positive += 1
            elif rule in p.python:
                s.false_positive += 1
            else:
                s.false_negative += 1
    return (same / total if total else 1.0), dict(sorted(scores.items()))


# ---------------------------------------------------------------------------------------------
# Shrinking
# ---------------------------------------------------------------------------------------------


def _candidates(nodes: list[Node | str]) -> Iterator[list[Node | str]]:
    """Every page one step smaller: a subtree removed, an element unwrapped, an attribute or a
    text dropped. Bigger steps first."""

    def rebuild(seq: list[Node | str], path: tuple[int, ...], how: str, extra: str = "") -> list[Node | str]:
        out: list[Node | str] = []
        for i, n in enumerate(seq):
            if path[0] != i:
                out.append(n)
                continue
            assert isinstance(n, Node) or len(path) == 1
            if len(path) > 1:
                assert isinstance(n, Node)
                out.append(Node(n.tag, dict(n.attrs), rebuild(n.children, path[1:], how, extra)))
            elif how == "remove":
                continue
            elif how == "unwrap":
                assert isinstance(n, Node)
                out.extend(n.children)
            elif how == "attr":
                assert isinstance(n, Node)
                out.append(Node(n.tag, {k: v for k, v in n.attrs.items() if k != extra}, n.children))
        return out

    paths: list[tuple[tuple[int, ...], Node | str]] = []

    def collect(seq: list[Node | str], prefix: tuple[int, ...]) -> None:
        for i, n in enumerate(seq):
            paths.append((prefix + (i,), n))
            if isinstance(n, Node):
                collect(n.children, prefix + (i,))

    collect(nodes, ())
    for path, _ in paths:
        yield rebuild(nodes, path, "remove")
    for path, n in paths:
        if isinstance(n, Node) and n.children:
            yield rebuild(nodes, path, "unwrap")
    for path, n in paths:
        if isinstance(n, Node):
            for k in n.attrs:
                yield rebuild(nodes, path, "attr", k)


def shrink(html: str, still_differs: Callable[[list[str]], list[bool]], max_rounds: int = 60, batch: int = 24) -> str:
    """A minimal page on which ``still_differs`` (a batch predicate) still holds: greedy steps,
    each the first one-step-smaller candidate that keeps the disagreement."""
    nodes = parse_fragment(html)
    for _ in range(max_rounds):
        found = None
        chunk: list[list[Node | str]] = []
        for cand in _candidates(nodes):
            chunk.append(cand)
            if len(chunk) == batch:
                found = _first_true(chunk, still_differs)
                chunk = []
                if found is not None:
                    break
        if found is None and chunk:
            found = _first_true(chunk, still_differs)
        if found is None:
            break
        nodes = found
    return serialize(nodes)


def _first_true(chunk: list[list[Node | str]], predicate: Callable[[list[str]], list[bool]]) -> list[Node | str] | None:
    results = predicate([serialize(c) for c in chunk])
    return next((c for c, ok in zip(chunk, results, strict=True) if ok), None)
