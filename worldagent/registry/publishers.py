"""Publishers: where a gated adapter goes, with its model card as README.md.

- :class:`LocalPublisher` copies it to ``<root>/<family>/<label>/`` atomically and never overwrites.
- :class:`HubPublisher` pushes it to a Hugging Face model repo in one commit and tags that commit.

Tokens are kept out of ``repr``, logs and error messages.
"""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from worldagent.errors import RunError
from worldagent.io import ARTIFACT_IGNORE, atomic_directory, directory_files

log = logging.getLogger("worldagent.publish")

# Training leftovers that are not part of the published adapter (the same list the artifact hash skips).
DEFAULT_IGNORE: tuple[str, ...] = ARTIFACT_IGNORE
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class PublishError(RunError):
    """Publishing failed or would overwrite something already published."""


@dataclass(frozen=True)
class PublishedRef:
    kind: Literal["local", "hub"]
    uri: str  # a directory (local) or a Hub URL
    version_label: str  # "v3"
    revision: str | None = None  # the Hub commit the tag points at
    files: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "uri": self.uri,
            "version_label": self.version_label,
            "revision": self.revision,
            "files": list(self.files),
        }


@runtime_checkable
class Publisher(Protocol):
    def publish(self, artifact_dir: Path, card_markdown: str, version_label: str) -> PublishedRef: ...

    def retract(self, ref: PublishedRef) -> None:
        """Undo ``publish`` after a later publisher failed, so a failed deploy leaves no copies."""


def artifact_files(artifact_dir: Path, ignore: Sequence[str] = DEFAULT_IGNORE) -> list[str]:
    """Relative posix paths of the files to publish, sorted (:func:`worldagent.io.directory_files`)."""
    artifact_dir = Path(artifact_dir)
    if not artifact_dir.is_dir():
        raise PublishError(f"{artifact_dir}: adapter directory not found")
    files = directory_files(artifact_dir, tuple(ignore))
    if not files:
        raise PublishError(f"{artifact_dir}: adapter directory has no files to publish")
    return files


def _check_label(version_label: str) -> None:
    if not _LABEL.match(version_label):
        raise PublishError(f"invalid version label {version_label!r}")


@dataclass(frozen=True)
class LocalPublisher:
    """Publishes to ``<root>/<family>/<version_label>/`` (adapter files plus README.md)."""

    root: Path
    family: str = "world-agent"
    ignore: tuple[str, ...] = DEFAULT_IGNORE

    def publish(self, artifact_dir: Path, card_markdown: str, version_label: str) -> PublishedRef:
        _check_label(version_label)
        files = artifact_files(Path(artifact_dir), self.ignore)
        parent = Path(self.root) / self.family
        target = parent / version_label
        if target.exists():
            raise PublishError(f"{target} already exists: a published version is never overwritten")
        try:
            with atomic_directory(target, replace=False, durable=True) as staging:
                for rel in files:
                    destination = staging / rel
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(Path(artifact_dir) / rel, destination)
                (staging / "README.md").write_text(card_markdown, encoding="utf-8")
        except FileExistsError:
            raise PublishError(f"{target} already exists: a published version is never overwritten") from None
        log.info("published %s to %s", version_label, target)
        return PublishedRef(
            kind="local", uri=str(target), version_label=version_label, files=tuple(sorted([*files, "README.md"]))
        )

    def retract(self, ref: PublishedRef) -> None:
        target = Path(self.root) / self.family / ref.version_label
        if ref.kind == "local" and Path(ref.uri) == target:
            shutil.rmtree(target, ignore_errors=True)
            log.info("retracted %s from %s", ref.version_label, target)


def _hf_api(endpoint: str | None, token: str) -> object:
    from huggingface_hub import HfApi

    return HfApi(endpoint=endpoint, token=token)


def _scrub(message: str, token: str | None) -> str:
    return message.replace(token, "***") if token else message


@dataclass(frozen=True)
class HubPublisher:
    """Publishes to a Hugging Face model repo: create (exist_ok), one commit, tag ``version_label`` on it."""

    repo_id: str
    token: str = field(repr=False)
    endpoint: str | None = None
    private: bool = True
    ignore: tuple[str, ...] = DEFAULT_IGNORE

    def __repr__(self) -> str:  # never show the token, not even through dataclass machinery
        return (
            f"HubPublisher(repo_id={self.repo_id!r}, endpoint={self.endpoint!r}, private={self.private!r}, token=***)"
        )

    __str__ = __repr__

    def publish(self, artifact_dir: Path, card_markdown: str, version_label: str) -> PublishedRef:
        _check_label(version_label)
        from huggingface_hub import CommitOperationAdd

        files = artifact_files(Path(artifact_dir), self.ignore)
        operations = [
            CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(Path(artifact_dir) / rel)) for rel in files
        ]
        operations.append(CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=card_markdown.encode("utf-8")))
        api = _hf_api(self.endpoint, self.token)
        try:
            url = api.create_repo(self.repo_id, repo_type="model", private=self.private, exist_ok=True)  # type: ignore[attr-defined]
            # One commit with the adapter and its card (upload_folder may split large folders into
            # several commits; the tag must point at a commit that holds the whole version).
            commit = api.create_commit(  # type: ignore[attr-defined]
                self.repo_id,
                operations,
                commit_message=f"Publish {version_label}",
                commit_description=f"Adapter {version_label} with its model card, published by the pipeline.",
                repo_type="model",
            )
            api.create_tag(
                self.repo_id,
                tag=version_label,
                revision=commit.oid,
                tag_message=f"Release {version_label}",
                repo_type="model",
            )  # type: ignore[attr-defined]
        except Exception as error:  # noqa: BLE001 - re-raised with the token scrubbed
            raise PublishError(
                f"publishing {version_label} to the Hub repo {self.repo_id} failed: {_scrub(str(error), self.token)}"
            ) from None
        log.info("published %s to %s at commit %s", version_label, self.repo_id, commit.oid)
        return PublishedRef(
            kind="hub",
            uri=str(url),
            version_label=version_label,
            revision=commit.oid,
            files=tuple(sorted([*files, "README.md"])),
        )

    def retract(self, ref: PublishedRef) -> None:
        """Nothing to undo: deploy publishes to the Hub last, so no later publisher can fail after it."""


def upload_datasets(
    files: Iterable[Path],
    repo_id: str,
    token: str,
    endpoint: str | None = None,
    *,
    private: bool = True,
    commit_message: str = "Upload world-agent datasets",
) -> PublishedRef:
    """Push dataset files (by file name, flat) to a Hugging Face dataset repo in one commit."""
    from huggingface_hub import CommitOperationAdd

    paths = sorted(Path(f) for f in files)
    if not paths:
        raise PublishError("no dataset files to upload")
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise PublishError(f"dataset files not found: {', '.join(missing)}")
    operations = [CommitOperationAdd(path_in_repo=p.name, path_or_fileobj=str(p)) for p in paths]
    api = _hf_api(endpoint, token)
    try:
        url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)  # type: ignore[attr-defined]
        commit = api.create_commit(repo_id, operations, commit_message=commit_message, repo_type="dataset")  # type: ignore[attr-defined]
    except Exception as error:  # noqa: BLE001
        raise PublishError(
            f"uploading datasets to the Hub dataset repo {repo_id} failed: {_scrub(str(error), token)}"
        ) from None
    log.info("uploaded %d dataset files to %s at commit %s", len(paths), repo_id, commit.oid)
    return PublishedRef(
        kind="hub", uri=str(url), version_label=commit.oid, revision=commit.oid, files=tuple(p.name for p in paths)
    )
