"""Plaited 7.x's public modules as the story interpreter sees them.

What a story needs at render time is evaluated: `bElement` (rendered the way Plaited's
server-side rendering writes a custom element: the host tag, a declarative shadow root
`<template shadowrootmode=...>` holding the element's `<style>` and shadow DOM, then the light
DOM children), `createStyles`, `createHostStyles`, `createKeyframes`, `createTokens`,
`joinStyles` and `story`. Everything else Plaited exports (`bSync`, `bThread`,
`useBehavioral`, signals, the test helpers...) runs only in a browser: those names import
as `RuntimeOnly` values that can be passed around, called and read from, but never rendered.
"""

from __future__ import annotations

import hashlib
from typing import Any

from worldagent.stories.html_output import HtmlOutputError, attributes_html, emit_child, escape_attr
from worldagent.stories.jslib import PLAITED, PLAITED_TESTING, check_string, create_styles, join_styles, story
from worldagent.stories.values import (
    UNDEFINED,
    Builtin,
    Html,
    JsThrow,
    StyleEntry,
    TokenRef,
    is_nullish,
    kebab_case,
    to_string,
)

__all__ = [
    "ElementTemplate",
    "Keyframes",
    "RuntimeNamespace",
    "RuntimeOnly",
    "package_exports",
]

# Bare packages that stories import only for their `play` functions (spies, test runners).
TEST_ONLY_PACKAGES = frozenset({"sinon", "bun:test"})


class RuntimeOnly(Builtin):
    """A browser-only Plaited name (or a value derived from one): inert at render time."""

    __slots__ = ()
    runtime_only = True

    def __init__(self, name: str) -> None:
        super().__init__(name, lambda site, args: RuntimeOnly(f"{name}()"))

    def member(self, key: str) -> Any:
        return RuntimeOnly(f"{self.name}.{key}")


class RuntimeNamespace(dict):  # type: ignore[type-arg]
    """A module's exports where every name not evaluated at render time is `RuntimeOnly`."""

    def __init__(self, spec: str, evaluated: dict[str, Any]) -> None:
        super().__init__(evaluated)
        self.spec = spec

    def __missing__(self, name: str) -> Any:
        return RuntimeOnly(name)

    def get(self, key: Any, default: Any = None) -> Any:  # `exports.get(name, MISSING)` sees every name
        return self[key]


class Keyframes(Builtin):
    """One `createKeyframes` animation: `.id` is its name, calling it gives `{ stylesheets }`."""

    __slots__ = ("id", "sheets")

    def __init__(self, ident: str, css: str) -> None:
        super().__init__(ident, lambda site, args: {"stylesheets": [css]})
        self.id = ident
        self.sheets = (css,)

    def member(self, key: str) -> Any:
        return self.id if key == "id" else UNDEFINED


class ElementTemplate(Builtin):
    """What `bElement` returns: a template function for the custom element `tag`."""

    __slots__ = ("tag", "mode", "delegates_focus", "form_associated", "observed", "shadow", "host_sheets")

    def __init__(self, config: dict[str, Any]) -> None:
        tag = config.get("tag")
        if not isinstance(tag, str) or "-" not in tag or tag != tag.lower():
            raise JsThrow(
                f"bElement: tag must be a lowercase custom element name with a hyphen, got {to_string(tag)!r}"
            )
        super().__init__(tag, self._render)
        self.tag = tag
        mode = config.get("mode", UNDEFINED)
        self.mode = "open" if is_nullish(mode) else to_string(mode)
        delegates = config.get("delegatesFocus", UNDEFINED)
        self.delegates_focus = True if is_nullish(delegates) else delegates is True
        self.form_associated = config.get("formAssociated") is True
        observed = config.get("observedAttributes", [])
        self.observed = [to_string(a) for a in observed] if isinstance(observed, list) else []
        self.shadow = _shadow_html(config.get("shadowDom", UNDEFINED))
        host = config.get("hostStyles", UNDEFINED)
        self.host_sheets = _stylesheets_of(host)

    def member(self, key: str) -> Any:
        if key == "tag":
            return self.tag
        if key == "observedAttributes":
            return list(self.observed)
        return UNDEFINED

    def _render(self, site: Any, args: list[Any]) -> Html:
        props = dict(args[0]) if args and isinstance(args[0], dict) else {}
        children = props.pop("children", UNDEFINED)
        light: list[str] = []
        light_sheets: dict[str, None] = {}
        try:
            attrs = attributes_html(props)
            emit_child(children, light, light_sheets)
        except HtmlOutputError as exc:
            raise JsThrow(str(exc)) from None
        sheets = list(dict.fromkeys((*self.host_sheets, *self.shadow.stylesheets)))
        style = f"<style>{''.join(sheets)}</style>" if sheets else ""
        focus = " shadowrootdelegatesfocus" if self.delegates_focus else ""
        html = (
            f'<{self.tag}{attrs}><template shadowrootmode="{escape_attr(self.mode)}"{focus}>{style}'
            f"{self.shadow.html}</template>{''.join(light)}</{self.tag}>"
        )
        return Html(check_string(html), tuple(light_sheets))


