"""Assertions derived from a reference story's accessibility tree, checked on a candidate's.

One assertion per reference node whose role is meaningful (not generic/presentational and not
inline-text semantics such as ``paragraph`` or ``strong``): the role, the accessible name
(compared after whitespace normalisation, case-sensitive) and the node's states (only the keys
present in the reference are compared, so extra candidate states do not fail an assertion).
Matching is one-to-one and greedy in document order: each expected assertion, in order, takes
the first candidate node not yet taken that satisfies it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from worldagent.storytest.a11y import AXNode

__all__ = ["Assertion", "NON_ASSERTED_ROLES", "check_assertions", "derive_assertions", "describe_assertion"]

# Roles that never produce an assertion: no semantics, or text-level semantics whose presence
# is a matter of wording rather than of the component's structure.
NON_ASSERTED_ROLES: frozenset[str] = frozenset(
    {
        "generic",
        "none",
        "presentation",
        "paragraph",
        "text",
        "strong",
        "emphasis",
        "code",
        "deletion",
        "insertion",
        "subscript",
        "superscript",
        "time",
        "mark",
        "term",
        "definition",
        "blockquote",
        "caption",
        "abbr",
        "graphics-document",
    }
)

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


class Assertion(BaseModel):
    """Expect a node with ``role``, accessible ``name`` and (at least) these ``states``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    name: str = ""
    states: dict[str, str] = Field(default_factory=dict)

    def matches(self, node: AXNode) -> bool:
        if node.role != self.role or _norm(node.name) != _norm(self.name):
            return False
        for key, value in self.states.items():
            actual = node.states.get(key)
            if actual is None or _norm(actual) != _norm(value):
                return False
        return True


def describe_assertion(a: Assertion) -> str:
    """Human-readable form, e.g. ``button "Save" [pressed=true]``."""
    text = f'{a.role} "{a.name}"'
    if a.states:
        text += " [" + ", ".join(f"{k}={v}" for k, v in sorted(a.states.items())) + "]"
    return text


def derive_assertions(tree: Sequence[AXNode]) -> list[Assertion]:
    """One assertion per node of ``tree`` with a meaningful role, in document order."""
    return [
        Assertion(role=n.role, name=_norm(n.name), states=dict(n.states))
        for n in tree
        if n.role not in NON_ASSERTED_ROLES
    ]


def check_assertions(expected: Sequence[Assertion], actual_tree: Sequence[AXNode]) -> list[bool]:
    """For each expected assertion, whether a distinct node of ``actual_tree`` satisfies it.

    The same greedy one-to-one matching as comparing each assertion with every node in document
    order, done in time linear in the page: nodes are grouped by role, normalised name and
    normalised states. Nodes of one group are interchangeable for every assertion, so a group is
    always consumed from its front (a pointer); an assertion looks only at the groups of its role
    and name whose states contain its own, taking the earliest unused node among them. A page of
    50,000 alike list items is checked in one pass, not 50,000 x 50,000 comparisons.
    """
    groups: dict[tuple[str, str], dict[tuple[tuple[str, str], ...], _Group]] = {}
    for index, node in enumerate(actual_tree):
        states = tuple(sorted((k, _norm(v)) for k, v in node.states.items()))
        by_states = groups.setdefault((node.role, _norm(node.name)), {})
        group = by_states.get(states)
        if group is None:
            group = by_states[states] = _Group(dict(states))
        group.indices.append(index)
    results: list[bool] = []
    for a in expected:
        by_states = groups.get((a.role, _norm(a.name)))
        if not by_states:
            results.append(False)
            continue
        wanted = {k: _norm(v) for k, v in a.states.items()}
        exact = by_states.get(tuple(sorted(wanted.items())))
        best: _Group | None = exact if exact is not None and exact.remaining else None
        # Other groups qualify only with more state keys than the assertion names (a superset).
        for group in by_states.values():
            if group is exact or not group.remaining or len(group.states) <= len(wanted):
                continue
            if all(group.states.get(k) == v for k, v in wanted.items()) and (best is None or group.first < best.first):
                best = group
        if best is None:
            results.append(False)
            continue
        best.take()
        results.append(True)
    return results


class _Group:
    """Alike nodes (same role, name and states), in document order, consumed from the front."""

    __slots__ = ("states", "indices", "next")

    def __init__(self, states: dict[str, str]) -> None:
        self.states = states
        self.indices: list[int] = []
        self.next = 0

    @property
    def remaining(self) -> bool:
        return self.next < len(self.indices)

    @property
    def first(self) -> int:
        return self.indices[self.next]

    def take(self) -> None:
        self.next += 1
