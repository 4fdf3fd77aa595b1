"""JS values as Python objects, and the JS conversions the evaluator needs.

Mapping: object -> dict (insertion ordered, string keys), array -> list,
string -> str, number -> float (int where it came from a length or an index),
boolean -> bool, null -> None, undefined -> `UNDEFINED`. JSX evaluates to `Html`
(already-rendered markup, never re-escaped).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class _Undefined:
    __slots__ = ()
    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED = _Undefined()

# The longest string a render may build (characters); guards against exponential string growth.
MAX_STRING_CHARS = 1 << 22


class JsThrow(Exception):
    """A JS-level error raised without a location; the evaluator adds one."""


class Html:
    """Rendered markup: the value of a JSX expression."""

    __slots__ = ("html", "stylesheets")

    def __init__(self, html: str, stylesheets: tuple[str, ...] = ()) -> None:
        self.html = html
        # The CSS this markup's classes need, so a shadow root can carry its own <style>.
        self.stylesheets = stylesheets

    def __repr__(self) -> str:
        return f"Html({self.html!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Html) and other.html == self.html

    def __hash__(self) -> int:
        return hash(self.html)


@dataclass(frozen=True)
class StyleEntry:
    """One `createStyles` key (or a `joinStyles` result): class names plus CSS."""

    class_names: tuple[str, ...]
    stylesheets: tuple[str, ...]


@dataclass(frozen=True)
class TokenRef:
    """One `createTokens` token; used in styles it renders `var(--name-key)`."""

    name: str
    key: str
    value: Any

    @property
    def var_name(self) -> str:
        return f"--{kebab_case(self.name)}-{kebab_case(self.key)}"

    @property
    def css(self) -> str:
        return f"var({self.var_name})"


class StoryConfig(dict):  # type: ignore[type-arg]
    """The object passed to `story(...)`; the subclass is the marker."""


class ReadOnlyObject(dict):  # type: ignore[type-arg]
    """A host object shared by every render (`Math`, `Object`, a module namespace).

    Read like any object; an assignment to one of its properties is refused, so that one story
    cannot change what the next render sees.
    """


class Builtin:
    """A host function. `fn(site, args)`; `site.call(f, args)` calls back into JS."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn: Callable[[Any, list[Any]], Any]) -> None:
        self.name = name
        self.fn = fn

    def member(self, key: str) -> Any:
        """A property of the function object (`Element.tag`, `keyframes.id`); UNDEFINED by default."""
        return UNDEFINED

    def __repr__(self) -> str:
        return f"<builtin {self.name}>"


@functools.lru_cache(maxsize=4096)
def kebab_case(name: str) -> str:
    """`backgroundColor` -> `background-color`; custom properties pass through."""
    if name.startswith("--"):
        return name
    out: list[str] = []
    for ch in name:
        if ch.isupper():
            out.append("-")
            out.append(ch.lower())
        else:
            out.append(ch)
    text = "".join(out)
    # Vendor prefixes: `WebkitX` -> `-webkit-x`; `msX` -> `-ms-x` (React's rule).
    if text.startswith("ms-"):
        text = "-" + text
    return text


def is_number(v: Any) -> bool:
    return (type(v) is float) or (type(v) is int)


def is_nullish(v: Any) -> bool:
    return v is None or v is UNDEFINED


def truthy(v: Any) -> bool:
    if v is True:
        return True
    if v is False or v is None or v is UNDEFINED:
        return False
    t = type(v)
    if t is str:
        return v != ""
    if t is float:
        return v != 0.0 and v == v
    if t is int:
        return v != 0
    return True


def typeof(v: Any) -> str:
    if v is UNDEFINED:
        return "undefined"
    if v is True or v is False:
        return "boolean"
    if is_number(v):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, Builtin) or callable(getattr(v, "is_js_function", None)):
        return "function"
    return "object"


def number_to_string(x: float | int) -> str:
    """ECMAScript Number::toString (1.0 -> "1", 1e21 -> "1e+21", 1e-7 -> "1e-7")."""
    if type(x) is int:
        if abs(x) < 2**53:
            return str(x)
        x = float(x)
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 2**53:  # exact; larger values need shortest digits
        return str(int(x))
    sign = "-" if x < 0 else ""
    return sign + _positive_to_string(abs(x))


