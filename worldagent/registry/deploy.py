"""The one deploy step of every model family (no Prefect, no DVC): gate.json -> registry, publishers, champion.

- The artifact must be the one the gate scored: its content hash
  (:func:`worldagent.io.directory_hash`) must equal gate.json's ``artifact_hash``, or deploy
  refuses with a message that says so. The registry version records the same hash.
- Gate passed: register the candidate, publish it with its model card (always to the local store
  ``deploy.local_dir``, which the version's ``artifact_path`` then points at, so the champion
  survives the next training run overwriting the training output; also to the Hub when
  ``deploy.publisher`` is ``hub``), mark it published and make it the champion. The same
  artifact published before is not published again.
- Publishing failed: every copy this attempt made is removed again, the version is marked
  ``failed`` (one record), an alert is raised and the error re-raised; a retry of the same
  artifact reuses that failed version instead of registering another.
- Gate failed: register the candidate as ``rejected``, raise an alert, keep the champion.
  A failing gate never reaches a publisher.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldagent.config import DeployParams, Params
from worldagent.errors import InputError
from worldagent.evaluation.family import Family
from worldagent.evaluation.gate import read_gate
from worldagent.guard.yaml import read_yaml
from worldagent.io import canonical_json, directory_hash, read_json, sha256_file
from worldagent.registry.api import CHAMPION, Registry, Version, open_registry
from worldagent.registry.db import database_url
from worldagent.registry.modelcard import render_model_card
from worldagent.registry.publishers import HubPublisher, LocalPublisher, PublishedRef, Publisher

log = logging.getLogger("worldagent.deploy")
Alert = Callable[[str], None]


class DeployError(InputError):
    """Deploy inputs are missing or invalid (gate.json, artifact, publisher configuration)."""


def log_alert(message: str) -> None:
    log.error("ALERT: %s", message)


@dataclass(frozen=True)
class DeployResult:
    action: str  # deployed | unchanged | rejected
    family: str
    version: int
    champion: int | None
    previous_champion: int | None
    reasons: list[str] = field(default_factory=list)
    published: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "family": self.family,
            "version": self.version,
            "champion": self.champion,
            "previous_champion": self.previous_champion,
            "reasons": list(self.reasons),
            "published": self.published,
        }


# -- provenance ---------------------------------------------------------------------------------


def git_revision(root: Path) -> str | None:
    """``git rev-parse HEAD`` in ``root`` (None outside a repository or without git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def params_hash(params: Params) -> str:
    """The whole run configuration's hash: the registry version's provenance (so it reads every section)."""
    return hashlib.sha256(canonical_json(params.model_dump(mode="json")).encode("utf-8")).hexdigest()


def dvc_out_hash(root: Path, out_path: str) -> str | None:
    """The hash dvc.lock records for an output path (``md5`` of a ``.dir``), read as plain YAML."""
    lock = root / "dvc.lock"
    try:
        data = read_yaml(lock, what="the DVC lock file") or {}
    except InputError:  # missing, unreadable or over a YAML limit: no recorded hash
        return None
    stages = data.get("stages") if isinstance(data, Mapping) else None
    for stage in (stages or {}).values() if isinstance(stages, Mapping) else ():
        for out in (stage.get("outs") or []) if isinstance(stage, Mapping) else ():
            if isinstance(out, Mapping) and str(out.get("path", "")).rstrip("/") == out_path.rstrip("/"):
                value = out.get("md5") or out.get("hash") or out.get("etag")
                return str(value) if value else None
    return None


def make_publishers(
    settings: DeployParams, root: Path, family: str, env: Mapping[str, str] | None = None
) -> list[Publisher]:
    """The local store (always: ``deploy.local_dir``, what the registry's champion loads from), plus
    the Hugging Face Hub when ``deploy.publisher`` is ``hub`` (needs ``deploy.hub_repo`` and HF_TOKEN).
    The Hub comes last, so a failure there can still be undone locally."""
    env = os.environ if env is None else env
    publishers: list[Publisher] = [LocalPublisher(root=root / settings.local_dir, family=family)]
    if settings.publisher == "hub":
        if not settings.hub_repo:
            raise DeployError("deploy.publisher is 'hub' but deploy.hub_repo is not set in params.yaml")
        token = env.get("HF_TOKEN")
        if not token:
            raise DeployError("deploy.publisher is 'hub' but the HF_TOKEN environment variable is not set")
        publishers.append(
            HubPublisher(
                repo_id=settings.hub_repo,
                token=token,
                endpoint=env.get("HF_ENDPOINT") or None,
                private=settings.private,
            )
        )
    return publishers


# -- deploy -------------------------------------------------------------------------------------


def verify_artifact(gate: Mapping[str, Any], gate_json: Path, artifact_dir: Path) -> str | None:
    """The artifact's content hash, refusing a passed gate whose scored artifact is not this one."""
    actual = directory_hash(artifact_dir)
    if not gate["passed"]:
        return actual
    scored = gate.get("artifact_hash")
    if actual is None:
        raise DeployError(f"{artifact_dir}: the gate passed but the candidate artifact directory is missing or empty")
    if not scored:
        raise DeployError(
            f"{gate_json}: the gate decision records no artifact_hash, so it cannot prove it scored {artifact_dir};"
            " rerun the gate stage on this artifact"
        )
    if scored != actual:
        raise DeployError(
            f"{artifact_dir}: its content (sha256 {actual[:12]}…) is not the artifact the gate scored"
            f" (sha256 {str(scored)[:12]}… in {gate_json}); rerun evaluate and gate on it before deploying"
        )
    return actual


def deploy(
    family: Family,
    params: Params,
    *,
    gate_json: Path,
    artifact_dir: Path,
    metrics_json: Path | None = None,
    data_manifest: Path | None = None,
    root: Path = Path("."),
    publishers: Sequence[Publisher] | None = None,
    registry: Registry | None = None,
    alert: Alert = log_alert,
    env: Mapping[str, str] | None = None,
) -> DeployResult:
    """Act on ``gate_json`` for the artifact in ``artifact_dir`` (see the module docstring).

    ``params`` is the whole run configuration: its hash is the version's provenance, and ``family``
    picks its own sections from it (registry name, model card). ``metrics_json`` is the evaluation output whose metrics go on the model card and the registry
    version (missing: none); ``data_manifest`` is hashed as the version's data hash.
    """
    root = Path(root)
    gate = read_gate(gate_json, DeployError)
    candidate = str(gate.get("candidate") or "candidate")
    registry_family = family.registry_family(params)
    artifact_hash = verify_artifact(gate, gate_json, artifact_dir)
    metrics_file = (
        read_json(metrics_json, "the evaluation metrics", expect=dict, error=DeployError)
        if metrics_json and metrics_json.exists()
        else {}
    )
    models = family.card_metrics(metrics_file, candidate)
    artifact_rel = _relative(artifact_dir, root)
    provenance = {
        "artifact_hash": artifact_hash,
        "git_revision": git_revision(root),
        "dvc_hash": dvc_out_hash(root, artifact_rel),
        "params_hash": params_hash(params),
        "data_hash": sha256_file(data_manifest) if data_manifest and data_manifest.is_file() else None,
    }
    reasons = [str(r) for r in gate.get("reasons", [])]
    if gate["passed"] and publishers is None:
        publishers = make_publishers(
            params.deploy, root, registry_family, env
        )  # fail on bad configuration before registering
    card = _CardInputs(family, params, candidate, models, metrics_file, provenance)
    own = registry is None
    reg = registry or open_registry(database_url(params.registry.url, root))
    try:
        champion = reg.get_alias(registry_family, CHAMPION)
        champion_number = champion.number if champion else None
        metrics = dict(models.get(candidate, {}))
        if not gate["passed"]:
            return _reject(reg, registry_family, artifact_rel, metrics, provenance, reasons, champion_number, alert)
        assert publishers is not None
        return _publish(
            reg,
            list(publishers),
            root,
            registry_family,
            artifact_dir,
            artifact_rel,
            metrics,
            card,
            reasons,
            champion_number,
            alert,
        )
    finally:
        if own:
            reg.close()


@dataclass(frozen=True)
class _CardInputs:
    family: Family
    params: Params
    candidate: str
    models: Mapping[str, Mapping[str, Any]]
    metrics_file: Mapping[str, Any]
    provenance: Mapping[str, Any]

    def render(self, registry_family: str, version: int) -> str:
        return render_model_card(
            family=registry_family,
            version=version,
            base_model=self.family.base_model(self.params, self.metrics_file),
            metrics=self.models,
            data_hash=self.provenance["data_hash"],
            git_revision=self.provenance["git_revision"],
            params=self.family.card_params(self.params),
            params_hash=self.provenance["params_hash"],
            artifact_hash=self.provenance["artifact_hash"],
            dvc_hash=self.provenance["dvc_hash"],
            candidate=self.candidate,
            **({"tags": self.family.tags} if self.family.tags else {}),
            **({"intended_use": self.family.intended_use} if self.family.intended_use else {}),
        )


def _reject(
    reg: Registry,
    family: str,
    artifact_rel: str,
    metrics: dict[str, Any],
    provenance: dict[str, Any],
    reasons: list[str],
    champion: int | None,
    alert: Alert,
) -> DeployResult:
    artifact_hash = provenance["artifact_hash"]
    existing = reg.find_version(family, artifact_hash=artifact_hash, statuses=("rejected",)) if artifact_hash else None
    version = existing or reg.register_version(
        family, artifact_path=artifact_rel, metrics=metrics, status="rejected", notes=reasons, **provenance
    )
    kept = f"the champion stays v{champion}" if champion is not None else "there is no champion yet"
    alert(
        f"{family} v{version.number} failed the gate and was not deployed; {kept}. Reasons: "
        + ("; ".join(reasons) or "none given")
    )
    return DeployResult("rejected", family, version.number, champion, champion, reasons)


def _publish(
    reg: Registry,
    publishers: list[Publisher],
    root: Path,
    family: str,
    artifact_dir: Path,
    artifact_rel: str,
    metrics: dict[str, Any],
    card: _CardInputs,
    reasons: list[str],
    champion: int | None,
    alert: Alert,
) -> DeployResult:
    artifact_hash = card.provenance["artifact_hash"]
    existing = reg.find_version(family, artifact_hash=artifact_hash, statuses=("published",))
    if existing is not None:  # this exact artifact was published before: never publish it twice
        if champion == existing.number:
            log.info("%s v%d is already the champion; nothing to deploy", family, existing.number)
            return DeployResult("unchanged", family, existing.number, champion, champion, reasons, _published(existing))
        move = reg.promote(family, existing.number)
        return DeployResult(
            "deployed", family, existing.number, move.version, move.previous, reasons, _published(existing)
        )

    failed = reg.find_version(family, artifact_hash=artifact_hash, statuses=("failed",))
    if failed is not None:  # a retry after a failed publish: reuse that record, never add another
        version = reg.update_version(family, failed.number, status="registered", notes=reasons)
    else:
        version = reg.register_version(
            family, artifact_path=artifact_rel, metrics=metrics, status="registered", notes=reasons, **card.provenance
        )
    markdown = card.render(family, version.number)
    refs: list[PublishedRef] = []
    try:
        for publisher in publishers:
            refs.append(publisher.publish(artifact_dir, markdown, version.label))
    except Exception as error:
        for publisher, ref in reversed(list(zip(publishers, refs, strict=False))):
            _retract(publisher, ref)
        reg.update_version(family, version.number, status="failed", notes=[*reasons, f"publish failed: {error}"])
        alert(f"{family} v{version.number} passed the gate but publishing failed: {error}; the champion was not moved")
        raise
    local = next((ref for ref in refs if ref.kind == "local"), None)
    main_ref = refs[-1] if refs else None
    reg.update_version(
        family,
        version.number,
        status="published",
        artifact_path=_relative(Path(local.uri), root) if local else None,
        published_uri=main_ref.uri if main_ref else None,
        published_revision=main_ref.revision if main_ref else None,
    )
    move = reg.promote(family, version.number)
    where = ", ".join(ref.uri for ref in refs) or "nowhere"
    previous = f"v{move.previous}" if move.previous else "none"
    log.info("%s v%d published to %s and promoted to champion (was %s)", family, version.number, where, previous)
    published = main_ref.to_dict() if main_ref else None
    if published is not None:
        published["all"] = [ref.to_dict() for ref in refs]
    return DeployResult("deployed", family, version.number, move.version, move.previous, reasons, published)


def _retract(publisher: Publisher, ref: PublishedRef) -> None:
    retract = getattr(publisher, "retract", None)  # publishers written before retract existed have none
    if retract is None:
        log.warning("%s cannot undo its copy at %s after the failed deploy", publisher, ref.uri)
        return
    try:
        retract(ref)
    except Exception as error:  # noqa: BLE001 - the publish error is the one to report
        log.warning("could not remove %s after the failed deploy: %s", ref.uri, error)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _published(version: Version) -> dict[str, Any]:
    return {
        "kind": None,
        "uri": version.published_uri,
        "version_label": version.label,
        "revision": version.published_revision,
        "files": [],
    }


# -- each family's deploy with the project's default paths (what the stage entry points call) ----
