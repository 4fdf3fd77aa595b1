"""A story's ``play`` function run against its rendered page, as Plaited's test runner runs it.

Plaited calls ``play({ assert, findByAttribute, findByText, ... })`` after the story renders; the
first ``assert`` whose ``actual`` is not deeply equal to its ``expected`` throws and ends the play.
Here the play runs in the story interpreter (plus ``await``, which returns its value: every finder
answers at once) over the page the story renders, parsed with :mod:`worldagent.storytest.dom`.

The page is static: nothing runs a template's behaviour. So a play that fires an event
(``fireEvent``), or reads an element property or selector this module does not model, stops
**unchecked** with the reason: what it asserted before that still counts, and it is never called a
failure. The element properties modelled are the ones a browser gives for the static markup
(``disabled`` only on form controls, ``select.value`` its selected option, ``textContent`` every
descendant's text). ``querySelector``/``querySelectorAll`` take tag, ``#id``, ``.class``,
``[attr]``, ``[attr=value]``, ``:first-child``, ``:last-child`` and ``:not(...)`` of those, in
compounds joined by spaces.
``accessibilityCheck`` does nothing here: the story test runs its accessibility rules on every page.

Read only by the ``worldagent story-test --play`` command, never by a pipeline stage.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldagent.stories.errors import StoryError
from worldagent.stories.interpreter import Interpreter, JsFunction, Node, Scope
from worldagent.stories.parse import DEFAULT_MAX_BYTES
from worldagent.stories.render import DEFAULT_MAX_DEPTH, DEFAULT_MAX_STEPS, render_story
from worldagent.stories.values import UNDEFINED, Builtin, StoryConfig, strict_equals, to_string
from worldagent.storytest.dom import Element, iter_elements, parse_html, text_content

_CONTROLS = frozenset({"button", "input", "select", "textarea", "fieldset", "option", "optgroup"})
_REQUIRED_ASSERT_KEYS = ("given", "should", "actual", "expected")


@dataclass(frozen=True)
class PlayResult:
    """What a story's ``play`` did: the asserts that held, then the first failure or why it stopped."""

    asserts_passed: int
    failure: str | None = None  # the failed assert, as Plaited reports it (the play stops there)
    unchecked: str | None = None  # why the play stopped without a verdict (an event, an unmodelled read)

    @property
    def passed(self) -> bool:
        return self.failure is None

    @property
    def verdict(self) -> str:
        """``passed``, ``failed: <the assert>`` or ``unchecked: <why>``."""
        if self.failure is not None:
            return f"failed: {self.failure}"
        return "passed" if self.unchecked is None else f"unchecked: {self.unchecked}"


