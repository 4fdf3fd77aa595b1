"""The champion reference: the one small file through which a stage sees the registry's champion.

Evaluate and compare never read the registry: they read ``champion.json``, written outside deploy
(after it, or by hand after a promote or rollback) from the registry by :func:`champion_reference`.
Because it is an ordinary file, DVC sees it: a new champion reruns what compares against it, and an
unchanged champion leaves a no-op run a no-op. Its format::

    {"family": "world-agent", "version": 3, "sha256": "<content hash>", "path": "models/published/world-agent/v3"}
    {"family": "world-agent", "champion": null}          # no champion yet (the first run)

``path`` is relative to the project root (or absolute); ``sha256`` is the artifact's content hash
(:func:`worldagent.io.directory_hash`), checked again when the reference is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldagent.errors import InputError
from worldagent.io import atomic_write_text, directory_hash, pretty_json, read_json
from worldagent.registry.api import CHAMPION, Registry


class ChampionReferenceError(InputError):
    """The champion reference is malformed, or the artifact it names is missing or was changed."""


@dataclass(frozen=True)
class Champion:
    family: str
    version: int
    sha256: str
    path: Path  # absolute

    @property
    def label(self) -> str:
        return f"{self.family} v{self.version}"


def champion_reference(registry: Registry, family: str, root: Path | None = None) -> dict[str, Any]:
    """The champion reference of ``family`` from ``registry`` (see the module docstring).

    With ``root`` the hash is computed from the artifact on disk when the registry has none recorded.
    """
    version = registry.get_alias(family, CHAMPION)
    if version is None:
        return {"family": family, "champion": None}
    sha256 = version.artifact_hash
    if not sha256 and root is not None:
        path = Path(version.artifact_path)
        sha256 = directory_hash(path if path.is_absolute() else Path(root) / path)
    return {"family": family, "version": version.number, "sha256": sha256, "path": version.artifact_path}


def write_champion_reference(registry: Registry, family: str, out: Path, root: Path | None = None) -> dict[str, Any]:
    """Write :func:`champion_reference` to ``out`` only when it changed (so DVC sees no change otherwise)."""
    reference = champion_reference(registry, family, root)
    text = pretty_json(reference)
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        atomic_write_text(out, text)
    return reference


def load_champion(path: Path, root: Path, family: str | None = None, *, verify: bool = True) -> Champion | None:
    """The champion a reference file names, or None when it says there is none.

    ``family``, when given, must match the file's. With ``verify`` the artifact must exist and its
    content hash must be the recorded one: a reference is never silently followed to other weights.
    """
    data = read_json(
        path,
        "the champion reference",
        hint="write it with champion_reference",
        expect=dict,
        error=ChampionReferenceError,
    )
    if family is not None and data.get("family") != family:
        raise ChampionReferenceError(f"{path}: the reference is for family {data.get('family')!r}, expected {family!r}")
    if "champion" in data and data["champion"] is None:
        return None
    for key, kind in (("family", str), ("version", int), ("sha256", str), ("path", str)):
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            raise ChampionReferenceError(f"{path}: field {key!r} must be a {kind.__name__}")
    artifact = Path(data["path"])
    artifact = artifact if artifact.is_absolute() else Path(root) / artifact
    champion = Champion(family=data["family"], version=data["version"], sha256=data["sha256"], path=artifact)
    if verify:
        actual = directory_hash(artifact)
        if actual is None:
            raise ChampionReferenceError(
                f"{path}: the champion ({champion.label}) points at {artifact}, which is missing or empty"
            )
        if actual != champion.sha256:
            raise ChampionReferenceError(
                f"{path}: the champion ({champion.label}) at {artifact} has content sha256 {actual[:12]}…,"
                f" not the recorded {champion.sha256[:12]}…; rewrite the reference from the registry"
            )
    return champion


def refresh_champion_reference(registry_url: str, family: str, out: Path, root: Path) -> dict[str, Any]:
    """Open the registry at ``registry_url`` and :func:`write_champion_reference` (after a deploy, a
    promote or a rollback; before evaluate in a DAG that does not yet declare the file)."""
    from worldagent.registry.api import open_registry

    with open_registry(registry_url) as registry:
        return write_champion_reference(registry, family, out, root)
