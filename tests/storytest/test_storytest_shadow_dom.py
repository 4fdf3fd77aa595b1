"""The accessibility tree and rules see the flattened tree of declarative shadow roots
(``<template shadowrootmode>``, as Plaited's SSR writes custom elements): slotted content,
ids resolved inside their own shadow root, nested hosts, fallback content."""

from __future__ import annotations

from worldagent.storytest.a11y import accessibility_tree, check_accessibility
from worldagent.storytest.dom import Element, iter_elements, parse_html


def host(tag: str, shadow: str, light: str = "", extra: str = "") -> str:
    return f'<{tag}><template shadowrootmode="open"{extra}>{shadow}</template>{light}</{tag}>'


def rules(html: str) -> list[str]:
    return sorted(v.rule for v in check_accessibility(html))


def test_slotted_text_names_a_button_inside_the_shadow_root() -> None:
    html = host("x-btn", '<button type="button"><slot></slot></button>', "Save")
    assert rules(html) == []
    assert [(n.role, n.name) for n in accessibility_tree(html)] == [("button", "Save")]


def test_empty_slot_leaves_the_button_unnamed() -> None:
    assert rules(host("x-btn", '<button type="button"><slot></slot></button>')) == ["button-name"]


def test_named_slots_and_fallback_content() -> None:
    shadow = '<h2><slot name="title">Untitled</slot></h2><p><slot></slot></p>'
    with_title = host("x-card", shadow, '<span slot="title">Hello</span>Body')
    without = host("x-card", shadow, "Body")
    assert [(n.role, n.name) for n in accessibility_tree(with_title)][0] == ("heading", "Hello")
    assert [(n.role, n.name) for n in accessibility_tree(without)][0] == ("heading", "Untitled")


def test_ids_resolve_inside_their_own_shadow_root() -> None:
    inner = '<label for="f">Name</label><input id="f" type="text">'
    twice = "<div>" + host("x-field", inner) + host("x-field", inner) + "</div>"
    assert rules(twice) == []  # the same id in two shadow roots is not a duplicate
    outside_label = '<label for="f">Outside</label>' + host("x-field", '<input id="f" type="text">')
    assert rules(outside_label) == ["label"]  # a label in the document cannot reach into a shadow root


def test_aria_labelledby_inside_a_shadow_root() -> None:
    html = host("x-search", '<span id="l">Search</span><input type="search" aria-labelledby="l">')
    assert [(n.role, n.name) for n in accessibility_tree(html)] == [("searchbox", "Search")]


def test_slotted_list_items_belong_to_the_shadow_list() -> None:
    assert rules(host("x-list", "<ul><slot></slot></ul>", "<li>a</li><li>b</li>")) == []
    assert rules("<div><li>a</li></div>") == ["listitem"]


def test_nested_hosts_and_pass_through_slots() -> None:
    inner = '<nav aria-label="Inner"><slot></slot></nav>'
    outer_shadow = f'<x-inner><template shadowrootmode="open">{inner}</template><slot name="links"></slot></x-inner>'
    html = host("x-outer", outer_shadow, '<a slot="links" href="/">Home</a>')
    tree = [(n.role, n.name) for n in accessibility_tree(html)]
    assert tree == [("navigation", "Inner"), ("link", "Home")]


def test_shadow_host_records_mode_and_delegates_focus() -> None:
    root = parse_html(host("x-f", "<button>b</button>", extra=" shadowrootdelegatesfocus"))
    (x_f,) = [el for el in iter_elements(root) if el.tag == "x-f"]
    assert x_f.shadow_host == {"mode": "open", "delegatesfocus": True}
    (button,) = [el for el in iter_elements(root) if el.tag == "button"]
    assert isinstance(button.parent, Element) and button.parent.tag == "x-f" and button.scope != 0


def test_a_template_without_shadowrootmode_stays_inert() -> None:
    assert rules('<template><button type="button"></button></template>') == []


def test_many_siblings_get_distinct_targets() -> None:
    found = check_accessibility("<img>" * 8000)
    assert len(found) == 8000
    assert found[0].target == "img:nth-of-type(1)" and found[-1].target == "img:nth-of-type(8000)"


def test_unterminated_tags_are_dropped_as_at_end_of_file() -> None:
    assert check_accessibility("<div " * 16000) == []
    assert rules('<p>a < b</p><img src="x.png"') == []
    assert rules('<img src="x.png">') == ["image-alt"]
