"""Accessibility rules over the accessibility tree, in one pass, with no browser.

Every rule in ``AXE_RULES`` is an axe-core 4.12 rule: the same id, and the semantics of axe's
rule and check sources (which elements it selects, hidden content skipped, presentational
roles resolved, implicit roles, what counts as a name). axe's "needs review" (``incomplete``)
outcomes are not violations here: an empty non-string ARIA value, an ``aria-current`` outside
its token list, a missing ``aria-labelledby``/``aria-describedby`` target, ``aria-controls`` on
a popup trigger, a prohibited label on an element with text, a role-less custom element with
an ARIA attribute, an empty composite of the ``reviewEmpty`` roles, a duplicate id referenced
by ARIA (``duplicate-id-aria`` is review-only in 4.12). Rules axe 4.12 deprecated and disabled
(``duplicate-id``, ``duplicate-id-active``) are not run. ``benchmarks.a11y_differential``
measures the agreement on pages nobody tuned the rules to (docs/fidelity.md).

``OWN_RULES`` are the project's pattern rules, with no axe counterpart (kept out of the
agreement figures): ``interactive-handler`` (click handler on a non-interactive element) and
``focusable-interactive`` (interactive role that the keyboard cannot reach).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from worldagent.storytest._aria_data import ARIA_ATTRS, ARIA_ROLES
from worldagent.storytest.axtree import (
    ABSTRACT,
    CHILDREN_PRESENTATIONAL,
    COMPOSITE_ITEMS,
    FOCUS_ROLES,
    HEADINGS,
    INPUT_FIELD_ROLES,
    INTEGER,
    NO_ROLE,
    PRESENTATIONAL,
    ROLE_NAME_RULES,
    TOGGLE_FIELD_ROLES,
    WIDGET_ROLES,
    AccessibilityDocument,
    _has_global_aria,
    as_root,
    element_target,
    has_click_handler,
    implicit_role,
    natively_focusable,
    natively_interactive,
    scoped_id,
    tabindex_of,
    valid_role,
)
from worldagent.storytest.dom import Element

__all__ = [
    "AXE_RULES",
    "OWN_RULES",
    "RULES",
    "RuleChecker",
    "Violation",
    "check_accessibility",
    "check_accessibility_tree",
    "format_violation",
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


RULES: tuple[str, ...] = (
    "button-name",
    "input-button-name",
    "aria-command-name",
    "link-name",
    "image-alt",
    "input-image-alt",
    "role-img-alt",
    "svg-img-alt",
    "label",
    "select-name",
    "aria-tab-name",
    "aria-toggle-field-name",
    "aria-input-field-name",
    "aria-progressbar-name",
    "aria-dialog-name",
    "aria-meter-name",
    "aria-tooltip-name",
    "aria-treeitem-name",
    "empty-heading",
    "aria-valid-attr",
    "aria-valid-attr-value",
    "aria-allowed-attr",
    "aria-prohibited-attr",
    "aria-required-attr",
    "aria-required-parent",
    "aria-required-children",
    "aria-roles",
    "aria-hidden-focus",
    "nested-interactive",
    "tabindex",
    "interactive-handler",
    "focusable-interactive",
    "list",
    "listitem",
    "heading-order",
)
# The project's own pattern rules: no axe-core counterpart, kept out of the fidelity figures.
OWN_RULES: tuple[str, ...] = ("interactive-handler", "focusable-interactive")
# The rules that are axe-core rules (same id, same semantics): the differential test compares these.
AXE_RULES: tuple[str, ...] = tuple(r for r in RULES if r not in OWN_RULES)


# ---------------------------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------------------------


# A missing target of these is only "needs review" in axe-core (the text may come from elsewhere);
# axe checks aria-errormessage in a check of its own.
_REVIEW_ONLY_IDREFS = frozenset({"aria-labelledby", "aria-describedby", "aria-errormessage"})
# axe's decimal: no exponent, no surrounding space.
_AXE_DECIMAL = re.compile(r"^[-+]?([0-9]*)\.?([0-9]*)$")
_AXE_INTEGER = re.compile(r"^[-+]?[0-9]+$")
# Elements whose HTML gives them a naming method (axe's html-elms ``namingMethods``): axe's
# role-name rules (aria-command-name, aria-toggle-field-name...) skip them.
_NAMING_TAGS = frozenset(
    {"area", "br", "button", "fieldset", "figure", "hr", "img", "input", "output", "select", "svg", "summary",
     "table", "textarea"}
)  # fmt: skip
# Roles axe-core's standards name from content (lib/standards/aria-roles.js, nameFromContent).
_AXE_NAME_FROM_CONTENT = frozenset(
    {"button", "cell", "checkbox", "columnheader", "directory", "figure", "gridcell", "heading", "link", "listitem",
     "menuitem", "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowgroup", "rowheader", "section",
     "sectionhead", "switch", "tab", "table", "term", "text", "tooltip", "treeitem"}
)  # fmt: skip
_COMMAND_ROLES = frozenset({"button", "link", "menuitem"})
# Composite roles axe only asks to review when they own nothing (aria-required-children reviewEmpty).
_REVIEW_EMPTY = frozenset(
    {"doc-bibliography", "doc-endnotes", "grid", "list", "listbox", "menu", "menubar", "table", "tablist", "tree",
     "treegrid", "rowgroup"}
)  # fmt: skip
# Roles whose descendants are presentational (axe's nested-interactive matches exactly these).
_AXE_CHILDREN_PRESENTATIONAL = CHILDREN_PRESENTATIONAL - {"link"}
_WIDGET_TYPE = frozenset(r for r, spec in ARIA_ROLES.items() if spec["type"] == "widget")


def _describe(el: Element, doc: AccessibilityDocument) -> str:
    """A short human description such as ``<div role="button">``."""
    role = el.attrs.get("role")
    return f'<{el.tag} role="{role}">' if role else f"<{el.tag}>"


def _has_naming_method(el: Element) -> bool:
    return el.tag in _NAMING_TAGS or el.tag == "a" and "href" in el.attrs


class RuleChecker:
    def __init__(self, doc: AccessibilityDocument) -> None:
        self.doc = doc
        self.out: list[Violation] = []
        self._modal_open: bool | None = None

    def add(self, rule: str, el: Element, message: str) -> None:
        self.out.append(Violation(rule, element_target(el, self.doc), message))

    def run(self) -> list[Violation]:
        doc = self.doc
        last_heading = 0
        for el in doc.elements:
            if el in doc.ax_hidden:
                # as axe: every rule but aria-hidden-focus skips content hidden from assistive technology
                if (
                    el.attrs.get("aria-hidden", "") == "true"
                    and el not in doc.not_rendered
                    and not _under_aria_hidden(el)
                ):
                    self._aria_hidden_focus(el)
                continue
            role = doc.role[el]
            self._aria_attrs(el)
            self._names(el, role)
            self._roles(el, role)
            self._keyboard(el, role)
            self._structure(el, role)
            if role == "heading":
                level = _heading_level(el)
                if level is not None:
                    if last_heading and level > last_heading + 1:
                        self.add(
                            "heading-order",
                            el,
                            f"Heading level {level} follows level {last_heading}; "
                            "heading levels should only increase by one",
                        )
                    last_heading = level
        return self.out

    # -- names ----------------------------------------------------------------------------
    def _names(self, el: Element, role: str | None) -> None:
        doc = self.doc
        tag = el.tag
        attrs = el.attrs
        # axe's role-img-alt selects every other element with role="img", native controls too
        if (
            doc.explicit[el] == "img"
            and tag not in ("img", "area", "input", "object", "svg")
            and not self._role_named(el, False)
        ):
            self.add(
                "role-img-alt",
                el,
                f'Element {_describe(el, doc)} has role="img" but no '
                "accessible name (aria-label, aria-labelledby or title)",
            )
        if tag == "button":
            if self._name_required(el) and not doc.name(el) and not self._content_named(el):
                self.add(
                    "button-name",
                    el,
                    "Button has no accessible name: give it text content, aria-label or aria-labelledby",
                )
            return
        if tag == "input":
            typ = attrs.get("type", "text").lower()
            if typ in ("button", "submit", "reset"):
                if self._name_required(el) and not self._input_button_named(el, typ):
                    self.add(
                        "input-button-name",
                        el,
                        "Input button has no accessible name: give it a value, aria-label or aria-labelledby",
                    )
            elif typ == "image":
                if self._name_required(el) and not self._attr_named(el, "alt") and not self._labelled(el):
                    self.add("input-image-alt", el, "Image button has no alt text")
            elif typ != "hidden" and not self._field_named(el, True):
                self.add(
                    "label",
                    el,
                    f'Form field <input type="{typ}"> has no label: use '
                    "<label for>, a wrapping <label>, aria-label or aria-labelledby",
                )
            return
        if tag in ("select", "textarea"):
            if not self._field_named(el, tag == "textarea"):
                self.add(
                    "select-name" if tag == "select" else "label",
                    el,
                    f"Form field <{tag}> has no label: use <label for>, "
                    "a wrapping <label>, aria-label or aria-labelledby",
                )
            return
        if tag == "a" and "href" in attrs:
            if not doc.name(el) and not self._content_named(el):
                self.add(
                    "link-name", el, "Link has no accessible name: give it text content, aria-label or aria-labelledby"
                )
            return
        if tag == "img":
            if self._name_required(el) and "alt" not in attrs and role not in PRESENTATIONAL and not doc.name(el):
                self.add("image-alt", el, 'Image has no alt attribute (use alt="" for a decorative image)')
            return
        if tag == "svg":
            if doc.explicit[el] in ("img", "graphics-document", "graphics-symbol") and not doc.name(el):
                self.add("svg-img-alt", el, "<svg> with an image role has no title, aria-label or aria-labelledby")
            return
        if role == "heading":
            if not doc.name(el):
                self.add("empty-heading", el, "Heading is empty: it has no text a screen reader can announce")
            return
        explicit = doc.explicit[el]
        if explicit is None or _has_naming_method(el):
            return
        if explicit == "img":
            return  # role-img-alt, above
        if explicit in _COMMAND_ROLES:
            if not self._role_named(el, True):
                self.add("aria-command-name", el, f'Element with role="{explicit}" has no accessible name')
        elif explicit == "tab":
            if not self._role_named(el, True):
                self.add("aria-tab-name", el, 'Element with role="tab" has no accessible name')
        elif explicit in TOGGLE_FIELD_ROLES:
            if not self._role_named(el, True):
                self.add("aria-toggle-field-name", el, f'Element with role="{explicit}" has no accessible name')
        elif explicit in INPUT_FIELD_ROLES:
            if not self._role_named(el, False):
                self.add("aria-input-field-name", el, f'Element with role="{explicit}" has no accessible name')
        elif explicit in ROLE_NAME_RULES:
            with_text = explicit in ("tooltip", "treeitem")
            if not self._role_named(el, with_text):
                self.add(ROLE_NAME_RULES[explicit], el, f'Element with role="{explicit}" has no accessible name')

    def _role_named(self, el: Element, with_text: bool) -> bool:
        """The naming sources of axe's role-name rules: aria-label, aria-labelledby, title, and
        (``with_text``) visible text content; a <label> or placeholder does not count."""
        attrs = el.attrs
        if attrs.get("aria-label", "").strip() or attrs.get("title", "").strip():
            return True
        if attrs.get("aria-labelledby", "").strip() and self.doc.name(el).strip():
            return True
        return with_text and bool(self.doc.name(el).strip())

    def _name_required(self, el: Element) -> bool:
        """axe's no-explicit-name-required-matches: a native control given another role needs a
        name only when that role requires one or the element is focusable."""
        explicit = self.doc.explicit[el]
        if explicit is None or explicit in PRESENTATIONAL:
            return True
        spec = ARIA_ROLES.get(explicit, {})
        return bool(spec.get("name_required")) or self.doc.focusable(el)

    def _attr_named(self, el: Element, attr: str) -> bool:
        """Named by ``attr``, aria-label, aria-labelledby or title (the input-image-alt checks)."""
        attrs = el.attrs
        if attrs.get(attr, "").strip() or attrs.get("aria-label", "").strip() or attrs.get("title", "").strip():
            return True
        return bool(attrs.get("aria-labelledby", "").strip()) and bool(self.doc.name(el).strip())

    def _input_button_named(self, el: Element, typ: str) -> bool:
        value = el.attrs.get("value")
        if typ in ("submit", "reset") and value is None:
            return True  # the browser's default label
        return self._attr_named(el, "value") or self._labelled(el)

    def _labelled(self, el: Element) -> bool:
        """axe's implicit-label and explicit-label: a wrapping <label> (whatever its ``for``) or a
        <label for> with text of its own; a label given a role does not label."""
        doc = self.doc
        ident = el.attrs.get("id")
        if ident and any(
            self._labelling(lab) and self._visible_text(lab, el)
            for lab in doc.labels_for.get(scoped_id(el.scope, ident), ())
        ):
            return True
        anc = el.parent
        while anc is not None and anc.tag != "#document":
            if anc.tag == "label":
                # the label's text, or the name of another control inside it (an embedded control)
                return self._labelling(anc) and bool(
                    self._visible_text(anc, el)
                    or any(d is not el and d.attrs.get("aria-label", "").strip() for d in anc.iter())
                )
            anc = anc.parent
        return False

    def _labelling(self, label: Element) -> bool:
        """A <label> given a role that is not named from its content no longer labels (axe)."""
        role = self.doc.explicit.get(label)
        return role is None or role in PRESENTATIONAL or role in _AXE_NAME_FROM_CONTENT

    def _field_named(self, el: Element, placeholder: bool) -> bool:
        """The label and select-name sources: aria-label, aria-labelledby, title, a label,
        (label only) placeholder."""
        attrs = el.attrs
        if attrs.get("aria-label", "").strip() or attrs.get("title", "").strip():
            return True
        if placeholder and attrs.get("placeholder", "").strip():
            return True
        if attrs.get("aria-labelledby", "").strip() and self.doc.name(el).strip():
            return True
        return self._labelled(el)

    def _content_named(self, el: Element) -> bool:
        """axe's has-visible-text for button-name and link-name: the text counts when the role
        (axe's, not the element's) is named from content, or has no ARIA definition."""
        role = self.doc.role[el]
        if role is None or role in PRESENTATIONAL or role not in ARIA_ROLES or role in _AXE_NAME_FROM_CONTENT:
            return bool(self._visible_text(el)) or bool(self.doc.content_text(el).strip())
        return False

    def _visible_text(self, el: Element, skip: Element | None = None) -> str:
        """Text content outside hidden subtrees (and outside ``skip``, the labelled control)."""
        doc = self.doc
        parts: list[str] = []
        stack: list[Element | str] = list(reversed(el.children))
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
            elif node is not skip and node not in doc.ax_hidden:
                stack.extend(reversed(node.children))
        return "".join(parts).strip()

    # -- ARIA attributes -------------------------------------------------------------------
    def _aria_attrs(self, el: Element) -> None:
        attrs = el.attrs
        aria = [a for a in attrs if a.startswith("aria-")]
        if not aria:
            return
        doc = self.doc
        role = _axe_role(el, doc)
        invalid = [a for a in aria if a not in ARIA_ATTRS]
        if invalid:
            self.add(
                "aria-valid-attr", el, f"Unknown ARIA attribute{'s' if len(invalid) > 1 else ''}: {', '.join(invalid)}"
            )
        spec = ARIA_ROLES.get(role or "")
        allowed: Iterable[str] = ()
        if spec is not None:
            allowed = tuple(spec.get("allowed", ())) + tuple(spec.get("required", ()))  # type: ignore[operator]
        # roles outside the tables (doc-*, graphics-*) are not checked for allowed attributes;
        # on a role-less custom element that is not focusable axe only asks for a review
        check_allowed = (role is None or role == "generic" or spec is not None) and not (
            role is None and "-" in el.tag and not doc.focusable(el)
        )
        not_allowed = []
        bad_values = []
        for a in aria:
            aspec = ARIA_ATTRS.get(a)
            if aspec is None:
                continue
            if not aspec[2] and a not in allowed and check_allowed and not _ignored_attr(el, a):
                not_allowed.append(a)
            problem = self._attr_value_problem(el, a, attrs[a], aspec)
            if problem:
                bad_values.append(problem)
        if not_allowed:
            where = f'role="{role}"' if role else f"<{el.tag}> (no role)"
            self.add(
                "aria-allowed-attr",
                el,
                f"ARIA attribute{'s' if len(not_allowed) > 1 else ''} {', '.join(not_allowed)} not allowed on {where}",
            )
        if bad_values:
            self.add("aria-valid-attr-value", el, "; ".join(bad_values))
        fb_role = _fallback_role(el, doc)
        prohibited = self._prohibited(el, fb_role, ARIA_ROLES.get(fb_role or ""))
        used_prohibited = [a for a in prohibited if attrs.get(a, "").strip()]
        # as axe: with text content the label is merely redundant (needs review), not lost
        if used_prohibited and not self._visible_text(el):
            where = f'role="{role}"' if role else f"<{el.tag}> without a role"
            self.add(
                "aria-prohibited-attr",
                el,
                f"{' and '.join(used_prohibited)} cannot be used on {where}; "
                "the label is not announced: add text content or a suitable role",
            )

    def _prohibited(self, el: Element, role: str | None, spec: dict[str, object] | None) -> tuple[str, ...]:
        """axe's prohibited list: the role's, else (no role at all) the name attributes, except
        on <input> and inside a widget."""
        if spec is not None:
            return spec.get("prohibited", ())  # type: ignore[return-value]
        if role is not None or el.tag in ("input", "applet"):
            return ()
        node = el.parent
        while node is not None and node.tag != "#document":
            r = self.doc.role.get(node)
            if r is not None and r not in PRESENTATIONAL:
                return () if r in _WIDGET_TYPE else ("aria-label", "aria-labelledby")
            node = node.parent
        return ("aria-label", "aria-labelledby")

    def _attr_value_problem(
        self, el: Element, name: str, value: str, aspec: tuple[str, bool, bool, object]
    ) -> str | None:
        typ, allow_empty, _glob, extra = aspec
        attrs = el.attrs
        if allow_empty and not value.strip():
            return None
        if not value:
            # an empty value of a non-string type is "needs review" in axe; an empty string type fails
            return f'{name}="" is empty' if typ == "string" else None
        if name == "aria-errormessage":
            return None  # axe checks it in a check of its own
        if typ == "boolean":
            if value.lower() not in ("true", "false"):
                return f'{name}="{value}" must be "true" or "false"'
        elif typ == "nmtoken":
            values = extra if isinstance(extra, tuple) else ()
            if value.lower() not in values and name != "aria-current":  # aria-current: review only
                return f'{name}="{value}" must be one of {", ".join(values)}'
        elif typ == "nmtokens":
            values = extra if isinstance(extra, tuple) else ()
            tokens = value.split()
            bad = [t for t in tokens if t not in values]
            if bad or not tokens:
                return f'{name}="{value}" has invalid token(s) {", ".join(bad)}'
        elif typ == "int":
            if not _AXE_INTEGER.match(value):
                return f'{name}="{value}" must be an integer'
            if isinstance(extra, int) and int(value) < extra:
                return f'{name}="{value}" must be at least {extra}'
        elif typ == "decimal":
            m = _AXE_DECIMAL.match(value)
            if not (m and (m.group(1) or m.group(2))):
                return f'{name}="{value}" must be a number'
        elif typ == "string":
            if not value.strip():
                return f'{name}="{value}" is empty'
        elif typ in ("idref", "idrefs"):
            if name in _REVIEW_ONLY_IDREFS:
                return None  # axe-core asks for a review here instead of reporting a violation
            if name == "aria-controls":
                popup = attrs.get("aria-haspopup")
                if popup is not None and popup != "false":
                    return None  # a popup may be created later: review only
                if attrs.get("aria-expanded") == "false" or attrs.get("aria-selected") == "false":
                    return None  # a collapsed popup or an unselected tab's panel need not exist
            if name == "aria-owns" and attrs.get("aria-expanded") == "false":
                return None
            if typ == "idref":
                if scoped_id(el.scope, value) not in self.doc.ids:
                    return f'{name}="{value}" must reference one existing id'
                return None
            refs = value.split()
            missing = [r for r in refs if scoped_id(el.scope, r) not in self.doc.ids]
            if missing and len(missing) == len(refs):  # as axe: one existing id of a list is enough
                return f"{name} references missing id{'s' if len(missing) > 1 else ''} " + ", ".join(
                    f'"{m}"' for m in missing
                )
        return None

    def _aria_hidden_focus(self, el: Element) -> None:
        doc = self.doc
        if self._modal_open is None:
            # as axe (is-modal-open): with a dialog on screen, focus behind it is only "needs review"
            self._modal_open = any(
                d not in doc.not_rendered
                and (
                    d.tag == "dialog"
                    or d.attrs.get("role", "").strip().lower() == "dialog"
                    or d.attrs.get("aria-modal") == "true"
                )
                for d in doc.elements
            )
        if self._modal_open:
            return
        offenders = [el] if doc.tabbable(el) else []
        if not offenders:
            for d in el.iter():
                if d not in doc.not_rendered and doc.tabbable(d):
                    offenders.append(d)
                    break
        if offenders:
            self.add(
                "aria-hidden-focus",
                el,
                'aria-hidden="true" element contains a focusable '
                f"{_describe(offenders[0], doc)}; keyboard users reach content screen "
                "readers cannot see",
            )

    # -- roles ------------------------------------------------------------------------------
    def _roles(self, el: Element, role: str | None) -> None:
        attrs = el.attrs
        raw = attrs.get("role")
        doc = self.doc
        if raw is not None and raw.strip():
            tokens = raw.lower().split()
            abstract = [t for t in tokens if t in ABSTRACT]
            if abstract:
                self.add("aria-roles", el, f'role="{abstract[0]}" is an abstract role and must not be used')
            elif not any(valid_role(t) for t in tokens):
                self.add("aria-roles", el, f'role="{raw}" is not a valid ARIA role')
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
                self.add("aria-required-attr", el, f'role="{explicit}" requires {", ".join(missing)}')
        context = spec.get("context")
        if context:
            parent_role, parent = self._context_role(el)
            if self._missing_context(el, context):  # type: ignore[arg-type]
                self.add(
                    "aria-required-parent",
                    el,
                    f'role="{explicit}" must be contained in '
                    + " or ".join(f'role="{c}"' for c in context)  # type: ignore[union-attr]
                    + (f" (found {_describe(parent, doc)})" if parent is not None else ""),
                )
        owned = spec.get("owned")
        if owned:
            self._required_children(el, explicit, owned)  # type: ignore[arg-type]

    def _required_children(self, el: Element, role: str, required: tuple[str, ...]) -> None:
        """axe's aria-required-children: the owned elements (through role-less, unfocusable
        wrappers) must have one of the required roles, and at least one must be there."""
        doc = self.doc
        owned: list[tuple[str | None, Element]] = []
        has_text = False
        queue: list[Element | str] = list(el.children)
        owns = el.attrs.get("aria-owns")
        if owns:
            queue += [doc.ids[k] for k in (scoped_id(el.scope, i) for i in owns.split()) if k in doc.ids]
        while queue:
            node = queue.pop(0)
            if isinstance(node, str):
                has_text = has_text or bool(node.strip())
                continue
            if node in doc.ax_hidden:
                continue
            r = doc.role[node]
            r = None if r in PRESENTATIONAL or r == "generic" else r
            flagged = _has_global_aria(node) or doc.focusable(node)
            if (r is None and not flagged) or (r in ("group", "rowgroup") and r in required):
                queue[0:0] = list(node.children)
            else:
                owned.append((r, node))
        bad = [n for r, n in owned if r not in required]
        if bad:
            self.add(
                "aria-required-children",
                el,
                f'role="{role}" may only own ' + ", ".join(required) + f"; it contains {_describe(bad[0], doc)}",
            )
            return
        if owned or el.attrs.get("aria-busy") == "true":
            return
        if role in _REVIEW_EMPTY and not has_text:
            return  # an empty composite: review only
        self.add("aria-required-children", el, f'role="{role}" must own one of ' + ", ".join(required))

    def _has_required(self, el: Element, role: str, attr: str) -> bool:
        attrs = el.attrs
        tag = el.tag
        typ = attrs.get("type", "").lower()
        if attr == "aria-checked" and tag == "input" and typ in ("checkbox", "radio"):
            return True
        if attr == "aria-level" and tag in HEADINGS:
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
        """The nearest ancestor role (or aria-owns owner's) that decides the required context."""
        doc = self.doc
        ident = el.attrs.get("id")
        key = scoped_id(el.scope, ident) if ident else ""
        if key and key in doc.owner_of:
            owner = doc.owner_of[key]
            return doc.role[owner], owner
        node = el.parent
        while node is not None and node.tag != "#document":
            r = doc.role.get(node)
            if r is not None and r not in NO_ROLE:
                return r, node
            node = node.parent
        return None, None

    def _missing_context(self, el: Element, context: tuple[str, ...]) -> bool:
        """axe's aria-required-parent: walk up past role-less ancestors; a ``group`` passes the
        search on (to the required role itself for listitem and treeitem); through aria-owns too."""
        doc = self.doc
        role = doc.explicit[el]
        required = list(context)
        node: Element | None = el.parent
        start_owner = True
        while True:
            while node is not None and node.tag != "#document":
                r = doc.role.get(node)
                if r is None or r in NO_ROLE:
                    node = node.parent
                elif r == "group" and "group" in required:
                    if role in ("listitem", "treeitem"):
                        required.append(role)
                    required = [c for c in required if c != "group"]
                    node = node.parent
                elif r in required:
                    return False
                else:
                    break
            if not start_owner:
                return True
            start_owner = False
            owner = self._aria_owner(el)
            if owner is None:
                return True
            node = owner

    def _aria_owner(self, el: Element) -> Element | None:
        node: Element | None = el
        while node is not None and node.tag != "#document":
            ident = node.attrs.get("id")
            if ident and scoped_id(node.scope, ident) in self.doc.owner_of:
                return self.doc.owner_of[scoped_id(node.scope, ident)]
            node = node.parent
        return None

    # -- keyboard ---------------------------------------------------------------------------
    def _keyboard(self, el: Element, role: str | None) -> None:
        doc = self.doc
        ti = tabindex_of(el)
        if ti is not None and ti > 0:
            self.add("tabindex", el, f'tabindex="{ti}" changes the natural tab order; use 0 or -1')
        if el in doc.not_rendered:
            return
        interactive = role in WIDGET_ROLES
        if role in _AXE_CHILDREN_PRESENTATIONAL:
            inner = self._focusable_widget_descendant(el)
            if inner is not None:
                self.add(
                    "nested-interactive",
                    el,
                    f'Interactive {_describe(inner, doc)} is nested inside role="{role}" '
                    f"{_describe(el, doc)}; screen readers do not announce nested controls",
                )
        # interactive-handler and focusable-interactive are the project's own pattern rules: axe-core
        # has no counterpart, and the differential test (docs/fidelity.md) leaves them out
        handler_only = has_click_handler(el) and not interactive and not natively_interactive(el)
        if handler_only and not any(doc.focusable(d) or doc.role[d] in WIDGET_ROLES for d in el.iter()):
            self.add(
                "interactive-handler",
                el,
                f"{_describe(el, doc)} has a click handler but "
                "is not a control: use a <button> (or give it an interactive role, "
                'tabindex="0" and key handling)',
            )
        if role in FOCUS_ROLES and el not in doc.disabled:
            if el.tag == "option" and el.parent is not None and el.parent.tag in ("select", "datalist", "optgroup"):
                return
            if ti is not None and ti >= 0:
                return
            if ti is None and natively_focusable(el):
                return
            if role in COMPOSITE_ITEMS:
                container = self._composite(el, COMPOSITE_ITEMS[role])
                if container is not None and (
                    container.attrs.get("aria-activedescendant", "").strip()
                    or doc.tabbable(container)
                    or doc.composite_has_tabbable(container, role)
                ):
                    return
            if ti is not None and ti < 0:
                self.add(
                    "focusable-interactive",
                    el,
                    f'{_describe(el, doc)} has tabindex="{ti}", so keyboard users cannot reach it',
                )
            else:
                self.add(
                    "focusable-interactive",
                    el,
                    f'{_describe(el, doc)} has role="{role}" but '
                    'cannot receive keyboard focus: add tabindex="0" or use the native '
                    "element",
                )

    def _focusable_widget_descendant(self, el: Element) -> Element | None:
        """axe's no-focusable-content: the first descendant with a widget role that can take
        focus (the search stops at each such element)."""
        doc = self.doc
        stack = [c for c in reversed(el.children) if isinstance(c, Element)]
        while stack:
            node = stack.pop()
            if node in doc.not_rendered:
                continue
            if _axe_role(node, doc) in _WIDGET_TYPE and doc.focusable(node):
                return node
            stack.extend(c for c in reversed(node.children) if isinstance(c, Element))
        return None

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
        doc = self.doc
        if tag in ("ul", "ol") and not el.attrs.get("role"):
            self._list(el)
        elif tag == "li" and not el.attrs.get("role"):
            parent = el.parent
            if parent is None or parent.tag == "#document":
                return
            parent_role = doc.explicit.get(parent) if parent.attrs.get("role") else None
            raw = (parent.attrs.get("role") or "").strip().lower().split()
            if raw and raw[0] in ("presentation", "none", "list"):
                return
            if parent_role is not None or raw and valid_role(raw[0]) and raw[0] not in ABSTRACT:
                self.add("listitem", el, f"<li> must be contained in a list, not {_describe(parent, doc)}")
            elif parent.tag not in ("ul", "ol", "menu"):
                self.add("listitem", el, "<li> must be contained in a <ul>, <ol> or <menu>")

    def _list(self, el: Element) -> None:
        """axe 4.12's only-listitems (invalid-children): every child visible to assistive
        technology must be a listitem, by role or, role-less, by being an <li>; no text."""
        doc = self.doc
        for child in el.children:
            if isinstance(child, str):
                if child.strip():
                    self.add("list", el, f"<{el.tag}> must only directly contain <li> elements; it contains text")
                    return
                continue
            if child in doc.ax_hidden:
                continue
            role = doc.role[child]
            if role is not None and role != "listitem" or role is None and child.tag != "li":
                self.add(
                    "list",
                    el,
                    f"<{el.tag}> must only directly contain <li>, <script> or <template> elements; "
                    f"it contains {_describe(child, doc)}",
                )
                return


# Roles axe-core gives elements the accessibility tree leaves without one (Chromium exposes
# these as disclosure triangles and date/colour/file pickers, with no ARIA role).
_AXE_INPUT_TEXTBOX = frozenset({"color", "date", "datetime-local", "file", "month", "time", "week"})


def _axe_role(el: Element, doc: AccessibilityDocument) -> str | None:
    role = doc.role[el]
    if role is None and doc.explicit[el] is None:
        if el.tag == "summary":
            return "button"
        if el.tag == "input" and el.attrs.get("type", "").lower() in _AXE_INPUT_TEXTBOX:
            return "textbox"
    return role


def _fallback_role(el: Element, doc: AccessibilityDocument) -> str | None:
    """The role axe's aria-prohibited-attr reads: the first valid token of a role list (DPUB
    roles not counted), else the element's implicit role."""
    raw = el.attrs.get("role", "")
    for tok in raw.lower().split():
        if valid_role(tok) and tok not in ABSTRACT and not tok.startswith("doc-"):
            return tok
    if raw.strip() and doc.explicit[el] is not None:  # an explicit DPUB role: axe uses the implicit role
        return implicit_role(el)
    return doc.role[el]


def _under_aria_hidden(el: Element) -> bool:
    return any(a.attrs.get("aria-hidden") == "true" for a in el.ancestors())


def _ignored_attr(el: Element, name: str) -> bool:
    """Attributes axe's aria-allowed-attr lets pass whatever the role."""
    value = el.attrs.get(name)
    if name == "aria-required" and value == "false":
        return True
    return name == "aria-multiline" and value == "false" and "contenteditable" in el.attrs


def _heading_level(el: Element) -> int | None:
    lvl = HEADINGS.get(el.tag)
    raw = el.attrs.get("aria-level")
    if raw and INTEGER.match(raw.strip()):
        return int(raw.strip())
    return int(lvl) if lvl else 2  # a role="heading" without aria-level: level 2, as axe


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def check_accessibility(html: str | Element) -> list[Violation]:
    """Run every rule on ``html`` (a string, or a tree from ``parse_html``)."""
    return RuleChecker(AccessibilityDocument(as_root(html), role_fallback=False)).run()


def check_accessibility_tree(root: Element) -> list[Violation]:
    """Same as ``check_accessibility`` on an already parsed tree."""
    return RuleChecker(AccessibilityDocument(root, role_fallback=False)).run()