def _positive_to_string(x: float) -> str:
    mant, _, exp_text = repr(x).partition("e")
    int_part, _, frac_part = mant.partition(".")
    raw = int_part + frac_part
    stripped = raw.lstrip("0")
    n = len(int_part) + (int(exp_text) if exp_text else 0) - (len(raw) - len(stripped))
    digits = stripped.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    exp = ("+" if e >= 0 else "-") + str(abs(e))
    return (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + exp


def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    if v is None:
        return "null"
    if v is UNDEFINED:
        return "undefined"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is float or t is int:
        return number_to_string(v)
    if t is list:
        return _list_to_string(v)
    if t is TokenRef:
        return v.css
    if isinstance(v, str):
        return str(v)
    if isinstance(v, Builtin):
        return f"function {v.name}() {{ [native code] }}"
    if typeof(v) == "function":
        return "function () { [code] }"
    return "[object Object]"


def _list_to_string(v: list[Any]) -> str:
    # Checked while built: a list holding one long list many times must not be joined first.
    parts: list[str] = []
    size = 0
    for x in v:
        text = "" if is_nullish(x) else to_string(x)
        size += len(text) + 1
        if size > MAX_STRING_CHARS + 1:
            raise JsThrow(f"string too long (more than {MAX_STRING_CHARS} characters)")
        parts.append(text)
    return ",".join(parts)


_NUMERIC_CHARS = frozenset("0123456789.eE+-")


def to_number(v: Any) -> float:
    t = type(v)
    if t is float:
        return v
    if t is int:
        return float(v)
    if v is True:
        return 1.0
    if v is False or v is None:
        return 0.0
    if t is str:
        return _string_to_number(v)
    if t is list:
        return _string_to_number(to_string(v))
    return math.nan


def _string_to_number(s: str) -> float:
    s = s.strip()
    if s == "":
        return 0.0
    if s in ("Infinity", "+Infinity"):
        return math.inf
    if s == "-Infinity":
        return -math.inf
    low = s.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if low.startswith(prefix):
            try:
                return float(int(s[2:], base)) if "_" not in s else math.nan
            except ValueError:
                return math.nan
    if any(c not in _NUMERIC_CHARS for c in s):
        return math.nan
    try:
        return float(s)
    except ValueError:
        return math.nan


def property_key(v: Any) -> str:
    return v if type(v) is str else to_string(v)


def strict_equals(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return a is b
    if (ta is float or ta is int) and (tb is float or tb is int):
        return a == b
    if ta is str and tb is str:
        return a == b
    if ta is Html and tb is Html:
        return a is b
    if ta is TokenRef and tb is TokenRef:
        return a == b
    if ta is StyleEntry and tb is StyleEntry:
        return a == b
    return a is b


def same_value_zero(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b) and a != a and b != b:
        return True
    return strict_equals(a, b)


def loose_equals(a: Any, b: Any) -> bool:
    if is_nullish(a) or is_nullish(b):
        return is_nullish(a) and is_nullish(b)
    if type(a) is bool:
        return loose_equals(to_number(a), b)
    if type(b) is bool:
        return loose_equals(a, to_number(b))
    if is_number(a) and isinstance(b, str):
        return a == to_number(b)
    if isinstance(a, str) and is_number(b):
        return to_number(a) == b
    if isinstance(a, (list, dict)) and (isinstance(b, str) or is_number(b)):
        return loose_equals(to_string(a), b)
    if isinstance(b, (list, dict)) and (isinstance(a, str) or is_number(a)):
        return loose_equals(a, to_string(b))
    return strict_equals(a, b)


def _primitive(v: Any) -> Any:
    if isinstance(v, (list, dict, Html, StyleEntry, TokenRef, Builtin)) or typeof(v) == "function":
        return to_string(v)
    return v


def js_add(a: Any, b: Any) -> Any:
    a, b = _primitive(a), _primitive(b)
    if isinstance(a, str) or isinstance(b, str):
        return to_string(a) + to_string(b)
    return to_number(a) + to_number(b)


def js_less(a: Any, b: Any) -> bool | None:
    """a < b; None means "undefined" (a NaN was involved)."""
    a, b = _primitive(a), _primitive(b)
    if isinstance(a, str) and isinstance(b, str):
        return a < b
    x, y = to_number(a), to_number(b)
    if x != x or y != y:
        return None
    return x < y


def js_divide(a: Any, b: Any) -> float:
    x, y = to_number(a), to_number(b)
    if y == 0:
        if x == 0 or x != x:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def js_remainder(a: Any, b: Any) -> float:
    x, y = to_number(a), to_number(b)
    if y == 0 or x != x or y != y or x in (math.inf, -math.inf):
        return math.nan
    if y in (math.inf, -math.inf):
        return x
    return math.fmod(x, y)


def js_round(x: float) -> float:
    if x != x or x in (math.inf, -math.inf):
        return x
    return float(math.floor(x + 0.5))
