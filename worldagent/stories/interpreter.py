"""The story interpreter: evaluates the JS/TSX subset of story modules.

It walks the light syntax tree (`worldagent.stories.syntax`), evaluating afresh on every
render, and writes JSX through `worldagent.stories.html_output`. It knows only the JS subset
in docs/CONTRACTS.md section 1; anything else is a `StoryRenderError` naming the node type and
its file:line:col. A call-depth limit, a step budget that counts work (node visits, statements,
loop iterations, and the elements and characters builtins walk: `charge`) and size budgets
checked while strings and arrays are built bound every render.
"""

from __future__ import annotations

import html as _html
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldagent.stories.errors import (
    SourceLocation,
    StoryEncodingError,
    StoryError,
    StoryImportError,
    StoryRenderError,
    StoryTooLargeError,
)
from worldagent.stories.html_output import (
    VOID_ELEMENTS,
    HtmlOutputError,
    attributes_html,
    describe,
    emit_child,
    set_prop,
)
from worldagent.stories.jslib import GLOBALS, MAX_ARRAY, MAX_STRING, method_of, string_work, token_sheet
from worldagent.stories.parse import (
    check_syntax,
    decode_source,
    import_candidates,
    is_relative_specifier,
    is_tsx,
    location_at,
    parse_tsx,
    read_story_file,
)
from worldagent.stories.plaited_api import RuntimeOnly, package_exports
from worldagent.stories.syntax import JsxParts, Node, compile_source
from worldagent.stories.values import (
    UNDEFINED,
    Builtin,
    Html,
    JsThrow,
    ReadOnlyObject,
    StoryConfig,
    StyleEntry,
    TokenRef,
    is_nullish,
    js_add,
    js_divide,
    js_less,
    js_remainder,
    loose_equals,
    number_to_string,
    property_key,
    strict_equals,
    to_number,
    to_string,
    truthy,
    typeof,
)

# ------------------------------------------------------------------- runtime


class Scope:
    __slots__ = ("vars", "parent", "mod", "consts")

    def __init__(
        self,
        vars_: dict[str, Any],
        parent: Scope | None,
        mod: ModuleState | None,
        consts: set[str] | None = None,
    ) -> None:
        self.vars = vars_
        self.parent = parent
        self.mod = mod
        # Names bound here by `const` or `import`: assigning to one is a TypeError in JS.
        self.consts = consts

    def add_const(self, name: str) -> None:
        if self.consts is None:
            self.consts = set()
        self.consts.add(name)

    def copy(self) -> Scope:
        """A fresh scope with the same bindings: a `for (let ...)` loop's next iteration."""
        return Scope(dict(self.vars), self.parent, self.mod, set(self.consts) if self.consts else None)


class _Jump:
    """The completion of `break` / `continue` (with its label, if any) travelling up to its loop."""

    __slots__ = ("kind", "label", "node")

    def __init__(self, kind: str, label: str | None, node: Node) -> None:
        self.kind = kind
        self.label = label
        self.node = node


class JsFunction:
    """An arrow/function closure."""

    __slots__ = ("node", "scope", "name")

    def __init__(self, node: Node, scope: Scope, name: str | None = None) -> None:
        self.node = node
        self.scope = scope
        self.name = name

    def is_js_function(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<function {self.name or 'anonymous'}>"


@dataclass
class ModuleState:
    file: str
    source: bytes
    scope: Scope
    exports: dict[str, Any] = field(default_factory=dict)
    export_nodes: dict[str, Node] = field(default_factory=dict)
    loading: bool = True


@dataclass
class Module:
    """An evaluated module: `namespace` holds module-level bindings."""

    file: str
    namespace: dict[str, Any]
    exports: dict[str, Any]


# Characters plus array elements one render may build in all: about 128 MB at worst.
MAX_ALLOCATED = 1 << 25
MISSING: Any = object()
_SHORT: Any = object()  # an optional chain short-circuited
_NORET: Any = object()  # a statement completed without `return`
_STOP: Any = object()  # a loop's own `break`: the loop ends normally
_GLOBAL_SCOPE = Scope(GLOBALS, None, None)
_CHAIN = frozenset({"member_expression", "subscript_expression", "call_expression"})
_TYPE_ONLY = frozenset({"type_alias_declaration", "interface_declaration", "ambient_declaration", "empty_statement"})
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})
# Browser constructors a story may call `new` on outside its template (`new WeakMap()` in a
# module the story imports for its `play`): their instances are runtime-only values.
_RUNTIME_CONSTRUCTORS = frozenset(
    {
        "WeakMap",
        "WeakSet",
        "WeakRef",
        "EventTarget",
        "Event",
        "CustomEvent",
        "AbortController",
        "MutationObserver",
        "IntersectionObserver",
        "ResizeObserver",
        "CSSStyleSheet",
    }
)


class _Site:
    __slots__ = ("interp", "node", "scope")

    def __init__(self, interp: Interpreter, node: Node, scope: Scope) -> None:
        self.interp = interp
        self.node = node
        self.scope = scope

    def call(self, fn: Any, args: list[Any]) -> Any:
        return self.interp.call(fn, args, self.node, self.scope)

    def charge(self, units: int) -> None:
        self.interp.charge(units, self.node, self.scope)


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