class _Stop(Exception):
    """Ends the play: ``failure`` for a failed assert, else an ``unchecked`` reason."""

    def __init__(self, reason: str, failed: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.failed = failed


class _PlayInterpreter(Interpreter):
    """The story interpreter, plus ``await`` (every finder here answers at once) and elements whose
    unmodelled properties stop the play unchecked instead of reading ``undefined``."""

    def ev(self, n: Node, scope: Scope) -> Any:
        if n.type == "await_expression":
            return self.ev(n.kids[0], scope)
        return super().ev(n, scope)

    def get(self, obj: Any, key: Any, n: Node, scope: Scope) -> Any:
        if type(obj) is dict and _ELEMENT in obj and key not in obj:
            _unchecked(f"<{obj[_ELEMENT].tag}>.{to_string(key)} is a property this runner does not model")
        return super().get(obj, key, n, scope)


def run_play(
    story_file: Path,
    export: str,
    root: Path,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> PlayResult | None:
    """Run story ``export``'s ``play`` against its rendered page; None when it has no ``play``.

    Raises :class:`StoryError` when the story does not render or its module does not load."""
    interp = _PlayInterpreter(root, None, max_depth, max_steps, max_bytes)
    rel = interp.rel_path(story_file)
    state = interp.load(rel)
    config = state.exports.get(export)
    play = config.get("play") if isinstance(config, StoryConfig) else None
    if type(play) is not JsFunction:
        return None
    html = render_story(story_file, export, root, max_depth=max_depth, max_steps=max_steps, max_bytes=max_bytes).html
    page = _Page(parse_html(html))
    passed = [0]
    context = {
        "assert": Builtin("assert", lambda site, args: _assert(args, passed)),
        "findByAttribute": Builtin("findByAttribute", lambda site, args: page.find_by_attribute(args)),
        "findByTestId": Builtin("findByTestId", lambda site, args: page.find_by_attribute(["data-testid", *args])),
        "findByTarget": Builtin("findByTarget", lambda site, args: page.find_by_attribute(["p-target", *args])),
        "findByText": Builtin("findByText", lambda site, args: page.find_by_text(args)),
        "accessibilityCheck": Builtin("accessibilityCheck", lambda site, args: UNDEFINED),
        "fireEvent": Builtin("fireEvent", lambda site, args: _unchecked("fireEvent: the page here is static")),
    }
    node = state.export_nodes[export]
    try:
        interp.call(play, [context], node, state.scope)
    except _Stop as stop:
        if stop.failed:
            return PlayResult(passed[0], failure=stop.reason)
        return PlayResult(passed[0], unchecked=stop.reason)
    except StoryError as error:  # what the interpreter does not know (a RegExp, a loop): no verdict
        return PlayResult(passed[0], unchecked=f"play: {error}")
    except RecursionError:
        return PlayResult(passed[0], unchecked="play: expression nesting too deep to evaluate")
    return PlayResult(passed[0])


def _unchecked(reason: str) -> Any:
    raise _Stop(reason, failed=False)


def _assert(args: list[Any], passed: list[int]) -> Any:
    spec = args[0] if args else UNDEFINED
    if type(spec) is not dict:
        raise _Stop("assert: its argument is not an object { given, should, actual, expected }", failed=True)
    missing = [key for key in _REQUIRED_ASSERT_KEYS if key not in spec]
    if missing:
        raise _Stop(f"assert: missing {', '.join(missing)}", failed=True)
    actual, expected = spec["actual"], spec["expected"]
    if not deep_equal(actual, expected):
        raise _Stop(
            f"given {to_string(spec['given'])}: should {to_string(spec['should'])}: "
            f"expected {_show(expected)}, got {_show(actual)}",
            failed=True,
        )
    passed[0] += 1
    return UNDEFINED


def deep_equal(a: Any, b: Any) -> bool:
    """Plaited's ``deepEqual`` for the values a play compares: primitives strictly, arrays and plain
    objects by their entries, elements by identity."""
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict and type(b) is dict:
        if a.get(_ELEMENT) is not None or b.get(_ELEMENT) is not None:
            return a is b
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    return strict_equals(a, b)


def _show(value: Any) -> str:
    if type(value) is dict and value.get(_ELEMENT) is not None:
        return f"<{value[_ELEMENT].tag}>"
    if isinstance(value, str):
        return repr(value)
    return to_string(value)


_ELEMENT = "\x00element"  # the key under which an element's dict keeps its DOM node (no JS name can be it)


class _Page:
    """The rendered page's elements as the plain objects the interpreter reads (one per element)."""

    def __init__(self, document: Element) -> None:
        self.document = document
        self._objects: dict[int, dict[str, Any]] = {}

    def find_by_attribute(self, args: list[Any]) -> Any:
        name, value = (to_string(a) for a in (args + [UNDEFINED, UNDEFINED])[:2])
        for el in iter_elements(self.document):
            if el.attrs.get(name.lower()) == value:
                return self.wrap(el)
        return UNDEFINED

    def find_by_text(self, args: list[Any]) -> Any:
        wanted = to_string(args[0]) if args else ""
        found = _first_text_parent(self.document, wanted)
        return UNDEFINED if found is None else self.wrap(found)

    def wrap(self, el: Element) -> dict[str, Any]:
        cached = self._objects.get(id(el))
        if cached is None:
            cached = self._objects[id(el)] = _element_object(el, self)
        return cached


def _chosen_option(select: Element) -> Element | None:
    """The option a browser shows selected: the first marked ``selected``, else (one-choice lists) the first."""
    options = [o for o in iter_elements(select) if o.tag == "option"]
    marked = next((o for o in options if "selected" in o.attrs), None)
    if marked is not None or "multiple" in select.attrs:
        return marked
    return options[0] if options else None


def _first_text_parent(node: Element, wanted: str) -> Element | None:
    for child in node.children:
        if isinstance(child, str):
            if child.strip() == wanted and node.tag != "#document":
                return node
        else:
            found = _first_text_parent(child, wanted)
            if found is not None:
                return found
    return None


def _element_object(el: Element, page: _Page) -> dict[str, Any]:
    tag, attrs = el.tag, el.attrs

    def method(name: str, fn: Callable[[list[Any]], Any]) -> Builtin:
        return Builtin(name, lambda site, args: fn(args))

    def arg(args: list[Any]) -> str:
        return to_string(args[0]).lower() if args else ""

    obj: dict[str, Any] = {
        _ELEMENT: el,
        "tagName": tag.upper(),
        "id": attrs.get("id", ""),
        "className": attrs.get("class", ""),
        "textContent": text_content(el),
        "hidden": "hidden" in attrs,
        "getAttribute": method("getAttribute", lambda args: attrs.get(arg(args))),
        "hasAttribute": method("hasAttribute", lambda args: arg(args) in attrs),
        "querySelector": method("querySelector", lambda args: _query(el, args, page, first=True)),
        "querySelectorAll": method("querySelectorAll", lambda args: _query(el, args, page, first=False)),
    }
    if tag in _CONTROLS:
        obj["disabled"] = "disabled" in attrs
    if tag in ("input", "select", "textarea"):
        obj["required"] = "required" in attrs
        obj["name"] = attrs.get("name", "")
    if tag in ("input", "textarea"):
        obj["readOnly"] = "readonly" in attrs
        obj["placeholder"] = attrs.get("placeholder", "")
        obj["maxLength"] = int(attrs["maxlength"]) if attrs.get("maxlength", "").isdigit() else -1
    if tag == "input":
        obj["type"] = attrs.get("type", "text").lower()
        obj["checked"] = "checked" in attrs
        obj["value"] = attrs.get("value", "")
    elif tag == "textarea":
        obj["value"] = text_content(el)
    elif tag == "select":
        chosen = _chosen_option(el)
        obj["value"] = "" if chosen is None else chosen.attrs.get("value", text_content(chosen).strip())
    elif tag == "option":
        select = next((a for a in el.ancestors() if a.tag == "select"), None)
        obj["selected"] = "selected" in attrs or (select is not None and _chosen_option(select) is el)
        obj["value"] = attrs.get("value", text_content(el).strip())
    elif tag == "button":
        obj["type"] = attrs.get("type", "submit").lower()
        obj["value"] = attrs.get("value", "")
    elif tag in ("details", "dialog"):
        obj["open"] = "open" in attrs
    return obj


# ``li``, ``#id``, ``.class``, ``[attr]``, ``[attr=value]``, ``:first-child``, ``:last-child``, ``:not(<those>)``
_SIMPLE = re.compile(
    r"([a-zA-Z][\w-]*)|#([\w-]+)|\.([\w-]+)|\[([\w-]+)(?:=(?:\"([^\"]*)\"|'([^']*)'|([\w-]+)))?\]"
    r"|:(first-child|last-child)|:not\(([^()\s]+)\)"
)

_Simple = tuple[str, str, str | None]  # (kind, name, value): ("tag", "li", None), ("attr", "role", "tab") ...
_Compound = list[_Simple]


def _compile(selector: str) -> list[_Compound]:
    compounds = [_compound(part, selector) for part in selector.split()]
    if not compounds:
        return _unchecked("querySelector: an empty selector")
    return compounds


def _compound(part: str, selector: str) -> _Compound:
    """One compound (``li.pick:last-child``) of ``selector`` as its simple selectors."""
    compound: _Compound = []
    position = 0
    while position < len(part):
        m = _SIMPLE.match(part, position)
        if m is None:
            return _unchecked(f"querySelector: the selector {selector!r} is beyond what this runner models")
        tag, id_, cls, attr, v1, v2, v3, pseudo, negated = m.groups()
        if tag:
            compound.append(("tag", tag.lower(), None))
        elif id_:
            compound.append(("attr", "id", id_))
        elif cls:
            compound.append(("class", cls, None))
        elif attr:
            compound.append(("attr", attr.lower(), next((v for v in (v1, v2, v3) if v is not None), None)))
        elif pseudo:
            compound.append(("pseudo", pseudo, None))
        else:
            _compound(negated, selector)  # checked now, so a selector beyond the model stops before matching
            compound.append(("not", negated, None))
        position = m.end()
    return compound


def _simple_matches(el: Element, simple: _Simple) -> bool:
    kind, name, value = simple
    if kind == "tag":
        return el.tag == name
    if kind == "class":
        return name in el.attrs.get("class", "").split()
    if kind == "attr":
        return name in el.attrs and (value is None or el.attrs[name] == value)
    if kind == "not":
        return not all(_simple_matches(el, inner) for inner in _compound(name, name))
    return _is_edge_child(el, last=name == "last-child")


def _is_edge_child(el: Element, last: bool) -> bool:
    if el.parent is None:
        return False
    siblings = el.parent.elements
    return bool(siblings) and siblings[-1 if last else 0] is el


def _matches(el: Element, compounds: list[_Compound], scope: Element) -> bool:
    if not all(_simple_matches(el, simple) for simple in compounds[-1]):
        return False
    rest = compounds[:-1]
    if not rest:
        return True
    for ancestor in el.ancestors():
        if ancestor is scope:
            return False
        if _matches(ancestor, rest, scope):
            return True
    return False


def _query(scope: Element, args: list[Any], page: _Page, *, first: bool) -> Any:
    compounds = _compile(to_string(args[0]) if args else "")
    found = [page.wrap(el) for el in iter_elements(scope) if _matches(el, compounds, scope)]
    if first:
        return found[0] if found else None
    return found
