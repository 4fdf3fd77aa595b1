"""The champion reference: which deployed model a DAG run compares its candidate with, as a file.

DVC cannot see a database, so the champion the evaluate and compare stages re-evaluate is pinned in a
small git-tracked JSON file that ``dvc.yaml`` lists as a dependency (``models/<family>/champion.json``).
A promote or rollback rewrites it, and so does the flow's first step when the registry's champion
moved since the last run; either way DVC reruns what depends on it, and only that. ``dvc repro`` on
its own never reads the registry: the same reference gives the same evaluation. Its format::

    {"family": "world-agent", "version": 3, "artifact_path": "models/published/world-agent/v3",
     "artifact_hash": "<content hash, worldagent.io.directory_hash>"}
    {"family": "world-agent", "version": null, "artifact_path": null, "artifact_hash": null}   # no champion yet

:func:`load_champion` reads it back for a stage and checks that the artifact on disk still has the
recorded content hash, so a reference is never silently followed to other weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.io import atomic_write_text, directory_hash, pretty_json, read_json

if TYPE_CHECKING:  # reading a reference needs no database: evaluate_champion runs where SQLAlchemy is absent
    from worldagent.registry.api import Registry

FIELDS = ("family", "version", "artifact_path", "artifact_hash")
NO_CHAMPION: dict[str, Any] = dict.fromkeys(FIELDS)


class ChampionReferenceError(InputError):
    """The champion reference is malformed, or the artifact it names is missing or was changed."""


@dataclass(frozen=True)
class Champion:
    family: str
    version: int
    artifact_hash: str | None
    path: Path  # resolved against the project root

    @property
    def label(self) -> str:
        return f"{self.family} v{self.version}"


def champion_reference(registry: Registry, family: str) -> dict[str, Any]:
    """``{family, version, artifact_path, artifact_hash}`` of ``family``'s champion; version None without one."""
    from worldagent.registry.api import CHAMPION

    version = registry.get_alias(family, CHAMPION)
    if version is None:
        return {**NO_CHAMPION, "family": family}
    return {
        "family": family,
        "version": version.number,
        "artifact_path": version.artifact_path,
        "artifact_hash": version.artifact_hash,
    }


def read_champion_reference(path: Path) -> dict[str, Any]:
    """The reference in ``path``; a missing file means no champion (a fresh project)."""
    if not Path(path).exists():
        return dict(NO_CHAMPION)
    reference = read_json(path, "the champion reference", error=ChampionReferenceError)
    if not isinstance(reference, dict) or set(reference) != set(FIELDS):
        raise ChampionReferenceError(f"{path}: expected a champion reference with exactly the keys {', '.join(FIELDS)}")
    return reference


def write_champion_reference(path: Path, reference: dict[str, Any]) -> bool:
    """Pin ``reference`` in ``path``; returns whether the file changed (so DVC will rerun what reads it)."""
    text = pretty_json({key: reference.get(key) for key in FIELDS})
    if path.is_file() and files.read_text(path, what="the champion reference") == text:
        return False
    atomic_write_text(path, text)
    return True


def refresh_champion_reference(registry_url: str, family: str, path: Path) -> bool:
    """Pin the registry's current champion of ``family`` in ``path`` (after a deploy, promote or rollback)."""
    from worldagent.registry.api import open_registry

    with open_registry(registry_url) as registry:
        return write_champion_reference(path, champion_reference(registry, family))


def load_champion(path: Path, root: Path, family: str | None = None, *, verify: bool = True) -> Champion | None:
    """The champion a reference file pins, or None when it pins none.

    ``family``, when given, must match the file's. With ``verify`` the artifact must exist and, when
    the reference records a hash, have that content hash.
    """
    reference = read_champion_reference(path)
    if reference["version"] is None:
        return None
    if family is not None and reference["family"] != family:
        raise ChampionReferenceError(
            f"{path}: the reference is for family {reference['family']!r}, expected {family!r}"
        )
    kinds = {"family": str, "version": int, "artifact_path": str}
    for key, kind in kinds.items():
        if not isinstance(reference[key], kind) or isinstance(reference[key], bool):
            raise ChampionReferenceError(f"{path}: field {key!r} must be a {kind.__name__}")
    artifact = Path(reference["artifact_path"])
    artifact = artifact if artifact.is_absolute() else Path(root) / artifact
    champion = Champion(reference["family"], reference["version"], reference["artifact_hash"], artifact)
    if verify:
        actual = directory_hash(artifact)
        if actual is None:
            raise ChampionReferenceError(
                f"{path}: the champion ({champion.label}) points at {artifact}, which is missing or empty"
            )
        if champion.artifact_hash and actual != champion.artifact_hash:
            raise ChampionReferenceError(
                f"{path}: the champion ({champion.label}) at {artifact} has content sha256 {actual[:12]}…,"
                f" not the recorded {champion.artifact_hash[:12]}…; rewrite the reference from the registry"
            )
    return champion
