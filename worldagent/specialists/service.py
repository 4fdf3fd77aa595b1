"""The platform operations (the seed names): feedback, jobs, training data, training, registry, evaluation.

One object, :class:`SpecialistsService`, over the feedback store, the shared model registry and the
trainer's HTTP contract. The FastAPI app (:mod:`worldagent.specialists.api`), the Prefect flow and
the tests call it; it imports neither Prefect nor DVC.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldagent.config import Params, SpecialistsParams, TinyModelParams
from worldagent.errors import InputError
from worldagent.io import directory_hash
from worldagent.registry.api import open_registry
from worldagent.registry.db import database_url, utcnow
from worldagent.specialists.constrained import DEFAULT_CHOICE
from worldagent.specialists.decisions import BrowserAction
from worldagent.specialists.store import FeedbackStore, NotFound, StoreError, open_store, parse_time
from worldagent.specialists.strategies import generate_training_data, is_held_out

ACTIVE = ("pending", "running")


class ServiceError(InputError):
    """Bad input to an operation (a 400); the message names the field."""


def family_for(prefix: str, agent_id: str) -> str:
    """Registry family of an agent's specialists: ``<prefix>-<agentId>`` with unsafe characters as '-'."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", f"{prefix}-{agent_id}")
    return name[:100]


