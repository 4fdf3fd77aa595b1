"""Reading and parsing story sources with tree-sitter (never regexes)."""

from __future__ import annotations

import errno
import functools
import os
import posixpath
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import tree_sitter as ts
import tree_sitter_typescript as tst

from worldagent.guard import files
from worldagent.guard.text import join_surrogate_pairs
from worldagent.stories.errors import (
    SourceLocation,
    StoryEncodingError,
    StoryImportError,
    StorySymlinkError,
    StorySyntaxError,
    StoryTooLargeError,
)

DEFAULT_MAX_BYTES = 1 << 20

_TSX = ts.Language(tst.language_tsx())
_TS = ts.Language(tst.language_typescript())
# tree-sitter parsers are not safe to share between threads; trees are.
_local = threading.local()


def is_tsx(file: str) -> bool:
    """`.ts` files use the TypeScript grammar (where `<T>x` is a cast); all else TSX."""
    return not str(file).endswith(".ts")


def _parser(tsx: bool) -> ts.Parser:
    key = "tsx" if tsx else "ts"
    parser = getattr(_local, key, None)
    if parser is None:
        parser = ts.Parser(_TSX if tsx else _TS)
        setattr(_local, key, parser)
    return parser


@functools.lru_cache(maxsize=512)
def _parse_cached(source: bytes, tsx: bool) -> ts.Tree:
    # Keyed by content: the same bytes always give the same (immutable) tree.
    return _parser(tsx).parse(source)


def clear_parse_cache() -> None:
    """Forget cached syntax trees (benchmarks measure real parsing with it)."""
    _parse_cached.cache_clear()


def parse_tsx(source: bytes, file: str) -> ts.Tree:
    """Parse `source`; the grammar follows `file`'s extension. Cached by content."""
    return _parse_cached(source, is_tsx(file))


def location_at(source: bytes, byte_offset: int, file: str) -> SourceLocation:
    """1-based line and character column of a byte offset."""
    line_start = source.rfind(b"\n", 0, byte_offset) + 1
    line = source.count(b"\n", 0, byte_offset) + 1
    col = len(source[line_start:byte_offset].decode("utf-8", "replace")) + 1
    return SourceLocation(file, line, col)


def node_location(source: bytes, node: ts.Node, file: str) -> SourceLocation:
    return location_at(source, node.start_byte, file)


def syntax_errors(tree: ts.Tree, file: str, source: bytes | None = None) -> list[SourceLocation]:
    """Locations of ERROR and MISSING nodes, in source order.

    Without `source` the column is the byte column + 1 (identical for ASCII).
    """
    found: list[ts.Node] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    found.sort(key=lambda n: n.start_byte)
    if source is not None:
        return [node_location(source, n, file) for n in found]
    return [SourceLocation(file, n.start_point[0] + 1, n.start_point[1] + 1) for n in found]


def check_syntax(tree: ts.Tree, source: bytes, file: str) -> None:
    """Raise `StorySyntaxError` at the first ERROR/MISSING node, if any."""
    if not tree.root_node.has_error:
        return
    errors = syntax_errors(tree, file, source)
    if errors:
        first = errors[0]
        raise StorySyntaxError(f"syntax error ({len(errors)} error node(s) in file)", first)


def decode_source(source: bytes, file: str) -> str:
    """Decode UTF-8 or raise `StoryEncodingError` at the first invalid byte."""
    try:
        return source.decode("utf-8")
    except UnicodeDecodeError as exc:
        loc = location_at(source, exc.start, file)
        bad = source[exc.start : exc.start + 1].hex()
        raise StoryEncodingError(f"file is not valid UTF-8 (byte 0x{bad})", loc) from None


def read_source(path: Path | str, max_bytes: int = DEFAULT_MAX_BYTES, file: str | None = None) -> bytes:
    """Read a source file, refusing oversized files before reading them.

    `file` is the name used in error messages (defaults to `path` as given).
    Raises `StoryTooLargeError`, `StoryEncodingError` (both `StorySyntaxError`)
    and `FileNotFoundError`.
    """
    name = file if file is not None else Path(path).as_posix()
    try:
        # The file guard: a regular file only (a FIFO or device is refused unread), size checked first.
        data = files.read_bytes(path, max_bytes=max_bytes)
    except files.FileTooLargeError as exc:
        raise _too_large(name, exc.size, max_bytes) from None
    except files.MissingFileError:
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path)) from None
    except files.NotRegularFileError as exc:
        raise StoryImportError(f"'{name}' {exc.reason}", SourceLocation(name, 1, 1)) from None
    except files.FileError as exc:
        raise StoryImportError(f"'{name}': {exc.reason}", SourceLocation(name, 1, 1)) from None
    decode_source(data, name)
    return data