class Interpreter:
    """One render: module cache, limits, collected stylesheets."""

    def __init__(
        self, root: Path, overlay: Mapping[str, str] | None, max_depth: int, max_steps: int, max_bytes: int
    ) -> None:
        self.root = Path(root)
        self.overlay = _normalise_overlay(overlay)
        self.max_depth = max_depth
        self.max_steps = max_steps
        self.max_bytes = max_bytes
        self.steps = 0
        self.depth = 0
        self.modules: dict[str, ModuleState] = {}
        self.stack: list[str] = []
        self.sheets: dict[str, None] = {}
        self.allocated = 0  # characters + array elements built so far (see check_length)

    # ------------------------------------------------------------ errors

    def err(self, n: Node, scope: Scope, message: str, cls: type[StoryError] = StoryRenderError) -> StoryError:
        mod = scope.mod
        if mod is None:
            return cls(message, SourceLocation("<global>", 1, 1))
        return cls(message, location_at(mod.source, n.start_byte, mod.file))

    def unsupported(self, n: Node, scope: Scope) -> StoryError:
        return self.err(n, scope, f"unsupported syntax: {n.type}")

    # ----------------------------------------------------------- modules

    def rel_path(self, path: Path | str) -> str:
        return relative_story_path(path, self.root, self.overlay)

    def exists(self, rel: str) -> bool:
        return rel in self.overlay or (self.root / rel).is_file()

    def read(self, rel: str, at: SourceLocation) -> bytes:
        if rel in self.overlay:
            return self._overlay_bytes(rel)
        try:
            return read_story_file(self.root, rel, self.max_bytes)
        except StoryImportError as exc:  # a symlink or path leaving the root, a FIFO or device
            raise type(exc)(exc.message, at) from None
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise StoryImportError(f"file not found: {rel}", at) from None

    def _overlay_bytes(self, rel: str) -> bytes:
        try:
            data = self.overlay[rel].encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoryEncodingError(
                f"overlay text is not encodable as UTF-8: {exc.reason}", SourceLocation(rel, 1, 1)
            ) from None
        if len(data) > self.max_bytes:
            raise StoryTooLargeError(
                f"file is too large ({len(data)} bytes > limit {self.max_bytes} bytes)", SourceLocation(rel, 1, 1)
            )
        decode_source(data, rel)
        return data

    def load(self, rel: str, at: SourceLocation | None = None) -> ModuleState:
        where = at or SourceLocation(rel, 1, 1)
        state = self.modules.get(rel)
        if state is not None:
            if state.loading:
                cycle = self.stack[self.stack.index(rel) :] + [rel]
                raise StoryImportError(f"import cycle: {' -> '.join(cycle)}", where)
            return state
        source = self.read(rel, where)
        check_syntax(parse_tsx(source, rel), source, rel)
        try:
            root = compile_source(source, is_tsx(rel))
        except ValueError as exc:
            raise StoryRenderError(f"unsupported literal: {exc}", SourceLocation(rel, 1, 1)) from None
        state = ModuleState(rel, source, Scope({}, _GLOBAL_SCOPE, None))
        state.scope.mod = state
        self.modules[rel] = state
        self.stack.append(rel)
        try:
            self._exec_module(state, root)
        finally:
            self.stack.pop()
            state.loading = False
        return state

    def _exec_module(self, m: ModuleState, root: Node) -> None:
        scope = m.scope
        for s in root.kids:
            if s.type == "import_statement":
                self._import(s, m)
        for s in root.kids:
            decl = s.fields.get("declaration") if s.type == "export_statement" else s
            if decl is not None and decl.type == "function_declaration":
                self._declare_function(decl, scope)
        pending: list[tuple[str, str, Node]] = []
        for s in root.kids:
            self._module_statement(s, m, pending)
        for local, exported, node in pending:
            value = self.lookup(local, scope)
            if value is MISSING:
                raise self.err(node, scope, f"exported name '{local}' is not defined", StoryImportError)
            m.exports[exported] = value
            m.export_nodes[exported] = node

    def _module_statement(self, s: Node, m: ModuleState, pending: list[tuple[str, str, Node]]) -> None:
        t = s.type
        scope = m.scope
        if t in ("import_statement", "function_declaration") or t in _TYPE_ONLY:
            return
        if t in ("lexical_declaration", "variable_declaration"):
            self.declare(s, scope)
        elif t == "export_statement":
            self._export(s, m, pending)
        elif t == "expression_statement":
            self.ev(s.kids[0], scope)
        else:
            # Loops, `if`, blocks and class declarations at module level (`for (const square of
            # squares) { ... }` building a table of b-threads): run as in a function body.
            result = self.exec(s, scope)
            if result is not _NORET:
                raise self._stray(result, s, scope, "at module level")

    def _export(self, s: Node, m: ModuleState, pending: list[tuple[str, str, Node]]) -> None:
        scope = m.scope
        if "source" in s.fields:
            raise self.err(s, scope, "re-exports ('export ... from') are not supported")
        decl = s.fields.get("declaration")
        default = "default" in s.tokens
        if decl is not None:
            names = self._declaration_names(decl, scope)
            if decl.type in ("lexical_declaration", "variable_declaration"):
                self.declare(decl, scope)
            elif decl.type == "class_declaration":
                self._declare_class(decl, scope)
            for name in names:
                exported = "default" if default else name
                m.exports[exported] = self.lookup(name, scope)
                m.export_nodes[exported] = s
            return
        if "value" in s.fields:
            m.exports["default"] = self.ev(s.fields["value"], scope)
            m.export_nodes["default"] = s
            return
        for clause in s.kids:
            for spec in clause.kids:
                local = spec.fields["name"].text or ""
                alias = spec.fields.get("alias")
                pending.append((local, (alias.text or "") if alias is not None else local, s))

    def _declaration_names(self, decl: Node, scope: Scope) -> list[str]:
        if decl.type in _TYPE_ONLY:
            return []
        if decl.type in ("function_declaration", "class_declaration"):
            return [decl.fields["name"].text or ""]
        if decl.type in ("lexical_declaration", "variable_declaration"):
            names: list[str] = []
            for d in decl.kids:
                names.extend(_pattern_names(d.fields["name"]))
            return names
        raise self.unsupported(decl, scope)

    def _import(self, s: Node, m: ModuleState) -> None:
        if "type" in s.tokens:
            return
        source_node = s.fields["source"]
        exports = self._module_exports(source_node.value, source_node, m)
        for clause in s.kids:
            if clause.type == "import_clause":
                for part in clause.kids:
                    self._bind_import(part, exports, source_node.value, m)

    def _bind_import(self, part: Node, exports: dict[str, Any], spec: str, m: ModuleState) -> None:
        scope = m.scope
        if part.type == "identifier":
            scope.vars[part.text or ""] = self._export_of(exports, "default", spec, part, scope)
            scope.add_const(part.text or "")
        elif part.type == "namespace_import":
            scope.vars[part.kids[0].text or ""] = ReadOnlyObject(exports)
            scope.add_const(part.kids[0].text or "")
        elif part.type == "named_imports":
            for item in part.kids:
                if "type" in item.tokens:
                    continue
                name_node = item.fields["name"]
                name = name_node.value if name_node.type == "string" else (name_node.text or "")
                alias = item.fields.get("alias")
                local = (alias.text or "") if alias is not None else name
                scope.vars[local] = self._export_of(exports, name, spec, item, scope)
                scope.add_const(local)
        else:
            raise self.unsupported(part, scope)

    def _export_of(self, exports: dict[str, Any], name: str, spec: str, node: Node, scope: Scope) -> Any:
        value = exports.get(name, MISSING)
        if value is MISSING:
            raise self.err(node, scope, f"module '{spec}' has no export '{name}'", StoryImportError)
        return value

    def _module_exports(self, spec: str, node: Node, m: ModuleState) -> dict[str, Any]:
        package = package_exports(spec)
        if package is not None:
            return package
        at = location_at(m.source, node.start_byte, m.file)
        if not is_relative_specifier(spec):
            raise StoryImportError(
                f"unsupported module '{spec}' (only 'plaited', 'plaited/ui', 'plaited/testing', 'plaited/utils' "
                "and relative imports)",
                at,
            )
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
    def lookup(name: str, scope: Scope | None) -> Any:
        while scope is not None:
            v = scope.vars.get(name, MISSING)
            if v is not MISSING:
                return v
            scope = scope.parent
        return MISSING

    def _declare_function(self, decl: Node, scope: Scope) -> None:
        name = decl.fields["name"].text or ""
        scope.vars[name] = JsFunction(decl, scope, name)

    def _declare_class(self, decl: Node, scope: Scope) -> None:
        # A class's body runs only in the browser (custom-element internals, listeners): its
        # name is bound to a runtime-only value that can be passed around and constructed.
        name_node = decl.fields.get("name")
        name = (name_node.text or "") if name_node is not None else "default"
        scope.vars[name] = RuntimeOnly(f"class {name}")

    def declare(self, s: Node, scope: Scope) -> None:
        const = s.type == "lexical_declaration" and "const" in s.tokens
        for d in s.kids:
            if d.type != "variable_declarator":
                raise self.unsupported(d, scope)
            target = d.fields["name"]
            value_node = d.fields.get("value")
            value = UNDEFINED if value_node is None else self.ev(value_node, scope)
            if isinstance(value, JsFunction) and value.name is None and target.type == "identifier":
                value.name = target.text
            self.bind(target, value, scope)
            if const:
                for name in _pattern_names(target):
                    scope.add_const(name)

    def bind(self, pat: Node, value: Any, scope: Scope, assign: bool = False) -> None:
        """Bind (declare) a pattern's names; with ``assign``, store into existing bindings and members."""
        t = pat.type
        if t in ("identifier", "shorthand_property_identifier_pattern"):
            if assign:
                self.assign_name(pat.text or "", value, pat, scope)
            else:
                scope.vars[pat.text or ""] = value
        elif t == "object_pattern":
            self._bind_object(pat, value, scope, assign)
        elif t == "array_pattern":
            self._bind_array(pat, value, scope, assign)
        elif t in ("assignment_pattern", "object_assignment_pattern"):
            if value is UNDEFINED:
                value = self.ev(pat.fields["right"], scope)
            self.bind(pat.fields["left"], value, scope, assign)
        elif assign and t in ("member_expression", "subscript_expression"):
            obj, key = self._member_ref(pat, scope)
            self.set_member(obj, key, value, pat, scope)
        else:
            raise self.unsupported(pat, scope)

    def _bind_object(self, pat: Node, value: Any, scope: Scope, assign: bool) -> None:
        if value is None or value is UNDEFINED:
            raise self.err(pat, scope, f"cannot destructure {to_string(value)}")
        used: list[str] = []
        for k in pat.kids:
            t = k.type
            if t == "shorthand_property_identifier_pattern":
                key = k.text or ""
                used.append(key)
                self.bind(k, self.get(value, key, k, scope), scope, assign)
            elif t == "object_assignment_pattern":
                left = k.fields["left"]
                key = left.text or ""
                used.append(key)
                v = self.get(value, key, k, scope)
                if v is UNDEFINED:
                    v = self.ev(k.fields["right"], scope)
                self.bind(left, v, scope, assign)
            elif t == "pair_pattern":
                key = self.prop_key(k.fields["key"], scope)
                used.append(key)
                self.bind(k.fields["value"], self.get(value, key, k, scope), scope, assign)
            elif t == "rest_pattern":
                rest = {key: v for key, v in value.items() if key not in used} if isinstance(value, dict) else {}
                self.bind(k.kids[0], rest, scope, assign)
            else:
                raise self.unsupported(k, scope)

    def _bind_array(self, pat: Node, value: Any, scope: Scope, assign: bool) -> None:
        if isinstance(value, str):
            # Only the characters the pattern names are split off, unless a rest element takes them all.
            has_rest = any(k.type == "rest_pattern" for k in pat.kids)
            value = self._iterate(value, pat, scope) if has_rest else list(value[: len(pat.kids)])
        if not isinstance(value, list):
            raise self.err(pat, scope, f"{describe(value)} is not iterable")
        for i, k in enumerate(pat.kids):
            if k.type == "rest_pattern":
                rest = list(value[i:])
                self.charge(len(rest), k, scope)
                self.bind(k.kids[0], rest, scope, assign)
                return
            self.bind(k, value[i] if i < len(value) else UNDEFINED, scope, assign)

    # -------------------------------------------------------- assignment

    def assign_name(self, name: str, value: Any, n: Node, scope: Scope) -> None:
        """`name = value`: the nearest binding of `name` changes; a constant or a global is refused."""
        s: Scope | None = scope
        while s is not None:
            if name in s.vars:
                if s.mod is None:
                    raise self.err(n, scope, f"cannot assign to the global '{name}'")
                if s.consts is not None and name in s.consts:
                    raise self.err(n, scope, f"assignment to constant variable '{name}'")
                s.vars[name] = value
                return
            s = s.parent
        raise self.err(n, scope, f"{name} is not defined")

    def _member_ref(self, target: Node, scope: Scope) -> tuple[Any, Any]:
        obj = self.ev(target.fields["object"], scope)
        if target.type == "member_expression":
            return obj, target.fields["property"].text or ""
        return obj, self.ev(target.fields["index"], scope)

    def set_member(self, obj: Any, key: Any, value: Any, n: Node, scope: Scope) -> None:
        t = type(obj)
        if t is dict or t is StoryConfig:
            obj[key if type(key) is str else property_key(key)] = value
        elif t is list:
            self._set_index(obj, key, value, n, scope)
        elif getattr(obj, "runtime_only", False):
            return  # a browser-only object (`delegates`, a b-thread table): nothing to render
        elif obj is None or obj is UNDEFINED:
            raise self.err(n, scope, f"cannot set properties of {to_string(obj)} (setting '{property_key(key)}')")
        elif t is ReadOnlyObject:
            raise self.err(n, scope, f"cannot assign to '{property_key(key)}' of a read-only host object")
        else:
            raise self.err(n, scope, f"cannot set property '{property_key(key)}' on {describe(obj)}")

    def _set_index(self, arr: list[Any], key: Any, value: Any, n: Node, scope: Scope) -> None:
        index = _as_index(key)
        if index is None:
            if property_key(key) != "length":
                raise self.err(n, scope, f"cannot set property '{property_key(key)}' on an array")
            length = to_number(value)
            if length != length or length < 0 or not float(length).is_integer():
                raise self.err(n, scope, "invalid array length")
            index, value = int(length), MISSING
        if index >= MAX_ARRAY:
            raise self.err(n, scope, f"array too long ({index + 1} > {MAX_ARRAY} elements)")
        if value is MISSING:  # `arr.length = n`
            del arr[index:]
            grow = index - len(arr)
        else:
            grow = index + 1 - len(arr)
        if grow > 0:
            self.charge(grow, n, scope)
            arr.extend([UNDEFINED] * grow)
        if value is not MISSING:
            arr[index] = value

    def _reference(self, target: Node, scope: Scope) -> tuple[Any, Any]:
        """The (object, key) a compound assignment reads and writes; object is MISSING for a name."""
        if target.type == "identifier":
            return MISSING, target.text or ""
        if target.type in ("member_expression", "subscript_expression"):
            return self._member_ref(target, scope)
        raise self.unsupported(target, scope)

    def _read_ref(self, obj: Any, key: Any, target: Node, scope: Scope) -> Any:
        if obj is MISSING:
            return _ev_identifier(self, target, scope)
        return self.get(obj, key, target, scope)

    def _write_ref(self, obj: Any, key: Any, value: Any, target: Node, scope: Scope) -> None:
        if obj is MISSING:
            self.assign_name(key, value, target, scope)
        else:
            self.set_member(obj, key, value, target, scope)

    # -------------------------------------------------------- evaluation

    def charge(self, units: int, n: Node, scope: Scope) -> None:
        """Count `units` of work (node visits, loop iterations, builtin work) against the budget."""
        self.steps += units
        if self.steps > self.max_steps:
            raise self.err(
                n,
                scope,
                f"evaluation step budget exceeded ({self.max_steps} steps: node visits, loop iterations "
                "and the elements and characters builtins work through)",
            )

    def ev(self, n: Node, scope: Scope) -> Any:
        self.steps += 1
        if self.steps > self.max_steps:
            self.charge(0, n, scope)
        handler = _EV.get(n.type)
        if handler is None:
            raise self.unsupported(n, scope)
        try:
            return handler(self, n, scope)
        except JsThrow as exc:  # a conversion refused (a list too long to write as a string)
            raise self.err(n, scope, str(exc)) from None

    def call(self, fn: Any, args: list[Any], n: Node, scope: Scope, component: str | None = None) -> Any:
        if type(fn) is JsFunction:
            if self.depth >= self.max_depth:
                raise self.err(n, scope, self._depth_message(fn, component))
            self.depth += 1
            try:
                return self._invoke(fn, args)
            finally:
                self.depth -= 1
        if isinstance(fn, Builtin):
            # Host functions may walk their arguments whole (styles, class lists, markup): nested
            # arrays and objects are charged by their size first, so a list holding one long list
            # many times cannot hide its 10^10 elements behind one counted call.
            self.charge(nested_size(args, self.max_steps - self.steps + 1), n, scope)
            try:
                # A builtin charges its own work (`site.charge`); its result is only size-checked here.
                return self.check_length(fn.fn(_Site(self, n, scope), args), n, scope, charge=False)
            except JsThrow as exc:
                raise self.err(n, scope, str(exc)) from None
        if type(fn) is TokenRef:
            return fn.css  # a Plaited 7 token reference called: `tokens.primary()`
        what = f"<{component}>" if component else describe(fn)
        raise self.err(n, scope, f"{what} is not a function")

    def _depth_message(self, fn: JsFunction, component: str | None) -> str:
        if component:
            return f"component recursion depth limit exceeded ({self.max_depth} frames) rendering <{component}>"
        return (
            f"call recursion depth limit exceeded ({self.max_depth} frames) calling {fn.name or 'anonymous function'}"
        )

    def _invoke(self, fn: JsFunction, args: list[Any]) -> Any:
        node = fn.node
        scope = Scope({}, fn.scope, fn.scope.mod)
        for i, p in enumerate(node.value):
            if p.rest:
                self.bind(p.pattern, list(args[i:]), scope)
                continue
            v = args[i] if i < len(args) else UNDEFINED
            if v is UNDEFINED and p.default is not None:
                v = self.ev(p.default, scope)
            self.bind(p.pattern, v, scope)
        body = node.fields["body"]
        if body.type == "statement_block":
            result = self.exec_block(body.kids, scope)
            if type(result) is _Jump:
                raise self._stray(result, body, scope, "outside a loop")
            return UNDEFINED if result is _NORET else result
        return self.ev(body, scope)

    def _stray(self, result: Any, n: Node, scope: Scope, where: str) -> StoryError:
        if type(result) is _Jump:
            label = f" {result.label}" if result.label else ""
            return self.err(result.node, scope, f"'{result.kind}{label}' {where} (no enclosing loop or label)")
        return self.err(n, scope, f"'return' {where}")

    def exec_block(self, stmts: list[Node], scope: Scope) -> Any:
        for s in stmts:
            result = self.exec(s, scope)
            if result is not _NORET:
                return result
        return _NORET

    def exec(self, s: Node, scope: Scope) -> Any:
        """Run a statement: `_NORET`, a returned value, or a `_Jump` (break/continue) for a loop."""
        self.charge(1, s, scope)
        t = s.type
        if t == "return_statement":
            return self.ev(s.kids[0], scope) if s.kids else UNDEFINED
        if t in ("lexical_declaration", "variable_declaration"):
            self.declare(s, scope)
        elif t == "if_statement":
            return self._exec_if(s, scope)
        elif t == "statement_block":
            return self.exec_block(s.kids, Scope({}, scope, scope.mod))
        elif t == "expression_statement":
            self.ev(s.kids[0], scope)
        elif t == "function_declaration":
            self._declare_function(s, scope)
        elif t in _LOOPS:
            return self.loop(s, scope, ())
        elif t == "labeled_statement":
            return self._exec_labeled(s, scope)
        elif t in ("break_statement", "continue_statement"):
            label = s.fields.get("label")
            return _Jump(t.split("_", 1)[0], label.text if label is not None else None, s)
        elif t == "class_declaration":
            self._declare_class(s, scope)
        elif t == "switch_statement":
            return self._exec_switch(s, scope)
        elif t == "throw_statement":
            raise self._thrown(s, scope)
        elif t not in _TYPE_ONLY:
            raise self.unsupported(s, scope)
        return _NORET

    def _exec_switch(self, s: Node, scope: Scope) -> Any:
        value = self.ev(s.fields["value"], scope)
        cases = s.fields["body"].kids
        start = None
        for i, case in enumerate(cases):  # case values are evaluated in order until one matches
            if case.type == "switch_case" and strict_equals(self.ev(case.fields["value"], scope), value):
                start = i
                break
        if start is None:
            start = next((i for i, case in enumerate(cases) if case.type == "switch_default"), None)
        if start is None:
            return _NORET
        env = Scope({}, scope, scope.mod)
        for case in cases[start:]:  # falls through until a break
            body = case.kids[1:] if case.type == "switch_case" else case.kids
            result = self.exec_block(body, env)
            if type(result) is _Jump and result.kind == "break" and result.label is None:
                return _NORET
            if result is not _NORET:
                return result
        return _NORET

    def _thrown(self, s: Node, scope: Scope) -> StoryError:
        """`throw x` ends the render: a located error carrying the thrown message."""
        arg = s.kids[0] if s.kids else None
        if arg is None:
            return self.err(s, scope, "uncaught exception")
        ctor = arg.fields.get("constructor") if arg.type == "new_expression" else None
        if ctor is not None and ctor.type == "identifier" and (ctor.text or "").endswith("Error"):
            args = arg.fields.get("arguments")
            values = self._arguments(args, scope) if args is not None else []
            message = to_string(values[0]) if values else ""
            return self.err(s, scope, f"uncaught {ctor.text}: {message}")
        return self.err(s, scope, f"uncaught exception: {to_string(self.ev(arg, scope))}")

    # ------------------------------------------------------------- loops

    def _exec_labeled(self, s: Node, scope: Scope) -> Any:
        labels: list[str] = []
        body = s
        while body.type == "labeled_statement":  # `a: b: for (...)` gives the loop both labels
            labels.append(body.fields["label"].text or "")
            body = body.fields["body"]
        if body.type in _LOOPS:
            return self.loop(body, scope, tuple(labels))
        result = self.exec(body, scope)
        if type(result) is _Jump and result.kind == "break" and result.label in labels:
            return _NORET  # `block: { ... break block }`
        return result

    def loop(self, s: Node, scope: Scope, labels: tuple[str, ...]) -> Any:
        """Run a loop statement; `labels` name it for `break label` / `continue label`."""
        t = s.type
        if t == "for_statement":
            return self._exec_for(s, scope, labels)
        if t == "for_in_statement":
            return self._exec_for_in(s, scope, labels)
        body = s.fields["body"]
        condition = s.fields["condition"]
        first = t == "do_statement"
        while True:
            self.charge(1, s, scope)
            if not first and not truthy(self.ev(condition, scope)):
                return _NORET
            first = False
            outcome = self._iteration(body, scope, labels)
            if outcome is _STOP:
                return _NORET
            if outcome is not _NORET:
                return outcome

    def _iteration(self, body: Node, scope: Scope, labels: tuple[str, ...]) -> Any:
        """One pass of a loop body: `_NORET` to go on, `_STOP` for its own break, else what propagates."""
        result = self.exec(body, scope)
        if result is _NORET:
            return _NORET
        if type(result) is _Jump and (result.label is None or result.label in labels):
            return _NORET if result.kind == "continue" else _STOP
        return result

    def _exec_for(self, s: Node, scope: Scope, labels: tuple[str, ...]) -> Any:
        env = Scope({}, scope, scope.mod)
        init = s.fields.get("initializer")
        if init is not None and init.type != "empty_statement":
            if init.type in ("lexical_declaration", "variable_declaration"):
                self.declare(init, env)
            else:
                self.ev(init.kids[0] if init.type == "expression_statement" else init, env)
        condition = s.fields.get("condition")
        if condition is not None and condition.type == "expression_statement":
            condition = condition.kids[0] if condition.kids else None
        if condition is not None and condition.type == "empty_statement":
            condition = None
        increment = s.fields.get("increment")
        body = s.fields["body"]
        # `let` bindings are per iteration: a closure made in one pass keeps that pass's value.
        env = env.copy()
        while True:
            self.charge(1, s, scope)
            if condition is not None and not truthy(self.ev(condition, env)):
                return _NORET
            outcome = self._iteration(body, env, labels)
            if outcome is _STOP:
                return _NORET
            if outcome is not _NORET:
                return outcome
            env = env.copy()
            if increment is not None:
                self.ev(increment, env)

    def _exec_for_in(self, s: Node, scope: Scope, labels: tuple[str, ...]) -> Any:
        if "await" in s.tokens:
            raise self.err(s, scope, "unsupported syntax: for await")
        right = self.ev(s.fields["right"], scope)
        left = s.fields["left"]
        declared = any(k in s.tokens for k in ("const", "let", "var"))
        const = "const" in s.tokens
        body = s.fields["body"]
        if s.op == "of":
            items: list[Any] = right if type(right) is list else self._iterate(right, s.fields["right"], scope)
        else:
            items = self._keys(right, s, scope)
        i = 0
        while i < len(items):  # an array is read live: elements pushed by the body are visited too
            self.charge(1, s, scope)
            env = Scope({}, scope, scope.mod)
            if declared:
                self.bind(left, items[i], env)
                if const:
                    for name in _pattern_names(left):
                        env.add_const(name)
            else:
                self.bind(left, items[i], env, assign=True)
            i += 1
            outcome = self._iteration(body, env, labels)
            if outcome is _STOP:
                return _NORET
            if outcome is not _NORET:
                return outcome
        return _NORET

    def _keys(self, value: Any, n: Node, scope: Scope) -> list[str]:
        """`for (k in value)`: an object's own keys, an array's or a string's indices, else none."""
        if isinstance(value, dict):
            self.charge(len(value), n, scope)
            return list(value)
        if isinstance(value, (list, str)):
            self.charge(len(value), n, scope)
            return [str(i) for i in range(len(value))]
        return []

    def _exec_if(self, s: Node, scope: Scope) -> Any:
        if truthy(self.ev(s.fields["condition"], scope)):
            return self.exec(s.fields["consequence"], scope)
        alt = s.fields.get("alternative")
        if alt is None or not alt.kids:
            return _NORET
        return self.exec(alt.kids[0], scope)

    # ----------------------------------------------------- member access

    def get(self, obj: Any, key: Any, n: Node, scope: Scope) -> Any:
        t = type(obj)
        if t is dict or t is StoryConfig or t is ReadOnlyObject:
            v = obj.get(key if type(key) is str else property_key(key), MISSING)
            return UNDEFINED if v is MISSING else v
        if t is list or t is str:
            return self._get_indexed(obj, key)
        if obj is None or obj is UNDEFINED:
            raise self.err(n, scope, f"cannot read properties of {to_string(obj)} (reading '{property_key(key)}')")
        if t is StyleEntry:
            # Both spellings: the bundled dialect's `className`/`stylesheet` and Plaited 7's
            # `{ classNames, stylesheets }` style objects.
            if key in ("className", "classNames"):
                return list(obj.class_names)
            return list(obj.stylesheets) if key in ("stylesheet", "stylesheets") else UNDEFINED
        if t is float or t is int:
            return method_of(obj, property_key(key))
        if isinstance(obj, Builtin):
            return obj.member(property_key(key))
        if t is TokenRef and key == "stylesheets":
            return [token_sheet(obj)]
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

    def chain(self, n: Node, scope: Scope) -> Any:
        if n.type == "call_expression":
            return self._chain_call(n, scope)
        obj = self._chain_object(n.fields["object"], scope)
        if obj is _SHORT or (n.optional and (obj is None or obj is UNDEFINED)):
            return _SHORT
        if n.type == "member_expression":
            key: Any = n.fields["property"].text or ""
        else:
            key = self.ev(n.fields["index"], scope)
        return self.get(obj, key, n, scope)

    def _chain_object(self, n: Node, scope: Scope) -> Any:
        if n.type in _CHAIN:
            self.steps += 1
            return self.chain(n, scope)
        return self.ev(n, scope)

    def _chain_call(self, n: Node, scope: Scope) -> Any:
        callee = n.fields["function"]
        if callee.type in ("member_expression", "subscript_expression"):
            fn = self.chain(callee, scope)
        else:
            fn = self._chain_object(callee, scope)
        if fn is _SHORT or (n.optional and (fn is None or fn is UNDEFINED)):
            return _SHORT
        arguments = n.fields.get("arguments")
        if arguments is None or arguments.type != "arguments":
            raise self.unsupported(arguments or n, scope)
        return self.call(fn, self._arguments(arguments, scope), n, scope)

    def _arguments(self, node: Node, scope: Scope) -> list[Any]:
        args: list[Any] = []
        for k in node.kids:
            if k.type == "spread_element":
                args.extend(self._iterate(self.ev(k.kids[0], scope), k, scope))
            else:
                args.append(self.ev(k, scope))
        return args

    def _iterate(self, v: Any, n: Node, scope: Scope) -> list[Any]:
        """The elements of an iterable (an array or a string); spreading them is charged by length."""
        if isinstance(v, list):
            self.charge(len(v), n, scope)
            return v
        if isinstance(v, str):
            if len(v) > MAX_ARRAY:
                raise self.err(n, scope, f"array too long ({len(v)} > {MAX_ARRAY} elements)")
            self.charge(len(v), n, scope)
            return list(v)
        raise self.err(n, scope, f"{describe(v)} is not iterable")

    def prop_key(self, k: Node, scope: Scope) -> str:
        t = k.type
        if t in (
            "property_identifier",
            "identifier",
            "shorthand_property_identifier_pattern",
            "private_property_identifier",
        ):
            return k.text or ""
        if t == "string":
            return k.value
        if t == "number":
            return number_to_string(k.value)
        if t == "computed_property_name":
            return property_key(self.ev(k.kids[0], scope))
        raise self.unsupported(k, scope)

    def check_length(self, value: Any, n: Node, scope: Scope, charge: bool = True) -> Any:
        """Refuse an oversized string or array, and count it against the render's allocation budget.

        Building it is work too: with ``charge``, it is counted against the step budget by its length."""
        if isinstance(value, str):
            size = len(value)
            if size > MAX_STRING:
                raise self.err(n, scope, f"string too long ({size} > {MAX_STRING} characters)")
            if charge:
                self.charge(string_work(size) - 1, n, scope)
        elif isinstance(value, list):
            size = len(value)
            if size > MAX_ARRAY:
                raise self.err(n, scope, f"array too long ({size} > {MAX_ARRAY} elements)")
            if charge:
                self.charge(size, n, scope)
        else:
            return value
        # Each value may be within its limit while thousands of them are not (a 2 MB string
        # concatenated in a 32 x 32 map): every string and array built counts as it is built.
        self.allocated += size
        if self.allocated > MAX_ALLOCATED:
            raise self.err(
                n,
                scope,
                f"render allocation budget exceeded (more than {MAX_ALLOCATED} characters and array elements built)",
            )
        return value

    # --------------------------------------------------------------- JSX

    def jsx(self, n: Node, scope: Scope) -> Html:
        parts: JsxParts = n.value
        name = parts.name
        if name is None:
            return self.render_html(self._children(parts.children, scope), n, scope)
        if name.type == "identifier" and (name.text or "")[:1].islower():
            return self._intrinsic(name.text or "", parts, n, scope)
        if name.type == "jsx_namespace_name":
            return self._intrinsic(":".join(k.text or "" for k in name.kids), parts, n, scope)
        return self._component(name, parts, n, scope)

    def _component(self, name: Node, parts: JsxParts, n: Node, scope: Scope) -> Html:
        tag = _tag_text(name)
        if name.type == "identifier":
            fn = self.lookup(tag, scope)
            if fn is MISSING:
                raise self.err(
                    name,
                    scope,
                    f"unknown component <{tag}>: it is neither defined nor imported in {scope.mod.file if scope.mod else 'this module'}",
                )
        else:
            fn = self.ev(name, scope)
        if not isinstance(fn, (JsFunction, Builtin)):
            raise self.err(name, scope, f"<{tag}> is not a component ({describe(fn)})")
        props = self._props(parts.attrs, scope)
        children = self._children(parts.children, scope)
        if children:
            props["children"] = children[0] if len(children) == 1 else children
        result = self.call(fn, [props], name, scope, component=tag)
        return self.render_html(result, n, scope)

    def _children(self, nodes: tuple[Node, ...], scope: Scope) -> list[Any]:
        out: list[Any] = []
        for k in nodes:
            t = k.type
            if t == "jsx_text_run":
                out.append(k.value)
            elif t == "jsx_expression":
                if not k.kids:
                    continue
                if k.kids[0].type == "spread_element":
                    raise self.unsupported(k.kids[0], scope)
                out.append(self.ev(k.kids[0], scope))
            else:
                out.append(self.ev(k, scope))
        return out

    def _props(self, attrs: tuple[Node, ...], scope: Scope) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for a in attrs:
            if a.type == "jsx_expression":
                spread = a.kids[0] if a.kids else None
                if spread is None or spread.type != "spread_element":
                    raise self.unsupported(spread or a, scope)
                self._spread_props(props, self.ev(spread.kids[0], scope), a, scope)
                continue
            key, value_node = a.value
            if value_node is None:
                value: Any = True
            elif value_node.type == "string":
                value = _html.unescape((value_node.text or '""')[1:-1])
            elif value_node.type == "jsx_expression":
                if not value_node.kids:
                    raise self.err(value_node, scope, "empty JSX attribute expression")
                value = self.ev(value_node.kids[0], scope)
            else:
                value = self.ev(value_node, scope)
            set_prop(props, key, value)
        return props

    def _spread_props(self, props: dict[str, Any], value: Any, n: Node, scope: Scope) -> None:
        if isinstance(value, StyleEntry):
            set_prop(props, "className", " ".join(value.class_names))
            set_prop(props, "stylesheet", list(value.stylesheets))
            self.sheets.update(dict.fromkeys(value.stylesheets))
        elif isinstance(value, dict):
            for key, v in value.items():
                set_prop(props, key, v)
        elif value is None or value is UNDEFINED or value is False:
            return
        else:
            raise self.err(n, scope, f"cannot spread {describe(value)} as JSX attributes")

    def _intrinsic(self, tag: str, parts: JsxParts, n: Node, scope: Scope) -> Html:
        props = self._props(parts.attrs, scope)
        own = props.get("stylesheet")
        sheets: dict[str, None] = {}
        if isinstance(own, list):
            sheets.update(dict.fromkeys(s for s in own if isinstance(s, str)))
        elif isinstance(own, str):
            sheets[own] = None
        self.sheets.update(sheets)
        try:
            out = ["<", tag, attributes_html(props), ">"]
        except HtmlOutputError as exc:
            raise self.err(n, scope, str(exc)) from None
        if tag in VOID_ELEMENTS:
            return Html("".join(out), tuple(sheets))
        children: Any = self._children(parts.children, scope) if parts.children else props.get("children", UNDEFINED)
        self._emit(children, out, n, scope, sheets)
        out.append(f"</{tag}>")
        return Html(self.check_length("".join(out), n, scope), tuple(sheets))

    def render_html(self, value: Any, n: Node, scope: Scope) -> Html:
        """`value` written as HTML, carrying the stylesheets its markup needs."""
        out: list[str] = []
        sheets: dict[str, None] = {}
        self._emit(value, out, n, scope, sheets)
        return Html(self.check_length("".join(out), n, scope), tuple(sheets))

    def render_value(self, value: Any, n: Node, scope: Scope) -> str:
        return self.render_html(value, n, scope).html

    def _emit(self, v: Any, out: list[str], n: Node, scope: Scope, sheets: dict[str, None] | None = None) -> None:
        try:
            emit_child(v, out, sheets)
        except HtmlOutputError as exc:
            raise self.err(n, scope, str(exc)) from None


