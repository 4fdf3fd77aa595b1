"""Computed roles, accessible names and states."""

from __future__ import annotations

import pytest

from worldagent.storytest.a11y import AXNode, accessibility_tree, accessible_name


def only(html: str) -> AXNode:
    tree = accessibility_tree(html)
    assert len(tree) == 1, tree
    return tree[0]


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        # aria-labelledby beats aria-label beats content
        (
            '<button id="x" aria-labelledby="a b" aria-label="Nope">Nope</button>'
            '<span id="a">Delete</span><span id="b">file</span>',
            "Delete file",
        ),
        ('<button id="x" aria-label="Close dialog">×</button>', "Close dialog"),
        ('<button id="x">  Save\n   changes </button>', "Save changes"),
        # labels
        ('<label for="x">Email address</label><input id="x" type="email">', "Email address"),
        ('<label>Full <b>name</b> <input id="x" type="text"></label>', "Full name"),
        ('<input id="x" type="text" aria-label="Search" placeholder="Type here">', "Search"),
        ('<input id="x" type="text" title="Postcode" placeholder="1234 AB">', "Postcode"),
        ('<input id="x" type="text" placeholder="1234 AB">', "1234 AB"),
        # alt and embedded images
        ('<img id="x" src="a.png" alt="Company logo">', "Company logo"),
        ('<a id="x" href="/"><img src="h.svg" alt="Home"></a>', "Home"),
        # inline children are concatenated without spaces, as Chromium does
        ('<button id="x"><span aria-label="Loading"></span>Uploading</button>', "LoadingUploading"),
        ('<button id="x"><span aria-label="Loading"></span> Uploading</button>', "Loading Uploading"),
        # hidden content is not part of the name, a hidden referenced label is
        ('<button id="x"><span aria-hidden="true">★</span>Favourite</button>', "Favourite"),
        ('<button id="x" aria-labelledby="t">x</button><span id="t" hidden>Starred</span>', "Starred"),
        # input buttons
        ('<input id="x" type="submit">', "Submit"),
        ('<input id="x" type="reset">', "Reset"),
        ('<input id="x" type="button" value="Go">', "Go"),
        # native captions
        ('<fieldset id="x"><legend>Shipping</legend><input type="text" aria-label="A"></fieldset>', "Shipping"),
        ('<table id="x"><caption>Prices</caption><tr><td>1</td></tr></table>', "Prices"),
        ('<figure id="x"><img src="a" alt="A"><figcaption>Sales</figcaption></figure>', "Sales"),
        # title is the last resort
        ('<button id="x" title="More options"></button>', "More options"),
        # block children are separated by spaces
        ('<a id="x" href="/"><div>Read</div><div>more</div></a>', "Read more"),
        # a textbox inside a label contributes its value
        ('<label>Pay <input id="x" type="checkbox"> <input type="text" value="10"> euro</label>', "Pay 10 euro"),
        # a wrapping label labels only its first labelable descendant
        ('<label>Pay <input type="text" value="10"> euro <input id="x" type="checkbox"></label>', ""),
        # label[for] takes precedence over wrapping and joins several labels
        ('<label for="x">First</label><label for="x">Second</label><input id="x" type="text">', "First Second"),
        # roles whose name does not come from content
        ('<nav id="x"><a href="/">Home</a></nav>', ""),
        ('<nav id="x" aria-label="Breadcrumb"><a href="/">Home</a></nav>', "Breadcrumb"),
    ],
)
def test_accessible_names(html: str, expected: str) -> None:
    assert accessible_name(html, "x") == expected


@pytest.mark.parametrize(
    ("html", "role"),
    [
        ("<button>x</button>", "button"),
        ('<a href="/">x</a>', "link"),
        ('<input type="text" aria-label="a">', "textbox"),
        ('<input aria-label="a">', "textbox"),
        ('<input type="email" aria-label="a">', "textbox"),
        ('<input type="checkbox" aria-label="a">', "checkbox"),
        ('<input type="radio" aria-label="a">', "radio"),
        ('<input type="range" aria-label="a">', "slider"),
        ('<input type="number" aria-label="a">', "spinbutton"),
        ('<input type="search" aria-label="a">', "searchbox"),
        ('<input type="submit">', "button"),
        ('<input type="text" list="l" aria-label="a"><datalist id="l"></datalist>', "combobox"),
        ('<select aria-label="a"></select>', "combobox"),
        ('<select multiple aria-label="a"></select>', "listbox"),
        ('<textarea aria-label="a"></textarea>', "textbox"),
        ('<img src="a" alt="a">', "img"),
        ("<nav></nav>", "navigation"),
        ("<ul></ul>", "list"),
        ("<ol></ol>", "list"),
        ("<main></main>", "main"),
        ("<aside></aside>", "complementary"),
        ("<header></header>", "banner"),
        ("<footer></footer>", "contentinfo"),
        ("<dialog open></dialog>", "dialog"),
        ("<article></article>", "article"),
        ('<progress value="3" max="10"></progress>', "progressbar"),
        ("<fieldset></fieldset>", "group"),
        ('<form aria-label="Login"></form>', "form"),
        ('<section aria-label="News"></section>', "region"),
        ("<hr>", "separator"),
        ("<table></table>", "table"),
        ("<p>x</p>", "paragraph"),
        ('<div role="alert">x</div>', "alert"),
        ('<a role="button" href="/">x</a>', "button"),
        ('<div role="bogus switch" aria-checked="true">x</div>', "switch"),
    ],
)
def test_roles(html: str, role: str) -> None:
    assert only(html).role == role


