"""The trainer's run table: one row per run, and the state machine pending → running → completed | failed.

State lives in a SQLAlchemy database, so after a restart completed runs still answer, pending runs
are started again, and runs that were running when the service died are marked failed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Integer, String, Text, select, update
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from worldagent.registry.db import Database, create_tables, make_engine, utcnow

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
TRAIN_FILE = "train.jsonl"
LOG_FILE = "worker.log"


class TrainerBase(DeclarativeBase):
    pass


class TrainerRunRow(TrainerBase):
    __tablename__ = "trainer_runs"

    run_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    job_id: Mapped[str] = mapped_column(String(200), nullable=False)
    dataset_ref: Mapped[str] = mapped_column(Text, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, index=True)
    output_model_ref: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    worker_pid: Mapped[int | None] = mapped_column(Integer)
    rows: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="milliseconds") + "Z"


def status_dict(row: TrainerRunRow) -> dict[str, Any]:
    return {
        "runId": row.run_id,
        "jobId": row.job_id,
        "datasetRef": row.dataset_ref,
        "status": row.status,
        "output_model_ref": row.output_model_ref,
        "error": row.error,
        "worker_pid": row.worker_pid,
        "rows": row.rows,
        "metrics": dict(row.metrics or {}),
        "created_at": _iso(row.created_at),
        "started_at": _iso(row.started_at),
        "finished_at": _iso(row.finished_at),
    }


class RunState(Database):
    """The run state machine on one database: pending → running → completed | failed."""

    what = "trainer run state"

    def __init__(self, url: str) -> None:
        super().__init__(make_engine(url), url)
        create_tables(self.engine, TrainerBase.metadata, "trainer run state", url, scan=True)

    def create(self, run_id: str, job_id: str, dataset_ref: str, rows: int) -> dict[str, Any] | None:
        """A new pending run; None when ``run_id`` exists already."""

        def do(session: Session) -> dict[str, Any] | None:
            if session.get(TrainerRunRow, run_id) is not None:
                return None
            row = TrainerRunRow(
                run_id=run_id,
                job_id=job_id,
                dataset_ref=dataset_ref,
                status="pending",
                rows=rows,
                metrics={},
                created_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return status_dict(row)

        return self._write(do)

    def get(self, run_id: str) -> dict[str, Any] | None:
        with self._session(False) as session:
            row = session.get(TrainerRunRow, run_id)
            return None if row is None else status_dict(row)

    def counts(self) -> dict[str, int]:
        with self._session(False) as session:
            out = {s: 0 for s in ("pending", "running", "completed", "failed")}
            for status in session.scalars(select(TrainerRunRow.status)):
                out[status] = out.get(status, 0) + 1
            return out

    def claim_pending(self, limit: int) -> list[str]:
        """Move up to ``limit`` of the oldest pending runs to running; their ids."""

        def do(session: Session) -> list[str]:
            rows = list(
                session.scalars(
                    select(TrainerRunRow)
                    .where(TrainerRunRow.status == "pending")
                    .order_by(TrainerRunRow.created_at, TrainerRunRow.run_id)
                    .limit(limit)
                )
            )
            for row in rows:
                row.status, row.started_at = "running", utcnow()
            return [row.run_id for row in rows]

        return self._write(do) if limit > 0 else []

    def set_pid(self, run_id: str, pid: int) -> None:
        self._write(
            lambda session: session.execute(
                update(TrainerRunRow).where(TrainerRunRow.run_id == run_id).values(worker_pid=pid)
            )
        )

    def finish(
        self,
        run_id: str,
        status: str,
        *,
        error: str | None = None,
        output_model_ref: str | None = None,
        metrics: dict[str, Any] | None = None,
        only_from: Sequence[str] = ("running",),
    ) -> bool:
        """Terminal transition, only from ``only_from`` (a late worker never overwrites a recorded failure)."""
        values: dict[str, Any] = {"status": status, "error": error, "finished_at": utcnow()}
        if output_model_ref is not None:
            values["output_model_ref"] = output_model_ref
        if metrics is not None:
            values["metrics"] = metrics

        def do(session: Session) -> bool:
            result = session.execute(
                update(TrainerRunRow)
                .where(TrainerRunRow.run_id == run_id, TrainerRunRow.status.in_(list(only_from)))
                .values(**values)
            )
            return bool(result.rowcount)

        return self._write(do)

    def fail_orphans(self, reason: str) -> list[str]:
        """Runs left ``running`` by a service that stopped: failed, with ``reason`` and their worker pid."""

        def do(session: Session) -> list[str]:
            rows = list(session.scalars(select(TrainerRunRow).where(TrainerRunRow.status == "running")))
            for row in rows:
                row.status, row.finished_at = "failed", utcnow()
                row.error = f"{reason} (worker pid {row.worker_pid}); trigger the run again with a new runId"
            return [row.run_id for row in rows]

        return self._write(do)
