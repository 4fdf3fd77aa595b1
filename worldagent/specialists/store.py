"""The feedback store: one SQLAlchemy database (SQLite by default, any URL in production).

Every method is one transaction and returns plain JSON-ready dicts in the API's camelCase shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from worldagent import safejson
from worldagent.errors import InputError
from worldagent.io import canonical_json
from worldagent.registry.db import Database, create_tables, make_engine, utcnow
from worldagent.specialists.db import (
    EvalResultRow,
    ExecutionRow,
    ExecutionStepRow,
    FeedbackRow,
    ImprovementJobRow,
    SpecialistModelRow,
    StoreBase,
    TrainingRunRow,
)
from worldagent.specialists.decisions import decode_json_value

TARGET_TYPES = ("agent", "chat")
LABELS = ("good", "bad")
RUN_STATUSES = ("pending", "running", "completed", "failed")


class StoreError(InputError):
    """Invalid input to the store; the message names the field."""


class NotFound(InputError, LookupError):
    pass


# A feedback row's input or output: a page snapshot with its task and previous actions fits easily.
MAX_VALUE_BYTES = 1_000_000


def feedback_value(value: Any, field: str) -> Any:
    """``value`` as it will be stored (JSON-encoded strings decoded), refused BEFORE it is stored when it
    nests deeper than ``safejson.MAX_DEPTH`` levels or is over ``MAX_VALUE_BYTES``: such a row would break
    every later listing and training run that reads it."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "[") and safejson.depth_exceeded_at(value) is not None:
        raise StoreError(f"{field}: JSON nested deeper than {safejson.MAX_DEPTH} levels")
    decoded = decode_json_value(value)
    if safejson.value_depth(decoded) > safejson.MAX_DEPTH:
        raise StoreError(f"{field}: nested deeper than {safejson.MAX_DEPTH} levels")
    size = len(decoded.encode("utf-8")) if isinstance(decoded, str) else len(canonical_json(decoded).encode("utf-8"))
    if size > MAX_VALUE_BYTES:
        raise StoreError(f"{field}: {size} bytes; the limit is {MAX_VALUE_BYTES}")
    return decoded


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="microseconds") + "Z"


def parse_time(value: str | datetime | None, field: str = "since") -> datetime | None:
    """ISO-8601 (``Z`` or an offset allowed) → a naive UTC datetime, as the store keeps them."""
    if value is None:
        return None
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise StoreError(f"{field}: not an ISO-8601 time: {value!r}") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def feedback_dict(row: FeedbackRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "targetType": row.target_type,
        "targetId": row.target_id,
        "executionId": row.execution_id,
        "input": row.input,
        "output": row.output,
        "label": row.label,
        "notes": row.notes,
        "source": row.source,
        "createdAt": iso(row.created_at),
    }


def job_dict(row: ImprovementJobRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "scopeType": row.scope_type,
        "scopeId": row.scope_id,
        "currentModelRef": row.current_model_ref,
        "instanceRefs": list(row.instance_refs or []),
        "architectureSpec": dict(row.architecture_spec or {}),
        "strategy": row.strategy,
        "lastTrainedAt": iso(row.last_trained_at),
        "createdAt": iso(row.created_at),
        "updatedAt": iso(row.updated_at),
    }


def run_dict(row: TrainingRunRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "jobId": row.job_id,
        "backend": row.backend,
        "status": row.status,
        "datasetRef": row.dataset_ref,
        "outputModelRef": row.output_model_ref,
        "config": dict(row.config or {}),
        "error": row.error,
        "createdAt": iso(row.created_at),
        "finishedAt": iso(row.finished_at),
    }


