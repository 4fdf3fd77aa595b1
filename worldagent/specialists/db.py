"""Feedback-store schema (SQLAlchemy 2.0 ORM). Engines come from :func:`worldagent.registry.db.make_engine`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from worldagent.registry.db import utcnow


class StoreBase(DeclarativeBase):
    pass


class FeedbackRow(StoreBase):
    __tablename__ = "feedback"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    target_type: Mapped[str] = mapped_column(String(16), nullable=False)  # agent | chat
    target_id: Mapped[str] = mapped_column(String(200), nullable=False, index=True)
    execution_id: Mapped[str | None] = mapped_column(String(200))
    input: Mapped[Any] = mapped_column(JSON, nullable=True)
    output: Mapped[Any] = mapped_column(JSON, nullable=True)
    label: Mapped[str] = mapped_column(String(8), nullable=False)  # good | bad
    notes: Mapped[str | None] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(32), default="api", nullable=False)  # api | record | import
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False, index=True)


class ImprovementJobRow(StoreBase):
    __tablename__ = "improvement_jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    scope_type: Mapped[str] = mapped_column(String(16), nullable=False)  # agent | chat
    scope_id: Mapped[str] = mapped_column(String(200), nullable=False, index=True)
    current_model_ref: Mapped[str | None] = mapped_column(Text)
    instance_refs: Mapped[list[str]] = mapped_column(JSON, default=list, nullable=False)
    architecture_spec: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, nullable=False)
    strategy: Mapped[str] = mapped_column(String(32), default="from_feedback", nullable=False)
    last_trained_at: Mapped[datetime | None] = mapped_column(DateTime)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class TrainingRunRow(StoreBase):
    __tablename__ = "training_runs"

    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("improvement_jobs.id"), nullable=False, index=True)
    backend: Mapped[str] = mapped_column(String(32), nullable=False)  # local (the trainer service)
    status: Mapped[str] = mapped_column(String(16), nullable=False)  # pending | running | completed | failed
    dataset_ref: Mapped[str] = mapped_column(Text, nullable=False)
    output_model_ref: Mapped[str | None] = mapped_column(Text)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, nullable=False)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)


class EvalResultRow(StoreBase):
    __tablename__ = "eval_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("improvement_jobs.id"))
    model_ref: Mapped[str] = mapped_column(Text, nullable=False)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class ExecutionRow(StoreBase):
    __tablename__ = "executions"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    target_type: Mapped[str] = mapped_column(String(16), nullable=False)
    target_id: Mapped[str] = mapped_column(String(200), nullable=False, index=True)
    task: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class ExecutionStepRow(StoreBase):
    __tablename__ = "execution_steps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    execution_id: Mapped[str] = mapped_column(ForeignKey("executions.id"), nullable=False, index=True)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)  # browser (a decision) | any other step kind
    page_snapshot: Mapped[str | None] = mapped_column(Text)
    action: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    data: Mapped[Any] = mapped_column(JSON, nullable=True)


class SpecialistModelRow(StoreBase):
    """A registered specialist: the link from an agent and job to its version in the shared registry."""

    __tablename__ = "specialist_models"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[str] = mapped_column(String(200), nullable=False, index=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("improvement_jobs.id"), nullable=False)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    model_ref: Mapped[str] = mapped_column(Text, nullable=False)
    family: Mapped[str] = mapped_column(String(200), nullable=False)
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