def _shadow_html(value: Any) -> Html:
    if isinstance(value, Html):
        return value
    out: list[str] = []
    sheets: dict[str, None] = {}
    try:
        emit_child(value, out, sheets)
    except HtmlOutputError as exc:
        raise JsThrow(f"bElement: shadowDom {exc}") from None
    return Html("".join(out), tuple(sheets))


def _stylesheets_of(value: Any) -> tuple[str, ...]:
    if isinstance(value, StyleEntry):
        return value.stylesheets
    if isinstance(value, Keyframes):
        return value.sheets
    if isinstance(value, dict):
        sheets = value.get("stylesheets", value.get("stylesheet", UNDEFINED))
        if isinstance(sheets, str):
            return (sheets,)
        if isinstance(sheets, list):
            return tuple(s for s in sheets if isinstance(s, str))
    return ()


def b_element(site: Any, args: list[Any]) -> ElementTemplate:
    config = args[0] if args else UNDEFINED
    if not isinstance(config, dict):
        raise JsThrow("bElement expects a config object ({ tag, shadowDom, ... })")
    return ElementTemplate(config)


# ----------------------------------------------------------------------------- styles


def _css_text(value: Any, sheets: dict[str, None]) -> str:
    if isinstance(value, TokenRef):
        sheets[f":root{{{value.var_name}:{to_string(value.value)};}}"] = None
        return value.css
    return to_string(value)


def _host_rules(prop: str, value: Any, wrappers: list[str], host: str, sheets: dict[str, None]) -> list[str]:
    if isinstance(value, dict):
        rules: list[str] = []
        for key, inner in value.items():
            nested = wrappers if key == "$default" else [*wrappers, key]
            rules.extend(_host_rules(prop, inner, nested, host, sheets))
        return rules
    if value is False or is_nullish(value):
        return []
    decl = f"{kebab_case(prop)}:{_css_text(value, sheets)};"
    opened = "".join(f"{w}{{" for w in wrappers)
    return [f"{host}{{{opened}{decl}{'}' * len(wrappers)}}}"]


def create_host_styles(site: Any, args: list[Any]) -> StyleEntry:
    """`:host` rules (and `:host(selector)` for `$compoundSelectors`); no class names."""
    props = args[0] if args else UNDEFINED
    if not isinstance(props, dict):
        raise JsThrow("createHostStyles expects an object of CSS properties")
    sheets: dict[str, None] = {}
    rules: list[str] = []
    for prop, value in props.items():
        if isinstance(value, dict):
            rest = {k: v for k, v in value.items() if k != "$compoundSelectors"}
            if rest:
                rules.extend(_host_rules(prop, rest, [], ":host", sheets))
            compound = value.get("$compoundSelectors")
            if isinstance(compound, dict):
                for selector, inner in compound.items():
                    rules.extend(_host_rules(prop, inner, [], f":host({selector})", sheets))
        else:
            rules.extend(_host_rules(prop, value, [], ":host", sheets))
    return StyleEntry((), (*sheets, *rules))


