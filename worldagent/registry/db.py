"""Registry schema (SQLAlchemy 2.0 ORM) and engine setup.

SQLite is the embedded default; any SQLAlchemy URL works (PostgreSQL in production).
For SQLite every write runs in ``BEGIN IMMEDIATE`` under a busy timeout, so a second
pipeline run that writes at the same time waits for the first instead of interleaving
(or fails after the timeout with a message naming the database).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TypeVar

from sqlalchemy import JSON, DateTime, Engine, ForeignKey, Integer, String, Text, UniqueConstraint, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

IMMEDIATE = "worldagent_immediate"  # execution option: begin the transaction with BEGIN IMMEDIATE


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class FamilyRow(Base):
    __tablename__ = "families"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class VersionRow(Base):
    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("family_id", "number", name="uq_version_family_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    family_id: Mapped[int] = mapped_column(ForeignKey("families.id"), nullable=False, index=True)
    number: Mapped[int] = mapped_column(Integer, nullable=False)
    artifact_path: Mapped[str] = mapped_column(Text, nullable=False)  # the immutable copy once published
    source_path: Mapped[str | None] = mapped_column(Text)  # the training output it came from (a DVC out)
    artifact_hash: Mapped[str | None] = mapped_column(String(128))
    git_revision: Mapped[str | None] = mapped_column(String(64))
    dvc_hash: Mapped[str | None] = mapped_column(String(128))
    params_hash: Mapped[str | None] = mapped_column(String(128))
    data_hash: Mapped[str | None] = mapped_column(String(128))
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, nullable=False)
    status: Mapped[str] = mapped_column(String(32), nullable=False)
    notes: Mapped[list[str]] = mapped_column(JSON, default=list, nullable=False)
    published_uri: Mapped[str | None] = mapped_column(Text)
    published_revision: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class AliasRow(Base):
    __tablename__ = "aliases"
    __table_args__ = (UniqueConstraint("family_id", "name", name="uq_alias_family_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    family_id: Mapped[int] = mapped_column(ForeignKey("families.id"), nullable=False)
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


class AliasEventRow(Base):
    """Every move of an alias: what it pointed at before and after (the rollback history)."""

    __tablename__ = "alias_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    family_id: Mapped[int] = mapped_column(ForeignKey("families.id"), nullable=False, index=True)
    alias: Mapped[str] = mapped_column(String(100), nullable=False)
    action: Mapped[str] = mapped_column(String(16), nullable=False)  # set | rollback
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), nullable=False)
    previous_version_id: Mapped[int | None] = mapped_column(ForeignKey("versions.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (None for in-memory or non-SQLite URLs)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    if parsed.database.startswith("file:"):
        return None
    return Path(parsed.database)


def make_engine(url: str, busy_timeout: float = 30.0) -> Engine:
    """An engine for ``url``; SQLite gets a busy timeout, IMMEDIATE writes and its parent directory."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": busy_timeout})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        # Let SQLAlchemy (not pysqlite) emit BEGIN, so the begin hook below decides its kind.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        if connection.get_execution_options().get(IMMEDIATE):
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            connection.exec_driver_sql("BEGIN")

    return engine


T = TypeVar("T")


class Database:
    """One database behind the project's SQLAlchemy stores (registry, feedback store, trainer runs).

    Reads run in plain transactions; writes in ``BEGIN IMMEDIATE`` ones on SQLite (see
    ``make_engine``), so concurrent writers queue instead of interleaving.
    """

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self._writer = engine.execution_options(**{IMMEDIATE: True})
        where = sqlite_path(url)
        self.location = str(where) if where is not None else engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def _session(self, write: bool) -> Iterator[Session]:
        with Session(self._writer if write else self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    def _write(self, fn: Callable[[Session], T]) -> T:
        with self._session(True) as session:
            return fn(session)

    def _read(self, fn: Callable[[Session], T]) -> T:
        with self._session(False) as session:
            return fn(session)