@dataclass
class SpecialistsService:
    store: FeedbackStore
    specialists: SpecialistsParams
    tiny: TinyModelParams  # ``model.tiny``: the builtin base the resolver builds
    seed: int  # seeds a base the resolver builds
    root: Path
    registry_url: str
    trainer_url: str
    trainer_token: str | None = None

    @classmethod
    def from_params(cls, params: Params, root: Path = Path(".")) -> SpecialistsService:
        """The service the configuration describes: its ``specialists`` section, ``registry.url``, and
        ``model.tiny`` and ``seed`` for a base it builds."""
        root = Path(root).resolve()
        spec = params.specialists
        return cls(
            store=open_store(database_url(spec.store_url, root)),
            specialists=spec,
            tiny=params.model.tiny,
            seed=params.seed,
            root=root,
            registry_url=database_url(params.registry.url, root),
            trainer_url=os.environ.get("LOCAL_TRAINER_URL") or spec.trainer.url,
            trainer_token=os.environ.get("WORLDAGENT_TRAINER_TOKEN") or spec.trainer.token,
        )

    def close(self) -> None:
        self.store.close()

    @property
    def data_dir(self) -> Path:
        path = Path(self.specialists.data_dir)
        return path if path.is_absolute() else self.root / path

    # -- feedback -------------------------------------------------------------------------------

    def create_feedback(self, **fields: Any) -> dict[str, Any]:
        return self.store.add_feedback(
            target_type=fields["targetType"],
            target_id=fields["targetId"],
            execution_id=fields.get("executionId"),
            input=fields["input"],
            output=fields["output"],
            label=fields["label"],
            notes=fields.get("notes"),
            source=fields.get("source", "api"),
        )

    def list_feedback(
        self,
        *,
        targetId: str | None = None,
        targetType: str | None = None,
        since: str | None = None,
        label: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        return self.store.list_feedback(
            target_id=targetId, target_type=targetType, since=parse_time(since), label=label, limit=limit
        )

    def record_browser_actions(
        self,
        *,
        targetId: str,
        task: str,
        actions: Sequence[Mapping[str, Any]],
        targetType: str = "agent",
        executionId: str | None = None,
    ) -> dict[str, Any]:
        """Record mode: a person's own browser actions become good rows (and one execution trail)."""
        if not actions:
            raise ServiceError("actions: record at least one action")
        execution_id = executionId or f"record-{uuid.uuid4().hex[:12]}"
        previous: list[dict[str, Any]] = []
        rows, steps = [], []
        for step in actions:
            action = BrowserAction.model_validate(
                {k: step.get(k) for k in ("action", "selectorOrRef", "value")}
            ).model_dump()
            snapshot = str(step.get("pageSnapshot", ""))
            rows.append(
                self.store.add_feedback(
                    target_type=targetType,
                    target_id=targetId,
                    execution_id=execution_id,
                    input={"pageSnapshot": snapshot, "task": task, "previousActions": list(previous)},
                    output=action,
                    label="good",
                    notes="recorded from a person's browser actions",
                    source="record",
                )
            )
            steps.append({"kind": "browser", "pageSnapshot": snapshot, "action": action})
            previous.append(action)
        self.store.add_execution(
            execution_id=execution_id, target_type=targetType, target_id=targetId, task=task, steps=steps
        )
        return {"executionId": execution_id, "feedback": rows}

    def create_execution(
        self, *, id: str, targetId: str, task: str, steps: Sequence[Mapping[str, Any]], targetType: str = "agent"
    ) -> dict[str, Any]:
        return self.store.add_execution(
            execution_id=id, target_type=targetType, target_id=targetId, task=task, steps=steps
        )

    # -- improvement jobs -----------------------------------------------------------------------

    def create_improvement_job(
        self,
        *,
        name: str,
        scopeType: str,
        scopeId: str,
        instanceRefs: Sequence[str] = (),
        architectureSpec: Mapping[str, Any] | None = None,
        strategy: str = "from_feedback",
        currentModelRef: str | None = None,
    ) -> dict[str, Any]:
        if currentModelRef is not None:
            currentModelRef = str(self._confined(currentModelRef, "currentModelRef"))
        return self.store.create_job(
            name=name,
            scope_type=scopeType,
            scope_id=scopeId,
            instance_refs=instanceRefs,
            architecture_spec=architectureSpec,
            strategy=strategy,
            current_model_ref=currentModelRef,
        )

    def update_improvement_job(self, job_id: int, **changes: Any) -> dict[str, Any]:
        if changes.get("currentModelRef") is not None:
            changes["currentModelRef"] = str(self._confined(changes["currentModelRef"], "currentModelRef"))
        names = {
            "name": "name",
            "instanceRefs": "instance_refs",
            "architectureSpec": "architecture_spec",
            "strategy": "strategy",
            "currentModelRef": "current_model_ref",
            "lastTrainedAt": "last_trained_at",
        }
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise ServiceError(f"{', '.join(unknown)}: cannot be updated")
        values = {names[k]: (parse_time(v, k) if k == "lastTrainedAt" else v) for k, v in changes.items()}
        return self.store.update_job(job_id, **values)

    def get_improvement_job(self, job_id: int) -> dict[str, Any]:
        return self.store.get_job(job_id)

    def list_improvement_jobs(self, scopeType: str | None = None) -> list[dict[str, Any]]:
        return self.store.list_jobs(scopeType)

    # -- training data --------------------------------------------------------------------------

    def generate_training_data(
        self, job_id: int, *, strategy: str | None = None, since: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        from worldagent.specialists.browser_set import embedded_rows

        spec = self.specialists
        job = self.store.get_job(job_id)
        train = embedded_rows(spec.browser_set)[0] if spec.browser_set.train else []
        return generate_training_data(
            self.store,
            job,
            self.data_dir,
            strategy=strategy,
            since=parse_time(since),
            limit=min(limit or spec.max_rows, spec.max_rows),
            eval_fraction=spec.eval_fraction,
            extra_rows=train,
        )

    # -- training -------------------------------------------------------------------------------

    def _http(self) -> Any:
        import httpx

        headers = {"Authorization": f"Bearer {self.trainer_token}"} if self.trainer_token else {}
        return httpx.Client(
            base_url=self.trainer_url, timeout=self.specialists.trainer.request_timeout_s, headers=headers
        )

    def _submit(self, run: Mapping[str, Any]) -> dict[str, Any]:
        """POST /train; the run stays pending (with the reason) when the trainer cannot be reached."""
        import httpx

        job = self.store.get_job(run["jobId"])
        try:
            with self._http() as http:
                response = http.post(
                    "/train", json={"jobId": str(run["jobId"]), "datasetRef": run["datasetRef"], "runId": run["id"]}
                )
        except httpx.HTTPError as error:
            return self.store.update_run(
                run["id"],
                error=f"trainer unreachable at {self.trainer_url} ({type(error).__name__}); the run stays pending and is submitted again when polled",
            )
        if response.status_code in (200, 202, 409):
            return self.store.update_run(
                run["id"], error=None, config={**run["config"], "submitted": True, "scope": job["scopeId"]}
            )
        detail = _detail(response)
        if 400 <= response.status_code < 500:
            return self.store.update_run(
                run["id"], status="failed", error=f"trainer refused the run ({response.status_code}): {detail}"
            )
        return self.store.update_run(
            run["id"], error=f"trainer error {response.status_code}: {detail}; submitted again when polled"
        )

    def trigger_training(self, job_id: int, *, datasetRef: str) -> dict[str, Any]:
        if not datasetRef or not datasetRef.strip():
            raise ServiceError("datasetRef: must not be empty")
        self.store.get_job(job_id)
        path = Path(datasetRef)
        dataset = str(path if path.is_absolute() else (self.root / path).resolve())
        run_id = f"job{job_id}-{uuid.uuid4().hex[:12]}"
        run = self.store.create_run(
            run_id=run_id, job_id=job_id, backend="local", dataset_ref=dataset, config={"trainer": self.trainer_url}
        )
        return self._submit(run)

    def get_training_status(self, run_id: str) -> dict[str, Any]:
        """The run; while pending or running, the trainer is asked first (and the run resubmitted if it lost it)."""
        import httpx

        run = self.store.get_run(run_id)
        if run["status"] not in ACTIVE:
            return run
        try:
            with self._http() as http:
                response = http.get(f"/status/{run_id}")
        except httpx.HTTPError as error:
            return self.store.update_run(
                run_id,
                error=f"trainer unreachable at {self.trainer_url} ({type(error).__name__}); status unknown, poll again",
            )
        if response.status_code == 404:
            return self._submit(run)
        if response.status_code != 200:
            return self.store.update_run(
                run_id, error=f"trainer status error {response.status_code}: {_detail(response)}"
            )
        remote = response.json()
        status = remote.get("status")
        if status not in ("pending", "running", "completed", "failed"):
            return self.store.update_run(run_id, error=f"trainer answered an unknown status {status!r}")
        run = self.store.update_run(
            run_id,
            status=status,
            output_model_ref=remote.get("output_model_ref"),
            error=remote.get("error"),
            config={**run["config"], "metrics": remote.get("metrics", {})},
        )
        if status == "completed":
            self.store.update_job(run["jobId"], last_trained_at=utcnow())
        return run

    # -- registry -------------------------------------------------------------------------------

    @property
    def model_roots(self) -> list[Path]:
        """Where model references may point: the project's models and the specialists' data (trainer outputs)."""
        return [(self.root / "models").resolve(), self.data_dir.resolve()]

    def _confined(self, model_ref: str, field: str) -> Path:
        """``model_ref`` resolved (symlinks followed); refused unless it lies inside ``model_roots``."""
        path = Path(model_ref)
        resolved = (path if path.is_absolute() else self.root / path).resolve()
        if not any(resolved.is_relative_to(root) for root in self.model_roots):
            roots = ", ".join(str(root) for root in self.model_roots)
            raise ServiceError(f"{field}: {model_ref} is outside the model directories ({roots})")
        return resolved

    def _adapter(self, model_ref: str, field: str) -> Path:
        """A trained adapter inside ``model_roots`` whose files hash to what its stage.json records."""
        from worldagent.lm.training import TrainingError, read_stage

        path = self._confined(model_ref, field)
        try:
            claimed = read_stage(path).get("adapter_sha256")
            actual = adapter_files_hash(path)
        except (TrainingError, OSError, ValueError) as error:
            raise ServiceError(f"{field}: {model_ref} is not a complete trained adapter ({error})") from None
        if not isinstance(claimed, str) or not hmac.compare_digest(claimed, actual):
            raise ServiceError(f"{field}: {model_ref}: its files do not hash to the adapter_sha256 in its stage.json")
        return path

    def register_trained_model(self, *, outputModelRef: str, name: str, jobId: int) -> dict[str, Any]:
        """Register the adapter in the shared model registry (family ``<prefix>-<agentId>``) and make it the job's current model."""
        if not name or not name.strip():
            raise ServiceError("name: must not be empty")
        job = self.store.get_job(jobId)
        adapter = self._adapter(outputModelRef, "outputModelRef")
        family = family_for(self.specialists.family_prefix, job["scopeId"])
        metrics = self.store.latest_eval(str(adapter)) or {}
        with open_registry(self.registry_url) as registry:
            version = registry.register_version(
                family,
                artifact_path=str(adapter),
                metrics=registry_metrics(metrics),
                artifact_hash=directory_hash(adapter),  # the content hash, as every family records it
                notes=[f"name: {name}", f"job: {jobId}", f"{job['scopeType']}: {job['scopeId']}"],
            )
        link = self.store.add_specialist(
            agent_id=job["scopeId"],
            job_id=jobId,
            name=name,
            model_ref=str(adapter),
            family=family,
            version=version.number,
        )
        self.store.update_job(jobId, current_model_ref=str(adapter))
        return {**link, "registry": version.to_dict()}

    def list_specialist_models(self, agent_id: str) -> list[dict[str, Any]]:
        links = self.store.specialists(agent_id)
        if not links:
            return []
        with open_registry(self.registry_url) as registry:
            families = {link["family"] for link in links}
            versions = {(v.family, v.number): v for family in families for v in registry.list_versions(family)}
        out = []
        for link in links:
            version = versions.get((link["family"], link["version"]))
            out.append(
                {
                    **link,
                    "status": version.status if version else "missing",
                    "metrics": version.metrics if version else {},
                    "aliases": list(version.aliases) if version else [],
                }
            )
        return out

    # -- evaluation -----------------------------------------------------------------------------

    def base_dir(self) -> Path:
        """The configured base (``specialists.base_model``) through the one resolver the trainer uses too."""
        from worldagent.specialists.modeling import base_cache_dir, resolve_base

        return resolve_base(self.specialists.base_model, self.tiny, self.seed, base_cache_dir(self.data_dir))

    def evaluate_model(self, *, modelRef: str, jobId: int, rows: str = "heldout") -> dict[str, Any]:
        """Held-out action accuracy (right element and action) of the adapter on the configured base.

        Scored on the embedded browser set's held-out split (``action_accuracy``, what the gate uses),
        next to the untrained base's own score on the same rows (``base_action_accuracy``, measured
        once per base and cached), and on the job's held-out feedback rows when it has any (``feedback``).
        """
        from worldagent.lm.training import file_hash, read_stage
        from worldagent.specialists.browser_set import embedded_rows
        from worldagent.specialists.modeling import base_accuracy, base_cache_dir, evaluate_model_dir

        if rows not in ("heldout", "all"):
            raise ServiceError("rows: expected heldout or all")
        job = self.store.get_job(jobId)
        adapter = self._adapter(modelRef, "modelRef")
        spec = self.specialists
        feedback = self.store.list_feedback(target_id=job["scopeId"], limit=spec.max_rows)
        chosen = feedback if rows == "all" else [r for r in feedback if is_held_out(r["id"], spec.eval_fraction)]
        chosen = [_bounded_row(r) for r in chosen[:EVAL_MAX_ROWS]]  # the cost of one request is bounded
        _, heldout = embedded_rows(spec.browser_set)
        settings = {"constrained": spec.constrained, "batch_size": spec.eval_batch_size, "choice": DEFAULT_CHOICE}
        try:
            base_dir = self.base_dir()
            trained_on = read_stage(adapter).get("base_config_sha256")
            config = base_dir / "config.json"
            if trained_on and config.is_file() and trained_on != file_hash(config):
                raise ServiceError(
                    f"modelRef: {modelRef} was trained on another base than specialists.base_model "
                    f"({spec.base_model} → {base_dir})"
                )
            scored = evaluate_model_dir(
                base_dir, adapter, {"embedded": heldout, "feedback": chosen}, spec.eval_max_new_tokens, **settings
            )
            base = base_accuracy(base_dir, heldout, base_cache_dir(self.data_dir), spec.eval_max_new_tokens, **settings)
        except (OSError, ValueError, RuntimeError) as error:
            raise ServiceError(f"modelRef: cannot evaluate {modelRef}: {error}") from None
        metrics = {
            **scored["embedded"],
            "base_action_accuracy": base["action_accuracy"],
            "base_model": str(base_dir),
            "feedback": scored["feedback"],
            "rows": rows,
        }
        self.store.add_eval_result(model_ref=str(adapter), metrics=metrics, job_id=jobId)
        return {"modelRef": str(adapter), "jobId": jobId, **metrics}


# One evaluate_model request generates for at most this many rows, each prompt's page snapshot cut to
# EVAL_MAX_SNAPSHOT_CHARS (generation cost grows with both; a caller wanting more asks again per job).
EVAL_MAX_ROWS = 200
EVAL_MAX_SNAPSHOT_CHARS = 8_000


def registry_metrics(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The scalar metrics of an evaluation (the feedback rows' ones as ``feedback_<name>``), for the registry."""
    scalar = (int, float, str, bool, type(None))
    out = {k: v for k, v in metrics.items() if isinstance(v, scalar)}
    feedback = metrics.get("feedback")
    if isinstance(feedback, Mapping):
        out.update({f"feedback_{k}": v for k, v in feedback.items() if isinstance(v, scalar)})
    return out


def _bounded_row(row: Mapping[str, Any]) -> dict[str, Any]:
    value = row.get("input")
    if isinstance(value, Mapping) and isinstance(value.get("pageSnapshot"), str):
        value = {**value, "pageSnapshot": value["pageSnapshot"][:EVAL_MAX_SNAPSHOT_CHARS]}
    return {**row, "input": value}


def adapter_files_hash(adapter_dir: Path) -> str:
    """``tree_hash`` of an adapter as training computed it: every file but its own stage.json.

    A symlink anywhere inside is refused (:func:`worldagent.io.directory_files`): the hash would
    vouch for a file outside the directory.
    """
    from worldagent.lm.training import STAGE_FILE

    return directory_hash(adapter_dir, ignore=(STAGE_FILE,)) or hashlib.sha256(b"").hexdigest()


def _detail(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    return str(body.get("detail", body)) if isinstance(body, dict) else str(body)


__all__ = ["NotFound", "ServiceError", "SpecialistsService", "StoreError", "family_for"]
