from __future__ import annotations

from worldagent.storytest.dom import Element, iter_elements, parse_html, text_content


def tags(root: Element) -> list[str]:
    return [el.tag for el in iter_elements(root)]


def test_elements_attributes_and_text() -> None:
    root = parse_html('<DIV ID="a" Class="x y" data-On><p>Hi &amp; <b>bye</b></p></DIV>')
    div = root.elements[0]
    assert div.tag == "div"
    assert div.attrs == {"id": "a", "class": "x y", "data-on": ""}
    p = div.elements[0]
    assert p.children[0] == "Hi & "
    assert isinstance(p.children[1], Element) and p.children[1].tag == "b"
    assert text_content(div) == "Hi & bye"
    assert p.parent is div and div.parent is root


def test_void_elements_do_not_nest() -> None:
    root = parse_html('<p><img src="a.png" alt="x"><input type="text">after<br>end</p>')
    p = root.elements[0]
    assert [c.tag for c in p.elements] == ["img", "input", "br"]
    assert all(not c.children for c in p.elements)
    assert text_content(p) == "afterend"


def test_self_closing_syntax_is_closed() -> None:
    root = parse_html('<div><span/><i class="icon"/>text</div>')
    div = root.elements[0]
    assert [c.tag for c in div.elements] == ["span", "i"]
    assert div.children[-1] == "text"


def test_unclosed_and_stray_tags_are_tolerated() -> None:
    root = parse_html("<ul><li>one<li>two</ul></span><div><p>a<p>b</div><section>open")
    ul = root.elements[0]
    assert [text_content(li) for li in ul.elements] == ["one", "two"]
    div = root.elements[1]
    assert [text_content(p) for p in div.elements] == ["a", "b"]
    assert root.elements[2].tag == "section" and text_content(root.elements[2]) == "open"


def test_end_tag_closes_open_descendants() -> None:
    root = parse_html("<div><span><b>x</div><p>y</p>")
    assert [e.tag for e in root.elements] == ["div", "p"]
    assert tags(root) == ["div", "span", "b", "p"]


def test_first_duplicate_attribute_wins_and_valueless_is_empty() -> None:
    root = parse_html('<button disabled type="button" type="submit">x</button>')
    assert root.elements[0].attrs == {"disabled": "", "type": "button"}


def test_source_line_and_document_order() -> None:
    root = parse_html("<div>\n<span>a</span>\n\n<em>b</em></div>")
    div, span, em = list(iter_elements(root))
    assert (div.sourceline, span.sourceline, em.sourceline) == (1, 2, 4)
    assert div.index < span.index < em.index


def test_script_content_is_text() -> None:
    root = parse_html("<script>if (a < b) { x('<p>') }</script><p>after</p>")
    assert tags(root) == ["script", "p"]


def test_forty_buttons_parse_into_forty_elements() -> None:
    # How fast it parses is a benchmark (`python -m benchmarks`), not a test.
    html = (
        "<div>"
        + "".join(f'<button type="button" aria-pressed="false" id="b{i}">Item {i}</button>' for i in range(40))
        + "</div>"
    )
    assert sum(1 for element in iter_elements(parse_html(html)) if element.tag == "button") == 40
