"""Render Plaited-style stories to HTML with a small, safe JS evaluator.

The evaluator walks a light copy of the tree-sitter syntax tree (built once per
distinct source text and cached), evaluating afresh on every render. It knows
only the JS subset in docs/CONTRACTS.md section 1; anything else is a
`StoryRenderError` naming the node type and its file:line:col. A call-depth
limit and a node-visit budget bound every render, so hostile or buggy stories
fail fast instead of hanging or overflowing the Python stack.
"""

from __future__ import annotations

import functools
import html as _html
import posixpath
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import tree_sitter as ts

from worldagent.stories.errors import (
    SourceLocation,
    StoryEncodingError,
    StoryError,
    StoryImportError,
    StoryRenderError,
    StoryTooLargeError,
)
from worldagent.stories.jslib import (
    GLOBALS,
    MAX_ARRAY,
    MAX_STRING,
    PACKAGES,
    method_of,
)
from worldagent.stories.parse import (
    DEFAULT_MAX_BYTES,
    check_syntax,
    decode_escape,
    decode_source,
    import_candidates,
    is_relative_specifier,
    is_tsx,
    location_at,
    number_literal,
    parse_tsx,
    read_source,
)
from worldagent.stories.values import (
    UNDEFINED,
    Builtin,
    Html,
    JsThrow,
    StoryConfig,
    StyleEntry,
    TokenRef,
    js_add,
    js_divide,
    js_less,
    js_remainder,
    kebab_case,
    loose_equals,
    number_to_string,
    property_key,
    strict_equals,
    to_number,
    to_string,
    truthy,
    typeof,
)

DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_STEPS = 200_000
# Python frames needed per JS nesting level vary; this leaves room for the
# depth limit to trigger first. Python 3.11 does not use the C stack for
# Python-to-Python calls, so a higher limit is safe.
_PY_RECURSION_LIMIT = 12_000

__all__ = [
    "JsFunction",
    "Module",
    "RenderedStory",
    "load_module",
    "render_story",
    "UNDEFINED",
]


# ---------------------------------------------------------------- light tree


class N:
    """A syntax node stripped of type-only syntax, comments and parentheses."""

    __slots__ = ("type", "kids", "f", "sb", "text", "value", "op", "opt", "toks")

    def __init__(self, type_: str, sb: int) -> None:
        self.type = type_
        self.sb = sb
        self.kids: list[N] = []
        self.f: dict[str, N] = {}
        self.text: str | None = None
        self.value: Any = None
        self.op: str | None = None
        self.opt = False
        self.toks: tuple[str, ...] = ()


_DROP = frozenset({
    "comment", "type_annotation", "type_arguments", "type_parameters",
    "asserts_annotation", "type_predicate_annotation", "accessibility_modifier",
})
_OPAQUE = frozenset({
    "type_alias_declaration", "interface_declaration", "ambient_declaration", "enum_declaration",
})
_UNWRAP = frozenset({
    "as_expression", "satisfies_expression", "non_null_expression",
    "parenthesized_expression", "type_assertion",
})
_KEEP_TOKS = frozenset({"import_statement", "import_specifier", "export_statement"})
_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function", "function_declaration"})


def _convert(cur: ts.TreeCursor, src: bytes) -> N:
    node = cur.node
    n = N(node.type, node.start_byte)
    if n.type not in _OPAQUE and cur.goto_first_child():
        toks: list[str] = []
        while True:
            _convert_child(cur, src, n, toks)
            if not cur.goto_next_sibling():
                break
        cur.goto_parent()
        if n.type in _KEEP_TOKS:
            n.toks = tuple(toks)
    elif node.child_count == 0:
        n.text = src[node.start_byte : node.end_byte].decode("utf-8")
    if n.type in ("string", "template_string", "jsx_text"):
        n.text = src[node.start_byte : node.end_byte].decode("utf-8")
    return _finish(n)


def _convert_child(cur: ts.TreeCursor, src: bytes, n: N, toks: list[str]) -> None:
    child = cur.node
    ctype = child.type
    if not child.is_named:
        if ctype == "?.":
            n.opt = True
        elif cur.field_name == "operator":
            n.op = ctype
        toks.append(ctype)
        return
    if ctype == "optional_chain":
        n.opt = True
        return
    if ctype in _DROP:
        return
    fname = cur.field_name
    k = _convert(cur, src)
    n.kids.append(k)
    if fname and fname not in n.f:
        n.f[fname] = k


def _finish(n: N) -> N:
    t = n.type
    if t in _UNWRAP and n.kids:
        return n.kids[0]
    if t == "number":
        n.value = number_literal(n.text or "")
    elif t == "string":
        n.value = "".join(_string_part(k) for k in n.kids)
    elif t in ("string_fragment", "escape_sequence"):
        n.value = _string_part(n)
    elif t in _FUNCTIONS:
        n.value = _params(n)
    elif t in ("jsx_element", "jsx_self_closing_element"):
        n.value = _jsx_parts(n)
    elif t == "jsx_attribute":
        n.value = _jsx_attribute(n)
    return n


def _string_part(k: N) -> str:
    text = k.text or ""
    return decode_escape(text) if k.type == "escape_sequence" else text


@dataclass(frozen=True)
class _Param:
    rest: bool
    pattern: N
    default: N | None


def _params(fn: N) -> tuple[_Param, ...]:
    single = fn.f.get("parameter")
    if single is not None:
        return (_Param(False, single, None),)
    formal = fn.f.get("parameters")
    if formal is None:
        return ()
    out: list[_Param] = []
    for p in formal.kids:
        pattern = p.f.get("pattern", p)
        if pattern.type == "rest_pattern":
            out.append(_Param(True, pattern.kids[0], None))
        elif pattern.type == "this":
            continue
        else:
            out.append(_Param(False, pattern, p.f.get("value")))
    return tuple(out)