# How deep `nested_size` looks: deeper levels (and cycles, `o.self = o`) are not counted further.
_NESTED_DEPTH = 64


def nested_size(values: list[Any], cap: int) -> int:
    """Elements and property values inside ``values``' arrays and objects, counted as a tree (a
    list shared twice counts twice), level by level down to `_NESTED_DEPTH`; stops once the count
    passes ``cap``."""
    level = [v for v in values if type(v) is list or isinstance(v, dict)]
    count = 0
    depth = 0
    while level and depth < _NESTED_DEPTH:
        deeper: list[Any] = []
        for value in level:
            items = value if type(value) is list else value.values()
            count += len(items)
            if count > cap:
                return count
            deeper.extend(x for x in items if type(x) is list or isinstance(x, dict))
        level = deeper
        depth += 1
    return count


def _tag_text(name: Node) -> str:
    if name.type == "member_expression":
        return f"{_tag_text(name.fields['object'])}.{name.fields['property'].text}"
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


def _pattern_names(pat: Node) -> list[str]:
    t = pat.type
    if t in ("identifier", "shorthand_property_identifier_pattern"):
        return [pat.text or ""]
    if t in ("assignment_pattern", "object_assignment_pattern"):
        return _pattern_names(pat.fields["left"])
    if t == "pair_pattern":
        return _pattern_names(pat.fields["value"])
    names: list[str] = []
    for k in pat.kids:
        names.extend(_pattern_names(k))
    return names


