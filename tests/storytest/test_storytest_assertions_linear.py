"""Assertion matching is linear in the page (issue 84): the grouped matcher gives exactly the
verdicts of comparing each assertion with every node in document order (checked against that
quadratic definition on generated trees), and a page of 50,000 alike list items is one pass."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from worldagent.storytest.a11y import AXNode
from worldagent.storytest.assertions import Assertion, check_assertions


def reference_check(expected: Sequence[Assertion], tree: Sequence[AXNode]) -> list[bool]:
    """The definition: each assertion, in order, takes the first unused node that satisfies it."""
    used = [False] * len(tree)
    results: list[bool] = []
    for a in expected:
        hit = next((i for i, node in enumerate(tree) if not used[i] and a.matches(node)), None)
        if hit is not None:
            used[hit] = True
        results.append(hit is not None)
    return results


ROLES = st.sampled_from(["button", "listitem", "checkbox"])
NAMES = st.sampled_from(["", "Save", " Save ", "save", "a  b", "a b"])
STATES = st.dictionaries(
    st.sampled_from(["pressed", "checked", "level", "expanded"]),
    st.sampled_from(["true", "false", " true", "2"]),
    max_size=3,
)
NODES = st.builds(AXNode, role=ROLES, name=NAMES, states=STATES)
ASSERTIONS = st.builds(Assertion, role=ROLES, name=NAMES, states=STATES)


@settings(max_examples=300, deadline=None)
@given(expected=st.lists(ASSERTIONS, max_size=12), tree=st.lists(NODES, max_size=16))
def test_grouped_matching_gives_the_greedy_verdicts(expected: list[Assertion], tree: list[AXNode]) -> None:
    assert check_assertions(expected, tree) == reference_check(expected, tree)


def test_a_superset_node_earlier_in_the_page_is_taken_first() -> None:
    # Greedy order across groups: the assertion takes the earliest node whose states contain its own.
    tree = [
        AXNode("button", "Go", {"pressed": "true", "expanded": "false"}),
        AXNode("button", "Go", {"pressed": "true"}),
    ]
    expected = [
        Assertion(role="button", name="Go", states={"pressed": "true"}),
        Assertion(role="button", name="Go", states={"pressed": "true", "expanded": "false"}),
    ]
    assert check_assertions(expected, tree) == [True, False] == reference_check(expected, tree)


def test_fifty_thousand_alike_items_are_matched_in_one_pass() -> None:
    # 50,000 x 50,000 comparisons took 100 s; grouped, it is a dictionary pass. The extra
    # assertion finds nothing left: one-to-one still holds.
    tree = [AXNode("listitem", "x") for _ in range(50_000)]
    expected = [Assertion(role="listitem", name="x") for _ in range(50_001)]
    results = check_assertions(expected, tree)
    assert results[:-1] == [True] * 50_000 and results[-1] is False
