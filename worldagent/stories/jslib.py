"""Host functions: the `plaited` modules and the small JS standard library subset."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Protocol

from worldagent.stories.values import (
    MAX_STRING_CHARS,
    UNDEFINED,
    Builtin,
    JsThrow,
    ReadOnlyObject,
    StoryConfig,
    StyleEntry,
    TokenRef,
    is_nullish,
    is_number,
    js_round,
    kebab_case,
    number_to_string,
    same_value_zero,
    strict_equals,
    to_number,
    to_string,
    truthy,
)

MAX_STRING = MAX_STRING_CHARS  # characters; guards against exponential string growth
MAX_ARRAY = 100_000
# Work is charged to the render's step budget, so that one counted call cannot hide a hundred
# thousand comparisons: one step per array element a builtin walks, and one per this many
# characters a string builtin scans or builds (Python does those in C, ~64x cheaper per unit).
CHARS_PER_STEP = 64


class CallSite(Protocol):
    def call(self, fn: Any, args: list[Any]) -> Any: ...

    def charge(self, units: int) -> None:
        """Count ``units`` of work against the render's step budget (raises once it is spent)."""
        ...


def string_work(length: int) -> int:
    """Steps charged for scanning or building ``length`` characters."""
    return 1 + length // CHARS_PER_STEP


def check_string(s: str) -> str:
    if len(s) > MAX_STRING:
        raise JsThrow(f"string too long ({len(s)} > {MAX_STRING} characters)")
    return s


def check_array(a: list[Any]) -> list[Any]:
    if len(a) > MAX_ARRAY:
        raise JsThrow(f"array too long ({len(a)} > {MAX_ARRAY} elements)")
    return a


def _arg(args: list[Any], i: int) -> Any:
    return args[i] if i < len(args) else UNDEFINED


# --------------------------------------------------------------------- styles

_PH = "\x00"  # stands for the generated class selector until the hash is known


def _css_value(v: Any, tokens: dict[TokenRef, None]) -> str | None:
    if v is False or is_nullish(v):
        return None
    if isinstance(v, TokenRef):
        tokens[v] = None
        return v.css
    if isinstance(v, list):
        parts = [_css_value(x, tokens) for x in v]
        return " ".join(p for p in parts if p is not None)
    if isinstance(v, (dict, StyleEntry)):
        raise JsThrow("createStyles: unsupported nested value")
    return to_string(v)


def _nest(cond: str, at: tuple[str, ...], sel: str) -> tuple[tuple[str, ...], str]:
    if cond.startswith("@"):
        return at + (cond,), sel
    if "&" in cond:
        return at, cond.replace("&", sel)
    return at, sel + cond


def _is_block_key(key: str) -> bool:
    return key[:1] in (":", "&", "@", "[", " ", ">", "+", "~")


Groups = dict[tuple[tuple[str, ...], str], list[str]]


def _collect(obj: dict[str, Any], at: tuple[str, ...], sel: str, groups: Groups, tokens: dict[TokenRef, None]) -> None:
    for prop, value in obj.items():
        if isinstance(value, dict) and _is_block_key(prop):
            at2, sel2 = _nest(prop, at, sel)
            _collect(value, at2, sel2, groups, tokens)
        elif isinstance(value, dict):
            _collect_conditions(prop, value, at, sel, groups, tokens)
        else:
            _add_decl(prop, value, at, sel, groups, tokens)


def _collect_conditions(
    prop: str, cmap: dict[str, Any], at: tuple[str, ...], sel: str, groups: Groups, tokens: dict[TokenRef, None]
) -> None:
    # Plaited's condition map: `color: { $default: a, ':hover': b, '@media (...)': c }`.
    for cond, value in cmap.items():
        at2, sel2 = (at, sel) if cond == "$default" else _nest(cond, at, sel)
        if isinstance(value, dict):
            _collect_conditions(prop, value, at2, sel2, groups, tokens)
        else:
            _add_decl(prop, value, at2, sel2, groups, tokens)


def _add_decl(
    prop: str, value: Any, at: tuple[str, ...], sel: str, groups: Groups, tokens: dict[TokenRef, None]
) -> None:
    text = _css_value(value, tokens)
    if text is not None:
        groups.setdefault((at, sel), []).append(f"{kebab_case(prop)}:{text};")


def _render_groups(groups: Groups) -> str:
    rules: list[str] = []
    for (at, sel), decls in groups.items():
        rule = f"{sel}{{{''.join(decls)}}}"
        for cond in reversed(at):
            rule = f"{cond}{{{rule}}}"
        rules.append(rule)
    return "".join(rules)