# ------------------------------------------------------- expression handlers


def _ev_identifier(self: Interpreter, n: Node, scope: Scope) -> Any:
    v = self.lookup(n.text or "", scope)
    if v is MISSING:
        raise self.err(n, scope, f"{n.text} is not defined")
    return v


def _ev_template(self: Interpreter, n: Node, scope: Scope) -> str:
    parts: list[str] = []
    for k in n.kids:
        if k.type == "template_substitution":
            parts.append(to_string(self.ev(k.kids[0], scope)))
        else:
            parts.append(k.value)
    return self.check_length("".join(parts), n, scope)


def _ev_object(self: Interpreter, n: Node, scope: Scope) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in n.kids:
        t = k.type
        if t == "pair":
            key = self.prop_key(k.fields["key"], scope)
            value = self.ev(k.fields["value"], scope)
            if isinstance(value, JsFunction) and value.name is None:
                value.name = key
            out[key] = value
        elif t == "shorthand_property_identifier":
            out[k.text or ""] = _ev_identifier(self, k, scope)
        elif t == "spread_element":
            _spread_object(self, out, self.ev(k.kids[0], scope), k, scope)
        elif t == "method_definition":
            # `bProgram({ $ }) { ... }`, `async play() { ... }`: a function value, run only if called.
            key = self.prop_key(k.fields["name"], scope)
            out[key] = JsFunction(k, scope, key)
        else:
            raise self.unsupported(k, scope)
    return out


