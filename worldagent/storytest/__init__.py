"""Story runner: render, accessibility rules, pattern rules, assertions, reward."""

from __future__ import annotations

from worldagent.storytest.a11y import AXNode, Violation, accessibility_tree, check_accessibility
from worldagent.storytest.assertions import Assertion, check_assertions, derive_assertions
from worldagent.storytest.dom import Element, parse_html
from worldagent.storytest.patterns import check_patterns, find_hardcoded_colors, find_inline_styles
from worldagent.storytest.result import StoryResult
from worldagent.storytest.reward import RewardWeights, reward

__all__ = [
    "AXNode",
    "Assertion",
    "Element",
    "RewardWeights",
    "StoryResult",
    "Violation",
    "accessibility_tree",
    "check_accessibility",
    "check_assertions",
    "check_patterns",
    "derive_assertions",
    "find_hardcoded_colors",
    "find_inline_styles",
    "parse_html",
    "reward",
]
