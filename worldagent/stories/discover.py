"""Discover story exports in `*.stories.tsx` files (tree-sitter, static analysis only).

Nothing is evaluated here: intents, titles and args are read from literals, so
discovery is safe on untrusted files and fast over a whole corpus. A bad file
becomes a `Problem` and the scan goes on; `strict=True` raises once at the end.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tree_sitter as ts
from pydantic import BaseModel

from worldagent.guard.text import first_bad_string, join_surrogate_pairs
from worldagent.stories.errors import (
    DiscoveryError,
    Problem,
    ProblemKind,
    SourceLocation,
    StoryEncodingError,
    StoryImportError,
    StorySymlinkError,
    StoryTooLargeError,
)
from worldagent.stories.parse import (
    DEFAULT_MAX_BYTES,
    decode_escape,
    import_candidates,
    is_relative_specifier,
    node_location,
    number_literal,
    parse_tsx,
    read_story_file,
    string_value,
    syntax_errors,
)

IntentSource = Literal["story", "description", "meta", "export-name"]


class StoryRecord(BaseModel):
    """One story export. Field order is the JSONL order; do not reorder."""

    id: str
    file: str
    export: str
    intent: str
    intent_source: IntentSource
    description: str | None
    title: str | None
    component: str
    template: str
    components: list[str]
    template_source: str
    style_files: list[str]
    token_files: list[str]
    args: Any
    line: int
    col: int
    content_hash: str


class Discovery(BaseModel):
    stories: list[StoryRecord]
    problems: list[Problem]


def discovery_to_jsonl(records: Iterable[StoryRecord]) -> str:
    """Byte-stable JSONL: model field order, UTF-8 text, one record per line."""
    return "".join(json.dumps(r.model_dump(mode="json"), ensure_ascii=False, sort_keys=False) + "\n" for r in records)


def discover_stories(
    paths: Sequence[Path],
    root: Path,
    strict: bool = False,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Discovery:
    """Find every `export const X = story({...})` under `paths` (files or directories)."""
    scanner = _Scanner(Path(root), max_bytes)
    records: list[StoryRecord] = []
    for rel in _story_files(paths, Path(root)):
        records.extend(scanner.stories_in(rel))
    records.sort(key=lambda r: (r.file, r.line, r.col))
    scanner.check_duplicates(records)
    problems = scanner.sorted_problems()
    if strict and problems:
        raise DiscoveryError(problems)
    return Discovery(stories=records, problems=problems)


# ---------------------------------------------------------------- file walk


def _rel(path: Path, root: Path) -> str:
    # Lexical first: a symlink under the root keeps its own name here and is checked (lstat)
    # when read, instead of resolving to wherever it points.
    try:
        return path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        pass
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _story_files(paths: Sequence[Path], root: Path) -> list[str]:
    found: set[str] = set()
    for raw in paths:
        p = Path(raw)
        if not p.is_absolute() and not p.exists() and (root / p).exists():
            p = root / p
        if p.is_dir():
            found.update(_rel(f, root) for f in p.rglob("*.stories.tsx") if f.is_file() or f.is_symlink())
        elif p.is_file():
            found.add(_rel(p, root))
        else:
            raise FileNotFoundError(f"story path not found: {raw}")
    return sorted(found)


# ------------------------------------------------------------- static values


class _NotStatic:
    pass


_NOT = _NotStatic()
_WRAPPERS = frozenset({"as_expression", "satisfies_expression", "parenthesized_expression", "non_null_expression"})
_FUNCTION_TYPES = frozenset({"arrow_function", "function_expression", "function", "function_declaration"})


def _named(node: ts.Node) -> list[ts.Node]:
    return [c for c in node.named_children if c.type != "comment"]


def _unwrap(node: ts.Node | None) -> ts.Node | None:
    while node is not None and node.type in _WRAPPERS:
        kids = _named(node)
        node = kids[0] if kids else None
    return node


def _text(node: ts.Node) -> str:
    return node.text.decode("utf-8") if node.text is not None else ""


Env = dict[str, ts.Node]
_MAX_STATIC_DEPTH = 32


def _static(node: ts.Node | None, env: Env | None = None, depth: int = 0) -> Any:
    """The JSON value of a literal expression, or `_NOT`.

    Identifiers resolve through `env` (local consts) so `args: { items }` with
    `const items = [...]` is still a literal; `depth` bounds self-references.
    """
    node = _unwrap(node)
    if node is None or depth > _MAX_STATIC_DEPTH:
        return _NOT
    t = node.type
    if t == "string":
        return string_value(node)
    if t == "template_string":
        return _static_template(node)
    if t == "number":
        return _static_number(_text(node))
    if t in ("true", "false"):
        return t == "true"
    if t == "null":
        return None
    if t in ("identifier", "shorthand_property_identifier"):
        target = (env or {}).get(_text(node))
        return _NOT if target is None else _static(target, env, depth + 1)
    if t == "unary_expression":
        return _static_unary(node, env, depth)
    if t == "array":
        return _static_array(node, env, depth)
    if t == "object":
        return _static_object(node, env, depth)
    return _NOT


def _static_template(node: ts.Node) -> Any:
    parts: list[str] = []
    for c in _named(node):
        if c.type == "template_substitution":
            return _NOT
        parts.append(decode_escape(_text(c)) if c.type == "escape_sequence" else _text(c))
    return join_surrogate_pairs("".join(parts))


def _static_number(text: str) -> Any:
    try:
        return number_literal(text)
    except ValueError:
        return _NOT


def _static_unary(node: ts.Node, env: Env | None, depth: int) -> Any:
    op = node.child_by_field_name("operator")
    value = _static(node.child_by_field_name("argument"), env, depth + 1)
    if op is not None and op.type == "-" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return -value
    return _NOT


def _static_array(node: ts.Node, env: Env | None, depth: int) -> Any:
    items = [_static(c, env, depth + 1) for c in _named(node)]
    return _NOT if any(v is _NOT for v in items) else items


def _static_object(node: ts.Node, env: Env | None, depth: int) -> Any:
    out: dict[str, Any] = {}
    for c in _named(node):
        if c.type == "shorthand_property_identifier":
            key, value = _text(c), _static(c, env, depth + 1)
        elif c.type == "pair":
            key = _static_key(c.child_by_field_name("key"))
            value = _static(c.child_by_field_name("value"), env, depth + 1)
        else:
            return _NOT
        if key is None or value is _NOT:
            return _NOT
        out[key] = value
    return out


def _static_key(node: ts.Node | None) -> str | None:
    if node is None:
        return None
    if node.type == "property_identifier":
        return _text(node)
    if node.type == "string":
        return string_value(node)
    if node.type == "number":
        value = _static_number(_text(node))
        return None if value is _NOT else str(value)
    return None


def object_props(node: ts.Node) -> dict[str, ts.Node]:
    """Property name -> value node for the statically named properties of an object."""
    props: dict[str, ts.Node] = {}
    for c in _named(node):
        if c.type == "pair":
            key = _static_key(c.child_by_field_name("key"))
            value = c.child_by_field_name("value")
            if key is not None and value is not None:
                props[key] = value
        elif c.type == "shorthand_property_identifier":
            props[_text(c)] = c
    return props


def _static_str(node: ts.Node | None) -> str | None:
    value = _static(node)
    return value if isinstance(value, str) and value.strip() else None


def export_name_to_words(name: str) -> str:
    """`primaryButton` -> "primary button"; `HTMLLink2` -> "html link 2"."""
    words: list[str] = []
    current = ""
    for i, ch in enumerate(name):
        prev = name[i - 1] if i else ""
        nxt = name[i + 1] if i + 1 < len(name) else ""
        boundary = (
            ch in "_-$"
            or (ch.isupper() and (prev.islower() or prev.isdigit()))
            or (ch.isupper() and prev.isupper() and nxt.islower())
            or (ch.isdigit() and not prev.isdigit())
            or (not ch.isdigit() and prev.isdigit())
        )
        if boundary and current:
            words.append(current)
            current = ""
        if ch not in "_-$":
            current += ch.lower()
    if current:
        words.append(current)
    return " ".join(words)


# ------------------------------------------------------------------ scanner


@dataclass
class _Import:
    spec: str
    location: SourceLocation
    resolved: str | None


@dataclass
class _FileInfo:
    rel: str
    source: bytes | None
    tree: ts.Tree | None
    imports: list[_Import] = field(default_factory=list)


@dataclass
class _Decl:
    name: str
    statement: ts.Node
    value: ts.Node | None
    is_ft: bool


@dataclass
class _StoryDecl:
    name: str
    statement: ts.Node
    config: ts.Node


class _Scanner:
    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.files: dict[str, _FileInfo] = {}
        self.problems: dict[tuple[str, SourceLocation, str], Problem] = {}
        self.refused: set[str] = set()  # files refused as symlinks leaving the root: never read

    def problem(self, kind: ProblemKind, location: SourceLocation, message: str) -> None:
        self.problems.setdefault((kind, location, message), Problem(kind=kind, location=location, message=message))

    def sorted_problems(self) -> list[Problem]:
        return sorted(self.problems.values(), key=lambda p: (p.location, p.kind, p.message))

    # ------------------------------------------------------------ files

    def file(self, rel: str) -> _FileInfo:
        info = self.files.get(rel)
        if info is None:
            info = self._load(rel)
            self.files[rel] = info
        return info

    def _load(self, rel: str) -> _FileInfo:
        try:
            source = read_story_file(self.root, rel, self.max_bytes)
        except StorySymlinkError as exc:
            self.problem("symlink", exc.location, exc.message)
            self.refused.add(rel)
            return _FileInfo(rel, None, None)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            self.problem("import", SourceLocation(rel, 1, 1), "file not found (a dangling symlink?)")
            return _FileInfo(rel, None, None)
        except StoryImportError as exc:  # not a regular file (a FIFO, a device): refused unread
            self.problem("import", exc.location, exc.message)
            return _FileInfo(rel, None, None)
        except StoryTooLargeError as exc:
            self.problem("too-large", exc.location, exc.message)
            return _FileInfo(rel, None, None)
        except StoryEncodingError as exc:
            self.problem("encoding", exc.location, exc.message)
            return _FileInfo(rel, None, None)
        tree = parse_tsx(source, rel)
        errors = syntax_errors(tree, rel, source) if tree.root_node.has_error else []
        if errors:
            self.problem("syntax", errors[0], f"syntax error ({len(errors)} error node(s) in file)")
            return _FileInfo(rel, source, None)
        info = _FileInfo(rel, source, tree)
        info.imports = self._imports(info)
        return info

    def _imports(self, info: _FileInfo) -> list[_Import]:
        assert info.tree is not None and info.source is not None
        out: list[_Import] = []
        for stmt in _named(info.tree.root_node):
            source_node = (
                stmt.child_by_field_name("source") if stmt.type in ("import_statement", "export_statement") else None
            )
            if source_node is None or source_node.type != "string":
                continue
            spec = string_value(source_node)
            if not is_relative_specifier(spec):
                continue
            loc = node_location(info.source, source_node, info.rel)
            resolved = self._resolve(spec, info.rel)
            if resolved is None:
                self.problem("import", loc, f"cannot resolve relative import '{spec}'")
            out.append(_Import(spec, loc, resolved))
        return out

    def _resolve(self, spec: str, importer: str) -> str | None:
        candidates = import_candidates(spec, importer)
        if candidates is None:
            return None
        first, *rest = candidates
        options = ([first] if posixpath.splitext(first)[1] else []) + rest
        return next((c for c in options if (self.root / c).is_file()), None)

    def local_deps(self, rel: str) -> list[str]:
        """Every local file `rel` imports, transitively (cycles tolerated), sorted."""
        seen: set[str] = set()
        work = [rel]
        while work:
            for imp in self.file(work.pop()).imports:
                if imp.resolved is not None and imp.resolved not in seen and imp.resolved != rel:
                    seen.add(imp.resolved)
                    work.append(imp.resolved)
        return sorted(seen)

    def content_hash(self, paths: list[str]) -> str:
        # Framed by path and length so that moving bytes between files changes the hash.
        h = hashlib.sha256()
        for rel in sorted(paths):
            data = self.file(rel).source
            h.update(rel.encode("utf-8") + b"\x00")
            h.update(b"-" if data is None else str(len(data)).encode() + b"\x00" + data)
            h.update(b"\x00")
        return h.hexdigest()

    # ---------------------------------------------------------- stories

    def stories_in(self, rel: str) -> list[StoryRecord]:
        info = self.file(rel)
        if info.tree is None or info.source is None:
            return []
        decls, stories, meta = _declarations(info.tree.root_node)
        if not stories:
            return []
        deps = self.local_deps(rel)
        refused = sorted(d for d in deps if d in self.refused)
        if refused:
            # Its stories would carry a file from outside the root into the training data: none is listed.
            message = f"imports {', '.join(refused)}, a symlink leaving the story root"
            self.problem("symlink", SourceLocation(rel, 1, 1), message)
            return []
        shared = _Shared(
            rel=rel,
            source=info.source,
            decls=decls,
            meta=meta,
            content_hash=self.content_hash([rel, *deps]),
            # Component files the story needs besides tokens: styles and, for Plaited elements,
            # the element module (`bElement`): the agent writes them with the story.
            style_files=[d for d in deps if not d.endswith(".tokens.ts")],
            token_files=[d for d in deps if d.endswith(".tokens.ts")],
        )
        return [record for s in stories if (record := self._text_record(s, shared)) is not None]

    def _text_record(self, story: _StoryDecl, shared: _Shared) -> StoryRecord | None:
        """The story's record, or None (a located problem) when a string in it is not text: a lone
        surrogate escape (``"\\ud800"``) would be written into the dataset and break every later read."""
        record = self._record(story, shared)
        found = first_bad_string(record.model_dump())
        if found is None:
            return record
        loc = node_location(shared.source, story.statement, shared.rel)
        self.problem(
            "encoding", loc, f"story '{story.name}': {found[0]} holds a lone surrogate escape, which is not text"
        )
        return None

    def _record(self, story: _StoryDecl, shared: _Shared) -> StoryRecord:
        props = object_props(story.config)
        loc = node_location(shared.source, story.statement, shared.rel)
        intent, intent_source = _resolve_intent(story.name, props, shared.meta)
        if intent_source == "export-name":
            self.problem(
                "no-intent",
                loc,
                f"story '{story.name}' has no intent or description (neither has meta); using its export name",
            )
        used = _used_declarations(props, shared.decls, story.name)
        description = _static_str(props.get("description")) or _meta_str(shared.meta, "description")
        env = {d.name: d.value for d in shared.decls.values() if d.value is not None}
        args = _static(props["args"], env) if "args" in props else None
        return StoryRecord(
            id=f"{shared.rel}#{story.name}",
            file=shared.rel,
            export=story.name,
            intent=intent,
            intent_source=intent_source,
            description=description,
            title=_meta_str(shared.meta, "title"),
            component=posixpath.basename(posixpath.dirname(shared.rel)) or Path(self.root).resolve().name,
            template=_template_name(props.get("template")),
            components=sorted(d.name for d in used if d.is_ft),
            template_source=_template_source(shared.source, [d.statement for d in used] + [story.statement]),
            style_files=shared.style_files,
            token_files=shared.token_files,
            args=None if args is _NOT else args,
            line=loc.line,
            col=loc.col,
            content_hash=shared.content_hash,
        )

    def check_duplicates(self, records: list[StoryRecord]) -> None:
        first: dict[str, StoryRecord] = {}
        for r in records:
            if r.intent_source == "export-name":
                continue
            key = " ".join(r.intent.split()).casefold()
            original = first.setdefault(key, r)
            if original is not r:
                self.problem(
                    "duplicate-intent",
                    SourceLocation(r.file, r.line, r.col),
                    f"intent {r.intent!r} of '{r.export}' duplicates '{original.export}' at {original.file}:{original.line}:{original.col}",
                )


@dataclass
class _Shared:
    rel: str
    source: bytes
    decls: dict[str, _Decl]
    meta: dict[str, Any]
    content_hash: str
    style_files: list[str]
    token_files: list[str]


def _meta_str(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _resolve_intent(name: str, props: dict[str, ts.Node], meta: dict[str, Any]) -> tuple[str, IntentSource]:
    intent = _static_str(props.get("intent"))
    if intent is not None:
        return intent, "story"
    description = _static_str(props.get("description"))
    if description is not None:
        return description, "description"
    meta_intent = _meta_str(meta, "intent")
    if meta_intent is not None:
        return meta_intent, "meta"
    return export_name_to_words(name), "export-name"


def _template_name(node: ts.Node | None) -> str:
    node = _unwrap(node)
    if node is None:
        return ""
    if node.type in ("identifier", "shorthand_property_identifier"):
        return _text(node)
    if node.type in _FUNCTION_TYPES:
        return "inline"
    return _text(node)


def _template_source(source: bytes, statements: list[ts.Node]) -> str:
    unique = {s.start_byte: s for s in statements}
    ordered = [unique[k] for k in sorted(unique)]
    return "\n\n".join(source[s.start_byte : s.end_byte].decode("utf-8") for s in ordered)


# ------------------------------------------------------- declarations & refs


def _declarations(program: ts.Node) -> tuple[dict[str, _Decl], list[_StoryDecl], dict[str, Any]]:
    decls: dict[str, _Decl] = {}
    stories: list[_StoryDecl] = []
    meta: dict[str, Any] = {}
    for stmt in _named(program):
        inner, exported = stmt, False
        if stmt.type == "export_statement" and stmt.child_by_field_name("declaration") is not None:
            inner, exported = stmt.child_by_field_name("declaration"), True
        assert inner is not None
        if inner.type == "function_declaration":
            name_node = inner.child_by_field_name("name")
            if name_node is not None:
                name = _text(name_node)
                decls[name] = _Decl(name, stmt, inner, _is_ft(name, inner, None))
            continue
        if inner.type not in ("lexical_declaration", "variable_declaration"):
            continue
        for d in _named(inner):
            _declarator(d, stmt, exported, decls, stories, meta)
    return decls, stories, meta


def _declarator(
    d: ts.Node, stmt: ts.Node, exported: bool, decls: dict[str, _Decl], stories: list[_StoryDecl], meta: dict[str, Any]
) -> None:
    name_node = d.child_by_field_name("name")
    if d.type != "variable_declarator" or name_node is None or name_node.type != "identifier":
        return
    name = _text(name_node)
    value = d.child_by_field_name("value")
    decls[name] = _Decl(name, stmt, value, _is_ft(name, value, d.child_by_field_name("type")))
    if not exported:
        return
    config = story_config(value)
    if config is not None:
        stories.append(_StoryDecl(name, stmt, config))
    elif name == "meta":
        static = _static(value)
        if isinstance(static, dict):
            meta.update(static)
        elif (obj := _unwrap(value)) is not None and obj.type == "object":
            meta.update({k: v for k, v in ((k, _static(n)) for k, n in object_props(obj).items()) if v is not _NOT})


def story_config(value: ts.Node | None) -> ts.Node | None:
    """The object literal passed to a ``story({...})`` call (or Plaited's ``story.only({...})`` /
    ``story.skip({...})``), or None when ``value`` is no such call."""
    call = _unwrap(value)
    if call is None or call.type != "call_expression":
        return None
    fn = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if fn is None or args is None or _text(fn) not in ("story", "story.only", "story.skip"):
        return None
    first = _unwrap(next(iter(_named(args)), None))
    return first if first is not None and first.type == "object" else None


def _is_ft(name: str, value: ts.Node | None, type_node: ts.Node | None) -> bool:
    value = _unwrap(value)
    if value is None or value.type not in _FUNCTION_TYPES:
        return False
    annotated = type_node is not None and _text(type_node).lstrip(":").strip().startswith("FT")
    return annotated or name[:1].isupper()


def _referenced_names(node: ts.Node) -> set[str]:
    """Identifiers a subtree reads, including JSX component tags (not HTML tags)."""
    names: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("identifier", "shorthand_property_identifier"):
            names.add(_text(n))
            continue
        if t == "jsx_namespace_name":
            continue
        kids = n.named_children
        if t in ("jsx_opening_element", "jsx_closing_element", "jsx_self_closing_element"):
            tag = n.child_by_field_name("name")
            if tag is not None and tag.type == "identifier" and _text(tag)[:1].islower():
                kids = [k for k in kids if k.id != tag.id]
        stack.extend(kids)
    return names


def _used_declarations(props: dict[str, ts.Node], decls: dict[str, _Decl], story_name: str) -> list[_Decl]:
    # `play` is parsed, never executed: what it references is not part of the template.
    work: list[str] = []
    for key, value in props.items():
        if key != "play":
            work.extend(_referenced_names(value))
    used: dict[str, _Decl] = {}
    while work:
        name = work.pop()
        decl = decls.get(name)
        if decl is None or name in used or name == story_name:
            continue
        used[name] = decl
        if decl.value is not None:
            work.extend(_referenced_names(decl.value))
    return sorted(used.values(), key=lambda d: d.statement.start_byte)
