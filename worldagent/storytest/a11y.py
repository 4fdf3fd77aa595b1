"""Accessibility rules and the accessibility tree, computed on rendered story HTML.

The rules follow axe-core's (same rule ids where axe has one) but run on the static HTML
in one pass over the tree, so no browser is needed. Rule ids:

``button-name``, ``link-name``, ``image-alt``, ``label``, ``aria-toggle-field-name``,
``aria-input-field-name``, ``aria-progressbar-name``, ``aria-dialog-name``,
``aria-meter-name``, ``aria-tooltip-name``, ``aria-treeitem-name``, ``empty-heading``,
``aria-valid-attr``, ``aria-valid-attr-value``, ``aria-allowed-attr``,
``aria-prohibited-attr``, ``aria-required-attr``, ``aria-required-parent``,
``aria-required-children``, ``aria-roles``, ``aria-hidden-focus``, ``nested-interactive``,
``duplicate-id``, ``duplicate-id-aria``, ``tabindex``, ``interactive-handler`` (click
handler on a non-interactive element), ``focusable-interactive`` (interactive role that the
keyboard cannot reach), ``list``, ``listitem``, ``heading-order``.

``accessibility_tree`` computes roles (explicit, else implicit from the element), accessible
names (aria-labelledby > aria-label > native label/alt/value/legend/caption > content for
name-from-content roles > title > placeholder) and states.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from worldagent.storytest._aria_data import ARIA_ATTRS, ARIA_ROLES, GLOBAL_ATTRS
from worldagent.storytest.dom import Element, iter_elements, parse_html, text_content

__all__ = [
    "AXNode",
    "RULES",
    "Violation",
    "accessibility_tree",
    "accessible_name",
    "check_accessibility",
    "check_accessibility_tree",
    "format_violation",
    "has_click_handler",
    "target_of",
]


@dataclass(frozen=True, slots=True)
class Violation:
    """One rule violation. ``target`` is a short CSS-like selector of the offending element."""

    rule: str
    target: str
    message: str

    def __str__(self) -> str:
        return format_violation(self)

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "target": self.target, "message": self.message}


def format_violation(v: Violation) -> str:
    """``"rule: message (target)"``, the form used in ``StoryResult.errors``."""
    return f"{v.rule}: {v.message} ({v.target})" if v.target else f"{v.rule}: {v.message}"


@dataclass(frozen=True, slots=True)
class AXNode:
    """A node of the computed accessibility tree (elements with a meaningful role only)."""

    role: str
    name: str
    states: dict[str, str] = field(default_factory=dict)
    depth: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"role": self.role, "name": self.name, "states": dict(self.states), "depth": self.depth}


RULES: tuple[str, ...] = (
    "button-name", "link-name", "image-alt", "label", "aria-toggle-field-name",
    "aria-input-field-name", "aria-progressbar-name", "aria-dialog-name", "aria-meter-name",
    "aria-tooltip-name", "aria-treeitem-name", "empty-heading", "aria-valid-attr",
    "aria-valid-attr-value", "aria-allowed-attr", "aria-prohibited-attr", "aria-required-attr",
    "aria-required-parent", "aria-required-children", "aria-roles", "aria-hidden-focus",
    "nested-interactive", "duplicate-id", "duplicate-id-aria", "tabindex",
    "interactive-handler", "focusable-interactive", "list", "listitem", "heading-order",
)

# ---------------------------------------------------------------------------------------------
# Role data
# ---------------------------------------------------------------------------------------------

_ABSTRACT = frozenset(r for r, spec in ARIA_ROLES.items() if spec["type"] == "abstract")
_EXTRA_VALID_ROLES = frozenset({"generic"})  # valid in ARIA 1.2, absent from axe's table
_PRESENTATIONAL = frozenset({"none", "presentation"})
_NO_ROLE = frozenset({"none", "presentation", "generic"})

# WAI-ARIA 1.2 roles whose name may come from their content.
_NAME_FROM_CONTENT = frozenset(
    {"button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem",
     "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowheader", "switch",
     "tab", "tooltip", "treeitem"}
)
# Roles whose descendants are presentational (axe's nested-interactive), plus link
# (HTML forbids interactive content inside <a>).
_CHILDREN_PRESENTATIONAL = frozenset(
    [r for r, spec in ARIA_ROLES.items() if spec.get("children_presentational")] + ["link"]
)
_WIDGET_ROLES = frozenset(
    r for r, spec in ARIA_ROLES.items() if spec["type"] in ("widget", "composite")
) - {"progressbar"}  # axe types progressbar as a widget; it is not operable
# Roles a keyboard user must be able to reach (focusable-interactive).
_FOCUS_ROLES = frozenset(
    {"button", "link", "checkbox", "switch", "radio", "tab", "menuitem", "menuitemcheckbox",
     "menuitemradio", "option", "slider", "spinbutton", "textbox", "searchbox", "combobox",
     "treeitem", "gridcell", "scrollbar"}
)
# Items of composite widgets: reachable via roving tabindex or aria-activedescendant.
_COMPOSITE_ITEMS = {
    "tab": ("tablist",),
    "option": ("listbox",),
    "menuitem": ("menu", "menubar"),
    "menuitemcheckbox": ("menu", "menubar"),
    "menuitemradio": ("menu", "menubar"),
    "treeitem": ("tree", "treegrid"),
    "radio": ("radiogroup",),
    "gridcell": ("grid", "treegrid"),
}
_TOGGLE_FIELD_ROLES = frozenset(
    {"checkbox", "menuitemcheckbox", "menuitemradio", "radio", "switch", "option"}
)
_INPUT_FIELD_ROLES = frozenset({"combobox", "listbox", "searchbox", "slider", "spinbutton", "textbox"})
_ROLE_NAME_RULES = {
    "progressbar": "aria-progressbar-name",
    "dialog": "aria-dialog-name",
    "alertdialog": "aria-dialog-name",
    "meter": "aria-meter-name",
    "tooltip": "aria-tooltip-name",
    "treeitem": "aria-treeitem-name",
}

_SIMPLE_IMPLICIT: dict[str, str] = {
    "article": "article", "aside": "complementary", "blockquote": "blockquote",
    "button": "button", "caption": "caption", "code": "code", "datalist": "listbox",
    "dd": "definition", "del": "deletion", "details": "group", "dfn": "term",
    "dialog": "dialog", "dt": "term", "em": "emphasis", "fieldset": "group",
    "figure": "figure", "h1": "heading", "h2": "heading", "h3": "heading", "h4": "heading",
    "h5": "heading", "h6": "heading", "hgroup": "group", "hr": "separator", "ins": "insertion",
    "li": "listitem", "main": "main", "mark": "mark", "math": "math", "menu": "list",
    "meter": "meter", "nav": "navigation", "ol": "list", "optgroup": "group",
    "option": "option", "output": "status", "p": "paragraph", "progress": "progressbar",
    "search": "search", "strong": "strong", "sub": "subscript", "sup": "superscript",
    "table": "table", "tbody": "rowgroup", "textarea": "textbox", "tfoot": "rowgroup",
    "thead": "rowgroup", "time": "time", "tr": "row", "ul": "list", "address": "group",
}
_INPUT_ROLES: dict[str, str | None] = {
    "button": "button", "submit": "button", "reset": "button", "image": "button",
    "checkbox": "checkbox", "radio": "radio", "range": "slider", "number": "spinbutton",
    "search": "searchbox", "email": "textbox", "tel": "textbox", "text": "textbox",
    "url": "textbox", "password": "textbox", "hidden": None, "color": None, "date": None,
    "datetime-local": None, "file": None, "month": None, "time": None, "week": None,
}
_TEXT_INPUT_TYPES = frozenset({"text", "search", "email", "tel", "url"})
_SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
_SECTIONING_ROLES = frozenset({"article", "complementary", "main", "navigation", "region"})
# Elements without an ARIA role mapping (generic): ARIA 1.2 prohibits naming them.
_GENERIC_TAGS = frozenset(
    {"div", "span", "b", "i", "u", "s", "small", "bdi", "bdo", "data", "samp", "kbd", "var",
     "pre", "q", "font", "center", "big", "tt"}
)
_HEADINGS = {"h1": "1", "h2": "2", "h3": "3", "h4": "4", "h5": "5", "h6": "6"}
_NATIVE_FOCUSABLE = frozenset({"button", "select", "textarea", "iframe"})
_DISABLEABLE = frozenset({"button", "input", "select", "textarea", "option", "optgroup", "fieldset"})
_NATIVELY_INTERACTIVE = frozenset(
    {"button", "input", "select", "textarea", "summary", "label", "option", "details"}
)
_NOT_CONTENT = frozenset({"script", "style", "template", "head", "title", "meta", "link", "noscript"})
_BLOCK = frozenset(
    {"address", "article", "aside", "blockquote", "br", "dd", "details", "dialog", "div", "dl",
     "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
     "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
     "td", "th", "tr", "ul"}
)
_IDREF_ATTRS = ("aria-labelledby", "aria-describedby", "aria-controls", "aria-owns",
                "aria-activedescendant", "aria-errormessage", "aria-details", "aria-flowto")
_CLICK_EVENTS = frozenset({"click", "dblclick"})
_DISPLAY_NONE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)
_WS = re.compile(r"\s+")
_INT = re.compile(r"^[+-]?\d+$")
_DECIMAL = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_CSS_IDENT = re.compile(r"^-?[A-Za-z_][\w-]*$")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _valid_role(token: str) -> bool:
    return token in ARIA_ROLES or token in _EXTRA_VALID_ROLES or token.startswith(("doc-", "graphics-"))


def _tabindex(el: Element) -> int | None:
    raw = el.attrs.get("tabindex")
    if raw is None:
        return None
    raw = raw.strip()
    return int(raw) if _INT.match(raw) else None


def has_click_handler(el: Element) -> bool:
    """A click handler: ``onclick``/``ondblclick``, or a Plaited ``p-trigger`` binding ``click``."""
    attrs = el.attrs
    if "onclick" in attrs or "ondblclick" in attrs:
        return True
    trig = attrs.get("p-trigger")
    if not trig:
        return False
    for part in re.split(r"[\s,;]+", trig):
        if part.split(":", 1)[0].strip().lower() in _CLICK_EVENTS:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Per-document context: roles, visibility, ids, labels, computed once per check
# ---------------------------------------------------------------------------------------------


class _Doc:
    __slots__ = ("root", "elements", "role", "explicit", "ax_hidden", "not_rendered", "disabled", "native_disabled",
                 "ids", "id_elems", "labels_for", "owner_of", "_names", "_composite_tabbable")

    def __init__(self, root: Element) -> None:
        self.root = root
        self.elements: list[Element] = []
        self.role: dict[Element, str | None] = {}
        self.explicit: dict[Element, str | None] = {}
        self.ax_hidden: set[Element] = set()
        self.not_rendered: set[Element] = set()
        self.disabled: set[Element] = set()
        self.native_disabled: set[Element] = set()
        self.ids: dict[str, Element] = {}
        self.id_elems: dict[str, list[Element]] = {}
        self.labels_for: dict[str, list[Element]] = {}
        self.owner_of: dict[str, Element] = {}
        self._names: dict[Element, str] = {}
        self._composite_tabbable: dict[Element, bool] = {}
        self._walk()

    def _walk(self) -> None:
        # stack items: (element, ax_hidden, not_rendered, in_disabled_fieldset, in_sectioning, in_grid)
        stack: list[tuple[Element, bool, bool, bool, bool, bool]] = []
        for child in reversed(self.root.children):
            if isinstance(child, Element):
                stack.append((child, False, False, False, False, False))
        elements = self.elements
        while stack:
            el, hid, nr, fs_dis, sect, grid = stack.pop()
            elements.append(el)
            attrs = el.attrs
            tag = el.tag
            if not nr:
                style = attrs.get("style")
                if ("hidden" in attrs and tag != "input") or (style and _DISPLAY_NONE.search(style)):
                    nr = True
                elif tag in _NOT_CONTENT:
                    nr = True
                elif tag == "input" and attrs.get("type", "").lower() == "hidden":
                    nr = True
                elif tag == "datalist":
                    nr = True  # suggestions of an <input list>, not rendered in place
                elif tag == "dialog" and "open" not in attrs:
                    nr = True  # a closed <dialog> is display: none
                elif (el.parent is not None and el.parent.tag == "details"
                      and "open" not in el.parent.attrs and not _is_first_summary(el)):
                    nr = True  # closed <details>: only its summary is rendered
            if not hid and (nr or attrs.get("aria-hidden", "").strip().lower() == "true"):
                hid = True
            if nr:
                self.not_rendered.add(el)
            if hid:
                self.ax_hidden.add(el)
            if tag in _DISABLEABLE and ("disabled" in attrs or fs_dis):
                self.disabled.add(el)
                self.native_disabled.add(el)
            elif attrs.get("aria-disabled", "").strip().lower() == "true":
                self.disabled.add(el)
            role, explicit = self._compute_role(el, sect, grid)
            self.role[el] = role
            self.explicit[el] = explicit
            ident = attrs.get("id")
            if ident:
                lst = self.id_elems.get(ident)
                if lst is None:
                    self.id_elems[ident] = [el]
                    self.ids[ident] = el
                else:
                    lst.append(el)
            if tag == "label":
                target = attrs.get("for")
                if target:
                    self.labels_for.setdefault(target, []).append(el)
            owns = attrs.get("aria-owns")
            if owns:
                for ref in owns.split():
                    self.owner_of.setdefault(ref, el)
            if el.children:
                c_fs = fs_dis or (tag == "fieldset" and "disabled" in attrs)
                c_sect = sect or tag in _SECTIONING or role in _SECTIONING_ROLES
                c_grid = (grid or role in ("grid", "treegrid")) and role != "table"
                for child in reversed(el.children):
                    if isinstance(child, Element):
                        stack.append((child, hid, nr, c_fs, c_sect, c_grid))

    def _compute_role(self, el: Element, sect: bool, grid: bool) -> tuple[str | None, str | None]:
        raw = el.attrs.get("role")
        explicit: str | None = None
        if raw:
            for tok in raw.lower().split():
                if _valid_role(tok) and tok not in _ABSTRACT:
                    explicit = tok
                    break
        if explicit in _PRESENTATIONAL and (self.focusable(el) or _has_global_aria(el)):
            explicit = None  # presentational role conflict resolution: the role is ignored
        if explicit is not None:
            return explicit, explicit
        return _implicit_role(el, sect, grid), None

    # -- queries ------------------------------------------------------------------------------
    def focusable(self, el: Element) -> bool:
        """Focusable by any means (natively or by a tabindex), and not natively disabled."""
        if el in self.native_disabled:
            return False
        if _tabindex(el) is not None:
            return True
        return _natively_focusable(el)

    def tabbable(self, el: Element) -> bool:
        """Reachable with the Tab key."""
        if el in self.not_rendered or el in self.native_disabled:
            return False
        ti = _tabindex(el)
        if ti is not None:
            return ti >= 0
        return _natively_focusable(el)

    def name(self, el: Element) -> str:
        cached = self._names.get(el)
        if cached is None:
            cached = _norm(self._text_alt(el, set(), True, False, False))
            self._names[el] = cached
        return cached

    def description(self, el: Element) -> str:
        ref = el.attrs.get("aria-describedby")
        if ref:
            parts = []
            for ident in ref.split():
                target = self.ids.get(ident)
                if target is not None:
                    parts.append(self._text_alt(target, {el}, False, True, True))
            text = _norm(" ".join(parts))
            if text:
                return text
        return _norm(el.attrs.get("aria-description", ""))

    def _text_alt(
        self, el: Element, visited: set[Element], allow_labelledby: bool, recursing: bool,
        include_hidden: bool,
    ) -> str:
        """Simplified accname 1.2 text alternative computation."""
        if el in visited:
            return ""
        visited.add(el)
        attrs = el.attrs
        if not include_hidden and el in self.ax_hidden:
            return ""
        if allow_labelledby:
            lb = attrs.get("aria-labelledby")
            if lb:
                parts = []
                for ident in lb.split():
                    target = self.ids.get(ident)
                    if target is not None and target is not el:
                        parts.append(self._text_alt(target, visited, False, True, True))
                    elif target is el:
                        parts.append(self._self_text(el, visited))
                text = " ".join(p for p in parts if p.strip())
                if text.strip():
                    return text
        tag = el.tag
        role = self.role.get(el)
        if recursing and tag == "input" and attrs.get("type", "text").lower() in _TEXT_INPUT_TYPES:
            return attrs.get("value", "")  # embedded control: its value
        label = attrs.get("aria-label")
        if label and label.strip() and role not in _PRESENTATIONAL:
            return label
        native = self._native_name(el, visited)
        if native.strip():
            return native
        if recursing or role in _NAME_FROM_CONTENT:
            text = self._content_text(el, visited, include_hidden)
            if text.strip():
                return text
        title = attrs.get("title")
        if title and title.strip():
            return title
        if tag in ("input", "textarea"):
            placeholder = attrs.get("placeholder") or attrs.get("aria-placeholder")
            if placeholder and placeholder.strip():
                return placeholder
        return ""

    def _self_text(self, el: Element, visited: set[Element]) -> str:
        label = el.attrs.get("aria-label")
        if label and label.strip():
            return label
        return self._content_text(el, visited, False)

    def _content_text(self, el: Element, visited: set[Element], include_hidden: bool) -> str:
        parts: list[str] = []
        for child in el.children:
            if isinstance(child, str):
                parts.append(child)
                continue
            if child.tag in _NOT_CONTENT:
                continue
            text = self._text_alt(child, visited, True, True, include_hidden)
            if child.tag in _BLOCK:  # as Chromium: only block-level boxes are set apart
                parts.append(f" {text} ")
            else:
                parts.append(text)
        return "".join(parts)

    def _native_name(self, el: Element, visited: set[Element]) -> str:
        tag = el.tag
        attrs = el.attrs
        if tag == "input":
            typ = attrs.get("type", "text").lower()
            if typ in ("button", "submit", "reset"):
                value = attrs.get("value")
                if value is not None and value.strip():
                    return value
                if typ == "submit":
                    return "Submit"
                if typ == "reset":
                    return "Reset"
                return self._label_text(el, visited)
            if typ == "image":
                return attrs.get("alt") or attrs.get("value") or ""
            return self._label_text(el, visited)
        if tag in ("select", "textarea", "meter", "progress", "output"):
            return self._label_text(el, visited)
        if tag in ("img", "area"):
            return attrs.get("alt", "")
        if tag == "fieldset":
            return self._first_child_text(el, "legend", visited)
        if tag == "figure":
            return self._first_child_text(el, "figcaption", visited)
        if tag == "table":
            return self._first_child_text(el, "caption", visited)
        if tag == "svg":
            return self._first_child_text(el, "title", visited)
        return ""

    def _first_child_text(self, el: Element, tag: str, visited: set[Element]) -> str:
        for child in el.children:
            if isinstance(child, Element) and child.tag == tag:
                return self._content_text(child, visited, False)
        return ""

    def _label_text(self, el: Element, visited: set[Element]) -> str:
        parts: list[str] = []
        ident = el.attrs.get("id")
        if ident:
            for label in self.labels_for.get(ident, ()):
                parts.append(self._text_alt(label, visited, True, True, False))
        anc = el.parent
        while anc is not None:
            if anc.tag == "label":
                if (anc not in visited and not anc.attrs.get("for")
                        and _first_labelable(anc) is el):
                    parts.append(self._text_alt(anc, visited, True, True, False))
                break
            anc = anc.parent
        return " ".join(p for p in parts if p.strip())

    def composite_has_tabbable(self, container: Element, item_role: str) -> bool:
        cached = self._composite_tabbable.get(container)
        if cached is None:
            cached = False
            for d in container.iter():
                if self.role.get(d) == item_role and self.tabbable(d):
                    cached = True
                    break
            self._composite_tabbable[container] = cached
        return cached


_LABELABLE = frozenset({"button", "input", "meter", "output", "progress", "select", "textarea"})


def _first_labelable(label: Element) -> Element | None:
    """The control a wrapping <label> labels: its first labelable descendant."""
    for d in iter_elements(label):
        if d.tag in _LABELABLE and not (d.tag == "input" and d.attrs.get("type", "").lower() == "hidden"):
            return d
    return None


def _is_first_summary(el: Element) -> bool:
    if el.tag != "summary" or el.parent is None:
        return False
    for sib in el.parent.children:
        if isinstance(sib, Element) and sib.tag == "summary":
            return sib is el
    return False


def _has_global_aria(el: Element) -> bool:
    for name in el.attrs:
        if name.startswith("aria-") and name in GLOBAL_ATTRS:
            return True
    return False


def _natively_interactive(el: Element) -> bool:
    tag = el.tag
    if tag in _NATIVELY_INTERACTIVE:
        return True
    return tag in ("a", "area") and "href" in el.attrs


def _natively_focusable(el: Element) -> bool:
    tag = el.tag
    attrs = el.attrs
    if tag in _NATIVE_FOCUSABLE:
        return "disabled" not in attrs or tag == "iframe"
    if tag == "input":
        return attrs.get("type", "").lower() != "hidden" and "disabled" not in attrs
    if tag in ("a", "area"):
        return "href" in attrs
    if tag == "summary":
        return el.parent is not None and el.parent.tag == "details"
    if tag in ("audio", "video"):
        return "controls" in attrs
    ce = attrs.get("contenteditable")
    return ce is not None and ce.lower() in ("", "true", "plaintext-only")


def _implicit_role(el: Element, sect: bool, grid: bool) -> str | None:
    tag = el.tag
    role = _SIMPLE_IMPLICIT.get(tag)
    if role is not None:
        return role
    attrs = el.attrs
    if tag in ("a", "area"):
        return "link" if "href" in attrs else None
    if tag == "img":
        alt = attrs.get("alt")
        if alt is not None and alt == "" and not _has_global_aria(el):
            return "presentation"
        return "img"
    if tag == "input":
        typ = attrs.get("type", "text").lower()
        if typ in _TEXT_INPUT_TYPES and "list" in attrs:
            return "combobox"
        return _INPUT_ROLES.get(typ, "textbox")
    if tag == "select":
        size = attrs.get("size", "")
        if "multiple" in attrs or (size.isdigit() and int(size) > 1):
            return "listbox"
        return "combobox"
    if tag == "header":
        return None if sect else "banner"
    if tag == "footer":
        return None if sect else "contentinfo"
    if tag in ("section", "form"):
        named = any(attrs.get(a, "").strip() for a in ("aria-label", "aria-labelledby", "title"))
        return ("region" if tag == "section" else "form") if named else None
    if tag == "td":
        return "gridcell" if grid else "cell"
    if tag == "th":
        scope = attrs.get("scope", "").lower()
        return "rowheader" if scope in ("row", "rowgroup") else "columnheader"
    if tag == "svg":
        return "graphics-document"
    return None


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------


def target_of(el: Element) -> str:
    """Short CSS-like selector for ``el`` (``tag#id`` when the id is unique, else a
    ``tag:nth-of-type(n)`` path)."""
    root = el
    while root.parent is not None:
        root = root.parent
    counts: dict[str, list[Element]] = {}
    for d in iter_elements(root):
        ident = d.attrs.get("id")
        if ident:
            counts.setdefault(ident, []).append(d)
    return _selector(el, counts)


def _target(el: Element, doc: _Doc) -> str:
    return _selector(el, doc.id_elems)


def _selector(el: Element, id_elems: dict[str, list[Element]]) -> str:
    segs: list[str] = []
    node: Element | None = el
    while node is not None and node.tag != "#document":
        ident = node.attrs.get("id")
        if ident and len(id_elems.get(ident, ())) == 1 and _CSS_IDENT.match(ident):
            segs.append(f"{node.tag}#{ident}")
            break
        parent = node.parent
        if node.tag in ("html", "body") and node is not el:
            node = parent
            continue
        if parent is None:
            segs.append(node.tag)
            break
        same = 0
        pos = 0
        for c in parent.children:
            if isinstance(c, Element) and c.tag == node.tag:
                same += 1
                if c is node:
                    pos = same
        segs.append(node.tag if same == 1 else f"{node.tag}:nth-of-type({pos})")
        node = parent
    return " > ".join(reversed(segs))


def _describe(el: Element, doc: _Doc) -> str:
    """A short human description such as ``<div role="button">``."""
    role = el.attrs.get("role")
    return f'<{el.tag} role="{role}">' if role else f"<{el.tag}>"


# ---------------------------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------------------------


class _Checker:
    def __init__(self, doc: _Doc) -> None:
        self.doc = doc
        self.out: list[Violation] = []
        self._flagged_nested: set[Element] = set()

    def add(self, rule: str, el: Element, message: str) -> None:
        self.out.append(Violation(rule, _target(el, self.doc), message))

    def run(self) -> list[Violation]:
        doc = self.doc
        last_heading = 0
        for el in doc.elements:
            hidden = el in doc.ax_hidden
            self._aria_attrs(el)
            if hidden:
                if el.attrs.get("aria-hidden", "").strip().lower() == "true" and el not in doc.not_rendered:
                    self._aria_hidden_focus(el)
                continue
            role = doc.role[el]
            self._names(el, role)
            self._roles(el, role)
            self._keyboard(el, role)
            self._structure(el, role)
            if role == "heading":
                level = _heading_level(el)
                if level is not None:
                    if last_heading and level > last_heading + 1:
                        self.add("heading-order", el,
                                 f"Heading level {level} follows level {last_heading}; "
                                 "heading levels should only increase by one")
                    last_heading = level
        self._duplicate_ids()
        return self.out

    # -- names ----------------------------------------------------------------------------
    def _names(self, el: Element, role: str | None) -> None:
        doc = self.doc
        tag = el.tag
        attrs = el.attrs
        if tag == "button" or (role == "button" and tag != "input"):
            if not doc.name(el):
                self.add("button-name", el, "Button has no accessible name: give it text content, "
                         "aria-label or aria-labelledby")
            return
        if tag == "input":
            typ = attrs.get("type", "text").lower()
            if typ == "button":
                if not doc.name(el):
                    self.add("button-name", el, 'Input button has no accessible name: give it a '
                             'value, aria-label or aria-labelledby')
            elif typ == "image":
                if not doc.name(el):
                    self.add("image-alt", el, "Image button has no alt text")
            elif typ not in ("hidden", "submit", "reset"):
                if not doc.name(el):
                    self.add("label", el, f'Form field <input type="{typ}"> has no label: use '
                             "<label for>, a wrapping <label>, aria-label or aria-labelledby")
            return
        if tag in ("select", "textarea"):
            if not doc.name(el):
                self.add("label", el, f"Form field <{tag}> has no label: use <label for>, "
                         "a wrapping <label>, aria-label or aria-labelledby")
            return
        if role == "link":
            if not doc.name(el):
                self.add("link-name", el, "Link has no accessible name: give it text content, "
                         "aria-label or aria-labelledby")
            return
        if tag == "img":
            if "alt" not in attrs and role not in _PRESENTATIONAL and not doc.name(el):
                self.add("image-alt", el, 'Image has no alt attribute (use alt="" for a '
                         "decorative image)")
            return
        if role == "img":
            if not doc.name(el):
                self.add("image-alt", el, f'Element {_describe(el, doc)} has role="img" but no '
                         "accessible name (aria-label, aria-labelledby or title)")
            return
        if role == "heading":
            if not doc.name(el):
                self.add("empty-heading", el, "Heading is empty: it has no text a screen reader "
                         "can announce")
            return
        explicit = doc.explicit[el]
        if explicit is None:
            return
        if explicit in _TOGGLE_FIELD_ROLES:
            if not doc.name(el):
                self.add("aria-toggle-field-name", el,
                         f'Element with role="{explicit}" has no accessible name')
        elif explicit in _INPUT_FIELD_ROLES:
            if not doc.name(el):
                self.add("aria-input-field-name", el,
                         f'Element with role="{explicit}" has no accessible name')
        elif explicit in _ROLE_NAME_RULES:
            if not doc.name(el):
                self.add(_ROLE_NAME_RULES[explicit], el,
                         f'Element with role="{explicit}" has no accessible name')

    # -- ARIA attributes -------------------------------------------------------------------
    def _aria_attrs(self, el: Element) -> None:
        attrs = el.attrs
        aria = [a for a in attrs if a.startswith("aria-")]
        if not aria:
            return
        doc = self.doc
        role = doc.role[el]
        invalid = [a for a in aria if a not in ARIA_ATTRS]
        if invalid:
            self.add("aria-valid-attr", el, "Unknown ARIA attribute"
                     f"{'s' if len(invalid) > 1 else ''}: {', '.join(invalid)}")
        if el in doc.ax_hidden and attrs.get("aria-hidden", "").strip().lower() != "true":
            return
        spec = ARIA_ROLES.get(role or "")
        allowed: Iterable[str] = ()
        prohibited: tuple[str, ...] = ()
        if spec is not None:
            allowed = tuple(spec.get("allowed", ())) + tuple(spec.get("required", ()))  # type: ignore[operator]
            prohibited = spec.get("prohibited", ())  # type: ignore[assignment]
        elif role is None and el.tag in _GENERIC_TAGS:
            prohibited = ("aria-label", "aria-labelledby")
        # roles outside the tables (doc-*, graphics-*) are not checked for allowed attributes
        check_allowed = role is None or role == "generic" or spec is not None
        not_allowed = []
        bad_values = []
        for a in aria:
            aspec = ARIA_ATTRS.get(a)
            if aspec is None:
                continue
            if not aspec[2] and a not in allowed and check_allowed:
                not_allowed.append(a)
            problem = self._attr_value_problem(el, a, attrs[a], aspec)
            if problem:
                bad_values.append(problem)
        if not_allowed:
            where = f'role="{role}"' if role else f"<{el.tag}> (no role)"
            self.add("aria-allowed-attr", el,
                     f"ARIA attribute{'s' if len(not_allowed) > 1 else ''} "
                     f"{', '.join(not_allowed)} not allowed on {where}")
        if bad_values:
            self.add("aria-valid-attr-value", el, "; ".join(bad_values))
        used_prohibited = [a for a in prohibited if attrs.get(a, "").strip()]
        # as axe: with text content the label is merely redundant (needs review), not lost
        if used_prohibited and not text_content(el).strip():
            where = f'role="{role}"' if role else f"<{el.tag}> without a role"
            self.add("aria-prohibited-attr", el,
                     f"{' and '.join(used_prohibited)} cannot be used on {where}; "
                     "the label is not announced: add text content or a suitable role")

    def _attr_value_problem(
        self, el: Element, name: str, value: str, aspec: tuple[str, bool, bool, object]
    ) -> str | None:
        typ, allow_empty, _glob, extra = aspec
        v = value.strip()
        if not v:
            return None if allow_empty or typ == "string" else f'{name}="" is empty'
        if typ == "boolean":
            if v.lower() not in ("true", "false"):
                return f'{name}="{value}" must be "true" or "false"'
        elif typ == "nmtoken":
            values = extra if isinstance(extra, tuple) else ()
            if v.lower() not in values:
                return f'{name}="{value}" must be one of {", ".join(values)}'
        elif typ == "nmtokens":
            values = extra if isinstance(extra, tuple) else ()
            bad = [t for t in v.lower().split() if t not in values]
            if bad:
                return f'{name}="{value}" has invalid token(s) {", ".join(bad)}'
        elif typ == "int":
            if not _INT.match(v):
                return f'{name}="{value}" must be an integer'
            if isinstance(extra, int) and int(v) < extra:
                return f'{name}="{value}" must be at least {extra}'
        elif typ == "decimal":
            if not _DECIMAL.match(v):
                return f'{name}="{value}" must be a number'
        elif typ in ("idref", "idrefs"):
            if name == "aria-controls" and el.attrs.get("aria-expanded", "").strip() == "false":
                return None  # a collapsed popup need not be in the DOM (as axe)
            refs = v.split()
            if typ == "idref" and len(refs) > 1:
                return f'{name}="{value}" must reference a single id'
            missing = [r for r in refs if r not in self.doc.ids]
            if missing:
                return f'{name} references missing id{"s" if len(missing) > 1 else ""} ' + ", ".join(
                    f'"{m}"' for m in missing)
        return None

    def _aria_hidden_focus(self, el: Element) -> None:
        doc = self.doc
        offenders = [el] if doc.tabbable(el) else []
        if not offenders:
            for d in el.iter():
                if d not in doc.not_rendered and doc.tabbable(d):
                    offenders.append(d)
                    break
        if offenders:
            self.add("aria-hidden-focus", el, 'aria-hidden="true" element contains a focusable '
                     f"{_describe(offenders[0], doc)}; keyboard users reach content screen "
                     "readers cannot see")

    # -- roles ------------------------------------------------------------------------------
    def _roles(self, el: Element, role: str | None) -> None:
        attrs = el.attrs
        raw = attrs.get("role")
        doc = self.doc
        if raw is not None and raw.strip():
            tokens = raw.lower().split()
            valid = [t for t in tokens if _valid_role(t)]
            if not valid:
                self.add("aria-roles", el, f'role="{raw}" is not a valid ARIA role')
            elif valid[0] in _ABSTRACT:
                self.add("aria-roles", el, f'role="{valid[0]}" is an abstract role and must not '
                         "be used")
        explicit = doc.explicit[el]
        if explicit is None:
            return
        spec = ARIA_ROLES.get(explicit)
        if spec is None:
            return
        required = spec.get("required", ())
        if required:
            missing = [a for a in required if not self._has_required(el, explicit, a)]  # type: ignore[union-attr]
            if missing:
                self.add("aria-required-attr", el, f'role="{explicit}" requires '
                         f"{', '.join(missing)}")
        context = spec.get("context")
        if context:
            parent_role, parent = self._context_role(el)
            if parent_role not in context:  # type: ignore[operator]
                self.add("aria-required-parent", el, f'role="{explicit}" must be contained in '
                         + " or ".join(f'role="{c}"' for c in context)  # type: ignore[union-attr]
                         + (f" (found {_describe(parent, doc)})" if parent is not None else ""))
        owned = spec.get("owned")
        if owned and attrs.get("aria-busy", "").strip() != "true":
            bad = [o for o in self._owned(el) if doc.role[o] not in owned]  # type: ignore[operator]
            if bad:
                self.add("aria-required-children", el, f'role="{explicit}" may only own '
                         + ", ".join(owned)  # type: ignore[arg-type]
                         + f"; it contains {_describe(bad[0], doc)}")

    def _has_required(self, el: Element, role: str, attr: str) -> bool:
        attrs = el.attrs
        tag = el.tag
        typ = attrs.get("type", "").lower()
        if attr == "aria-checked" and tag == "input" and typ in ("checkbox", "radio"):
            return True
        if attr == "aria-level" and tag in _HEADINGS:
            return True
        if attr == "aria-valuenow":
            if tag == "input" and typ == "range" or tag == "meter":
                return True
            if role == "separator" and not self.doc.focusable(el):
                return True
        if attr == "aria-controls" and attrs.get("aria-expanded", "").strip() != "true":
            return True
        if attr == "aria-expanded" and tag == "select":
            return True
        return bool(attrs.get(attr, "").strip())

    def _context_role(self, el: Element) -> tuple[str | None, Element | None]:
        doc = self.doc
        ident = el.attrs.get("id")
        if ident and ident in doc.owner_of:
            owner = doc.owner_of[ident]
            return doc.role[owner], owner
        node = el.parent
        while node is not None and node.tag != "#document":
            r = doc.role.get(node)
            if r is not None and r not in _NO_ROLE:
                return r, node
            node = node.parent
        return None, None

    def _owned(self, el: Element) -> list[Element]:
        doc = self.doc
        out: list[Element] = []
        stack = [c for c in reversed(el.children) if isinstance(c, Element)]
        while stack:
            node = stack.pop()
            if node in doc.ax_hidden:
                continue
            r = doc.role[node]
            if r is None or r in _NO_ROLE:
                stack.extend(c for c in reversed(node.children) if isinstance(c, Element))
            else:
                out.append(node)
        owns = el.attrs.get("aria-owns")
        if owns:
            out.extend(doc.ids[i] for i in owns.split() if i in doc.ids)
        return out

    # -- keyboard ---------------------------------------------------------------------------
    def _keyboard(self, el: Element, role: str | None) -> None:
        doc = self.doc
        attrs = el.attrs
        ti = _tabindex(el)
        if ti is not None and ti > 0:
            self.add("tabindex", el, f'tabindex="{ti}" changes the natural tab order; use 0 or -1')
        if el in doc.not_rendered:
            return
        interactive = role in _WIDGET_ROLES
        # nested-interactive: flag the nearest presentational-children ancestor once.
        if interactive or doc.focusable(el):
            anc = el.parent
            while anc is not None and anc.tag != "#document":
                arole = doc.role.get(anc)
                if arole in _CHILDREN_PRESENTATIONAL:
                    if anc not in self._flagged_nested:
                        self._flagged_nested.add(anc)
                        self.add("nested-interactive", anc, f'Interactive {_describe(el, doc)} is '
                                 f'nested inside role="{arole}" {_describe(anc, doc)}; screen '
                                 "readers do not announce nested controls")
                    break
                anc = anc.parent
        if has_click_handler(el) and not interactive and not _natively_interactive(el):
            if not any(doc.focusable(d) or doc.role[d] in _WIDGET_ROLES for d in el.iter()):
                self.add("interactive-handler", el, f"{_describe(el, doc)} has a click handler but "
                         "is not a control: use a <button> (or give it an interactive role, "
                         'tabindex="0" and key handling)')
        if role in _FOCUS_ROLES and el not in doc.disabled:
            if el.tag == "option" and el.parent is not None and el.parent.tag in (
                    "select", "datalist", "optgroup"):
                return
            if ti is not None and ti >= 0:
                return
            if ti is None and _natively_focusable(el):
                return
            if role in _COMPOSITE_ITEMS:
                container = self._composite(el, _COMPOSITE_ITEMS[role])
                if container is not None and (
                    container.attrs.get("aria-activedescendant", "").strip()
                    or doc.tabbable(container)
                    or doc.composite_has_tabbable(container, role)
                ):
                    return
            if ti is not None and ti < 0:
                self.add("focusable-interactive", el, f'{_describe(el, doc)} has tabindex="{ti}", '
                         "so keyboard users cannot reach it")
            else:
                self.add("focusable-interactive", el, f'{_describe(el, doc)} has role="{role}" but '
                         "cannot receive keyboard focus: add tabindex=\"0\" or use the native "
                         "element")

    def _composite(self, el: Element, roles: tuple[str, ...]) -> Element | None:
        doc = self.doc
        node = el.parent
        while node is not None and node.tag != "#document":
            if doc.role.get(node) in roles:
                return node
            node = node.parent
        return None

    # -- lists ------------------------------------------------------------------------------
    def _structure(self, el: Element, role: str | None) -> None:
        tag = el.tag
        if tag in ("ul", "ol") and role == "list":
            for child in el.children:
                if not isinstance(child, Element) or child.tag in ("script", "template"):
                    continue
                if child.tag != "li" or self.doc.explicit[child] not in (None, "listitem"):
                    self.add("list", el, f"<{tag}> must only directly contain <li>, <script> or "
                             f"<template> elements; it contains {_describe(child, self.doc)}")
                    break
        elif tag == "li" and role == "listitem" and self.doc.explicit[el] is None:
            parent = el.parent
            if parent is None or not (
                parent.tag in ("ul", "ol", "menu") and self.doc.role.get(parent) == "list"
                or self.doc.explicit.get(parent) == "list"
            ):
                self.add("listitem", el, "<li> must be contained in a <ul>, <ol> or <menu>")

    # -- ids --------------------------------------------------------------------------------
    def _duplicate_ids(self) -> None:
        doc = self.doc
        dups = {i: els for i, els in doc.id_elems.items() if len(els) > 1}
        if not dups:
            return
        referenced: set[str] = set()
        for el in doc.elements:
            attrs = el.attrs
            for a in _IDREF_ATTRS:
                v = attrs.get(a)
                if v:
                    referenced.update(v.split())
            if el.tag == "label" and attrs.get("for"):
                referenced.add(attrs["for"])
        for ident, els in dups.items():
            if ident in referenced:
                self.add("duplicate-id-aria", els[1], f'id="{ident}" is used {len(els)} times and '
                         "is referenced by ARIA or a label; the reference is ambiguous")
            else:
                self.add("duplicate-id", els[1], f'id="{ident}" is used {len(els)} times; ids must '
                         "be unique")


def _heading_level(el: Element) -> int | None:
    lvl = _HEADINGS.get(el.tag)
    raw = el.attrs.get("aria-level")
    if raw and _INT.match(raw.strip()):
        return int(raw.strip())
    return int(lvl) if lvl else None


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _as_root(html: str | Element) -> Element:
    return html if isinstance(html, Element) else parse_html(html)


def check_accessibility(html: str | Element) -> list[Violation]:
    """Run every rule on ``html`` (a string, or a tree from ``parse_html``)."""
    return _Checker(_Doc(_as_root(html))).run()


def check_accessibility_tree(root: Element) -> list[Violation]:
    """Same as ``check_accessibility`` on an already parsed tree."""
    return _Checker(_Doc(root)).run()


_STATE_ATTRS = (
    ("aria-pressed", "pressed"), ("aria-checked", "checked"), ("aria-expanded", "expanded"),
    ("aria-selected", "selected"), ("aria-disabled", "disabled"), ("aria-invalid", "invalid"),
    ("aria-current", "current"), ("aria-level", "level"), ("aria-valuenow", "valuenow"),
    ("aria-valuemin", "valuemin"), ("aria-valuemax", "valuemax"), ("aria-valuetext", "valuetext"),
    ("aria-busy", "busy"), ("aria-modal", "modal"), ("aria-required", "required"),
    ("aria-readonly", "readonly"), ("aria-haspopup", "haspopup"),
)


def _states(el: Element, role: str, doc: _Doc) -> dict[str, str]:
    attrs = el.attrs
    tag = el.tag
    states: dict[str, str] = {}
    for attr, key in _STATE_ATTRS:
        v = attrs.get(attr)
        if v is not None and v.strip():
            states[key] = v.strip().lower() if key not in ("valuetext",) else _norm(v)
    typ = attrs.get("type", "").lower() if tag == "input" else ""
    if tag == "input" and typ in ("checkbox", "radio") and "checked" not in states:
        states["checked"] = "true" if "checked" in attrs else "false"
    if tag == "option" and "selected" in attrs and "selected" not in states:
        states["selected"] = "true"
    if tag in _DISABLEABLE and el in doc.disabled and "disabled" not in states:
        states["disabled"] = "true"
    if tag in ("input", "select", "textarea"):
        if "required" in attrs and "required" not in states:
            states["required"] = "true"
        if "readonly" in attrs and "readonly" not in states:
            states["readonly"] = "true"
    if role == "heading" and "level" not in states:
        lvl = _HEADINGS.get(tag)
        if lvl:
            states["level"] = lvl
    if tag == "progress" or (tag == "input" and typ == "range") or tag == "meter":
        if "valuenow" not in states and attrs.get("value", "").strip():
            states["valuenow"] = attrs["value"].strip()
        if "valuemax" not in states:
            states["valuemax"] = attrs.get("max", "").strip() or ("1" if tag == "progress" else "100"
                                                                   if tag == "input" else "1")
        if "valuemin" not in states:
            states["valuemin"] = attrs.get("min", "").strip() or "0"
        if tag == "input" and "valuenow" not in states:
            states["valuenow"] = "50"
    if tag == "details" and "expanded" not in states:
        states["expanded"] = "true" if "open" in attrs else "false"
    if tag == "dialog" and "modal" not in states and "open" in attrs:
        pass  # modality of a native dialog depends on how it was opened
    description = doc.description(el)
    if description:
        states["description"] = description
    return states


def accessibility_tree(html: str | Element) -> list[AXNode]:
    """The computed accessibility tree, flattened in document order.

    Elements with no role (``div``, ``span``...) or a presentational one are skipped (their
    children are kept); hidden subtrees (``hidden``, ``aria-hidden="true"``, ``display:none``)
    are left out. ``depth`` counts included ancestors.
    """
    doc = _Doc(_as_root(html))
    out: list[AXNode] = []
    stack: list[tuple[Element, int]] = [
        (c, 0) for c in reversed(doc.root.children) if isinstance(c, Element)
    ]
    while stack:
        el, depth = stack.pop()
        if el in doc.ax_hidden:
            continue
        role = doc.role[el]
        child_depth = depth
        if role is not None and role not in _NO_ROLE:
            out.append(AXNode(role, doc.name(el), _states(el, role, doc), depth))
            child_depth = depth + 1
        if role in _CHILDREN_PRESENTATIONAL and role != "link":
            continue  # descendants are presentational
        for c in reversed(el.children):
            if isinstance(c, Element):
                stack.append((c, child_depth))
    return out


def accessible_name(html: str | Element, selector_id: str) -> str:
    """Accessible name of the element with ``id=selector_id`` (a test and debugging helper)."""
    doc = _Doc(_as_root(html))
    el = doc.ids.get(selector_id)
    if el is None:
        raise KeyError(f"no element with id {selector_id!r}")
    return doc.name(el)
