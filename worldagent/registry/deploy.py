"""The deploy step's logic (no Prefect, no DVC): gate decision -> registry, publisher, champion alias.

- Gate passed: register the candidate, publish it with its model card (always to the local store
  ``deploy.local_dir``, which the version's ``artifact_path`` then points at, so the champion
  survives the next training run overwriting ``models/world_agent/<candidate>``; also to the Hub
  when ``deploy.publisher`` is ``hub``), mark it published and make it the champion. The same
  adapter published before is not published again.
- Gate failed: register the candidate as ``rejected``, raise an alert, keep the champion.
  A failing gate never reaches a publisher.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.engine import make_url

from worldagent.config import Params
from worldagent.io import canonical_json, sha256_file
from worldagent.registry.api import CHAMPION, Registry, Version, open_registry
from worldagent.registry.modelcard import render_model_card
from worldagent.registry.publishers import HubPublisher, LocalPublisher, PublishedRef, PublishError, Publisher, artifact_files

GATE_PATH = Path("reports/world_agent/gate.json")
EVAL_PATH = Path("reports/world_agent/eval.json")
MANIFEST_PATH = Path("data/generated/world_agent/manifest.json")
ADAPTERS_DIR = Path("models/world_agent")

log = logging.getLogger("worldagent.deploy")
Alert = Callable[[str], None]


class DeployError(ValueError):
    """Deploy inputs are missing or invalid (gate.json, adapter, publisher configuration)."""


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
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def params_hash(params: Params) -> str:
    return hashlib.sha256(canonical_json(params.model_dump(mode="json")).encode("utf-8")).hexdigest()


def directory_hash(directory: Path) -> str | None:
    """sha256 over the published files of an adapter directory (paths and contents), or None."""
    try:
        files = artifact_files(directory)
    except PublishError:
        return None
    digest = hashlib.sha256()
    for rel in files:
        digest.update(f"{rel}\0{sha256_file(directory / rel)}\n".encode())
    return digest.hexdigest()


def dvc_out_hash(root: Path, out_path: str) -> str | None:
    """The hash dvc.lock records for an output path (``md5`` of a ``.dir``), read as plain YAML."""
    lock = root / "dvc.lock"
    try:
        data = yaml.safe_load(lock.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    for stage in (data.get("stages") or {}).values():
        for out in stage.get("outs") or []:
            if isinstance(out, Mapping) and str(out.get("path", "")).rstrip("/") == out_path.rstrip("/"):
                value = out.get("md5") or out.get("hash") or out.get("etag")
                return str(value) if value else None
    return None


def resolve_registry_url(url: str, root: Path) -> str:
    """A relative SQLite path in params is relative to the project root, not the current directory."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return url
    if Path(parsed.database).is_absolute() or parsed.database.startswith("file:"):
        return url
    return parsed.set(database=str((root / parsed.database).resolve())).render_as_string(hide_password=False)


def make_publishers(params: Params, root: Path, env: Mapping[str, str] | None = None) -> list[Publisher]:
    """The local store (always: ``deploy.local_dir``, what the registry's champion loads from), plus
    the Hugging Face Hub when ``deploy.publisher`` is ``hub`` (needs ``deploy.hub_repo`` and HF_TOKEN)."""
    env = os.environ if env is None else env
    publishers: list[Publisher] = [LocalPublisher(root=root / params.deploy.local_dir, family=params.registry.family)]
    if params.deploy.publisher == "hub":
        if not params.deploy.hub_repo:
            raise DeployError("deploy.publisher is 'hub' but deploy.hub_repo is not set in params.yaml")
        token = env.get("HF_TOKEN")
        if not token:
            raise DeployError("deploy.publisher is 'hub' but the HF_TOKEN environment variable is not set")
        publishers.append(HubPublisher(repo_id=params.deploy.hub_repo, token=token, endpoint=env.get("HF_ENDPOINT") or None, private=params.deploy.private))
    return publishers


# -- inputs -------------------------------------------------------------------------------------


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DeployError(f"{path}: {what} not found (run the pipeline up to the gate stage first)") from None
    except json.JSONDecodeError as error:
        raise DeployError(f"{path}:{error.lineno}:{error.colno}: invalid JSON in {what}: {error.msg}") from None


def read_gate(root: Path) -> dict[str, Any]:
    gate = _read_json(root / GATE_PATH, "the gate decision")
    if not isinstance(gate, dict) or not isinstance(gate.get("passed"), bool):
        raise DeployError(f"{root / GATE_PATH}: expected an object with a boolean 'passed'")
    reasons = gate.get("reasons", [])
    if not isinstance(reasons, list):
        raise DeployError(f"{root / GATE_PATH}: 'reasons' must be a list of strings")
    return gate


def read_eval_metrics(root: Path) -> dict[str, dict[str, Any]]:
    path = root / EVAL_PATH
    if not path.exists():
        return {}
    data = _read_json(path, "the evaluation metrics")
    models = data.get("models") if isinstance(data, dict) else None
    return {str(k): dict(v) for k, v in models.items() if isinstance(v, Mapping)} if isinstance(models, Mapping) else {}


