"""Profiles: named sets of parameter values (``profiles/<name>.yaml``) that one command writes into
params.yaml.

A profile is a partial ``params.yaml``: only the keys that differ between profiles (the base model,
its precision, the LoRA shape, the training budgets, the gate's minimums). Every profile names the
same keys, so switching is reversible: ``worldagent profile use cpu`` then ``use tiny`` gives
back params.yaml byte for byte. The keys are written in place with ruamel's round-trip loader, so
params.yaml keeps its comments and order and stays the one file DVC tracks; a switch is therefore
an ordinary, reviewable diff of params.yaml, and ``dvc repro`` reruns exactly what it touched.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from worldagent.config import parse_params
from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.guard import yaml as guarded_yaml
from worldagent.io import atomic_write_text

PROFILES_DIR = Path("profiles")
PARAMS = Path("params.yaml")
# Profiles that were renamed: the old name still picks the new profile (and says so), so a script
# or a habit written for it keeps working.
RENAMED = {"smollm2": "cpu"}


class ProfileError(InputError):
    """A profile that does not exist, does not parse, or would make params.yaml invalid."""


def _yaml() -> Any:
    """ruamel's round-trip YAML in params.yaml's own layout (comments, order and quoting survive)."""
    return guarded_yaml.roundtrip()


def _load(text: str, where: Path) -> Any:
    """Round-trip load behind the YAML guard: an alias bomb or a too-deep file is refused unbuilt."""
    return guarded_yaml.load_roundtrip(text, str(where), _yaml())


def _read(path: Path, what: str) -> str:
    return files.read_text(path, max_bytes=guarded_yaml.DEFAULT_LIMITS.max_bytes, what=what)


def available(profiles_dir: Path = PROFILES_DIR) -> list[str]:
    return sorted(path.stem for path in profiles_dir.glob("*.yaml"))


def canonical_name(name: str, profiles_dir: Path = PROFILES_DIR) -> str:
    """``name``, or the profile it was renamed to (:data:`RENAMED`) when no file of the old name exists."""
    if name in RENAMED and not (profiles_dir / f"{name}.yaml").is_file():
        return RENAMED[name]
    return name


def renamed_note(name: str, profiles_dir: Path = PROFILES_DIR) -> str | None:
    """A line saying that ``name`` is now called something else; None when it is not an old name."""
    new = canonical_name(name, profiles_dir)
    return None if new == name else f"profile `{name}` is now called `{new}`: using `{new}`"


def read_profile(name: str, profiles_dir: Path = PROFILES_DIR) -> dict[str, Any]:
    path = profiles_dir / f"{canonical_name(name, profiles_dir)}.yaml"
    if not path.is_file():
        known = ", ".join(available(profiles_dir)) or "none"
        raise ProfileError(f"{path}: no such profile (known: {known})")
    data = _load(_read(path, "a profile"), path)
    if not isinstance(data, Mapping) or not data:
        raise ProfileError(f"{path}: a profile is a non-empty mapping of params.yaml sections")
    return dict(data)


def leaf_keys(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted.key, value)`` for every leaf; lists are leaves (a profile replaces a list whole)."""
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from leaf_keys(value, dotted + ".")
        else:
            yield dotted, value


def assign(params: Any, dotted: str, value: Any, where: Path) -> None:
    """Set ``dotted`` in the params mapping; the key must already exist (a typo is an error naming it)."""
    node = params
    *parents, last = dotted.split(".")
    for part in parents:
        if not isinstance(node, Mapping) or part not in node:
            raise ProfileError(f"{where}: `{dotted}` is not a key of params.yaml")
        node = node[part]
    if not isinstance(node, Mapping) or last not in node:
        raise ProfileError(f"{where}: `{dotted}` is not a key of params.yaml")
    node[last] = value


def apply_profile(params_text: str, profile: Mapping[str, Any], where: Path = PARAMS) -> str:
    """params.yaml text with the profile's values written in; comments and order kept.

    Every key must already exist in params.yaml (a typo would otherwise add a key the stages ignore),
    and the result must validate (``worldagent.config.parse_params``).
    """
    yaml = _yaml()
    params = guarded_yaml.load_roundtrip(params_text, str(where), yaml)
    for dotted, value in leaf_keys(profile):
        assign(params, dotted, value, where)
    buffer = io.StringIO()
    yaml.dump(params, buffer)
    text = buffer.getvalue()
    parse_params(_load(text, where), where)  # raises with the field named
    return text


def _current(params: Any, dotted: str) -> Any:
    node = params
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


_MISSING = object()


def matching(params_path: Path = PARAMS, profiles_dir: Path = PROFILES_DIR) -> list[str]:
    """The profiles whose every value params.yaml has now (normally exactly one)."""
    params = _load(_read(params_path, "the parameters"), params_path)
    names = []
    for name in available(profiles_dir):
        profile = read_profile(name, profiles_dir)
        if all(_plain(_current(params, key)) == _plain(value) for key, value in leaf_keys(profile)):
            names.append(name)
    return names


def current(params_path: Path = PARAMS, profiles_dir: Path = PROFILES_DIR) -> str | None:
    """The one profile params.yaml is set to; None when it matches none (edited by hand) or several."""
    names = matching(params_path, profiles_dir)
    return names[0] if len(names) == 1 else None


def _plain(value: Any) -> Any:
    """ruamel's commented containers and scalars → plain Python values, for comparison."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value) if isinstance(value, str) else value


def use_profile(name: str, params_path: Path = PARAMS, profiles_dir: Path = PROFILES_DIR) -> list[str]:
    """Write profile ``name`` into ``params_path`` (atomically); returns the keys whose value changed."""
    profile = read_profile(name, profiles_dir)
    before = _read(params_path, "the parameters")
    old = _load(before, params_path)
    text = apply_profile(before, profile, params_path)
    changed = [key for key, value in leaf_keys(profile) if _plain(_current(old, key)) != _plain(value)]
    if text != before:
        atomic_write_text(params_path, text)
    return changed