def _class_base(key: str) -> str:
    return "".join(c if (c.isalnum() or c in "-_") else "_" for c in key) or "_"


def token_sheet(token: TokenRef) -> str:
    return f":root{{{token.var_name}:{to_string(token.value)};}}"


def style_entry(key: str, decls: Any) -> StyleEntry:
    if not isinstance(decls, dict):
        raise JsThrow(f"createStyles: entry {key!r} must be an object")
    groups: Groups = {}
    tokens: dict[TokenRef, None] = {}
    _collect(decls, (), _PH, groups, tokens)
    body = _render_groups(groups)
    digest = hashlib.sha256(f"{key}\x00{body}".encode()).hexdigest()[:8]
    cls = f"{_class_base(key)}_{digest}"
    css = body.replace(_PH, "." + cls)
    return StyleEntry((cls,), (css, *(token_sheet(t) for t in tokens)))


def create_styles(site: CallSite, args: list[Any]) -> dict[str, StyleEntry]:
    spec = _arg(args, 0)
    if not isinstance(spec, dict):
        raise JsThrow("createStyles expects an object")
    return {key: style_entry(key, value) for key, value in spec.items()}


def _token_group(name: str, prefix: str, spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in spec.items():
        path = f"{prefix}-{key}" if prefix else key
        if isinstance(value, dict) and "$value" in value:
            out[key] = TokenRef(name, path, value["$value"])
        elif isinstance(value, dict):
            out[key] = _token_group(name, path, value)
        else:
            raise JsThrow(f"createTokens: token {path!r} needs a {{ $value }} object")
    return out


def create_tokens(site: CallSite, args: list[Any]) -> dict[str, Any]:
    name, spec = _arg(args, 0), _arg(args, 1)
    if not isinstance(name, str) or not isinstance(spec, dict):
        raise JsThrow("createTokens expects (name: string, tokens: object)")
    return _token_group(name, "", spec)


def join_styles(site: CallSite, args: list[Any]) -> StyleEntry:
    classes: dict[str, None] = {}
    sheets: dict[str, None] = {}
    _join_into(args, classes, sheets)
    return StyleEntry(tuple(classes), tuple(sheets))


def _join_into(args: list[Any], classes: dict[str, None], sheets: dict[str, None]) -> None:
    for arg in args:
        if not truthy(arg):
            continue
        if isinstance(arg, StyleEntry):
            classes.update(dict.fromkeys(arg.class_names))
            sheets.update(dict.fromkeys(arg.stylesheets))
        elif isinstance(arg, str):
            classes.update(dict.fromkeys(arg.split()))
        elif isinstance(arg, list):
            _join_into(arg, classes, sheets)
        elif isinstance(arg, dict) and ("className" in arg or "stylesheet" in arg):
            _join_into([arg.get("className")], classes, sheets)
            sheets.update(dict.fromkeys(_as_list(arg.get("stylesheet"))))
        else:
            raise JsThrow(f"joinStyles: unsupported argument {to_string(arg)!r}")


def _as_list(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, (list, tuple)):
        return [x for x in v if isinstance(x, str)]
    return []


def story(site: CallSite, args: list[Any]) -> StoryConfig:
    config = _arg(args, 0)
    if not isinstance(config, dict):
        raise JsThrow("story() expects a config object")
    return StoryConfig(config)  # a copy: a flag set on it never reaches the caller's object


PLAITED: dict[str, Any] = {
    "createStyles": Builtin("createStyles", create_styles),
    "createTokens": Builtin("createTokens", create_tokens),
    "joinStyles": Builtin("joinStyles", join_styles),
}


class StoryFunction(Builtin):
    """Plaited's `story`, with its `story.only(...)` and `story.skip(...)` variants (the flag is kept)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("story", story)

    def member(self, key: str) -> Any:
        if key not in ("only", "skip"):
            return UNDEFINED

        def flagged(site: CallSite, args: list[Any]) -> StoryConfig:
            config = story(site, args)
            config[key] = True
            return config

        return Builtin(f"story.{key}", flagged)


PLAITED_TESTING: dict[str, Any] = {"story": StoryFunction()}
PACKAGES: dict[str, dict[str, Any]] = {"plaited": PLAITED, "plaited/testing": PLAITED_TESTING}


# ------------------------------------------------------------------- globals


def _math_extreme(pick: Callable[[float, float], float], empty: float) -> Callable[[CallSite, list[Any]], float]:
    def fn(site: CallSite, args: list[Any]) -> float:
        site.charge(len(args))
        result = empty
        for a in args:
            x = to_number(a)
            if x != x:
                return math.nan
            result = pick(result, x)
        return result

    return fn


def _math1(op: Callable[[float], float]) -> Callable[[CallSite, list[Any]], float]:
    def fn(site: CallSite, args: list[Any]) -> float:
        x = to_number(_arg(args, 0))
        if x != x or x in (math.inf, -math.inf):
            return x
        return float(op(x))

    return fn


def _string(site: CallSite, args: list[Any]) -> str:
    if args and isinstance(args[0], list):
        site.charge(1 + len(args[0]))
    return to_string(args[0]) if args else ""


def _object_items(site: CallSite, args: list[Any]) -> list[tuple[str, Any]]:
    obj = _arg(args, 0)
    if isinstance(obj, (dict, list)):
        site.charge(1 + len(obj))
    if isinstance(obj, dict):
        return list(obj.items())
    if isinstance(obj, list):
        return [(str(i), v) for i, v in enumerate(obj)]
    if is_nullish(obj):
        raise JsThrow("cannot convert undefined or null to object")
    return []


def _array_of_length(site: CallSite, length: Any) -> list[Any]:
    n = to_number(length)
    if n != n or n < 0 or not float(n).is_integer():
        raise JsThrow("invalid array length")
    if n > MAX_ARRAY:
        raise JsThrow(f"array too long ({int(n)} > {MAX_ARRAY} elements)")
    site.charge(1 + int(n))
    return [UNDEFINED] * int(n)


def _array_call(site: CallSite, args: list[Any]) -> list[Any]:
    """`Array(n)` (n empty slots, read as undefined) or `Array(a, b, ...)`."""
    if len(args) == 1 and is_number(args[0]):
        return _array_of_length(site, args[0])
    return list(args)


def _array_from(site: CallSite, args: list[Any]) -> list[Any]:
    """`Array.from(arrayOrStringOrArrayLike, mapFn?)`."""
    source = _arg(args, 0)
    if isinstance(source, list):
        site.charge(1 + len(source))
        items = list(source)
    elif isinstance(source, str):
        items = list(check_string(source)) if len(source) <= MAX_ARRAY else check_array(list(source[: MAX_ARRAY + 1]))
        site.charge(1 + len(items))
    elif isinstance(source, dict):  # an array-like `{ length: n }`
        items = _array_of_length(site, source.get("length", 0))
        for i in range(len(items)):
            items[i] = source.get(str(i), UNDEFINED)
    elif is_nullish(source):
        raise JsThrow("Array.from: undefined or null is not iterable")
    else:
        items = []
    if len(args) > 1 and not is_nullish(args[1]):
        fn = _callback(args[1:], "Array.from")
        return [site.call(fn, [v, i]) for i, v in enumerate(items)]
    return items


class ArrayGlobal(Builtin):
    """`Array`: callable (`Array(9)`), with `Array.isArray`, `Array.from` and `Array.of`."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("Array", _array_call)

    def member(self, key: str) -> Any:
        if key == "isArray":
            return Builtin("isArray", lambda s, a: isinstance(_arg(a, 0), list))
        if key == "from":
            return Builtin("from", _array_from)
        if key == "of":
            return Builtin("of", lambda s, a: list(a))
        return UNDEFINED


GLOBALS: dict[str, Any] = {
    "String": Builtin("String", _string),
    "Number": Builtin("Number", lambda s, a: to_number(a[0]) if a else 0.0),
    "Boolean": Builtin("Boolean", lambda s, a: truthy(_arg(a, 0))),
    "Math": ReadOnlyObject(
        {
            "min": Builtin("min", _math_extreme(min, math.inf)),
            "max": Builtin("max", _math_extreme(max, -math.inf)),
            "round": Builtin("round", _math1(js_round)),
            "floor": Builtin("floor", _math1(math.floor)),
            "ceil": Builtin("ceil", _math1(math.ceil)),
            "abs": Builtin("abs", _math1(abs)),
        }
    ),
    "Object": ReadOnlyObject(
        {
            "keys": Builtin("keys", lambda s, a: [k for k, _ in _object_items(s, a)]),
            "values": Builtin("values", lambda s, a: [v for _, v in _object_items(s, a)]),
            "entries": Builtin("entries", lambda s, a: [[k, v] for k, v in _object_items(s, a)]),
        }
    ),
    "Array": ArrayGlobal(),
    "NaN": math.nan,
    "Infinity": math.inf,
}


# ------------------------------------------------------------------- methods


def _callback(args: list[Any], name: str) -> Any:
    fn = _arg(args, 0)
    if not (isinstance(fn, Builtin) or callable(getattr(fn, "is_js_function", None))):
        raise JsThrow(f"{name}: callback is not a function")
    return fn


def _index(v: Any, length: int, default: int) -> int:
    if v is UNDEFINED:
        return default
    x = to_number(v)
    if x != x:
        return 0
    i = int(max(min(x, length), -length - 1))
    return max(length + i, 0) if i < 0 else min(i, length)


def _list_method(arr: list[Any], name: str) -> Builtin | None:
    impl = _LIST_METHODS.get(name)
    if impl is None:
        return None

    def run(site: CallSite, args: list[Any]) -> Any:
        # Every array method walks (or copies) the array once: charged before the walk starts.
        site.charge(1 + len(arr))
        return impl(site, arr, args)

    return Builtin(name, run)


def _map(site: CallSite, arr: list[Any], args: list[Any]) -> list[Any]:
    fn = _callback(args, "map")
    return [site.call(fn, [v, i, arr]) for i, v in enumerate(list(arr))]


def _filter(site: CallSite, arr: list[Any], args: list[Any]) -> list[Any]:
    fn = _callback(args, "filter")
    return [v for i, v in enumerate(list(arr)) if truthy(site.call(fn, [v, i, arr]))]


def _find_index(site: CallSite, arr: list[Any], args: list[Any]) -> int:
    fn = _callback(args, "find")
    for i, v in enumerate(list(arr)):
        if truthy(site.call(fn, [v, i, arr])):
            return i
    return -1


def _find(site: CallSite, arr: list[Any], args: list[Any]) -> Any:
    i = _find_index(site, arr, args)
    return arr[i] if i >= 0 else UNDEFINED


def _some(site: CallSite, arr: list[Any], args: list[Any]) -> bool:
    return _find_index(site, arr, args) >= 0


def _every(site: CallSite, arr: list[Any], args: list[Any]) -> bool:
    fn = _callback(args, "every")
    return all(truthy(site.call(fn, [v, i, arr])) for i, v in enumerate(list(arr)))


def _reduce(site: CallSite, arr: list[Any], args: list[Any]) -> Any:
    fn = _callback(args, "reduce")
    items = list(enumerate(arr))
    if len(args) > 1:
        acc = args[1]
    elif items:
        acc = items.pop(0)[1]
    else:
        raise JsThrow("reduce of empty array with no initial value")
    for i, v in items:
        acc = site.call(fn, [acc, v, i, arr])
    return acc


def _join(site: CallSite, arr: list[Any], args: list[Any]) -> str:
    sep = _arg(args, 0)
    sep = "," if sep is UNDEFINED else to_string(sep)
    parts: list[str] = []
    size = 0
    for v in arr:  # checked while built: a join of many long strings never materialises
        text = "" if is_nullish(v) else to_string(v)
        size += len(text) + len(sep)
        if size > MAX_STRING + len(sep):
            raise JsThrow(f"string too long (more than {MAX_STRING} characters)")
        parts.append(text)
    site.charge(string_work(size))
    return check_string(sep.join(parts))


def _includes(site: CallSite, arr: list[Any], args: list[Any]) -> bool:
    target = _arg(args, 0)
    return any(same_value_zero(v, target) for v in arr)


def _index_of(site: CallSite, arr: list[Any], args: list[Any]) -> int:
    target = _arg(args, 0)
    return next((i for i, v in enumerate(arr) if strict_equals(v, target)), -1)


def _slice(site: CallSite, arr: list[Any], args: list[Any]) -> list[Any]:
    n = len(arr)
    return arr[_index(_arg(args, 0), n, 0) : _index(_arg(args, 1), n, n)]


def _concat(site: CallSite, arr: list[Any], args: list[Any]) -> list[Any]:
    out = list(arr)
    for a in args:
        site.charge(1 + len(a) if isinstance(a, list) else 1)
        out.extend(a) if isinstance(a, list) else out.append(a)
        check_array(out)
    return out


def _push(site: CallSite, arr: list[Any], args: list[Any]) -> int:
    if len(arr) + len(args) > MAX_ARRAY:
        raise JsThrow(f"array too long ({len(arr) + len(args)} > {MAX_ARRAY} elements)")
    arr.extend(args)
    return len(arr)


def _flat(site: CallSite, arr: list[Any], args: list[Any]) -> list[Any]:
    out: list[Any] = []
    for a in arr:
        if isinstance(a, list):
            site.charge(len(a))
            out.extend(a)
        else:
            out.append(a)
        check_array(out)
    return out


def _flat_map(site: CallSite, arr: list[Any], args: list[Any]) -> list[Any]:
    return _flat(site, _map(site, arr, args), [])


_LIST_METHODS: dict[str, Callable[[CallSite, list[Any], list[Any]], Any]] = {
    # Iterators are read whole here: `keys()` is the list of indices, `entries()` of [i, v] pairs.
    "keys": lambda site, arr, args: list(range(len(arr))),
    "values": lambda site, arr, args: list(arr),
    "entries": lambda site, arr, args: [[i, v] for i, v in enumerate(arr)],
    "map": _map,
    "filter": _filter,
    "find": _find,
    "findIndex": _find_index,
    "some": _some,
    "every": _every,
    "reduce": _reduce,
    "join": _join,
    "includes": _includes,
    "indexOf": _index_of,
    "slice": _slice,
    "concat": _concat,
    "flat": _flat,
    "flatMap": _flat_map,
    "push": _push,
}


def _str_split(s: str, args: list[Any]) -> list[str]:
    sep = _arg(args, 0)
    if sep is UNDEFINED:
        return [s]
    sep = to_string(sep)
    pieces = len(s) if sep == "" else s.count(sep) + 1
    if pieces > MAX_ARRAY:
        raise JsThrow(f"array too long ({pieces} > {MAX_ARRAY} elements)")
    return list(s) if sep == "" else s.split(sep)


def _str_replace(s: str, args: list[Any]) -> str:
    old, new = _arg(args, 0), _arg(args, 1)
    if not isinstance(old, str) or not isinstance(new, str):
        raise JsThrow("replace: only string patterns and replacements are supported")
    return s.replace(old, new, 1)


def _char_at(s: str, pos: Any) -> str:
    x = to_number(pos)
    i = 0 if x != x else int(x) if abs(x) < len(s) + 1 else len(s)
    return s[i : i + 1] if i >= 0 else ""


_STR_METHODS: dict[str, Callable[[str, list[Any]], Any]] = {
    "includes": lambda s, a: to_string(_arg(a, 0)) in s,
    "startsWith": lambda s, a: s.startswith(to_string(_arg(a, 0))),
    "endsWith": lambda s, a: s.endswith(to_string(_arg(a, 0))),
    "indexOf": lambda s, a: s.find(to_string(_arg(a, 0))),
    "toUpperCase": lambda s, a: s.upper(),
    "toLowerCase": lambda s, a: s.lower(),
    "trim": lambda s, a: s.strip(),
    "split": _str_split,
    "slice": lambda s, a: s[_index(_arg(a, 0), len(s), 0) : _index(_arg(a, 1), len(s), len(s))],
    "charAt": lambda s, a: _char_at(s, _arg(a, 0)),
    "replace": _str_replace,
}


def _str_method(s: str, name: str) -> Builtin | None:
    impl = _STR_METHODS.get(name)
    if impl is None:
        return None

    def run(site: CallSite, args: list[Any]) -> Any:
        # Each string method scans the string (and its argument) at most a few times.
        site.charge(string_work(len(s)) + sum(string_work(len(a)) for a in args if isinstance(a, str)))
        result = impl(s, args)
        if isinstance(result, list):
            site.charge(len(result))  # `split` builds one string per piece
        return result

    return Builtin(name, run)


def _to_fixed(x: float, args: list[Any]) -> str:
    digits = int(to_number(_arg(args, 0)) or 0)
    if not 0 <= digits <= 100:
        raise JsThrow("toFixed() digits argument must be between 0 and 100")
    if x != x or abs(x) >= 1e21 or x in (math.inf, -math.inf):
        return number_to_string(x)
    quantum = Decimal(1).scaleb(-digits)
    return str(Decimal(x).quantize(quantum, rounding=ROUND_HALF_UP))


def method_of(obj: Any, name: str) -> Any:
    """A bound method of a list, string or number, or UNDEFINED."""
    found: Builtin | None = None
    if isinstance(obj, list):
        found = _list_method(obj, name)
    elif isinstance(obj, str):
        found = _str_method(obj, name)
    elif is_number(obj) and name == "toFixed":
        found = Builtin(name, lambda site, args: _to_fixed(float(obj), args))
    return UNDEFINED if found is None else found


__all__ = [
    "GLOBALS",
    "PACKAGES",
    "MAX_ARRAY",
    "MAX_STRING",
    "check_array",
    "check_string",
    "method_of",
    "style_entry",
    "token_sheet",
]
