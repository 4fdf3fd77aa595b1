from __future__ import annotations

from worldagent.storytest.a11y import AXNode, accessibility_tree
from worldagent.storytest.assertions import (
    Assertion,
    check_assertions,
    derive_assertions,
    describe_assertion,
)

REFERENCE = (
    '<div class="toolbar"><h2>Formatting</h2>'
    "<p>Choose a style</p>"
    '<button type="button" aria-pressed="true">Bold</button>'
    '<button type="button" aria-pressed="false">Italic</button>'
    "<span>hint</span><strong>Note</strong></div>"
)


def test_derive_one_assertion_per_meaningful_node() -> None:
    assertions = derive_assertions(accessibility_tree(REFERENCE))
    assert assertions == [
        Assertion(role="heading", name="Formatting", states={"level": "2"}),
        Assertion(role="button", name="Bold", states={"pressed": "true"}),
        Assertion(role="button", name="Italic", states={"pressed": "false"}),
    ]


def test_identical_candidate_passes_all() -> None:
    expected = derive_assertions(accessibility_tree(REFERENCE))
    assert check_assertions(expected, accessibility_tree(REFERENCE)) == [True, True, True]


def test_candidate_missing_aria_pressed_fails_that_assertion() -> None:
    expected = derive_assertions(accessibility_tree(REFERENCE))
    candidate = (
        "<section><h2>Formatting</h2>"
        '<button type="button">Bold</button>'
        '<button type="button" aria-pressed="false">Italic</button></section>'
    )
    assert check_assertions(expected, accessibility_tree(candidate)) == [True, False, True]


def test_names_are_whitespace_normalised_and_case_sensitive() -> None:
    expected = [Assertion(role="button", name="Save changes")]
    assert check_assertions(expected, accessibility_tree("<button>\n  Save   changes\n</button>")) == [True]
    assert check_assertions(expected, accessibility_tree("<button>save changes</button>")) == [False]


def test_extra_candidate_states_and_nodes_are_fine() -> None:
    expected = [Assertion(role="button", name="Go", states={"pressed": "true"})]
    tree = accessibility_tree('<nav aria-label="x"><button aria-pressed="true" aria-expanded="false">Go</button></nav>')
    assert check_assertions(expected, tree) == [True]


def test_matching_is_one_to_one() -> None:
    expected = [Assertion(role="button", name="OK"), Assertion(role="button", name="OK")]
    assert check_assertions(expected, accessibility_tree("<button>OK</button>")) == [True, False]
    assert check_assertions(expected, accessibility_tree("<button>OK</button><button>OK</button>")) == [True, True]


def test_greedy_in_document_order() -> None:
    expected = [Assertion(role="link", name="A"), Assertion(role="link", name="B")]
    tree = [AXNode("link", "B", {}, 0), AXNode("link", "A", {}, 0)]
    assert check_assertions(expected, tree) == [True, True]  # order of the candidate does not matter


def test_role_must_match() -> None:
    expected = [Assertion(role="button", name="Docs")]
    assert check_assertions(expected, accessibility_tree('<a href="/docs">Docs</a>')) == [False]


def test_assertions_round_trip_json() -> None:
    a = Assertion(role="checkbox", name="Remember me", states={"checked": "false"})
    assert Assertion.model_validate_json(a.model_dump_json()) == a
    assert describe_assertion(a) == 'checkbox "Remember me" [checked=false]'