@dataclass(frozen=True)
class _Jsx:
    name: N | None
    attrs: tuple[N, ...]
    children: tuple[N, ...]


def _jsx_parts(n: N) -> _Jsx:
    if n.type == "jsx_self_closing_element":
        name = n.f.get("name")
        return _Jsx(name, tuple(k for k in n.kids if k is not name), ())
    opening = n.f.get("open_tag")
    closing = n.f.get("close_tag")
    name = opening.f.get("name") if opening is not None else None
    attrs = tuple(k for k in opening.kids if k is not name) if opening is not None else ()
    body = [k for k in n.kids if k is not opening and k is not closing]
    return _Jsx(name, attrs, tuple(_merge_text(body)))


def _merge_text(body: list[N]) -> list[N]:
    """Join adjacent text and entity nodes and apply JSX whitespace rules."""
    out: list[N] = []
    run: list[N] = []

    def flush() -> None:
        if not run:
            return
        raw = "".join(_html.unescape(k.text or "") if k.type == "html_character_reference" else (k.text or "") for k in run)
        text = _clean_jsx_text(raw)
        if text:
            node = N("jsx_text_run", run[0].sb)
            node.value = text
            out.append(node)
        run.clear()

    for k in body:
        if k.type in ("jsx_text", "html_character_reference"):
            run.append(k)
        else:
            flush()
            out.append(k)
    flush()
    return out


def _clean_jsx_text(raw: str) -> str:
    # Babel's cleanJSXElementLiteralChild: trim lines, drop blank ones, join with a space.
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    last_non_empty = max((i for i, line in enumerate(lines) if line.strip(" \t")), default=-1)
    parts: list[str] = []
    for i, line in enumerate(lines):
        text = line.replace("\t", " ")
        if i != 0:
            text = text.lstrip(" ")
        if i != len(lines) - 1:
            text = text.rstrip(" ")
        if text:
            parts.append(text if i == last_non_empty else text + " ")
    return "".join(parts)


def _jsx_attribute(n: N) -> tuple[str, N | None]:
    name = n.kids[0]
    if name.type == "jsx_namespace_name":
        key = ":".join(k.text or "" for k in name.kids)
    else:
        key = name.text or ""
    return key, (n.kids[1] if len(n.kids) > 1 else None)


@functools.lru_cache(maxsize=256)
def _compile(source: bytes, tsx: bool) -> N:
    # Content-keyed: identical bytes share one immutable light tree.
    tree = parse_tsx(source, "x.tsx" if tsx else "x.ts")
    return _convert(tree.walk(), source)


# ------------------------------------------------------------------- runtime


class Scope:
    __slots__ = ("vars", "parent", "mod")

    def __init__(self, vars_: dict[str, Any], parent: Scope | None, mod: _ModState | None) -> None:
        self.vars = vars_
        self.parent = parent
        self.mod = mod


