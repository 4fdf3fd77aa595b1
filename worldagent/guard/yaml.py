"""The one YAML loader: size, depth and alias limits checked on the event stream before building.

YAML aliases let a 1.4 KB file describe billions of nodes (``a: &a [x, x]``, ``b: &b [*a, *a]``,
...): PyYAML builds it with shared references, and the first walk over it (validation, a copy, a
dump, DVC reading params) runs without bound. :func:`check_yaml` parses the text into events (the C
parser when present: linear in the text) and counts, for every anchor, how many nodes it stands
for once expanded; the document is refused as soon as the expanded size, the number of aliases or
the nesting depth passes its limit, before any object is built. Every string in the result goes
through the text policy (a ``"\\ud800"`` escape is refused).

:func:`load_yaml`/:func:`read_yaml` are for plain data (params, profiles, DVC's lock file);
:func:`load_roundtrip` is ruamel's round-trip loader (comments and order kept) behind the same check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from worldagent.errors import InputError
from worldagent.guard.files import read_text
from worldagent.guard.text import check_value

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(InputError):
    """YAML that does not parse or passes a limit; the message names the file, line and column."""


@dataclass(frozen=True)
class YamlLimits:
    """What one YAML document may hold. Every file the project reads is far below these."""

    max_bytes: int = 4 * 1024 * 1024
    max_depth: int = 64
    max_aliases: int = 1_000
    max_nodes: int = 1_000_000  # nodes once every alias is expanded


DEFAULT_LIMITS = YamlLimits()


def _where(where: str, mark: Any) -> str:
    return f"{where}:{mark.line + 1}:{mark.column + 1}" if mark is not None else where


def _parse_error(where: str, error: yaml.YAMLError) -> YamlError:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return YamlError(f"{_where(where, mark)}: invalid YAML: {problem}")


def check_yaml(text: str, where: str, limits: YamlLimits = DEFAULT_LIMITS) -> None:
    """Refuse ``text`` (a ``YamlError`` naming ``where``) when it is over a limit or does not parse."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise YamlError(f"{where}: {size} bytes of YAML, more than the {limits.max_bytes} allowed")
    expanded: dict[str, int] = {}  # anchor -> nodes it stands for
    frames: list[list[Any]] = []  # open collections: [anchor, nodes so far]
    total = 0
    aliases = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > limits.max_aliases:
                    raise YamlError(
                        f"{_where(where, event.start_mark)}: more than {limits.max_aliases} aliases "
                        "(a YAML alias bomb?)"
                    )
                if event.anchor not in expanded:
                    raise YamlError(
                        f"{_where(where, event.start_mark)}: alias *{event.anchor} refers to an unknown or "
                        "enclosing anchor (recursive YAML is not accepted)"
                    )
                count = expanded[event.anchor]
            elif isinstance(event, yaml.ScalarEvent):
                count = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                frames.append([event.anchor, 1])
                if len(frames) > limits.max_depth:
                    raise YamlError(f"{_where(where, event.start_mark)}: nested deeper than {limits.max_depth} levels")
                continue
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, count = frames.pop()
                if anchor is not None:
                    expanded[anchor] = count
                if frames:
                    frames[-1][1] += count
                continue
            else:
                continue
            if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
                expanded[event.anchor] = 1
            total += count
            if frames:
                frames[-1][1] += count
            if total > limits.max_nodes:
                raise YamlError(
                    f"{_where(where, event.start_mark)}: expands to more than {limits.max_nodes} nodes "
                    "through its aliases (a YAML alias bomb?)"
                )
    except yaml.YAMLError as error:
        raise _parse_error(where, error) from None
    except RecursionError:
        raise YamlError(f"{where}: nested too deeply to parse") from None


def _text(text: str | bytes, where: str) -> str:
    if isinstance(text, bytes | bytearray):
        from worldagent.guard.text import decode_utf8

        return decode_utf8(bytes(text), where)
    return text


def load_yaml(text: str | bytes, where: str, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The plain data in one YAML document, after :func:`check_yaml`; strings obey the text policy."""
    text = _text(text, where)
    check_yaml(text, where, limits)
    try:
        value = yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)
    except yaml.YAMLError as error:
        raise _parse_error(where, error) from None
    return check_value(value, where)


def read_yaml(
    path: Path | str,
    *,
    what: str = "",
    hint: str | None = None,
    root: Path | str | None = None,
    limits: YamlLimits = DEFAULT_LIMITS,
) -> Any:
    """:func:`load_yaml` of a file read through the file guard (regular file, size cap, UTF-8)."""
    text = read_text(path, max_bytes=limits.max_bytes, root=root, what=what, hint=hint)
    return load_yaml(text, str(path), limits)


def roundtrip() -> Any:
    """ruamel's round-trip YAML (comments, order and quoting survive), in params.yaml's own layout."""
    from ruamel.yaml import YAML

    instance = YAML()
    instance.preserve_quotes = True
    instance.width = 4096
    instance.indent(mapping=2, sequence=4, offset=2)
    instance.representer.add_representer(
        type(None), lambda representer, _: representer.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    return instance


def load_roundtrip(text: str, where: str, instance: Any = None, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """ruamel's round-trip load of ``text`` after :func:`check_yaml` (so an alias bomb never reaches it)."""
    check_yaml(text, where, limits)
    from ruamel.yaml.error import YAMLError as RuamelError

    try:
        value = (instance or roundtrip()).load(text)
    except RuamelError as error:
        mark = getattr(error, "problem_mark", None)
        raise YamlError(f"{_where(where, mark)}: invalid YAML: {getattr(error, 'problem', None) or error}") from None
    return check_value(value, where)
