"""The champion reference: which deployed model a DAG run compares its candidate with, as a file.

DVC cannot see a database, so the champion the evaluate stage re-evaluates is pinned in a small
git-tracked JSON file that ``dvc.yaml`` lists as a dependency (``models/<family>/champion.json``).
A promote or rollback rewrites it, and so does the flow's first step when the registry's champion
moved since the last run; either way DVC reruns what depends on it, and only that. ``dvc repro`` on
its own never reads the registry: the same reference gives the same evaluation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worldagent.errors import InputError
from worldagent.io import atomic_write_text, pretty_json
from worldagent.registry.api import CHAMPION, Registry

FIELDS = ("family", "version", "artifact_path", "artifact_hash")


def champion_reference(registry: Registry, family: str) -> dict[str, Any]:
    """``{family, version, artifact_path, artifact_hash}`` of ``family``'s champion; version None without one."""
    version = registry.get_alias(family, CHAMPION)
    if version is None:
        return {"family": family, "version": None, "artifact_path": None, "artifact_hash": None}
    return {
        "family": family,
        "version": version.number,
        "artifact_path": version.artifact_path,
        "artifact_hash": version.artifact_hash,
    }


def read_champion_reference(path: Path) -> dict[str, Any]:
    """The reference in ``path``; a missing file means no champion (a fresh project)."""
    try:
        reference = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"family": None, "version": None, "artifact_path": None, "artifact_hash": None}
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None
    if not isinstance(reference, dict) or set(reference) != set(FIELDS):
        raise InputError(f"{path}: expected a champion reference with exactly the keys {', '.join(FIELDS)}")
    return reference


def write_champion_reference(path: Path, reference: dict[str, Any]) -> bool:
    """Pin ``reference`` in ``path``; returns whether the file changed (so DVC will rerun what reads it)."""
    text = pretty_json({key: reference.get(key) for key in FIELDS})
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    atomic_write_text(path, text)
    return True