def _card_metrics(candidate: str, models: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    order = [candidate, "champion", "base", "reference"]
    out = {name: models[name] for name in order if name in models}
    return out if candidate in out else {}


# -- deploy -------------------------------------------------------------------------------------


def deploy(
    params: Params,
    root: Path = Path("."),
    *,
    publishers: Sequence[Publisher] | None = None,
    registry: Registry | None = None,
    alert: Alert = log_alert,
    env: Mapping[str, str] | None = None,
) -> DeployResult:
    """Act on ``reports/world_agent/gate.json`` for the candidate adapter (see the module docstring)."""
    root = Path(root)
    gate = read_gate(root)
    candidate = str(gate.get("candidate") or params.compare.candidate)
    family = params.registry.family
    adapter_rel = (ADAPTERS_DIR / candidate).as_posix()
    adapter_dir = root / adapter_rel
    models = read_eval_metrics(root)
    metrics = dict(models.get(candidate, {}))
    reasons = [str(r) for r in gate.get("reasons", [])]
    manifest = root / MANIFEST_PATH
    provenance = {
        "artifact_hash": directory_hash(adapter_dir),
        "git_revision": git_revision(root),
        "dvc_hash": dvc_out_hash(root, adapter_rel),
        "params_hash": params_hash(params),
        "data_hash": sha256_file(manifest) if manifest.is_file() else None,
    }
    if gate["passed"] and provenance["artifact_hash"] is None:
        raise DeployError(f"{adapter_dir}: the gate passed but the candidate adapter directory is missing or empty")
    if gate["passed"] and publishers is None:
        publishers = make_publishers(params, root, env)  # fail on bad configuration before registering anything

    own = registry is None
    reg = registry or open_registry(resolve_registry_url(params.registry.url, root))
    try:
        champion = reg.get_alias(family, CHAMPION)
        champion_number = champion.number if champion else None
        if not gate["passed"]:
            return _reject(reg, family, adapter_rel, metrics, provenance, reasons, champion_number, alert)
        assert publishers is not None
        return _publish(reg, list(publishers), root, params, family, candidate, adapter_dir, adapter_rel, metrics, models, provenance, reasons, champion_number, alert)
    finally:
        if own:
            reg.close()


def _reject(
    reg: Registry,
    family: str,
    adapter_rel: str,
    metrics: dict[str, Any],
    provenance: dict[str, Any],
    reasons: list[str],
    champion: int | None,
    alert: Alert,
) -> DeployResult:
    existing = reg.find_version(family, artifact_hash=provenance["artifact_hash"], statuses=("rejected",)) if provenance["artifact_hash"] else None
    version = existing or reg.register_version(family, artifact_path=adapter_rel, metrics=metrics, status="rejected", notes=reasons, **provenance)
    kept = f"the champion stays v{champion}" if champion is not None else "there is no champion yet"
    alert(f"{family} v{version.number} failed the gate and was not deployed; {kept}. Reasons: " + ("; ".join(reasons) or "none given"))
    return DeployResult("rejected", family, version.number, champion, champion, reasons)


def _publish(
    reg: Registry,
    publishers: list[Publisher],
    root: Path,
    params: Params,
    family: str,
    candidate: str,
    adapter_dir: Path,
    adapter_rel: str,
    metrics: dict[str, Any],
    models: Mapping[str, Mapping[str, Any]],
    provenance: dict[str, Any],
    reasons: list[str],
    champion: int | None,
    alert: Alert,
) -> DeployResult:
    existing = reg.find_version(family, artifact_hash=provenance["artifact_hash"], statuses=("published",))
    if existing is not None:  # this exact adapter was published before: never publish it twice
        if champion == existing.number:
            log.info("%s v%d is already the champion; nothing to deploy", family, existing.number)
            return DeployResult("unchanged", family, existing.number, champion, champion, reasons, _published(existing))
        move = reg.promote(family, existing.number)
        return DeployResult("deployed", family, existing.number, move.version, move.previous, reasons, _published(existing))

    version: Version = reg.register_version(family, artifact_path=adapter_rel, metrics=metrics, status="registered", notes=reasons, **provenance)
    card = render_model_card(
        family=family,
        version=version.number,
        base_model=params.model.base,
        metrics=_card_metrics(candidate, models),
        data_hash=provenance["data_hash"],
        git_revision=provenance["git_revision"],
        params=params.model_dump(mode="json"),
        params_hash=provenance["params_hash"],
        artifact_hash=provenance["artifact_hash"],
        dvc_hash=provenance["dvc_hash"],
        candidate=candidate,
    )
    refs: list[PublishedRef] = []
    try:
        for publisher in publishers:
            refs.append(publisher.publish(adapter_dir, card, version.label))
    except Exception as error:
        done = ", ".join(ref.uri for ref in refs)
        note = f"publish failed: {error}" + (f" (already published to {done})" if done else "")
        reg.update_version(family, version.number, status="failed", notes=[*reasons, note])
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
    log.info("%s v%d published to %s and promoted to champion (was %s)", family, version.number, where, f"v{move.previous}" if move.previous else "none")
    published = main_ref.to_dict() if main_ref else None
    if published is not None:
        published["all"] = [ref.to_dict() for ref in refs]
    return DeployResult("deployed", family, version.number, move.version, move.previous, reasons, published)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _published(version: Version) -> dict[str, Any]:
    return {"kind": None, "uri": version.published_uri, "version_label": version.label, "revision": version.published_revision, "files": []}
