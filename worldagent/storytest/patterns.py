"""Plaited pattern rules: createStyles not inline styles, tokens not hard-coded colours,
semantic elements not div soup.

Rules:

- ``inline-style``: an element of the rendered HTML carries a ``style`` attribute.
- ``hardcoded-color``: a colour literal (``#rgb``, ``#rgba``, ``#rrggbb``, ``#rrggbbaa``,
  ``rgb()``/``rgba()``/``hsl()``/``hsla()``/``hwb()``/``lab()``/``lch()``/``oklab()``/``oklch()``
  or a CSS named colour) in a source file's string literals (``*.tokens.ts`` files are exempt:
  that is where colours belong), or in a colour-bearing HTML attribute (``style``, ``fill``,
  ``stroke``, ``color``, ``bgcolor``) of the rendered HTML. ``transparent``, ``currentColor``,
  ``inherit`` and ``var(--token)`` are fine.
- ``div-soup``: a ``div``/``span`` carrying an interactive role or a click handler where a
  native element exists (``<div role="button">`` → ``<button>``), or a rendered story that has
  no semantic element at all.

Source scanning is lexical: a small tokenizer finds string and template literals (skipping
comments) and the property or attribute name they are the value of. Hex and functional
colours count in any literal; a named colour counts only where it is a CSS value: in a
``*.css.ts``/``*.css`` file, or as the value of a colour-bearing property (``color``,
``backgroundColor``, ``border``...) or attribute (``fill``, ``stroke``...) in a template.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from worldagent.storytest.a11y import Violation, has_click_handler, target_of
from worldagent.storytest.dom import Element, iter_elements, parse_html

__all__ = [
    "CSS_NAMED_COLORS",
    "PATTERN_RULES",
    "check_patterns",
    "find_hardcoded_colors",
    "find_inline_styles",
    "scan_colors",
]

PATTERN_RULES: tuple[str, ...] = ("inline-style", "hardcoded-color", "div-soup")

CSS_NAMED_COLORS: frozenset[str] = frozenset(
    [
        "aliceblue",
        "antiquewhite",
        "aqua",
        "aquamarine",
        "azure",
        "beige",
        "bisque",
        "black",
        "blanchedalmond",
        "blue",
        "blueviolet",
        "brown",
        "burlywood",
        "cadetblue",
        "chartreuse",
        "chocolate",
        "coral",
        "cornflowerblue",
        "cornsilk",
        "crimson",
        "cyan",
        "darkblue",
        "darkcyan",
        "darkgoldenrod",
        "darkgray",
        "darkgreen",
        "darkgrey",
        "darkkhaki",
        "darkmagenta",
        "darkolivegreen",
        "darkorange",
        "darkorchid",
        "darkred",
        "darksalmon",
        "darkseagreen",
        "darkslateblue",
        "darkslategray",
        "darkslategrey",
        "darkturquoise",
        "darkviolet",
        "deeppink",
        "deepskyblue",
        "dimgray",
        "dimgrey",
        "dodgerblue",
        "firebrick",
        "floralwhite",
        "forestgreen",
        "fuchsia",
        "gainsboro",
        "ghostwhite",
        "gold",
        "goldenrod",
        "gray",
        "green",
        "greenyellow",
        "grey",
        "honeydew",
        "hotpink",
        "indianred",
        "indigo",
        "ivory",
        "khaki",
        "lavender",
        "lavenderblush",
        "lawngreen",
        "lemonchiffon",
        "lightblue",
        "lightcoral",
        "lightcyan",
        "lightgoldenrodyellow",
        "lightgray",
        "lightgreen",
        "lightgrey",
        "lightpink",
        "lightsalmon",
        "lightseagreen",
        "lightskyblue",
        "lightslategray",
        "lightslategrey",
        "lightsteelblue",
        "lightyellow",
        "lime",
        "limegreen",
        "linen",
        "magenta",
        "maroon",
        "mediumaquamarine",
        "mediumblue",
        "mediumorchid",
        "mediumpurple",
        "mediumseagreen",
        "mediumslateblue",
        "mediumspringgreen",
        "mediumturquoise",
        "mediumvioletred",
        "midnightblue",
        "mintcream",
        "mistyrose",
        "moccasin",
        "navajowhite",
        "navy",
        "oldlace",
        "olive",
        "olivedrab",
        "orange",
        "orangered",
        "orchid",
        "palegoldenrod",
        "palegreen",
        "paleturquoise",
        "palevioletred",
        "papayawhip",
        "peachpuff",
        "peru",
        "pink",
        "plum",
        "powderblue",
        "purple",
        "rebeccapurple",
        "red",
        "rosybrown",
        "royalblue",
        "saddlebrown",
        "salmon",
        "sandybrown",
        "seagreen",
        "seashell",
        "sienna",
        "silver",
        "skyblue",
        "slateblue",
        "slategray",
        "slategrey",
        "snow",
        "springgreen",
        "steelblue",
        "tan",
        "teal",
        "thistle",
        "tomato",
        "turquoise",
        "violet",
        "wheat",
        "white",
        "whitesmoke",
        "yellow",
        "yellowgreen",
    ]
)

_HEX = re.compile(r"(?<![\w#&$])#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})(?![\w-])")
_FUNC = re.compile(r"(?<![\w-])(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch)\(\s*[^()]*\)", re.I)
_NAMED = re.compile(
    r"(?<![\w#.$-])(" + "|".join(sorted(CSS_NAMED_COLORS, key=len, reverse=True)) + r")(?![\w-])",
    re.I,
)
_COLOR_KEY = re.compile(
    r"colou?r|background|border|outline|fill|stroke|shadow|caret|accent|decoration|"
    r"column-?rule|stop|flood|lighting|^--",
    re.I,
)
_NON_COLOR_KEYS = frozenset(
    {"href", "src", "id", "for", "htmlfor", "to", "action", "target", "p-target", "name", "key", "selector"}
)
_COLOR_ATTRS = ("style", "fill", "stroke", "color", "bgcolor", "stop-color", "flood-color")
_IDENT_CHAR = re.compile(r"[\w$-]")


# ---------------------------------------------------------------------------------------------
# Lexical scanning of TS/TSX sources
# ---------------------------------------------------------------------------------------------


def _key_before(src: str, pos: int) -> str | None:
    """The property (``key: 'x'``) or attribute (``attr="x"``) name a literal at ``pos`` is the
    value of, lower-cased; ``None`` when it is not in such a position."""
    i = pos - 1
    while i >= 0 and src[i] in " \t\r\n":
        i -= 1
    if i < 0:
        return None
    c = src[i]
    if c == "=":
        if i > 0 and src[i - 1] in "=!<>":
            return None
    elif c == "{" and i > 0:  # attr={'x'}
        j = i - 1
        while j >= 0 and src[j] in " \t\r\n":
            j -= 1
        if j < 0 or src[j] != "=":
            return None
        i = j
    elif c != ":":
        return None
    i -= 1
    while i >= 0 and src[i] in " \t\r\n":
        i -= 1
    if i < 0:
        return None
    if src[i] in "'\"":  # quoted key
        q = src[i]
        j = src.rfind(q, 0, i)
        return src[j + 1 : i].lower() if j >= 0 else None
    end = i + 1
    while i >= 0 and _IDENT_CHAR.match(src[i]):
        i -= 1
    key = src[i + 1 : end]
    return key.lower() if key else None


def _string_literals(src: str) -> Iterator[tuple[str, int, str | None]]:
    """Yield ``(content, offset, key)`` for every string literal and every static part of a
    template literal in TS/TSX source. Comments are skipped; an apostrophe directly after a
    word character (JSX text such as ``Don't``) does not start a string."""
    n = len(src)
    i = 0
    stack: list[str] = []  # "{" for braces in code, "`" for a template's ${ ... }
    in_template = False
    tpl_start = 0
    tpl_key: str | None = None
    while i < n:
        if in_template:
            c = src[i]
            if c == "\\":
                i += 2
                continue
            if c == "`":
                yield src[tpl_start:i], tpl_start, tpl_key
                in_template = False
                i += 1
                continue
            if c == "$" and i + 1 < n and src[i + 1] == "{":
                yield src[tpl_start:i], tpl_start, tpl_key
                stack.append("`")
                in_template = False
                i += 2
                continue
            i += 1
            continue
        c = src[i]
        if c == "/" and i + 1 < n:
            nxt = src[i + 1]
            if nxt == "/":
                j = src.find("\n", i)
                i = n if j < 0 else j
                continue
            if nxt == "*":
                j = src.find("*/", i + 2)
                i = n if j < 0 else j + 2
                continue
        if c == "'" or c == '"':
            if c == "'" and i > 0 and (src[i - 1].isalnum() or src[i - 1] == "_"):
                i += 1
                continue
            j = i + 1
            while j < n:
                d = src[j]
                if d == "\\":
                    j += 2
                    continue
                if d == c or d == "\n":
                    break
                j += 1
            if j < n and src[j] == c:
                yield src[i + 1 : j], i + 1, _key_before(src, i)
                i = j + 1
            else:
                i = j  # unterminated on this line: not a literal
            continue
        if c == "`":
            in_template = True
            tpl_key = _key_before(src, i)
            tpl_start = i + 1
            i += 1
            continue
        if c == "{":
            stack.append("{")
        elif c == "}" and stack and stack.pop() == "`":
            in_template = True
            tpl_start = i + 1
        i += 1


def _mode_for(path: str | None) -> str:
    if path is None:
        return "template"
    p = path.lower()
    if p.endswith(".tokens.ts") or p.endswith(".tokens.tsx"):
        return "tokens"
    if p.endswith(".css.ts") or p.endswith(".css.tsx"):
        return "styles"
    if p.endswith(".css"):
        return "css"
    return "template"


def _colors_in_value(value: str, named: bool) -> Iterator[tuple[str, int]]:
    for m in _HEX.finditer(value):
        yield m.group(0), m.start()
    for m in _FUNC.finditer(value):
        if "var(" not in m.group(0).lower():
            yield m.group(0), m.start()
    if named:
        for m in _NAMED.finditer(value):
            yield m.group(0), m.start()


def _line_of(src: str, offset: int) -> int:
    return src.count("\n", 0, offset) + 1


_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_CSS_DECL = re.compile(r"([\w-]+)\s*:\s*([^;{}]+)")


def scan_colors(source: str, path: str | None = None) -> list[tuple[str, int]]:
    """Hard-coded colours in ``source`` as ``(literal, line)`` pairs, in source order.

    ``path`` selects the mode: ``*.tokens.ts`` → nothing (exempt); ``*.css.ts`` → every string
    literal is a CSS value; ``*.css`` → declaration values; anything else (``.tsx``/``.ts``
    templates, or no path) → hex/functional colours in any literal, named colours only as
    values of colour-bearing properties/attributes.
    """
    mode = _mode_for(path)
    if mode == "tokens":
        return []
    found: list[tuple[int, str]] = []
    if mode == "css":
        text = _CSS_COMMENT.sub(lambda m: " " * len(m.group(0)), source)
        for m in _CSS_DECL.finditer(text):
            for color, off in _colors_in_value(m.group(2), True):
                found.append((m.start(2) + off, color))
    else:
        for content, offset, key in _string_literals(source):
            if not content.strip():
                continue
            if key is not None and key in _NON_COLOR_KEYS:
                continue
            if mode == "styles":
                named = not content.startswith((".", "/")) and not content.endswith((".ts", ".tsx"))
            else:
                named = key is not None and bool(_COLOR_KEY.search(key))
            for color, off in _colors_in_value(content, named):
                found.append((offset + off, color))
    found.sort()
    return [(color, _line_of(source, off)) for off, color in found]


def find_hardcoded_colors(source: str, path: str | None = None) -> list[str]:
    """The colour literals hard-coded in ``source`` (see ``scan_colors`` for ``path``)."""
    return [color for color, _line in scan_colors(source, path)]


_STYLE_ATTR = re.compile(r"(?<![\w.$-])style\s*=\s*(?=[{\"'])")
_DECL_KEYWORD = re.compile(r"(?:const|let|var)\s*$")


def _inside_tag(src: str, pos: int) -> bool:
    """Whether ``pos`` lies inside a JSX/HTML start tag (after ``<name`` and before ``>``)."""
    depth = 0
    i = pos - 1
    while i >= 0:
        c = src[i]
        if c == "}":
            depth += 1
        elif c == "{":
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0:
            if c == ">" and not (i > 0 and src[i - 1] == "="):
                return False
            if c == "<" and i + 1 < len(src) and (src[i + 1].isalpha()):
                return True
            if c == ";":
                return False
        i -= 1
    return False


def _balanced(src: str, start: int) -> int:
    """End offset (exclusive) of the brace group or quoted string starting at ``start``."""
    c = src[start]
    if c in "\"'":
        j = src.find(c, start + 1)
        return len(src) if j < 0 else j + 1
    depth = 0
    i = start
    quote = ""
    while i < len(src):
        d = src[i]
        if quote:
            if d == "\\":
                i += 2
                continue
            if d == quote:
                quote = ""
        elif d in "\"'`":
            quote = d
        elif d == "{":
            depth += 1
        elif d == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(src)


def _tag_states(src: str, positions: list[int]) -> list[bool]:
    """``_inside_tag(src, pos)`` for every position in ascending ``positions``, in one forward pass.

    ``_inside_tag`` scans backwards from each position (quadratic over many positions); this keeps,
    per brace level, the verdict of the nearest deciding character instead: ``<letter`` opens a tag
    (True); ``>`` (not ``=>``), ``;`` or the level's own ``{`` end it (False); a closed ``{...}``
    block leaves its level's verdict as it was; a ``}`` with no open ``{`` hides everything before it.
    """
    verdicts: list[bool] = []
    outer: list[bool] = []  # the verdicts of the enclosing brace levels
    inside = False
    i = 0
    for pos in positions:
        while i < pos:
            c = src[i]
            if c == "{":
                outer.append(inside)
                inside = False
            elif c == "}":
                inside = outer.pop() if outer else False
            elif c == "<":
                if i + 1 < len(src) and src[i + 1].isalpha():
                    inside = True
            elif c == ";" or (c == ">" and not (i > 0 and src[i - 1] == "=")):
                inside = False
            i += 1
        verdicts.append(inside)
    return verdicts


def find_inline_styles(source: str, limit: int | None = None) -> list[str]:
    """``style=...`` attributes in JSX/HTML ``source`` (e.g. ``style={{ color: 'red' }}``),
    as they appear in the text. ``const style = {...}`` and ``el.style = ...`` do not count.

    Linear in ``source`` (plus, per attribute found, the length of its value); ``limit`` stops
    after that many attributes (a caller that only blocks needs a few examples).
    """
    out: list[str] = []
    matches = [
        m for m in _STYLE_ATTR.finditer(source) if not _DECL_KEYWORD.search(source, max(0, m.start() - 12), m.start())
    ]
    for m, inside in zip(matches, _tag_states(source, [m.start() for m in matches]), strict=True):
        if not inside:
            continue
        out.append(source[m.start() : _balanced(source, m.end())])
        if limit is not None and len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------------------------------------
# check_patterns
# ---------------------------------------------------------------------------------------------

# Interactive roles with a native element that should be used instead.
_NATIVE_FOR_ROLE: dict[str, str] = {
    "button": "<button>",
    "link": "<a href>",
    "checkbox": '<input type="checkbox">',
    "radio": '<input type="radio">',
    "textbox": "<input> or <textarea>",
    "searchbox": '<input type="search">',
    "slider": '<input type="range">',
    "spinbutton": '<input type="number">',
    "combobox": "<select>",
    "listbox": "<select>",
}
DIV_SOUP_MIN_ELEMENTS = 3
_NON_SEMANTIC = frozenset(
    {
        "div",
        "span",
        "b",
        "i",
        "u",
        "s",
        "small",
        "font",
        "center",
        "br",
        "wbr",
        "template",
        "script",
        "style",
        "big",
        "tt",
    }
)


def check_patterns(html: str | Element, sources: Mapping[str, str] | None = None) -> list[Violation]:
    """Pattern violations in the rendered ``html`` and in ``sources`` (relative path → text)."""
    root = html if isinstance(html, Element) else parse_html(html)
    out: list[Violation] = []
    elements = 0
    semantic = False
    for el in iter_elements(root):
        elements += 1
        attrs = el.attrs
        tag = el.tag
        role = (attrs.get("role") or "").strip().lower().split(" ")[0]
        if tag not in _NON_SEMANTIC or role:
            semantic = True
        if "style" in attrs:
            out.append(
                Violation(
                    "inline-style",
                    target_of(el),
                    f'Inline style="{attrs["style"]}": put the declarations in createStyles and spread the class',
                )
            )
        for a in _COLOR_ATTRS:
            v = attrs.get(a)
            if v:
                for color, _off in _colors_in_value(v, True):
                    out.append(
                        Violation(
                            "hardcoded-color",
                            target_of(el),
                            f'Colour {color} is hard-coded in {a}="..."; use a token from createTokens',
                        )
                    )
        if tag in ("div", "span"):
            native = _NATIVE_FOR_ROLE.get(role)
            if native is not None:
                out.append(
                    Violation(
                        "div-soup", target_of(el), f'<{tag} role="{role}"> re-implements a native control: use {native}'
                    )
                )
            elif has_click_handler(el):
                out.append(
                    Violation(
                        "div-soup",
                        target_of(el),
                        f"<{tag}> with a click handler: use a <button> (or <a href> for navigation)",
                    )
                )
    # A lone <span> badge is fine; a structure of several anonymous boxes is soup.
    if elements >= DIV_SOUP_MIN_ELEMENTS and not semantic:
        out.append(
            Violation(
                "div-soup",
                "",
                "The story renders no semantic element (only "
                "div/span): use elements such as <button>, <ul>, <h2>, <p>, <nav>",
            )
        )
    for path in sorted(sources or {}):
        text = (sources or {})[path]
        for color, line in scan_colors(text, path):
            out.append(
                Violation(
                    "hardcoded-color",
                    f"{path}:{line}",
                    f"Colour {color} is "
                    "hard-coded; define it in a *.tokens.ts file with createTokens "
                    "and reference the token",
                )
            )
    return out