def _spread_object(self: Interpreter, out: dict[str, Any], v: Any, n: Node, scope: Scope) -> None:
    if isinstance(v, dict):
        out.update(v)
    elif isinstance(v, (list, str)):
        self.check_length(list(v) if isinstance(v, list) else [None] * min(len(v), MAX_ARRAY + 1), n, scope)
        out.update((str(i), x) for i, x in enumerate(v))
    elif isinstance(v, StyleEntry):
        out["className"] = list(v.class_names)
        out["stylesheet"] = list(v.stylesheets)
    elif isinstance(v, (JsFunction, Builtin, Html)):
        raise self.err(n, scope, f"cannot spread {describe(v)} into an object")


def _ev_array(self: Interpreter, n: Node, scope: Scope) -> list[Any]:
    out: list[Any] = []
    for k in n.kids:
        if k.type == "spread_element":
            out.extend(self._iterate(self.ev(k.kids[0], scope), k, scope))
            self.check_length(out, k, scope)
        else:
            out.append(self.ev(k, scope))
    return out


def _ev_chain(self: Interpreter, n: Node, scope: Scope) -> Any:
    v = self.chain(n, scope)
    return UNDEFINED if v is _SHORT else v


def _ev_function(self: Interpreter, n: Node, scope: Scope) -> JsFunction:
    name = n.fields.get("name")
    return JsFunction(n, scope, name.text if name is not None else None)