class JsFunction:
    """An arrow/function closure."""

    __slots__ = ("node", "scope", "name")

    def __init__(self, node: N, scope: Scope, name: str | None = None) -> None:
        self.node = node
        self.scope = scope
        self.name = name

    def is_js_function(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<function {self.name or 'anonymous'}>"


@dataclass
class _ModState:
    file: str
    source: bytes
    scope: Scope
    exports: dict[str, Any] = field(default_factory=dict)
    export_nodes: dict[str, N] = field(default_factory=dict)
    loading: bool = True


@dataclass
class Module:
    """An evaluated module: `namespace` holds module-level bindings."""

    file: str
    namespace: dict[str, Any]
    exports: dict[str, Any]


@dataclass
class RenderedStory:
    html: str
    stylesheets: list[str]
    intent: str | None
    # Every module the render evaluated (relative posix path -> source text), story file first.
    sources: dict[str, str] = field(default_factory=dict)


_MISSING: Any = object()
_SHORT: Any = object()  # an optional chain short-circuited
_NORET: Any = object()  # a statement completed without `return`
_GLOBAL_SCOPE = Scope(GLOBALS, None, None)
_CHAIN = frozenset({"member_expression", "subscript_expression", "call_expression"})
_TYPE_ONLY = frozenset({"type_alias_declaration", "interface_declaration", "ambient_declaration", "empty_statement"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
_ATTR_NAMES = {"className": "class", "htmlFor": "for", "tabIndex": "tabindex"}
_SKIP_ATTRS = frozenset({"children", "key", "stylesheet"})
_BAD_ATTR_CHARS = frozenset(" \t\n\f\r\"'>/=<`\x00")


class _Site:
    __slots__ = ("interp", "node", "scope")

    def __init__(self, interp: _Interp, node: N, scope: Scope) -> None:
        self.interp = interp
        self.node = node
        self.scope = scope

    def call(self, fn: Any, args: list[Any]) -> Any:
        return self.interp.call(fn, args, self.node, self.scope)


def _esc_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _esc_attr(s: str) -> str:
    return s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _describe(v: Any) -> str:
    if isinstance(v, JsFunction):
        return f"function {v.name or 'anonymous'}"
    if isinstance(v, StyleEntry):
        return "a style entry"
    if isinstance(v, dict):
        return "an object"
    return typeof(v)


def relative_story_path(path: Path | str, root: Path, overlay: Mapping[str, str] | None = None) -> str:
    """``path`` as a posix path relative to ``root``.

    A relative path names a file under ``root`` when the overlay or ``root`` has it; otherwise
    it is relative to the working directory (``root / "x.tsx"`` with a relative ``root``).
    """
    p = Path(path)
    if not p.is_absolute():
        as_rel = posixpath.normpath(p.as_posix())
        if (overlay and as_rel in overlay) or (root / p).is_file():
            return as_rel
    try:
        return p.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return posixpath.normpath(p.as_posix())


def _normalise_overlay(overlay: Mapping[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, text in (overlay or {}).items():
        rel = posixpath.normpath(str(key).replace("\\", "/"))
        out[rel.removeprefix("./")] = text
    return out


class _Interp:
    """One render: module cache, limits, collected stylesheets."""

    def __init__(self, root: Path, overlay: Mapping[str, str] | None, max_depth: int, max_steps: int, max_bytes: int) -> None:
        self.root = Path(root)
        self.overlay = _normalise_overlay(overlay)
        self.max_depth = max_depth
        self.max_steps = max_steps
        self.max_bytes = max_bytes
        self.steps = 0
        self.depth = 0
        self.modules: dict[str, _ModState] = {}
        self.stack: list[str] = []
        self.sheets: dict[str, None] = {}

    # ------------------------------------------------------------ errors

    def err(self, n: N, sc: Scope, message: str, cls: type[StoryError] = StoryRenderError) -> StoryError:
        mod = sc.mod
        if mod is None:
            return cls(message, SourceLocation("<global>", 1, 1))
        return cls(message, location_at(mod.source, n.sb, mod.file))

    def unsupported(self, n: N, sc: Scope) -> StoryError:
        return self.err(n, sc, f"unsupported syntax: {n.type}")

    # ----------------------------------------------------------- modules

    def rel_path(self, path: Path | str) -> str:
        return relative_story_path(path, self.root, self.overlay)

    def exists(self, rel: str) -> bool:
        return rel in self.overlay or (self.root / rel).is_file()

    def read(self, rel: str, at: SourceLocation) -> bytes:
        if rel in self.overlay:
            return self._overlay_bytes(rel)
        try:
            return read_source(self.root / rel, self.max_bytes, rel)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise StoryImportError(f"file not found: {rel}", at) from None

    def _overlay_bytes(self, rel: str) -> bytes:
        try:
            data = self.overlay[rel].encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoryEncodingError(f"overlay text is not encodable as UTF-8: {exc.reason}", SourceLocation(rel, 1, 1)) from None
        if len(data) > self.max_bytes:
            raise StoryTooLargeError(f"file is too large ({len(data)} bytes > limit {self.max_bytes} bytes)", SourceLocation(rel, 1, 1))
        decode_source(data, rel)
        return data

    def load(self, rel: str, at: SourceLocation | None = None) -> _ModState:
        where = at or SourceLocation(rel, 1, 1)
        state = self.modules.get(rel)
        if state is not None:
            if state.loading:
                cycle = self.stack[self.stack.index(rel):] + [rel]
                raise StoryImportError(f"import cycle: {' -> '.join(cycle)}", where)
            return state
        source = self.read(rel, where)
        check_syntax(parse_tsx(source, rel), source, rel)
        try:
            root = _compile(source, is_tsx(rel))
        except ValueError as exc:
            raise StoryRenderError(f"unsupported literal: {exc}", SourceLocation(rel, 1, 1)) from None
        state = _ModState(rel, source, Scope({}, _GLOBAL_SCOPE, None))
        state.scope.mod = state
        self.modules[rel] = state
        self.stack.append(rel)
        try:
            self._exec_module(state, root)
        finally:
            self.stack.pop()
            state.loading = False
        return state

    def _exec_module(self, m: _ModState, root: N) -> None:
        sc = m.scope
        for s in root.kids:
            if s.type == "import_statement":
                self._import(s, m)
        for s in root.kids:
            decl = s.f.get("declaration") if s.type == "export_statement" else s
            if decl is not None and decl.type == "function_declaration":
                self._declare_function(decl, sc)
        pending: list[tuple[str, str, N]] = []
        for s in root.kids:
            self._module_statement(s, m, pending)
        for local, exported, node in pending:
            value = self.lookup(local, sc)
            if value is _MISSING:
                raise self.err(node, sc, f"exported name '{local}' is not defined", StoryImportError)
            m.exports[exported] = value
            m.export_nodes[exported] = node

    def _module_statement(self, s: N, m: _ModState, pending: list[tuple[str, str, N]]) -> None:
        t = s.type
        sc = m.scope
        if t in ("import_statement", "function_declaration") or t in _TYPE_ONLY:
            return
        if t in ("lexical_declaration", "variable_declaration"):
            self.declare(s, sc)
        elif t == "export_statement":
            self._export(s, m, pending)
        elif t == "expression_statement":
            self.ev(s.kids[0], sc)
        else:
            raise self.unsupported(s, sc)

    def _export(self, s: N, m: _ModState, pending: list[tuple[str, str, N]]) -> None:
        sc = m.scope
        if "source" in s.f:
            raise self.err(s, sc, "re-exports ('export ... from') are not supported")
        decl = s.f.get("declaration")
        default = "default" in s.toks
        if decl is not None:
            names = self._declaration_names(decl, sc)
            if decl.type in ("lexical_declaration", "variable_declaration"):
                self.declare(decl, sc)
            for name in names:
                exported = "default" if default else name
                m.exports[exported] = self.lookup(name, sc)
                m.export_nodes[exported] = s
            return
        if "value" in s.f:
            m.exports["default"] = self.ev(s.f["value"], sc)
            m.export_nodes["default"] = s
            return
        for clause in s.kids:
            for spec in clause.kids:
                local = spec.f["name"].text or ""
                alias = spec.f.get("alias")
                pending.append((local, (alias.text or "") if alias is not None else local, s))

    def _declaration_names(self, decl: N, sc: Scope) -> list[str]:
        if decl.type in _TYPE_ONLY:
            return []
        if decl.type == "function_declaration":
            return [decl.f["name"].text or ""]
        if decl.type in ("lexical_declaration", "variable_declaration"):
            names: list[str] = []
            for d in decl.kids:
                names.extend(_pattern_names(d.f["name"]))
            return names
        raise self.unsupported(decl, sc)

    def _import(self, s: N, m: _ModState) -> None:
        if "type" in s.toks:
            return
        source_node = s.f["source"]
        exports = self._module_exports(source_node.value, source_node, m)
        for clause in s.kids:
            if clause.type == "import_clause":
                for part in clause.kids:
                    self._bind_import(part, exports, source_node.value, m)

    def _bind_import(self, part: N, exports: dict[str, Any], spec: str, m: _ModState) -> None:
        sc = m.scope
        if part.type == "identifier":
            sc.vars[part.text or ""] = self._export_of(exports, "default", spec, part, sc)
        elif part.type == "namespace_import":
            sc.vars[part.kids[0].text or ""] = dict(exports)
        elif part.type == "named_imports":
            for item in part.kids:
                if "type" in item.toks:
                    continue
                name_node = item.f["name"]
                name = name_node.value if name_node.type == "string" else (name_node.text or "")
                alias = item.f.get("alias")
                local = (alias.text or "") if alias is not None else name
                sc.vars[local] = self._export_of(exports, name, spec, item, sc)
        else:
            raise self.unsupported(part, sc)

    def _export_of(self, exports: dict[str, Any], name: str, spec: str, node: N, sc: Scope) -> Any:
        value = exports.get(name, _MISSING)
        if value is _MISSING:
            raise self.err(node, sc, f"module '{spec}' has no export '{name}'", StoryImportError)
        return value

    def _module_exports(self, spec: str, node: N, m: _ModState) -> dict[str, Any]:
        if spec in PACKAGES:
            return PACKAGES[spec]
        at = location_at(m.source, node.sb, m.file)
        if not is_relative_specifier(spec):
            raise StoryImportError(f"unsupported module '{spec}' (only 'plaited', 'plaited/testing' and relative imports)", at)
        candidates = import_candidates(spec, m.file)
        if candidates is None:
            raise StoryImportError(f"import '{spec}' escapes the story root", at)
        first, *rest = candidates
        options = ([first] if posixpath.splitext(first)[1] else []) + rest
        rel = next((c for c in options if self.exists(c)), None)
        if rel is None:
            raise StoryImportError(f"cannot resolve import '{spec}'", at)
        return self.load(rel, at).exports

    # ------------------------------------------------------------- scope

    @staticmethod
    def lookup(name: str, sc: Scope | None) -> Any:
        while sc is not None:
            v = sc.vars.get(name, _MISSING)
            if v is not _MISSING:
                return v
            sc = sc.parent
        return _MISSING

    def _declare_function(self, decl: N, sc: Scope) -> None:
        name = decl.f["name"].text or ""
        sc.vars[name] = JsFunction(decl, sc, name)

    def declare(self, s: N, sc: Scope) -> None:
        for d in s.kids:
            if d.type != "variable_declarator":
                raise self.unsupported(d, sc)
            target = d.f["name"]
            value_node = d.f.get("value")
            value = UNDEFINED if value_node is None else self.ev(value_node, sc)
            if isinstance(value, JsFunction) and value.name is None and target.type == "identifier":
                value.name = target.text
            self.bind(target, value, sc)

    def bind(self, pat: N, value: Any, sc: Scope) -> None:
        t = pat.type
        if t == "identifier":
            sc.vars[pat.text or ""] = value
        elif t == "object_pattern":
            self._bind_object(pat, value, sc)
        elif t == "array_pattern":
            self._bind_array(pat, value, sc)
        elif t in ("assignment_pattern", "object_assignment_pattern"):
            if value is UNDEFINED:
                value = self.ev(pat.f["right"], sc)
            self.bind(pat.f["left"], value, sc)
        elif t == "shorthand_property_identifier_pattern":
            sc.vars[pat.text or ""] = value
        else:
            raise self.unsupported(pat, sc)

    def _bind_object(self, pat: N, value: Any, sc: Scope) -> None:
        if value is None or value is UNDEFINED:
            raise self.err(pat, sc, f"cannot destructure {to_string(value)}")
        used: list[str] = []
        for k in pat.kids:
            t = k.type
            if t == "shorthand_property_identifier_pattern":
                key = k.text or ""
                used.append(key)
                self.bind(k, self.get(value, key, k, sc), sc)
            elif t == "object_assignment_pattern":
                left = k.f["left"]
                key = left.text or ""
                used.append(key)
                v = self.get(value, key, k, sc)
                if v is UNDEFINED:
                    v = self.ev(k.f["right"], sc)
                self.bind(left, v, sc)
            elif t == "pair_pattern":
                key = self.prop_key(k.f["key"], sc)
                used.append(key)
                self.bind(k.f["value"], self.get(value, key, k, sc), sc)
            elif t == "rest_pattern":
                rest = {key: v for key, v in value.items() if key not in used} if isinstance(value, dict) else {}
                self.bind(k.kids[0], rest, sc)
            else:
                raise self.unsupported(k, sc)

    def _bind_array(self, pat: N, value: Any, sc: Scope) -> None:
        if isinstance(value, str):
            value = list(value)
        if not isinstance(value, list):
            raise self.err(pat, sc, f"{_describe(value)} is not iterable")
        for i, k in enumerate(pat.kids):
            if k.type == "rest_pattern":
                self.bind(k.kids[0], list(value[i:]), sc)
                return
            self.bind(k, value[i] if i < len(value) else UNDEFINED, sc)

    # -------------------------------------------------------- evaluation

    def ev(self, n: N, sc: Scope) -> Any:
        self.steps += 1
        if self.steps > self.max_steps:
            raise self.err(n, sc, f"evaluation step budget exceeded ({self.max_steps} node visits)")
        handler = _EV.get(n.type)
        if handler is None:
            raise self.unsupported(n, sc)
        return handler(self, n, sc)

    def call(self, fn: Any, args: list[Any], n: N, sc: Scope, component: str | None = None) -> Any:
        if type(fn) is JsFunction:
            if self.depth >= self.max_depth:
                raise self.err(n, sc, self._depth_message(fn, component))
            self.depth += 1
            try:
                return self._invoke(fn, args)
            finally:
                self.depth -= 1
        if type(fn) is Builtin:
            try:
                return fn.fn(_Site(self, n, sc), args)
            except JsThrow as exc:
                raise self.err(n, sc, str(exc)) from None
        what = f"<{component}>" if component else _describe(fn)
        raise self.err(n, sc, f"{what} is not a function")

    def _depth_message(self, fn: JsFunction, component: str | None) -> str:
        if component:
            return f"component recursion depth limit exceeded ({self.max_depth} frames) rendering <{component}>"
        return f"call recursion depth limit exceeded ({self.max_depth} frames) calling {fn.name or 'anonymous function'}"

    def _invoke(self, fn: JsFunction, args: list[Any]) -> Any:
        node = fn.node
        sc = Scope({}, fn.scope, fn.scope.mod)
        for i, p in enumerate(node.value):
            if p.rest:
                self.bind(p.pattern, list(args[i:]), sc)
                continue
            v = args[i] if i < len(args) else UNDEFINED
            if v is UNDEFINED and p.default is not None:
                v = self.ev(p.default, sc)
            self.bind(p.pattern, v, sc)
        body = node.f["body"]
        if body.type == "statement_block":
            result = self.exec_block(body.kids, sc)
            return UNDEFINED if result is _NORET else result
        return self.ev(body, sc)

    def exec_block(self, stmts: list[N], sc: Scope) -> Any:
        for s in stmts:
            result = self.exec(s, sc)
            if result is not _NORET:
                return result
        return _NORET

    def exec(self, s: N, sc: Scope) -> Any:
        self.steps += 1
        t = s.type
        if t == "return_statement":
            return self.ev(s.kids[0], sc) if s.kids else UNDEFINED
        if t in ("lexical_declaration", "variable_declaration"):
            self.declare(s, sc)
        elif t == "if_statement":
            return self._exec_if(s, sc)
        elif t == "statement_block":
            return self.exec_block(s.kids, Scope({}, sc, sc.mod))
        elif t == "expression_statement":
            self.ev(s.kids[0], sc)
        elif t == "function_declaration":
            self._declare_function(s, sc)
        elif t not in _TYPE_ONLY:
            raise self.unsupported(s, sc)
        return _NORET

    def _exec_if(self, s: N, sc: Scope) -> Any:
        if truthy(self.ev(s.f["condition"], sc)):
            return self.exec(s.f["consequence"], sc)
        alt = s.f.get("alternative")
        if alt is None or not alt.kids:
            return _NORET
        return self.exec(alt.kids[0], sc)

    # ----------------------------------------------------- member access

    def get(self, obj: Any, key: Any, n: N, sc: Scope) -> Any:
        t = type(obj)
        if t is dict or t is StoryConfig:
            v = obj.get(key if type(key) is str else property_key(key), _MISSING)
            return UNDEFINED if v is _MISSING else v
        if t is list or t is str:
            return self._get_indexed(obj, key)
        if obj is None or obj is UNDEFINED:
            raise self.err(n, sc, f"cannot read properties of {to_string(obj)} (reading '{property_key(key)}')")
        if t is StyleEntry:
            if key == "className":
                return list(obj.class_names)
            return list(obj.stylesheets) if key == "stylesheet" else UNDEFINED
        if t is float or t is int:
            return method_of(obj, property_key(key))
        return UNDEFINED

    @staticmethod
    def _get_indexed(obj: list[Any] | str, key: Any) -> Any:
        index = _as_index(key)
        if index is not None:
            return obj[index] if index < len(obj) else UNDEFINED
        name = property_key(key)
        if name == "length":
            return len(obj)
        return method_of(obj, name)

    def chain(self, n: N, sc: Scope) -> Any:
        if n.type == "call_expression":
            return self._chain_call(n, sc)
        obj = self._chain_object(n.f["object"], sc)
        if obj is _SHORT or (n.opt and (obj is None or obj is UNDEFINED)):
            return _SHORT
        if n.type == "member_expression":
            key: Any = n.f["property"].text or ""
        else:
            key = self.ev(n.f["index"], sc)
        return self.get(obj, key, n, sc)

    def _chain_object(self, n: N, sc: Scope) -> Any:
        if n.type in _CHAIN:
            self.steps += 1
            return self.chain(n, sc)
        return self.ev(n, sc)

    def _chain_call(self, n: N, sc: Scope) -> Any:
        callee = n.f["function"]
        if callee.type in ("member_expression", "subscript_expression"):
            fn = self.chain(callee, sc)
        else:
            fn = self._chain_object(callee, sc)
        if fn is _SHORT or (n.opt and (fn is None or fn is UNDEFINED)):
            return _SHORT
        arguments = n.f.get("arguments")
        if arguments is None or arguments.type != "arguments":
            raise self.unsupported(arguments or n, sc)
        return self.call(fn, self._arguments(arguments, sc), n, sc)

    def _arguments(self, node: N, sc: Scope) -> list[Any]:
        args: list[Any] = []
        for k in node.kids:
            if k.type == "spread_element":
                args.extend(self._iterate(self.ev(k.kids[0], sc), k, sc))
            else:
                args.append(self.ev(k, sc))
        return args

    def _iterate(self, v: Any, n: N, sc: Scope) -> list[Any]:
        if isinstance(v, list):
            return v
        if isinstance(v, str):
            return list(v)
        raise self.err(n, sc, f"{_describe(v)} is not iterable")

    def prop_key(self, k: N, sc: Scope) -> str:
        t = k.type
        if t in ("property_identifier", "identifier", "shorthand_property_identifier_pattern", "private_property_identifier"):
            return k.text or ""
        if t == "string":
            return k.value
        if t == "number":
            return number_to_string(k.value)
        if t == "computed_property_name":
            return property_key(self.ev(k.kids[0], sc))
        raise self.unsupported(k, sc)

    def check_length(self, value: Any, n: N, sc: Scope) -> Any:
        if isinstance(value, str) and len(value) > MAX_STRING:
            raise self.err(n, sc, f"string too long ({len(value)} > {MAX_STRING} characters)")
        if isinstance(value, list) and len(value) > MAX_ARRAY:
            raise self.err(n, sc, f"array too long ({len(value)} > {MAX_ARRAY} elements)")
        return value

    # --------------------------------------------------------------- JSX

    def jsx(self, n: N, sc: Scope) -> Html:
        parts: _Jsx = n.value
        name = parts.name
        if name is None:
            return Html(self.render_value(self._children(parts.children, sc), n, sc))
        if name.type == "identifier" and (name.text or "")[:1].islower():
            return self._intrinsic(name.text or "", parts, n, sc)
        if name.type == "jsx_namespace_name":
            return self._intrinsic(":".join(k.text or "" for k in name.kids), parts, n, sc)
        return self._component(name, parts, n, sc)

    def _component(self, name: N, parts: _Jsx, n: N, sc: Scope) -> Html:
        tag = _tag_text(name)
        if name.type == "identifier":
            fn = self.lookup(tag, sc)
            if fn is _MISSING:
                raise self.err(name, sc, f"unknown component <{tag}>: it is neither defined nor imported in {sc.mod.file if sc.mod else 'this module'}")
        else:
            fn = self.ev(name, sc)
        if not isinstance(fn, (JsFunction, Builtin)):
            raise self.err(name, sc, f"<{tag}> is not a component ({_describe(fn)})")
        props = self._props(parts.attrs, sc)
        children = self._children(parts.children, sc)
        if children:
            props["children"] = children[0] if len(children) == 1 else children
        result = self.call(fn, [props], name, sc, component=tag)
        return Html(self.render_value(result, n, sc))

    def _children(self, nodes: tuple[N, ...], sc: Scope) -> list[Any]:
        out: list[Any] = []
        for k in nodes:
            t = k.type
            if t == "jsx_text_run":
                out.append(k.value)
            elif t == "jsx_expression":
                if not k.kids:
                    continue
                if k.kids[0].type == "spread_element":
                    raise self.unsupported(k.kids[0], sc)
                out.append(self.ev(k.kids[0], sc))
            else:
                out.append(self.ev(k, sc))
        return out

    def _props(self, attrs: tuple[N, ...], sc: Scope) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for a in attrs:
            if a.type == "jsx_expression":
                spread = a.kids[0] if a.kids else None
                if spread is None or spread.type != "spread_element":
                    raise self.unsupported(spread or a, sc)
                self._spread_props(props, self.ev(spread.kids[0], sc), a, sc)
                continue
            key, value_node = a.value
            if value_node is None:
                value: Any = True
            elif value_node.type == "string":
                value = _html.unescape((value_node.text or '""')[1:-1])
            elif value_node.type == "jsx_expression":
                if not value_node.kids:
                    raise self.err(value_node, sc, "empty JSX attribute expression")
                value = self.ev(value_node.kids[0], sc)
            else:
                value = self.ev(value_node, sc)
            _set_prop(props, key, value)
        return props

    def _spread_props(self, props: dict[str, Any], value: Any, n: N, sc: Scope) -> None:
        if isinstance(value, StyleEntry):
            _set_prop(props, "className", " ".join(value.class_names))
            _set_prop(props, "stylesheet", list(value.stylesheets))
            self.sheets.update(dict.fromkeys(value.stylesheets))
        elif isinstance(value, dict):
            for key, v in value.items():
                _set_prop(props, key, v)
        elif value is None or value is UNDEFINED or value is False:
            return
        else:
            raise self.err(n, sc, f"cannot spread {_describe(value)} as JSX attributes")

    def _intrinsic(self, tag: str, parts: _Jsx, n: N, sc: Scope) -> Html:
        props = self._props(parts.attrs, sc)
        sheets = props.get("stylesheet")
        if isinstance(sheets, list):
            self.sheets.update(dict.fromkeys(s for s in sheets if isinstance(s, str)))
        out = ["<", tag]
        self._attributes(props, out, n, sc)
        out.append(">")
        if tag in _VOID:
            return Html("".join(out))
        children: Any = self._children(parts.children, sc) if parts.children else props.get("children", UNDEFINED)
        self._emit(children, out, n, sc)
        out.append(f"</{tag}>")
        return Html(self.check_length("".join(out), n, sc))

    def _attributes(self, props: dict[str, Any], out: list[str], n: N, sc: Scope) -> None:
        classes: list[str] = []
        class_at = -1
        for key, value in props.items():
            if key in _SKIP_ATTRS:
                continue
            if key == "className" or key == "class":
                if class_at < 0:
                    class_at = len(out)
                    out.append("")
                _class_tokens(value, classes)
                continue
            name = _ATTR_NAMES.get(key, key)
            text = _attr_text(name, value)
            if text is None:
                continue
            if not name or any(c in _BAD_ATTR_CHARS or c < " " for c in name):
                raise self.err(n, sc, f"invalid attribute name {name!r}")
            out.append(f" {name}" if text is True else f' {name}="{_esc_attr(text)}"')
        if class_at >= 0:
            unique = list(dict.fromkeys(classes))
            out[class_at] = f' class="{_esc_attr(" ".join(unique))}"' if unique else ""

    def render_value(self, value: Any, n: N, sc: Scope) -> str:
        out: list[str] = []
        self._emit(value, out, n, sc)
        return self.check_length("".join(out), n, sc)

    def _emit(self, v: Any, out: list[str], n: N, sc: Scope) -> None:
        t = type(v)
        if t is Html:
            out.append(v.html)
        elif t is str:
            out.append(_esc_text(v))
        elif t is list:
            for x in v:
                self._emit(x, out, n, sc)
        elif v is None or v is UNDEFINED or t is bool:
            return
        elif t is float or t is int:
            out.append(number_to_string(v))
        elif t is TokenRef:
            out.append(_esc_text(v.css))
        else:
            raise self.err(n, sc, f"{_describe(v)} is not valid as a JSX child")


def _tag_text(name: N) -> str:
    if name.type == "member_expression":
        return f"{_tag_text(name.f['object'])}.{name.f['property'].text}"
    return name.text or name.type


def _as_index(key: Any) -> int | None:
    t = type(key)
    if t is int:
        return key if key >= 0 else None
    if t is float:
        return int(key) if key.is_integer() and key >= 0 else None
    if t is str and key.isdigit() and key.isascii() and (key == "0" or key[0] != "0"):
        return int(key)
    return None


def _set_prop(props: dict[str, Any], key: str, value: Any) -> None:
    # Class names and stylesheets accumulate (Plaited merges style spreads);
    # every other key follows JS object semantics (last write wins, first position kept).
    if key == "className" and "className" in props:
        tokens: list[str] = []
        _class_tokens(props["className"], tokens)
        _class_tokens(value, tokens)
        props[key] = " ".join(dict.fromkeys(tokens))
    elif key == "stylesheet" and "stylesheet" in props:
        old = props["stylesheet"] if isinstance(props["stylesheet"], list) else [props["stylesheet"]]
        new = value if isinstance(value, list) else [value]
        props[key] = old + new
    else:
        props[key] = value


def _class_tokens(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.extend(value.split())
    elif isinstance(value, list):
        for v in value:
            _class_tokens(v, out)
    elif isinstance(value, StyleEntry):
        out.extend(value.class_names)
    elif truthy(value) and not isinstance(value, (dict, JsFunction, Builtin, Html)):
        out.append(to_string(value))


def _attr_text(name: str, value: Any) -> str | bool | None:
    """The attribute's text; True for a bare boolean attribute; None to omit."""
    if value is True:
        return "true" if name.startswith(("aria-", "data-")) else True
    if value is False:
        return "false" if name.startswith("aria-") else None
    if value is None or value is UNDEFINED:
        return None
    t = type(value)
    if t is str:
        return value
    if isinstance(value, dict):
        if name == "p-trigger":
            return " ".join(f"{k}:{to_string(v)}" for k, v in value.items())
        if name == "style":
            return _style_text(value)
    if isinstance(value, (JsFunction, Builtin)):
        return True  # an inline handler: keep the marker so a11y rules can see it
    return to_string(value)


def _style_text(style: dict[str, Any]) -> str:
    decls = [f"{kebab_case(k)}: {to_string(v)};" for k, v in style.items() if v is not False and v is not None and v is not UNDEFINED]
    return " ".join(decls)


def _pattern_names(pat: N) -> list[str]:
    t = pat.type
    if t in ("identifier", "shorthand_property_identifier_pattern"):
        return [pat.text or ""]
    if t in ("assignment_pattern", "object_assignment_pattern"):
        return _pattern_names(pat.f["left"])
    if t == "pair_pattern":
        return _pattern_names(pat.f["value"])
    names: list[str] = []
    for k in pat.kids:
        names.extend(_pattern_names(k))
    return names


# ------------------------------------------------------- expression handlers


def _ev_identifier(self: _Interp, n: N, sc: Scope) -> Any:
    v = self.lookup(n.text or "", sc)
    if v is _MISSING:
        raise self.err(n, sc, f"{n.text} is not defined")
    return v


def _ev_template(self: _Interp, n: N, sc: Scope) -> str:
    parts: list[str] = []
    for k in n.kids:
        if k.type == "template_substitution":
            parts.append(to_string(self.ev(k.kids[0], sc)))
        else:
            parts.append(k.value)
    return self.check_length("".join(parts), n, sc)


def _ev_object(self: _Interp, n: N, sc: Scope) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in n.kids:
        t = k.type
        if t == "pair":
            key = self.prop_key(k.f["key"], sc)
            value = self.ev(k.f["value"], sc)
            if isinstance(value, JsFunction) and value.name is None:
                value.name = key
            out[key] = value
        elif t == "shorthand_property_identifier":
            out[k.text or ""] = _ev_identifier(self, k, sc)
        elif t == "spread_element":
            _spread_object(self, out, self.ev(k.kids[0], sc), k, sc)
        else:
            raise self.unsupported(k, sc)
    return out


def _spread_object(self: _Interp, out: dict[str, Any], v: Any, n: N, sc: Scope) -> None:
    if isinstance(v, dict):
        out.update(v)
    elif isinstance(v, (list, str)):
        out.update((str(i), x) for i, x in enumerate(v))
    elif isinstance(v, StyleEntry):
        out["className"] = list(v.class_names)
        out["stylesheet"] = list(v.stylesheets)
    elif isinstance(v, (JsFunction, Builtin, Html)):
        raise self.err(n, sc, f"cannot spread {_describe(v)} into an object")


def _ev_array(self: _Interp, n: N, sc: Scope) -> list[Any]:
    out: list[Any] = []
    for k in n.kids:
        if k.type == "spread_element":
            out.extend(self._iterate(self.ev(k.kids[0], sc), k, sc))
            self.check_length(out, k, sc)
        else:
            out.append(self.ev(k, sc))
    return out


def _ev_chain(self: _Interp, n: N, sc: Scope) -> Any:
    v = self.chain(n, sc)
    return UNDEFINED if v is _SHORT else v


def _ev_function(self: _Interp, n: N, sc: Scope) -> JsFunction:
    name = n.f.get("name")
    return JsFunction(n, sc, name.text if name is not None else None)


def _ev_binary(self: _Interp, n: N, sc: Scope) -> Any:
    op = n.op
    if op == "&&":
        left = self.ev(n.f["left"], sc)
        return self.ev(n.f["right"], sc) if truthy(left) else left
    if op == "||":
        left = self.ev(n.f["left"], sc)
        return left if truthy(left) else self.ev(n.f["right"], sc)
    if op == "??":
        left = self.ev(n.f["left"], sc)
        return self.ev(n.f["right"], sc) if left is None or left is UNDEFINED else left
    fn = _BINARY.get(op or "")
    if fn is None:
        raise self.err(n, sc, f"unsupported operator: {op}")
    result = fn(self.ev(n.f["left"], sc), self.ev(n.f["right"], sc))
    return self.check_length(result, n, sc) if type(result) is str else result


_BINARY = {
    "+": js_add,
    "-": lambda a, b: to_number(a) - to_number(b),
    "*": lambda a, b: to_number(a) * to_number(b),
    "/": js_divide,
    "%": js_remainder,
    "===": strict_equals,
    "!==": lambda a, b: not strict_equals(a, b),
    "==": loose_equals,
    "!=": lambda a, b: not loose_equals(a, b),
    "<": lambda a, b: js_less(a, b) is True,
    ">": lambda a, b: js_less(b, a) is True,
    "<=": lambda a, b: js_less(b, a) is False,
    ">=": lambda a, b: js_less(a, b) is False,
}


def _ev_unary(self: _Interp, n: N, sc: Scope) -> Any:
    op = n.op
    arg = self.ev(n.f["argument"], sc)
    if op == "!":
        return not truthy(arg)
    if op == "-":
        return -to_number(arg)
    if op == "+":
        return to_number(arg)
    if op == "typeof":
        return typeof(arg)
    if op == "void":
        return UNDEFINED
    raise self.err(n, sc, f"unsupported operator: {op}")


def _ev_ternary(self: _Interp, n: N, sc: Scope) -> Any:
    branch = "consequence" if truthy(self.ev(n.f["condition"], sc)) else "alternative"
    return self.ev(n.f[branch], sc)


_EV: dict[str, Any] = {
    "identifier": _ev_identifier,
    "number": lambda self, n, sc: n.value,
    "string": lambda self, n, sc: n.value,
    "template_string": _ev_template,
    "true": lambda self, n, sc: True,
    "false": lambda self, n, sc: False,
    "null": lambda self, n, sc: None,
    "undefined": lambda self, n, sc: UNDEFINED,
    "object": _ev_object,
    "array": _ev_array,
    "member_expression": _ev_chain,
    "subscript_expression": _ev_chain,
    "call_expression": _ev_chain,
    "arrow_function": _ev_function,
    "function_expression": _ev_function,
    "function": _ev_function,
    "binary_expression": _ev_binary,
    "unary_expression": _ev_unary,
    "ternary_expression": _ev_ternary,
    "jsx_element": _Interp.jsx,
    "jsx_self_closing_element": _Interp.jsx,
}


# ---------------------------------------------------------------- public API


@contextmanager
def _stack_room() -> Iterator[None]:
    old = sys.getrecursionlimit()
    if old < _PY_RECURSION_LIMIT:
        sys.setrecursionlimit(_PY_RECURSION_LIMIT)
    try:
        yield
    finally:
        if old < _PY_RECURSION_LIMIT:
            sys.setrecursionlimit(old)


def _guarded(interp: _Interp, rel: str, fn: Any) -> Any:
    """Run `fn` turning host failures (deep nesting, internal bugs) into StoryRenderError."""
    with _stack_room():
        try:
            return fn()
        except StoryError:
            raise
        except RecursionError:
            raise StoryRenderError("expression nesting too deep to evaluate", SourceLocation(rel, 1, 1)) from None
        except Exception as exc:  # a story must never crash the caller
            raise StoryRenderError(f"internal evaluator error: {type(exc).__name__}: {exc}", SourceLocation(rel, 1, 1)) from exc


def _to_module(state: _ModState) -> Module:
    return Module(state.file, dict(state.scope.vars), dict(state.exports))


def load_module(
    path: Path,
    root: Path,
    overlay: Mapping[str, str] | None = None,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Module:
    """Evaluate a module (and its imports) under `root`; overlay texts replace disk files."""
    interp = _Interp(root, overlay, max_depth, max_steps, max_bytes)
    rel = interp.rel_path(path)
    return _guarded(interp, rel, lambda: _to_module(interp.load(rel)))


def render_story(
    story_file: Path,
    export: str,
    root: Path,
    overlay: Mapping[str, str] | None = None,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> RenderedStory:
    """Render story `export` of `story_file`: its template called with its `args`.

    Error locations use paths relative to `root`.
    """
    interp = _Interp(root, overlay, max_depth, max_steps, max_bytes)
    rel = interp.rel_path(story_file)
    return _guarded(interp, rel, lambda: _render(interp, rel, export))


def _render(interp: _Interp, rel: str, export: str) -> RenderedStory:
    state = interp.load(rel)
    config = state.exports.get(export, _MISSING)
    if config is _MISSING:
        raise StoryRenderError(f"no export named '{export}'", SourceLocation(rel, 1, 1))
    node = state.export_nodes[export]
    sc = state.scope
    if not isinstance(config, StoryConfig):
        raise interp.err(node, sc, f"export '{export}' is not a story(...)")
    template = config.get("template", UNDEFINED)
    args = config.get("args", UNDEFINED)
    if args is None or args is UNDEFINED:
        args = {}
    if not isinstance(args, dict):
        raise interp.err(node, sc, f"story '{export}' args must be an object")
    name = template.name if isinstance(template, JsFunction) and template.name not in (None, "template") else export
    result = interp.call(template, [dict(args)], node, sc, component=name)
    html = interp.render_value(result, node, sc)
    sources = {path: module.source.decode("utf-8") for path, module in interp.modules.items()}
    return RenderedStory(html, list(interp.sheets), _story_intent(config, state), sources)


def _story_intent(config: StoryConfig, state: _ModState) -> str | None:
    meta = state.exports.get("meta")
    candidates = [config.get("intent"), config.get("description")]
    if isinstance(meta, dict):
        candidates.append(meta.get("intent"))
    return next((c for c in candidates if isinstance(c, str) and c.strip()), None)