def check_inside_root(root: Path | str, rel: str) -> None:
    """Refuse `rel` when it, or a folder on its way from `root`, is a symlink leaving `root`.

    Checked with `lstat` on every path component, so nothing outside the root is ever opened;
    a symlink that stays inside the root is allowed. Raises `StorySymlinkError` naming `rel`.
    """
    base = Path(root)
    real_root = base.resolve()
    current = base
    for part in Path(rel).parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return  # the caller reports a missing file
        if stat.S_ISLNK(mode):
            target = current.resolve()
            if target != real_root and real_root not in target.parents:
                raise StorySymlinkError(
                    f"'{current.relative_to(base).as_posix()}' is a symlink to a path outside the story root; "
                    "story, import and tokens files must stay inside it",
                    SourceLocation(rel, 1, 1),
                )


def read_story_file(root: Path | str, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """`read_source` of `root / rel`, refusing symlinks that leave `root` (see `check_inside_root`),
    and absolute or `..` paths that name a file outside it."""
    normal = posixpath.normpath(str(rel).replace("\\", "/"))
    if posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
        raise StorySymlinkError(
            f"'{rel}' is outside the story root; story files must stay inside it", SourceLocation(str(rel), 1, 1)
        )
    check_inside_root(root, rel)
    return read_source(Path(root) / rel, max_bytes, rel)


def _too_large(name: str, size: int, max_bytes: int) -> StoryTooLargeError:
    return StoryTooLargeError(f"file is too large ({size} bytes > limit {max_bytes} bytes)", SourceLocation(name, 1, 1))


def load_tree(path: Path | str, file: str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, ts.Tree]:
    """read_source + parse_tsx + check_syntax."""
    source = read_source(path, max_bytes, file)
    tree = parse_tsx(source, file)
    check_syntax(tree, source, file)
    return source, tree


def is_relative_specifier(spec: str) -> bool:
    return spec.startswith("./") or spec.startswith("../")


def import_candidates(spec: str, importer: str) -> list[str] | None:
    """Root-relative posix candidates for a relative import, in resolution order.

    Returns None when the specifier climbs out of the root.
    """
    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
    if base == ".." or base.startswith("../") or base.startswith("/"):
        return None
    candidates = [base, base + ".ts", base + ".tsx", base + "/index.ts", base + "/index.tsx"]
    # TypeScript-style specifiers name a sibling extension: `./x.ts` may be `x.tsx`, `./x.js` is `x.ts(x)`.
    stem, ext = posixpath.splitext(base)
    if ext in (".ts", ".js", ".jsx"):
        candidates[1:1] = [c for c in (stem + ".ts", stem + ".tsx") if c != base]
    return candidates


def resolve_import(spec: str, importer: str, exists: Callable[[str], bool]) -> str | None:
    """Resolve a relative import (extension optional) to a root-relative posix path."""
    candidates = import_candidates(spec, importer)
    if candidates is None:
        return None
    first, *rest = candidates
    # A bare directory or extension-less name must not match itself.
    if posixpath.splitext(first)[1] and exists(first):
        return first
    for cand in rest:
        if exists(cand):
            return cand
    return None


def string_value(node: ts.Node) -> str:
    """Value of a JS string literal node (escapes decoded)."""
    parts: list[str] = []
    for child in node.named_children:
        text = child.text.decode("utf-8") if child.text is not None else ""
        if child.type == "escape_sequence":
            parts.append(decode_escape(text))
        elif child.type != "comment":
            parts.append(text)
    return join_surrogate_pairs("".join(parts))  # "\\ud83d\\ude00" is one character, as in JavaScript


_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "0": "\0",
}


def decode_escape(text: str) -> str:
    """Decode one JS escape sequence such as `\\n`, `\\u0041`, `\\u{1F600}`, `\\x41`."""
    body = text[1:]
    if not body:
        return ""
    head = body[0]
    if head in _SIMPLE_ESCAPES and len(body) == 1:
        return _SIMPLE_ESCAPES[head]
    if head == "u":
        digits = body[2:-1] if body.startswith("u{") else body[1:]
        return _codepoint(digits, text)
    if head == "x":
        return _codepoint(body[1:], text)
    if head in "\r\n\u2028\u2029":
        return ""  # line continuation
    return body


def number_literal(text: str) -> float | int:
    """Value of a JS numeric literal (`1_000`, `0x1f`, `.5`, `1e3`); ValueError for BigInt."""
    clean = text.replace("_", "")
    low = clean.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if low.startswith(prefix):
            return int(clean[2:], base)
    if low.endswith("n"):
        raise ValueError(f"BigInt literal {text!r}")
    if clean.isdigit():
        return int(clean)
    return float(clean)


def _codepoint(digits: str, fallback: str) -> str:
    try:
        return chr(int(digits, 16))
    except (ValueError, OverflowError):
        return fallback