def _ev_binary(self: Interpreter, n: Node, scope: Scope) -> Any:
    op = n.op
    if op == "&&":
        left = self.ev(n.fields["left"], scope)
        return self.ev(n.fields["right"], scope) if truthy(left) else left
    if op == "||":
        left = self.ev(n.fields["left"], scope)
        return left if truthy(left) else self.ev(n.fields["right"], scope)
    if op == "??":
        left = self.ev(n.fields["left"], scope)
        return self.ev(n.fields["right"], scope) if left is None or left is UNDEFINED else left
    fn = _BINARY.get(op or "")
    if fn is None:
        raise self.err(n, scope, f"unsupported operator: {op}")
    result = fn(self.ev(n.fields["left"], scope), self.ev(n.fields["right"], scope))
    return self.check_length(result, n, scope) if type(result) is str else result


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


def _ev_unary(self: Interpreter, n: Node, scope: Scope) -> Any:
    op = n.op
    arg = self.ev(n.fields["argument"], scope)
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
    raise self.err(n, scope, f"unsupported operator: {op}")


def _ev_ternary(self: Interpreter, n: Node, scope: Scope) -> Any:
    branch = "consequence" if truthy(self.ev(n.fields["condition"], scope)) else "alternative"
    return self.ev(n.fields[branch], scope)


