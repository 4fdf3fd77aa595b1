"""Accessibility checks on rendered story HTML: the tree and the rules, in one import.

`worldagent.storytest.axtree` computes the accessibility tree (roles, names, states);
`worldagent.storytest.a11y_rules` holds the axe-core-like rules that read it.
"""

from __future__ import annotations

from worldagent.storytest.a11y_rules import (
    RULES,
    Violation,
    check_accessibility,
    check_accessibility_tree,
    format_violation,
)
from worldagent.storytest.axtree import (
    AXNode,
    accessibility_tree,
    accessible_name,
    has_click_handler,
    target_of,
)

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
