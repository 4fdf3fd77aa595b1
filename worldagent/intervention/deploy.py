"""The intervention predictor's deploy step (no Prefect, no DVC), on the shared registry and publishers.

Gate passed: register ``models/intervention/predictor`` in the registry family
(``intervention.family``), publish it with a model card to ``deploy.local_dir/<family>/vN`` (the
version's ``artifact_path`` then points there, so the champion survives the next training run),
and move the ``champion`` alias. The same bundle published before is not published again.
Gate failed: register it as ``rejected``, alert, keep the champion.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.intervention.pipeline import GATE_JSON, MANIFEST, METRICS_JSON, PREDICTOR_DIR, sqlite_target
from worldagent.io import sha256_file
from worldagent.registry.api import CHAMPION, open_registry
from worldagent.registry.deploy import Alert, DeployError, DeployResult, _relative, directory_hash, dvc_out_hash, git_revision, log_alert, params_hash
from worldagent.registry.modelcard import render_model_card
from worldagent.registry.publishers import LocalPublisher

log = logging.getLogger("worldagent.intervention.deploy")
CARD_METRICS = ("accuracy", "precision", "recall", "f1", "auc", "pr_auc", "threshold")


def _read(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DeployError(f"{path}: {what} not found (run `dvc repro intervention_gate` first)") from None
    except json.JSONDecodeError as error:
        raise DeployError(f"{path}:{error.lineno}:{error.colno}: invalid JSON in {what}: {error.msg}") from None
    if not isinstance(data, dict):
        raise DeployError(f"{path}: expected a JSON object")
    return data


def deploy_predictor(params: Params, root: Path = Path("."), alert: Alert = log_alert) -> DeployResult:
    root = Path(root)
    gate = _read(root / GATE_JSON, "the gate decision")
    if not isinstance(gate.get("passed"), bool):
        raise DeployError(f"{root / GATE_JSON}: expected a boolean 'passed'")
    metrics_all = _read(root / METRICS_JSON, "the evaluation metrics")
    metrics = {k: metrics_all.get(k) for k in CARD_METRICS}
    family = params.intervention.family
    bundle_rel = PREDICTOR_DIR.as_posix()
    bundle = root / bundle_rel
    reasons = [str(r) for r in gate.get("reasons", [])]
    manifest = root / MANIFEST
    provenance = {
        "artifact_hash": directory_hash(bundle),
        "git_revision": git_revision(root),
        "dvc_hash": dvc_out_hash(root, bundle_rel),
        "params_hash": params_hash(params),
        "data_hash": sha256_file(manifest) if manifest.is_file() else None,
    }
    if gate["passed"] and provenance["artifact_hash"] is None:
        raise DeployError(f"{bundle}: the gate passed but the predictor bundle is missing or empty")
    with open_registry(sqlite_target(params.registry.url, root)) as reg:
        champion = reg.get_alias(family, CHAMPION)
        current = champion.number if champion else None
        if not gate["passed"]:
            existing = reg.find_version(family, artifact_hash=provenance["artifact_hash"], statuses=("rejected",)) if provenance["artifact_hash"] else None
            version = existing or reg.register_version(family, artifact_path=bundle_rel, metrics=metrics, status="rejected", notes=reasons, **provenance)
            kept = f"the champion stays v{current}" if current is not None else "there is no champion yet"
            alert(f"{family} v{version.number} failed the gate and was not deployed; {kept}. Reasons: " + ("; ".join(reasons) or "none given"))
            return DeployResult("rejected", family, version.number, current, current, reasons)
        existing = reg.find_version(family, artifact_hash=provenance["artifact_hash"], statuses=("published",))
        if existing is not None:
            if current == existing.number:
                return DeployResult("unchanged", family, existing.number, current, current, reasons)
            move = reg.promote(family, existing.number)
            return DeployResult("deployed", family, existing.number, move.version, move.previous, reasons)
        version = reg.register_version(family, artifact_path=bundle_rel, metrics=metrics, status="registered", notes=reasons, **provenance)
        clip = (metrics_all.get("model") or {}).get("clip", "open_clip")
        card = render_model_card(
            family=family, version=version.number, base_model=f"open_clip:{clip}", metrics={"predictor": metrics},
            data_hash=provenance["data_hash"], git_revision=provenance["git_revision"], params=params.intervention.model_dump(mode="json"),
            params_hash=provenance["params_hash"], artifact_hash=provenance["artifact_hash"], dvc_hash=provenance["dvc_hash"], candidate="predictor",
            tags=("intervention-predictor", "open_clip", "browser-agent"),
            intended_use="Predicts, at each step of a browser agent's run, whether a human is about to be needed. Load with `InterventionPredictor.load(path)`.",
        )
        try:
            ref = LocalPublisher(root=root / params.deploy.local_dir, family=family).publish(bundle, card, version.label)
        except Exception as error:
            reg.update_version(family, version.number, status="failed", notes=[*reasons, f"publish failed: {error}"])
            alert(f"{family} v{version.number} passed the gate but publishing failed: {error}; the champion was not moved")
            raise
        reg.update_version(family, version.number, status="published", artifact_path=_relative(Path(ref.uri), root), published_uri=ref.uri, published_revision=ref.revision)
        move = reg.promote(family, version.number)
        log.info("%s v%d published to %s and promoted to champion", family, version.number, ref.uri)
        return DeployResult("deployed", family, version.number, move.version, move.previous, reasons, ref.to_dict())
