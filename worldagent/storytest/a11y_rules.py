"""Accessibility rules over the accessibility tree, in one pass, with no browser.

The rules follow axe-core's (same rule ids where axe has one) and read the roles, names and
visibility computed by `worldagent.storytest.axtree`. Rule ids:

``button-name``, ``link-name``, ``image-alt``, ``label``, ``aria-toggle-field-name``,
``aria-input-field-name``, ``aria-progressbar-name``, ``aria-dialog-name``,
``aria-meter-name``, ``aria-tooltip-name``, ``aria-treeitem-name``, ``empty-heading``,
``aria-valid-attr``, ``aria-valid-attr-value``, ``aria-allowed-attr``,
``aria-prohibited-attr``, ``aria-required-attr``, ``aria-required-parent``,
``aria-required-children``, ``aria-roles``, ``aria-hidden-focus``, ``nested-interactive``,
``duplicate-id``, ``duplicate-id-aria``, ``tabindex``, ``interactive-handler`` (click
handler on a non-interactive element), ``focusable-interactive`` (interactive role that the
keyboard cannot reach), ``list``, ``listitem``, ``heading-order``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from worldagent.storytest._aria_data import ARIA_ATTRS, ARIA_ROLES
from worldagent.storytest.axtree import (
    ABSTRACT,
    CHILDREN_PRESENTATIONAL,
    COMPOSITE_ITEMS,
    DECIMAL,
    FOCUS_ROLES,
    GENERIC_TAGS,
    HEADINGS,
    IDREF_ATTRS,
    INPUT_FIELD_ROLES,
    INTEGER,
    NO_ROLE,
    PRESENTATIONAL,
    ROLE_NAME_RULES,
    TOGGLE_FIELD_ROLES,
    WIDGET_ROLES,
    AccessibilityDocument,
    as_root,
    element_target,
    has_click_handler,
    natively_focusable,
    natively_interactive,
    scoped_id,
    tabindex_of,
    unscoped_id,
    valid_role,
)
from worldagent.storytest.dom import Element, text_content

__all__ = ["AXE_RULES", "OWN_RULES", "RULES", "RuleChecker", "Violation", "check_accessibility", "check_accessibility_tree", "format_violation"]


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
    "link-name",
    "image-alt",
    "label",
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
    "duplicate-id",
    "duplicate-id-aria",
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


# A missing target of these is only "needs review" in axe-core (the text may come from elsewhere).
_REVIEW_ONLY_IDREFS = frozenset({"aria-labelledby", "aria-describedby", "aria-errormessage"})


def _describe(el: Element, doc: AccessibilityDocument) -> str:
    """A short human description such as ``<div role="button">``."""
    role = el.attrs.get("role")
    return f'<{el.tag} role="{role}">' if role else f"<{el.tag}>"


class RuleChecker:
    def __init__(self, doc: AccessibilityDocument) -> None:
        self.doc = doc
        self.out: list[Violation] = []
        self._flagged_nested: set[Element] = set()

    def add(self, rule: str, el: Element, message: str) -> None:
        self.out.append(Violation(rule, element_target(el, self.doc), message))

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
                        self.add(
                            "heading-order",
                            el,
                            f"Heading level {level} follows level {last_heading}; "
                            "heading levels should only increase by one",
                        )
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
                self.add(
                    "button-name",
                    el,
                    "Button has no accessible name: give it text content, aria-label or aria-labelledby",
                )
            return
        if tag == "input":
            typ = attrs.get("type", "text").lower()
            if typ == "button":
                if not doc.name(el):
                    self.add(
                        "button-name",
                        el,
                        "Input button has no accessible name: give it a value, aria-label or aria-labelledby",
                    )
            elif typ == "image":
                if not doc.name(el):
                    self.add("image-alt", el, "Image button has no alt text")
            elif typ not in ("hidden", "submit", "reset") and not doc.name(el):
                self.add(
                    "label",
                    el,
                    f'Form field <input type="{typ}"> has no label: use '
                    "<label for>, a wrapping <label>, aria-label or aria-labelledby",
                )
            return
        if tag in ("select", "textarea"):
            if not doc.name(el):
                self.add(
                    "label",
                    el,
                    f"Form field <{tag}> has no label: use <label for>, "
                    "a wrapping <label>, aria-label or aria-labelledby",
                )
            return
        if role == "link":
            if not doc.name(el):
                self.add(
                    "link-name", el, "Link has no accessible name: give it text content, aria-label or aria-labelledby"
                )
            return
        if tag == "img":
            if "alt" not in attrs and role not in PRESENTATIONAL and not doc.name(el):
                self.add("image-alt", el, 'Image has no alt attribute (use alt="" for a decorative image)')
            return
        if role == "img":
            if not doc.name(el):
                self.add(
                    "image-alt",
                    el,
                    f'Element {_describe(el, doc)} has role="img" but no '
                    "accessible name (aria-label, aria-labelledby or title)",
                )
            return
        if role == "heading":
            if not doc.name(el):
                self.add("empty-heading", el, "Heading is empty: it has no text a screen reader can announce")
            return
        explicit = doc.explicit[el]
        if explicit is None:
            return
        if explicit in TOGGLE_FIELD_ROLES:
            if not doc.name(el):
                self.add("aria-toggle-field-name", el, f'Element with role="{explicit}" has no accessible name')
        elif explicit in INPUT_FIELD_ROLES:
            if not doc.name(el):
                self.add("aria-input-field-name", el, f'Element with role="{explicit}" has no accessible name')
        elif explicit in ROLE_NAME_RULES and not doc.name(el):
            self.add(ROLE_NAME_RULES[explicit], el, f'Element with role="{explicit}" has no accessible name')

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
            self.add(
                "aria-valid-attr", el, f"Unknown ARIA attribute{'s' if len(invalid) > 1 else ''}: {', '.join(invalid)}"
            )
        if el in doc.ax_hidden and attrs.get("aria-hidden", "").strip().lower() != "true":
            return
        spec = ARIA_ROLES.get(role or "")
        allowed: Iterable[str] = ()
        prohibited: tuple[str, ...] = ()
        if spec is not None:
            allowed = tuple(spec.get("allowed", ())) + tuple(spec.get("required", ()))  # type: ignore[operator]
            prohibited = spec.get("prohibited", ())  # type: ignore[assignment]
        elif role is None and el.tag in GENERIC_TAGS:
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
            self.add(
                "aria-allowed-attr",
                el,
                f"ARIA attribute{'s' if len(not_allowed) > 1 else ''} {', '.join(not_allowed)} not allowed on {where}",
            )
        if bad_values:
            self.add("aria-valid-attr-value", el, "; ".join(bad_values))
        used_prohibited = [a for a in prohibited if attrs.get(a, "").strip()]
        # as axe: with text content the label is merely redundant (needs review), not lost
        if used_prohibited and not text_content(el).strip():
            where = f'role="{role}"' if role else f"<{el.tag}> without a role"
            self.add(
                "aria-prohibited-attr",
                el,
                f"{' and '.join(used_prohibited)} cannot be used on {where}; "
                "the label is not announced: add text content or a suitable role",
            )

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
            if not INTEGER.match(v):
                return f'{name}="{value}" must be an integer'
            if isinstance(extra, int) and int(v) < extra:
                return f'{name}="{value}" must be at least {extra}'
        elif typ == "decimal":
            if not DECIMAL.match(v):
                return f'{name}="{value}" must be a number'
        elif typ in ("idref", "idrefs"):
            if name == "aria-controls" and el.attrs.get("aria-expanded", "").strip() == "false":
                return None  # a collapsed popup need not be in the DOM (as axe)
            refs = v.split()
            if typ == "idref" and len(refs) > 1:
                return f'{name}="{value}" must reference a single id'
            if name in _REVIEW_ONLY_IDREFS:
                return None  # axe-core asks for a review here instead of reporting a violation
            missing = [r for r in refs if scoped_id(el.scope, r) not in self.doc.ids]
            if missing and len(missing) == len(refs):  # as axe: one existing id of a list is enough
                return f"{name} references missing id{'s' if len(missing) > 1 else ''} " + ", ".join(
                    f'"{m}"' for m in missing
                )
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
            valid = [t for t in tokens if valid_role(t)]
            if not valid:
                self.add("aria-roles", el, f'role="{raw}" is not a valid ARIA role')
            elif valid[0] in ABSTRACT:
                self.add("aria-roles", el, f'role="{valid[0]}" is an abstract role and must not be used')
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
            if parent_role not in context:  # type: ignore[operator]
                self.add(
                    "aria-required-parent",
                    el,
                    f'role="{explicit}" must be contained in '
                    + " or ".join(f'role="{c}"' for c in context)  # type: ignore[union-attr]
                    + (f" (found {_describe(parent, doc)})" if parent is not None else ""),
                )
        owned = spec.get("owned")
        if owned and attrs.get("aria-busy", "").strip() != "true":
            bad = [o for o in self._owned(el) if doc.role[o] not in owned]  # type: ignore[operator]
            if bad:
                self.add(
                    "aria-required-children",
                    el,
                    f'role="{explicit}" may only own '
                    + ", ".join(owned)  # type: ignore[arg-type]
                    + f"; it contains {_describe(bad[0], doc)}",
                )

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

    def _owned(self, el: Element) -> list[Element]:
        doc = self.doc
        out: list[Element] = []
        stack = [c for c in reversed(el.children) if isinstance(c, Element)]
        while stack:
            node = stack.pop()
            if node in doc.ax_hidden:
                continue
            r = doc.role[node]
            if r is None or r in NO_ROLE:
                stack.extend(c for c in reversed(node.children) if isinstance(c, Element))
            else:
                out.append(node)
        owns = el.attrs.get("aria-owns")
        if owns:
            out.extend(doc.ids[k] for k in (scoped_id(el.scope, i) for i in owns.split()) if k in doc.ids)
        return out

    # -- keyboard ---------------------------------------------------------------------------
    def _keyboard(self, el: Element, role: str | None) -> None:
        doc = self.doc
        ti = tabindex_of(el)
        if ti is not None and ti > 0:
            self.add("tabindex", el, f'tabindex="{ti}" changes the natural tab order; use 0 or -1')
        if el in doc.not_rendered:
            return
        interactive = role in WIDGET_ROLES
        # nested-interactive: flag the nearest presentational-children ancestor once.
        if interactive or doc.focusable(el):
            anc = el.parent
            while anc is not None and anc.tag != "#document":
                arole = doc.role.get(anc)
                if arole in CHILDREN_PRESENTATIONAL:
                    if anc not in self._flagged_nested:
                        self._flagged_nested.add(anc)
                        self.add(
                            "nested-interactive",
                            anc,
                            f"Interactive {_describe(el, doc)} is "
                            f'nested inside role="{arole}" {_describe(anc, doc)}; screen '
                            "readers do not announce nested controls",
                        )
                    break
                anc = anc.parent
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
                    self.add(
                        "list",
                        el,
                        f"<{tag}> must only directly contain <li>, <script> or "
                        f"<template> elements; it contains {_describe(child, self.doc)}",
                    )
                    break
        elif tag == "li" and role == "listitem" and self.doc.explicit[el] is None:
            parent = el.parent
            if parent is None or not (
                parent.tag in ("ul", "ol", "menu")
                and self.doc.role.get(parent) == "list"
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
            for a in IDREF_ATTRS:
                v = attrs.get(a)
                if v:
                    referenced.update(scoped_id(el.scope, r) for r in v.split())
            if el.tag == "label" and attrs.get("for"):
                referenced.add(scoped_id(el.scope, attrs["for"]))
        for key, els in dups.items():
            ident = unscoped_id(key)
            if key in referenced:
                self.add(
                    "duplicate-id-aria",
                    els[1],
                    f'id="{ident}" is used {len(els)} times and '
                    "is referenced by ARIA or a label; the reference is ambiguous",
                )
            else:
                self.add("duplicate-id", els[1], f'id="{ident}" is used {len(els)} times; ids must be unique')


def _heading_level(el: Element) -> int | None:
    lvl = HEADINGS.get(el.tag)
    raw = el.attrs.get("aria-level")
    if raw and INTEGER.match(raw.strip()):
        return int(raw.strip())
    return int(lvl) if lvl else None


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def check_accessibility(html: str | Element) -> list[Violation]:
    """Run every rule on ``html`` (a string, or a tree from ``parse_html``)."""
    return RuleChecker(AccessibilityDocument(as_root(html))).run()


def check_accessibility_tree(root: Element) -> list[Violation]:
    """Same as ``check_accessibility`` on an already parsed tree."""
    return RuleChecker(AccessibilityDocument(root)).run()
