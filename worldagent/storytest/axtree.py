"""The accessibility tree of rendered story HTML: roles, names, states and visibility.

`AccessibilityDocument` walks a parsed page once and computes, for every element, its role
(explicit, else implicit from the element), accessible name (aria-labelledby > aria-label >
native label/alt/value/legend/caption > content for name-from-content roles > title >
placeholder), visibility, disabled state and id references. The rules
(`worldagent.storytest.a11y_rules`) and the derived assertions read it; nothing here judges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from worldagent.storytest._aria_data import ARIA_ROLES, GLOBAL_ATTRS
from worldagent.storytest.dom import Element, iter_elements, parse_html

__all__ = [
    "AXNode",
    "AccessibilityDocument",
    "accessibility_tree",
    "accessible_name",
    "as_root",
    "scoped_id",
    "unscoped_id",
    "element_target",
    "has_click_handler",
    "target_of",
]


@dataclass(frozen=True, slots=True)
class AXNode:
    """A node of the computed accessibility tree (elements with a meaningful role only)."""

    role: str
    name: str
    states: dict[str, str] = field(default_factory=dict)
    depth: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"role": self.role, "name": self.name, "states": dict(self.states), "depth": self.depth}


# ---------------------------------------------------------------------------------------------
# Role data
# ---------------------------------------------------------------------------------------------

ABSTRACT = frozenset(r for r, spec in ARIA_ROLES.items() if spec["type"] == "abstract")
# "generic" is valid in ARIA 1.2 but absent from axe-core's table: axe's aria-roles flags it.
_EXTRA_VALID_ROLES: frozenset[str] = frozenset()
PRESENTATIONAL = frozenset({"none", "presentation"})
NO_ROLE = frozenset({"none", "presentation", "generic"})

# WAI-ARIA 1.2 roles whose name may come from their content.
_NAME_FROM_CONTENT = frozenset(
    {
        "button",
        "cell",
        "checkbox",
        "columnheader",
        "gridcell",
        "heading",
        "link",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "radio",
        "row",
        "rowheader",
        "switch",
        "tab",
        "tooltip",
        "treeitem",
    }
)
# Roles whose descendants are presentational (axe's nested-interactive), plus link
# (HTML forbids interactive content inside <a>).
CHILDREN_PRESENTATIONAL = frozenset(
    [r for r, spec in ARIA_ROLES.items() if spec.get("children_presentational")] + ["link"]
)
WIDGET_ROLES = frozenset(r for r, spec in ARIA_ROLES.items() if spec["type"] in ("widget", "composite")) - {
    "progressbar"
}  # axe types progressbar as a widget; it is not operable
# Roles a keyboard user must be able to reach (focusable-interactive).
FOCUS_ROLES = frozenset(
    {
        "button",
        "link",
        "checkbox",
        "switch",
        "radio",
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "slider",
        "spinbutton",
        "textbox",
        "searchbox",
        "combobox",
        "treeitem",
        "gridcell",
        "scrollbar",
    }
)
# Items of composite widgets: reachable via roving tabindex or aria-activedescendant.
COMPOSITE_ITEMS = {
    "tab": ("tablist",),
    "option": ("listbox",),
    "menuitem": ("menu", "menubar"),
    "menuitemcheckbox": ("menu", "menubar"),
    "menuitemradio": ("menu", "menubar"),
    "treeitem": ("tree", "treegrid"),
    "radio": ("radiogroup",),
    "gridcell": ("grid", "treegrid"),
}
TOGGLE_FIELD_ROLES = frozenset({"checkbox", "menuitemcheckbox", "menuitemradio", "radio", "switch", "option"})
INPUT_FIELD_ROLES = frozenset({"combobox", "listbox", "searchbox", "slider", "spinbutton", "textbox"})
ROLE_NAME_RULES = {
    "progressbar": "aria-progressbar-name",
    "dialog": "aria-dialog-name",
    "alertdialog": "aria-dialog-name",
    "meter": "aria-meter-name",
    "tooltip": "aria-tooltip-name",
    "treeitem": "aria-treeitem-name",
}

_SIMPLE_IMPLICIT: dict[str, str] = {
    "article": "article",
    "aside": "complementary",
    "blockquote": "blockquote",
    "button": "button",
    "caption": "caption",
    "code": "code",
    "datalist": "listbox",
    "dd": "definition",
    "del": "deletion",
    "details": "group",
    "dfn": "term",
    "dialog": "dialog",
    "dt": "term",
    "em": "emphasis",
    "fieldset": "group",
    "figure": "figure",
    "h1": "heading",
    "h2": "heading",
    "h3": "heading",
    "h4": "heading",
    "h5": "heading",
    "h6": "heading",
    "hgroup": "group",
    "hr": "separator",
    "ins": "insertion",
    "li": "listitem",
    "main": "main",
    "mark": "mark",
    "math": "math",
    "menu": "list",
    "meter": "meter",
    "nav": "navigation",
    "ol": "list",
    "optgroup": "group",
    "option": "option",
    "output": "status",
    "p": "paragraph",
    "progress": "progressbar",
    "search": "search",
    "strong": "strong",
    "sub": "subscript",
    "sup": "superscript",
    "table": "table",
    "tbody": "rowgroup",
    "textarea": "textbox",
    "tfoot": "rowgroup",
    "thead": "rowgroup",
    "time": "time",
    "tr": "row",
    "ul": "list",
    "address": "group",
}
_INPUT_ROLES: dict[str, str | None] = {
    "button": "button",
    "submit": "button",
    "reset": "button",
    "image": "button",
    "checkbox": "checkbox",
    "radio": "radio",
    "range": "slider",
    "number": "spinbutton",
    "search": "searchbox",
    "email": "textbox",
    "tel": "textbox",
    "text": "textbox",
    "url": "textbox",
    "password": "textbox",
    "hidden": None,
    "color": None,
    "date": None,
    "datetime-local": None,
    "file": None,
    "month": None,
    "time": None,
    "week": None,
}
_TEXT_INPUT_TYPES = frozenset({"text", "search", "email", "tel", "url"})
_SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
_SECTIONING_ROLES = frozenset({"article", "complementary", "main", "navigation", "region"})
# Elements without an ARIA role mapping (generic): ARIA 1.2 prohibits naming them.
GENERIC_TAGS = frozenset(
    {
        "div",
        "span",
        "b",
        "i",
        "u",
        "s",
        "small",
        "bdi",
        "bdo",
        "data",
        "samp",
        "kbd",
        "var",
        "pre",
        "q",
        "font",
        "center",
        "big",
        "tt",
    }
)
HEADINGS = {"h1": "1", "h2": "2", "h3": "3", "h4": "4", "h5": "5", "h6": "6"}
_NATIVE_FOCUSABLE = frozenset({"button", "select", "textarea", "iframe"})
_DISABLEABLE = frozenset({"button", "input", "select", "textarea", "option", "optgroup", "fieldset"})
_NATIVELY_INTERACTIVE = frozenset({"button", "input", "select", "textarea", "summary", "label", "option", "details"})
_NOT_CONTENT = frozenset({"script", "style", "template", "head", "title", "meta", "link", "noscript"})
_BLOCK = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
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
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    }
)
IDREF_ATTRS = (
    "aria-labelledby",
    "aria-describedby",
    "aria-controls",
    "aria-owns",
    "aria-activedescendant",
    "aria-errormessage",
    "aria-details",
    "aria-flowto",
)
_CLICK_EVENTS = frozenset({"click", "dblclick"})
_DISPLAY_NONE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)
_WS = re.compile(r"\s+")
INTEGER = re.compile(r"^[+-]?\d+$")
DECIMAL = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_CSS_IDENT = re.compile(r"^-?[A-Za-z_][\w-]*$")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def valid_role(token: str) -> bool:
    return token in ARIA_ROLES or token in _EXTRA_VALID_ROLES or token.startswith(("doc-", "graphics-"))


def scoped_id(scope: int, ident: str) -> str:
    """The key of an id inside its tree scope: ids and id references never cross a shadow root."""
    return ident if scope == 0 else f"{scope}\x00{ident}"


def unscoped_id(key: str) -> str:
    return key.rsplit("\x00", 1)[-1]


def tabindex_of(el: Element) -> int | None:
    raw = el.attrs.get("tabindex")
    if raw is None:
        return None
    raw = raw.strip()
    return int(raw) if INTEGER.match(raw) else None


def has_click_handler(el: Element) -> bool:
    """A click handler: ``onclick``/``ondblclick``, or a Plaited ``p-trigger`` binding ``click``."""
    attrs = el.attrs
    if "onclick" in attrs or "ondblclick" in attrs:
        return True
    trig = attrs.get("p-trigger")
    if not trig:
        return False
    return any(part.split(":", 1)[0].strip().lower() in _CLICK_EVENTS for part in re.split(r"[\s,;]+", trig))


# ---------------------------------------------------------------------------------------------
# Per-document context: roles, visibility, ids, labels, computed once per check
# ---------------------------------------------------------------------------------------------


class AccessibilityDocument:
    __slots__ = (
        "root",
        "elements",
        "role",
        "explicit",
        "ax_hidden",
        "not_rendered",
        "disabled",
        "native_disabled",
        "ids",
        "id_elems",
        "labels_for",
        "owner_of",
        "_names",
        "_composite_tabbable",
        "sibling_positions",
        "role_fallback",
    )

    def __init__(self, root: Element, *, role_fallback: bool = True) -> None:
        """``role_fallback``: a role list's first valid token is the role, as Chromium computes
        it; False reads the whole value as one role, as axe-core's rules do."""
        self.root = root
        self.role_fallback = role_fallback
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
        self.sibling_positions: SiblingPositions = {}
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
                if (
                    "hidden" in attrs
                    or (style and _DISPLAY_NONE.search(style))
                    or tag in _NOT_CONTENT
                    or tag == "input"
                    and attrs.get("type", "").lower() == "hidden"
                ):
                    nr = True
                elif tag == "datalist":
                    nr = True  # suggestions of an <input list>, not rendered in place
                elif tag == "dialog" and "open" not in attrs:
                    nr = True  # a closed <dialog> is display: none
                elif (
                    el.parent is not None
                    and el.parent.tag == "details"
                    and "open" not in el.parent.attrs
                    and not _is_first_summary(el)
                ):
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
                ident = scoped_id(el.scope, ident)
                lst = self.id_elems.get(ident)
                if lst is None:
                    self.id_elems[ident] = [el]
                    self.ids[ident] = el
                else:
                    lst.append(el)
            if tag == "label":
                target = attrs.get("for")
                if target:
                    self.labels_for.setdefault(scoped_id(el.scope, target), []).append(el)
            owns = attrs.get("aria-owns")
            if owns:
                for ref in owns.split():
                    self.owner_of.setdefault(scoped_id(el.scope, ref), el)
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
            # Chromium takes the first valid token; axe-core reads the whole value as one role
            tokens = raw.lower().split() if self.role_fallback else [raw.strip().lower()]
            for tok in tokens:
                if valid_role(tok) and tok not in ABSTRACT:
                    explicit = tok
                    break
        if explicit in PRESENTATIONAL and (self.focusable(el) or _has_global_aria(el)):
            explicit = None  # presentational role conflict resolution: the role is ignored
        if explicit is not None:
            return explicit, explicit
        return _implicit_role(el, sect, grid), None

    # -- queries ------------------------------------------------------------------------------
    def focusable(self, el: Element) -> bool:
        """Focusable by any means (natively or by a tabindex), and not natively disabled."""
        if el in self.native_disabled:
            return False
        if tabindex_of(el) is not None:
            return True
        return natively_focusable(el)

    def tabbable(self, el: Element) -> bool:
        """Reachable with the Tab key."""
        if el in self.not_rendered or el in self.native_disabled:
            return False
        ti = tabindex_of(el)
        if ti is not None:
            return ti >= 0
        return natively_focusable(el)

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
                target = self.ids.get(scoped_id(el.scope, ident))
                if target is not None:
                    parts.append(self._text_alt(target, {el}, False, True, True))
            text = _norm(" ".join(parts))
            if text:
                return text
        return _norm(el.attrs.get("aria-description", ""))

    def _text_alt(
        self,
        el: Element,
        visited: set[Element],
        allow_labelledby: bool,
        recursing: bool,
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
                    target = self.ids.get(scoped_id(el.scope, ident))
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
        if label and label.strip() and role not in PRESENTATIONAL:
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

    def content_text(self, el: Element) -> str:
        """The text ``el``'s content gives it as a name (alt text and embedded controls included)."""
        return self._content_text(el, {el}, False)

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
            for label in self.labels_for.get(scoped_id(el.scope, ident), ()):
                parts.append(self._text_alt(label, visited, True, True, False))
        anc = el.parent
        while anc is not None:
            if anc.tag == "label":
                if anc not in visited and not anc.attrs.get("for") and _first_labelable(anc) is el:
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
    return any(name.startswith("aria-") and name in GLOBAL_ATTRS for name in el.attrs)


def natively_interactive(el: Element) -> bool:
    tag = el.tag
    if tag in _NATIVELY_INTERACTIVE:
        return True
    return tag in ("a", "area") and "href" in el.attrs


def natively_focusable(el: Element) -> bool:
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


def implicit_role(el: Element) -> str | None:
    """``el``'s implicit role outside any sectioning or grid context."""
    return _implicit_role(el, False, False)


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
            counts.setdefault(scoped_id(d.scope, ident), []).append(d)
    return _selector(el, counts, {})


def element_target(el: Element, doc: AccessibilityDocument) -> str:
    return _selector(el, doc.id_elems, doc.sibling_positions)


# parent -> {child element: (its 1-based position among same-tag siblings, how many share its tag)}
SiblingPositions = dict[Element, dict[Element, tuple[int, int]]]


def _positions(parent: Element, cache: SiblingPositions) -> dict[Element, tuple[int, int]]:
    # Computed once per parent, so targets for thousands of siblings stay linear.
    found = cache.get(parent)
    if found is None:
        counts: dict[str, int] = {}
        order: list[tuple[Element, int]] = []
        for c in parent.children:
            if isinstance(c, Element):
                counts[c.tag] = counts.get(c.tag, 0) + 1
                order.append((c, counts[c.tag]))
        found = {c: (pos, counts[c.tag]) for c, pos in order}
        cache[parent] = found
    return found


def _selector(el: Element, id_elems: dict[str, list[Element]], cache: SiblingPositions) -> str:
    segs: list[str] = []
    node: Element | None = el
    while node is not None and node.tag != "#document":
        ident = node.attrs.get("id")
        if ident and len(id_elems.get(scoped_id(node.scope, ident), ())) == 1 and _CSS_IDENT.match(ident):
            segs.append(f"{node.tag}#{ident}")
            break
        parent = node.parent
        if node.tag in ("html", "body") and node is not el:
            node = parent
            continue
        if parent is None:
            segs.append(node.tag)
            break
        pos, same = _positions(parent, cache).get(node, (1, 1))
        segs.append(node.tag if same == 1 else f"{node.tag}:nth-of-type({pos})")
        node = parent
    return " > ".join(reversed(segs))


_STATE_ATTRS = (
    ("aria-pressed", "pressed"),
    ("aria-checked", "checked"),
    ("aria-expanded", "expanded"),
    ("aria-selected", "selected"),
    ("aria-disabled", "disabled"),
    ("aria-invalid", "invalid"),
    ("aria-current", "current"),
    ("aria-level", "level"),
    ("aria-valuenow", "valuenow"),
    ("aria-valuemin", "valuemin"),
    ("aria-valuemax", "valuemax"),
    ("aria-valuetext", "valuetext"),
    ("aria-busy", "busy"),
    ("aria-modal", "modal"),
    ("aria-required", "required"),
    ("aria-readonly", "readonly"),
    ("aria-haspopup", "haspopup"),
)


def _states(el: Element, role: str, doc: AccessibilityDocument) -> dict[str, str]:
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
        lvl = HEADINGS.get(tag)
        if lvl:
            states["level"] = lvl
    if tag == "progress" or (tag == "input" and typ == "range") or tag == "meter":
        if "valuenow" not in states and attrs.get("value", "").strip():
            states["valuenow"] = attrs["value"].strip()
        if "valuemax" not in states:
            states["valuemax"] = attrs.get("max", "").strip() or (
                "1" if tag == "progress" else "100" if tag == "input" else "1"
            )
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
    doc = AccessibilityDocument(as_root(html))
    out: list[AXNode] = []
    stack: list[tuple[Element, int]] = [(c, 0) for c in reversed(doc.root.children) if isinstance(c, Element)]
    while stack:
        el, depth = stack.pop()
        if el in doc.ax_hidden:
            continue
        role = doc.role[el]
        child_depth = depth
        if role is not None and role not in NO_ROLE:
            out.append(AXNode(role, doc.name(el), _states(el, role, doc), depth))
            child_depth = depth + 1
        if role in CHILDREN_PRESENTATIONAL and role != "link":
            continue  # descendants are presentational
        for c in reversed(el.children):
            if isinstance(c, Element):
                stack.append((c, child_depth))
    return out


def accessible_name(html: str | Element, selector_id: str) -> str:
    """Accessible name of the element with ``id=selector_id`` (a test and debugging helper)."""
    doc = AccessibilityDocument(as_root(html))
    el = doc.ids.get(selector_id)
    if el is None:
        raise KeyError(f"no element with id {selector_id!r}")
    return doc.name(el)


def as_root(html: str | Element) -> Element:
    return html if isinstance(html, Element) else parse_html(html)