class FeedbackStore(Database):
    """The feedback store: feedback, improvement jobs, runs, evaluations, executions, specialists."""

    what = "feedback store"

    # -- feedback -------------------------------------------------------------------------------

    def add_feedback(
        self,
        *,
        target_type: str,
        target_id: str,
        input: Any,
        output: Any,
        label: str,
        execution_id: str | None = None,
        notes: str | None = None,
        source: str = "api",
        created_at: datetime | None = None,
    ) -> dict[str, Any]:
        if target_type not in TARGET_TYPES:
            raise StoreError(f"targetType: expected one of {', '.join(TARGET_TYPES)}, got {target_type!r}")
        if label not in LABELS:
            raise StoreError(f"label: expected good or bad, got {label!r}")
        if not target_id:
            raise StoreError("targetId: must not be empty")
        input, output = feedback_value(input, "input"), feedback_value(output, "output")

        def do(session: Session) -> dict[str, Any]:
            row = FeedbackRow(
                target_type=target_type,
                target_id=target_id,
                execution_id=execution_id,
                input=input,
                output=output,
                label=label,
                notes=notes,
                source=source,
                created_at=created_at or utcnow(),
            )
            session.add(row)
            session.flush()
            return feedback_dict(row)

        return self._write(do)

    def list_feedback(
        self,
        *,
        target_type: str | None = None,
        target_id: str | None = None,
        since: datetime | None = None,
        label: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Feedback rows, newest first (ties: the later id first)."""

        def do(session: Session) -> list[dict[str, Any]]:
            query = select(FeedbackRow)
            if target_type is not None:
                query = query.where(FeedbackRow.target_type == target_type)
            if target_id is not None:
                query = query.where(FeedbackRow.target_id == target_id)
            if since is not None:
                query = query.where(FeedbackRow.created_at >= since)
            if label is not None:
                query = query.where(FeedbackRow.label == label)
            query = query.order_by(FeedbackRow.created_at.desc(), FeedbackRow.id.desc())
            if limit is not None:
                query = query.limit(limit)
            return [feedback_dict(row) for row in session.scalars(query)]

        return self._read(do)

    def count_feedback(self, target_id: str, since: datetime | None = None) -> int:
        def do(session: Session) -> int:
            query = select(func.count(FeedbackRow.id)).where(FeedbackRow.target_id == target_id)
            if since is not None:
                query = query.where(FeedbackRow.created_at > since)
            return int(session.scalar(query) or 0)

        return self._read(do)

    # -- improvement jobs -----------------------------------------------------------------------

    def create_job(
        self,
        *,
        name: str,
        scope_type: str,
        scope_id: str,
        instance_refs: Sequence[str] = (),
        architecture_spec: Mapping[str, Any] | None = None,
        strategy: str = "from_feedback",
        current_model_ref: str | None = None,
    ) -> dict[str, Any]:
        if scope_type not in TARGET_TYPES:
            raise StoreError(f"scopeType: expected one of {', '.join(TARGET_TYPES)}, got {scope_type!r}")
        if not scope_id:
            raise StoreError("scopeId: must not be empty")

        def do(session: Session) -> dict[str, Any]:
            now = utcnow()
            row = ImprovementJobRow(
                name=name,
                scope_type=scope_type,
                scope_id=scope_id,
                instance_refs=list(instance_refs),
                architecture_spec=dict(architecture_spec or {}),
                strategy=strategy,
                current_model_ref=current_model_ref,
                created_at=now,
                updated_at=now,
            )
            session.add(row)
            session.flush()
            return job_dict(row)

        return self._write(do)

    def _job(self, session: Session, job_id: int) -> ImprovementJobRow:
        row = session.get(ImprovementJobRow, job_id)
        if row is None:
            raise NotFound(f"unknown improvement job {job_id}")
        return row

    def get_job(self, job_id: int) -> dict[str, Any]:
        return self._read(lambda session: job_dict(self._job(session, job_id)))

    def list_jobs(self, scope_type: str | None = None) -> list[dict[str, Any]]:
        def do(session: Session) -> list[dict[str, Any]]:
            query = select(ImprovementJobRow).order_by(ImprovementJobRow.id)
            if scope_type is not None:
                query = query.where(ImprovementJobRow.scope_type == scope_type)
            return [job_dict(row) for row in session.scalars(query)]

        return self._read(do)

    def update_job(self, job_id: int, **changes: Any) -> dict[str, Any]:
        """Set any of name, instance_refs, architecture_spec, strategy, current_model_ref, last_trained_at."""
        allowed = {"name", "instance_refs", "architecture_spec", "strategy", "current_model_ref", "last_trained_at"}
        unknown = set(changes) - allowed
        if unknown:
            raise StoreError(f"cannot update {', '.join(sorted(unknown))} of an improvement job")

        def do(session: Session) -> dict[str, Any]:
            row = self._job(session, job_id)
            for key, value in changes.items():
                setattr(row, key, value)
            row.updated_at = utcnow()
            session.flush()
            return job_dict(row)

        return self._write(do)

    # -- training runs --------------------------------------------------------------------------

    def create_run(
        self, *, run_id: str, job_id: int, backend: str, dataset_ref: str, config: Mapping[str, Any]
    ) -> dict[str, Any]:
        def do(session: Session) -> dict[str, Any]:
            self._job(session, job_id)
            if session.get(TrainingRunRow, run_id) is not None:
                raise StoreError(f"runId: a training run {run_id!r} already exists")
            row = TrainingRunRow(
                id=run_id,
                job_id=job_id,
                backend=backend,
                status="pending",
                dataset_ref=dataset_ref,
                config=dict(config),
                created_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return run_dict(row)

        return self._write(do)

    def get_run(self, run_id: str) -> dict[str, Any]:
        def do(session: Session) -> dict[str, Any]:
            row = session.get(TrainingRunRow, run_id)
            if row is None:
                raise NotFound(f"unknown training run {run_id!r}")
            return run_dict(row)

        return self._read(do)

    def update_run(self, run_id: str, **changes: Any) -> dict[str, Any]:
        def do(session: Session) -> dict[str, Any]:
            row = session.get(TrainingRunRow, run_id)
            if row is None:
                raise NotFound(f"unknown training run {run_id!r}")
            for key, value in changes.items():
                setattr(row, key, value)
            if changes.get("status") in ("completed", "failed") and row.finished_at is None:
                row.finished_at = utcnow()
            session.flush()
            return run_dict(row)

        return self._write(do)

    def runs_for_job(self, job_id: int) -> list[dict[str, Any]]:
        def do(session: Session) -> list[dict[str, Any]]:
            query = select(TrainingRunRow).where(TrainingRunRow.job_id == job_id).order_by(TrainingRunRow.created_at)
            return [run_dict(row) for row in session.scalars(query)]

        return self._read(do)

    # -- executions -----------------------------------------------------------------------------

    def add_execution(
        self, *, execution_id: str, target_type: str, target_id: str, task: str, steps: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """An execution with its step trail: ``[{kind, pageSnapshot?, action?, data?}]`` in order."""
        if target_type not in TARGET_TYPES:
            raise StoreError(f"targetType: expected one of {', '.join(TARGET_TYPES)}, got {target_type!r}")

        def do(session: Session) -> dict[str, Any]:
            if session.get(ExecutionRow, execution_id) is not None:
                raise StoreError(f"id: execution {execution_id!r} already exists")
            session.add(
                ExecutionRow(
                    id=execution_id, target_type=target_type, target_id=target_id, task=task, created_at=utcnow()
                )
            )
            session.flush()
            for position, step in enumerate(steps):
                session.add(
                    ExecutionStepRow(
                        execution_id=execution_id,
                        position=position,
                        kind=str(step.get("kind", "browser")),
                        page_snapshot=step.get("pageSnapshot"),
                        action=step.get("action"),
                        data=step.get("data"),
                    )
                )
            return {
                "id": execution_id,
                "targetType": target_type,
                "targetId": target_id,
                "task": task,
                "steps": len(steps),
            }

        return self._write(do)

    def executions(
        self, target_id: str, since: datetime | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Executions of a target, newest first, each with its ordered ``steps``."""

        def do(session: Session) -> list[dict[str, Any]]:
            query = select(ExecutionRow).where(ExecutionRow.target_id == target_id)
            if since is not None:
                query = query.where(ExecutionRow.created_at >= since)
            query = query.order_by(ExecutionRow.created_at.desc(), ExecutionRow.id)
            if limit is not None:
                query = query.limit(limit)
            out = []
            for execution in session.scalars(query):
                steps = session.scalars(
                    select(ExecutionStepRow)
                    .where(ExecutionStepRow.execution_id == execution.id)
                    .order_by(ExecutionStepRow.position)
                )
                out.append(
                    {
                        "id": execution.id,
                        "targetId": execution.target_id,
                        "task": execution.task,
                        "createdAt": iso(execution.created_at),
                        "steps": [
                            {"kind": s.kind, "pageSnapshot": s.page_snapshot, "action": s.action, "data": s.data}
                            for s in steps
                        ],
                    }
                )
            return out

        return self._read(do)

    # -- eval results and registered specialists ------------------------------------------------

    def add_eval_result(
        self, *, model_ref: str, metrics: Mapping[str, Any], job_id: int | None = None
    ) -> dict[str, Any]:
        def do(session: Session) -> dict[str, Any]:
            row = EvalResultRow(job_id=job_id, model_ref=model_ref, metrics=dict(metrics), created_at=utcnow())
            session.add(row)
            session.flush()
            return {
                "id": row.id,
                "jobId": job_id,
                "modelRef": model_ref,
                "metrics": dict(metrics),
                "createdAt": iso(row.created_at),
            }

        return self._write(do)

    def latest_eval(self, model_ref: str) -> dict[str, Any] | None:
        def do(session: Session) -> dict[str, Any] | None:
            row = session.scalar(
                select(EvalResultRow)
                .where(EvalResultRow.model_ref == model_ref)
                .order_by(EvalResultRow.id.desc())
                .limit(1)
            )
            return None if row is None else dict(row.metrics)

        return self._read(do)

    def add_specialist(
        self, *, agent_id: str, job_id: int, name: str, model_ref: str, family: str, version: int
    ) -> dict[str, Any]:
        def do(session: Session) -> dict[str, Any]:
            row = SpecialistModelRow(
                agent_id=agent_id,
                job_id=job_id,
                name=name,
                model_ref=model_ref,
                family=family,
                version=version,
                created_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return {
                "id": row.id,
                "agentId": agent_id,
                "jobId": job_id,
                "name": name,
                "modelRef": model_ref,
                "family": family,
                "version": version,
                "createdAt": iso(row.created_at),
            }

        return self._write(do)

    def specialists(self, agent_id: str) -> list[dict[str, Any]]:
        def do(session: Session) -> list[dict[str, Any]]:
            rows = session.scalars(
                select(SpecialistModelRow)
                .where(SpecialistModelRow.agent_id == agent_id)
                .order_by(SpecialistModelRow.id)
            )
            return [
                {
                    "id": r.id,
                    "agentId": r.agent_id,
                    "jobId": r.job_id,
                    "name": r.name,
                    "modelRef": r.model_ref,
                    "family": r.family,
                    "version": r.version,
                    "createdAt": iso(r.created_at),
                }
                for r in rows
            ]

        return self._read(do)


def open_store(url: str, *, busy_timeout: float = 30.0) -> FeedbackStore:
    """Open (and create: tables and the SQLite file's directory) the feedback store at ``url``."""
    engine = make_engine(url, busy_timeout=busy_timeout)
    create_tables(engine, StoreBase.metadata, "feedback store", url)
    return FeedbackStore(engine, url)