def _ev_assignment(self: Interpreter, n: Node, scope: Scope) -> Any:
    left = n.fields["left"]
    value = self.ev(n.fields["right"], scope)
    if isinstance(value, JsFunction) and value.name is None and left.type == "identifier":
        value.name = left.text
    if left.type == "identifier":
        self.assign_name(left.text or "", value, left, scope)
    else:
        self.bind(left, value, scope, assign=True)
    return value


def _ev_augmented(self: Interpreter, n: Node, scope: Scope) -> Any:
    left = n.fields["left"]
    op = (n.op or "")[:-1]
    obj, key = self._reference(left, scope)
    current = self._read_ref(obj, key, left, scope)
    if op in ("&&", "||", "??"):
        keep = {"&&": not truthy(current), "||": truthy(current), "??": not is_nullish(current)}[op]
        if keep:
            return current
        value = self.ev(n.fields["right"], scope)
    else:
        fn = _BINARY.get(op)
        if fn is None:
            raise self.err(n, scope, f"unsupported operator: {n.op}")
        value = fn(current, self.ev(n.fields["right"], scope))
        if type(value) is str:
            self.check_length(value, n, scope)
    self._write_ref(obj, key, value, left, scope)
    return value


def _ev_update(self: Interpreter, n: Node, scope: Scope) -> Any:
    target = n.fields["argument"]
    obj, key = self._reference(target, scope)
    current = self._read_ref(obj, key, target, scope)
    old: float | int = current if type(current) is int else to_number(current)
    new = old + 1 if n.op == "++" else old - 1
    self._write_ref(obj, key, new, target, scope)
    return new if n.value == "prefix" else old


