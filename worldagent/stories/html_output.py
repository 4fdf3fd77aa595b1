"""HTML serialisation of rendered values: escaping, attributes, props and children.

Pure functions with no knowledge of the interpreter: a value that cannot be written
raises `HtmlOutputError` with a plain message, and the interpreter turns it into a
located `StoryRenderError`.
"""

from __future__ import annotations

from typing import Any

from worldagent.stories.values import (
    UNDEFINED,
    Builtin,
    Html,
    StyleEntry,
    TokenRef,
    kebab_case,
    number_to_string,
    to_string,
    truthy,
    typeof,
)

VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
_ATTR_NAMES = {"className": "class", "htmlFor": "for", "tabIndex": "tabindex"}
_SKIP_ATTRS = frozenset({"children", "key", "stylesheet"})
_BAD_ATTR_CHARS = frozenset(" \t\n\f\r\"'>/=<`\x00")


class HtmlOutputError(ValueError):
    """A value cannot be written as HTML; the caller adds the source location."""


def escape_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attr(s: str) -> str:
    return s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def describe(v: Any) -> str:
    """How an error message names a value."""
    if typeof(v) == "function" and not isinstance(v, Builtin):
        name = getattr(v, "name", None)
        return f"function {name or 'anonymous'}"
    if isinstance(v, StyleEntry):
        return "a style entry"
    if isinstance(v, dict):
        return "an object"
    return typeof(v)


def set_prop(props: dict[str, Any], key: str, value: Any) -> None:
    # Class names and stylesheets accumulate (Plaited merges style spreads);
    # every other key follows JS object semantics (last write wins, first position kept).
    if key == "className" and "className" in props:
        tokens: list[str] = []
        class_tokens(props["className"], tokens)
        class_tokens(value, tokens)
        props[key] = " ".join(dict.fromkeys(tokens))
    elif key == "stylesheet" and "stylesheet" in props:
        old = props["stylesheet"] if isinstance(props["stylesheet"], list) else [props["stylesheet"]]
        new = value if isinstance(value, list) else [value]
        props[key] = old + new
    else:
        props[key] = value


def class_tokens(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.extend(value.split())
    elif isinstance(value, list):
        for v in value:
            class_tokens(v, out)
    elif isinstance(value, StyleEntry):
        out.extend(value.class_names)
    elif truthy(value) and not isinstance(value, (dict, Builtin, Html)) and typeof(value) != "function":
        out.append(to_string(value))


def attribute_text(name: str, value: Any) -> str | bool | None:
    """The attribute's text; True for a bare boolean attribute; None to omit."""
    if value is True:
        return "true" if name.startswith(("aria-", "data-")) else True
    if value is False:
        return "false" if name.startswith("aria-") else None
    if value is None or value is UNDEFINED:
        return None
    if type(value) is str:
        return value
    if isinstance(value, dict):
        if name == "p-trigger":
            return " ".join(f"{k}:{to_string(v)}" for k, v in value.items())
        if name == "style":
            return style_text(value)
    if typeof(value) == "function":
        return True  # an inline handler: keep the marker so a11y rules can see it
    return to_string(value)


def style_text(style: dict[str, Any]) -> str:
    decls = [
        f"{kebab_case(k)}: {to_string(v)};"
        for k, v in style.items()
        if v is not False and v is not None and v is not UNDEFINED
    ]
    return " ".join(decls)


def attributes_html(props: dict[str, Any]) -> str:
    """` name="value"` for every prop that becomes an attribute, in prop order (class merged)."""
    out: list[str] = []
    classes: list[str] = []
    class_at = -1
    for key, value in props.items():
        if key in _SKIP_ATTRS:
            continue
        if key == "className" or key == "class" or key == "classNames":
            if class_at < 0:
                class_at = len(out)
                out.append("")
            class_tokens(value, classes)
            continue
        name = _ATTR_NAMES.get(key, key)
        text = attribute_text(name, value)
        if text is None:
            continue
        if not name or any(c in _BAD_ATTR_CHARS or c < " " for c in name):
            raise HtmlOutputError(f"invalid attribute name {name!r}")
        out.append(f" {name}" if text is True else f' {name}="{escape_attr(text)}"')
    if class_at >= 0:
        unique = list(dict.fromkeys(classes))
        out[class_at] = f' class="{escape_attr(" ".join(unique))}"' if unique else ""
    return "".join(out)


# The most characters one piece of rendered markup may hold (the interpreter's string limit).
MAX_HTML_CHARS = 1 << 22


def emit_child(value: Any, out: list[str], sheets: dict[str, None] | None = None) -> None:
    """Append `value` written as JSX child content to `out`; collect its Html's CSS into `sheets`.

    The size is checked while writing, so a list of many long strings fails before it is joined.
    """
    _emit(value, out, sheets, [sum(len(part) for part in out), 0])


# Values one JSX child may hold, nested lists included: a list holding the same 100,000-element
# list 100,000 times writes nothing but would take 10^10 steps to walk.
MAX_CHILD_VALUES = 1 << 21


def _emit(value: Any, out: list[str], sheets: dict[str, None] | None, size: list[int]) -> None:
    t = type(value)
    if t is list:
        size[1] += len(value)
        if size[1] > MAX_CHILD_VALUES:
            raise HtmlOutputError(f"too many values written as children (more than {MAX_CHILD_VALUES})")
        for item in value:
            _emit(item, out, sheets, size)
        return
    if t is Html:
        text = value.html
        if sheets is not None and value.stylesheets:
            sheets.update(dict.fromkeys(value.stylesheets))
    elif t is str:
        text = escape_text(value)
    elif value is None or value is UNDEFINED or t is bool:
        return
    elif t is float or t is int:
        text = number_to_string(value)
    elif t is TokenRef:
        text = escape_text(value.css)
    elif getattr(value, "runtime_only", False):
        raise HtmlOutputError(
            f"'{value.name}' is a runtime-only value (behavioral programs, signals, test helpers run in the "
            "browser): it has no server-rendered HTML"
        )
    else:
        raise HtmlOutputError(f"{describe(value)} is not valid as a JSX child")
    size[0] += len(text)
    if size[0] > MAX_HTML_CHARS:
        raise HtmlOutputError(f"rendered markup too long (more than {MAX_HTML_CHARS} characters)")
    out.append(text)