def create_keyframes(site: Any, args: list[Any]) -> dict[str, Keyframes]:
    ident = args[0] if args else UNDEFINED
    frames = args[1] if len(args) > 1 else UNDEFINED
    if not isinstance(ident, str) or not isinstance(frames, dict):
        raise JsThrow("createKeyframes expects (name: string, frames: object)")
    sheets: dict[str, None] = {}
    steps: list[str] = []
    for offset, decls in frames.items():
        if not isinstance(decls, dict):
            raise JsThrow(f"createKeyframes: frame {offset!r} must be an object")
        body = "".join(f"{kebab_case(p)}:{_css_text(v, sheets)};" for p, v in decls.items() if not is_nullish(v))
        steps.append(f"{offset}{{{body}}}")
    digest = hashlib.sha256("".join(steps).encode("utf-8")).hexdigest()[:6]
    name = f"{ident}{digest}"
    css = f"@keyframes {name}{{{''.join(steps)}}}"
    return {ident: Keyframes(name, "".join(sheets) + css)}


def _token_tree(ident: str, path: str, spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in spec.items():
        sub = f"{path}-{kebab_case(key)}" if path else kebab_case(key)
        if isinstance(value, dict) and "$value" in value:
            raw = value["$value"]
            if isinstance(raw, list):
                raw = " ".join(to_string(v) for v in raw)
            out[key] = TokenRef(ident, sub, raw)
        elif isinstance(value, dict):
            out[key] = _token_tree(ident, sub, value)
        else:
            raise JsThrow(f"createTokens: token {sub!r} needs a {{ $value }} object")
    return out


def create_tokens(site: Any, args: list[Any]) -> dict[str, Any]:
    """Plaited 7's `createTokens(ident, group)`: `{ [ident]: tokens }`; a token called gives `var(--...)`."""
    ident = args[0] if args else UNDEFINED
    group = args[1] if len(args) > 1 else UNDEFINED
    if not isinstance(ident, str) or not isinstance(group, dict):
        raise JsThrow("createTokens expects (name: string, tokens: object)")
    return {ident: _token_tree(ident, "", group)}


def join_styles_ui(site: Any, args: list[Any]) -> StyleEntry:
    """`joinStyles` that also takes keyframes, host styles and `{ classNames, stylesheets }` objects."""
    plain: list[Any] = []
    extra: dict[str, None] = {}
    for arg in args:
        if isinstance(arg, Keyframes):
            extra.update(dict.fromkeys(arg.sheets))
        elif isinstance(arg, TokenRef):  # a token joined in brings its `:root` rule
            extra[f":root{{{arg.var_name}:{to_string(arg.value)};}}"] = None
        elif isinstance(arg, dict) and ("stylesheets" in arg or "classNames" in arg):
            extra.update(dict.fromkeys(_stylesheets_of(arg)))
            names = arg.get("classNames")
            if isinstance(names, list):
                plain.append(" ".join(to_string(n) for n in names))
        else:
            plain.append(arg)
    joined = join_styles(site, plain)
    return StyleEntry(joined.class_names, tuple(dict.fromkeys((*joined.stylesheets, *extra))))


# ---------------------------------------------------------------------------- modules

_UI: dict[str, Any] = {
    "bElement": Builtin("bElement", b_element),
    "createStyles": Builtin("createStyles", create_styles),
    "createHostStyles": Builtin("createHostStyles", create_host_styles),
    "createKeyframes": Builtin("createKeyframes", create_keyframes),
    "createTokens": Builtin("createTokens", create_tokens),
    "joinStyles": Builtin("joinStyles", join_styles_ui),
}


def package_exports(spec: str) -> dict[str, Any] | None:
    """The exports of a Plaited module (or a test-only package), or None for any other package.

    `plaited` keeps the bundled corpus's dialect (`createTokens` returning the tokens
    directly) and adds the Plaited 7 names; `plaited/ui` and its `*.ts`/`*.tsx` subpaths are
    Plaited 7's UI module; `plaited/testing` gives `story`; `plaited/utils` is runtime-only.
    """
    if spec in TEST_ONLY_PACKAGES:
        return RuntimeNamespace(spec, {})
    if spec != "plaited" and not spec.startswith("plaited/"):
        return None
    area = spec.split("/", 2)[1] if "/" in spec else ""
    if area == "":
        legacy = {**_UI, **PLAITED}
        return RuntimeNamespace(spec, legacy)
    if area.startswith("ui"):
        return RuntimeNamespace(spec, _UI)
    if area.startswith("testing"):
        return RuntimeNamespace(spec, PLAITED_TESTING)
    return RuntimeNamespace(spec, {})


__all__ += ["TEST_ONLY_PACKAGES", "b_element", "create_host_styles", "create_keyframes", "create_tokens", "story"]