def _ev_sequence(self: Interpreter, n: Node, scope: Scope) -> Any:
    value: Any = UNDEFINED
    for k in n.kids:
        value = self.ev(k, scope)
    return value


def _ev_new(self: Interpreter, n: Node, scope: Scope) -> Any:
    callee = n.fields["constructor"]
    name = _tag_text(callee)
    if callee.type == "identifier" and self.lookup(name, scope) is MISSING and name in _RUNTIME_CONSTRUCTORS:
        ctor: Any = RuntimeOnly(name)
    else:
        ctor = self.ev(callee, scope)
    arguments = n.fields.get("arguments")
    if arguments is not None:
        self._arguments(arguments, scope)  # evaluated for their effects, as JS does
    if getattr(ctor, "runtime_only", False):
        return RuntimeOnly(f"new {ctor.name}()")
    raise self.err(n, scope, f"unsupported constructor: new {name}(...) (only browser-only classes are constructed)")


def _ev_class(self: Interpreter, n: Node, scope: Scope) -> Any:
    name = n.fields.get("name")
    return RuntimeOnly(f"class {name.text if name is not None else 'anonymous'}")


_EV: dict[str, Any] = {
    "identifier": _ev_identifier,
    "number": lambda self, n, scope: n.value,
    "string": lambda self, n, scope: n.value,
    "template_string": _ev_template,
    "true": lambda self, n, scope: True,
    "false": lambda self, n, scope: False,
    "null": lambda self, n, scope: None,
    "undefined": lambda self, n, scope: UNDEFINED,
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
    "jsx_element": Interpreter.jsx,
    "jsx_self_closing_element": Interpreter.jsx,
    "assignment_expression": _ev_assignment,
    "augmented_assignment_expression": _ev_augmented,
    "update_expression": _ev_update,
    "sequence_expression": _ev_sequence,
    "new_expression": _ev_new,
    "class": _ev_class,
}