@pytest.mark.parametrize(
    "html",
    [
        "<div>x</div>",
        "<span>x</span>",
        "<a>no href</a>",
        "<section>unnamed</section>",
        "<form>unnamed</form>",
        '<img src="a" alt="">',
        '<div role="presentation">x</div>',
        '<input type="hidden">',
        "<div hidden><button>x</button></div>",
        '<div aria-hidden="true"><button>x</button></div>',
        "<label>x</label>",
        "<dialog><button>Close</button></dialog>",
    ],
)
def test_elements_without_a_node(html: str) -> None:
    assert accessibility_tree(html) == []


def test_closed_details_shows_only_its_summary() -> None:
    tree = accessibility_tree("<details><summary>More</summary><a href='/'>Link</a></details>")
    assert [n.role for n in tree] == ["group"]
    assert tree[0].states == {"expanded": "false"}
    tree = accessibility_tree("<details open><summary>More</summary><a href='/'>Link</a></details>")
    assert [n.role for n in tree] == ["group", "link"]


def test_header_inside_article_is_not_a_banner() -> None:
    tree = accessibility_tree("<article><header><h2>T</h2></header></article>")
    assert [n.role for n in tree] == ["article", "heading"]


def test_td_in_grid_is_gridcell() -> None:
    tree = accessibility_tree(
        '<table role="grid"><tr><td>a</td></tr></table><table><tr><td>b</td><th>h</th></tr></table>'
    )
    assert [n.role for n in tree] == ["grid", "row", "gridcell", "table", "row", "cell", "columnheader"]


def test_depth_counts_included_ancestors() -> None:
    tree = accessibility_tree('<nav aria-label="Main"><div><ul><li><a href="/">Home</a></li></ul></div></nav>')
    assert [(n.role, n.depth) for n in tree] == [("navigation", 0), ("list", 1), ("listitem", 2), ("link", 3)]


def test_children_of_presentational_roles_are_not_separate_nodes() -> None:
    tree = accessibility_tree('<button type="button"><img src="i" alt="Bin"> Delete</button>')
    assert [(n.role, n.name) for n in tree] == [("button", "Bin Delete")]


def test_states_from_aria_and_native_attributes() -> None:
    html = (
        '<button type="button" aria-pressed="TRUE" aria-expanded="false" aria-haspopup="menu">B</button>'
        '<input type="checkbox" aria-label="A" checked required>'
        '<input type="checkbox" aria-label="C" disabled>'
        '<div role="switch" tabindex="0" aria-checked="mixed" aria-label="S"></div>'
        '<h3>Title</h3><div role="heading" aria-level="4">Sub</div>'
        '<div role="slider" tabindex="0" aria-label="V" aria-valuenow="5" aria-valuemin="0" aria-valuemax="10"></div>'
        '<progress value="30" max="100"></progress>'
        '<a href="/" aria-current="page">Home</a>'
        '<div role="dialog" aria-modal="true" aria-label="D" aria-busy="true"></div>'
        '<input type="text" aria-label="E" aria-invalid="true" aria-describedby="h1 h2">'
        '<span id="h1">Must be</span><span id="h2">an email.</span>'
        "<fieldset disabled><button>In fieldset</button></fieldset>"
        '<select aria-label="P"><option>a</option><option selected>b</option></select>'
        '<div role="tablist"><div role="tab" tabindex="0" aria-selected="true">T</div></div>'
    )
    states = {n.name: n.states for n in accessibility_tree(html)}
    assert states["B"] == {"pressed": "true", "expanded": "false", "haspopup": "menu"}
    assert states["A"] == {"checked": "true", "required": "true"}
    assert states["C"] == {"checked": "false", "disabled": "true"}
    assert states["S"] == {"checked": "mixed"}
    assert states["Title"] == {"level": "3"}
    assert states["Sub"] == {"level": "4"}
    assert states["V"] == {"valuenow": "5", "valuemin": "0", "valuemax": "10"}
    (progress,) = [n for n in accessibility_tree(html) if n.role == "progressbar"]
    assert progress.states == {"valuenow": "30", "valuemax": "100", "valuemin": "0"}
    assert states["Home"] == {"current": "page"}
    assert states["D"] == {"modal": "true", "busy": "true"}
    assert states["E"] == {"invalid": "true", "description": "Must be an email."}
    assert states["In fieldset"] == {"disabled": "true"}
    assert states["b"] == {"selected": "true"}
    assert states["T"] == {"selected": "true"}
