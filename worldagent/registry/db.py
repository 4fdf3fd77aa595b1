"""Registry schema (SQLAlchemy 2.0 ORM), the project's one database-URL rule, and engine setup.

SQLite is the embedded default; any SQLAlchemy URL works (PostgreSQL in production, through
psycopg 3: a plain ``postgresql://`` URL is mapped to it). Every store (registry, feedback store,
trainer run state, experience store) opens its database through ``database_url``/``make_engine``.
Writes are serialised per database, so a second pipeline run that writes at the same time waits
for the first instead of interleaving: SQLite runs them in ``BEGIN IMMEDIATE`` under a busy
timeout, PostgreSQL takes a transaction-level advisory lock first.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TypeVar

from sqlalchemy import (
    JSON,
    DateTime,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from worldagent import safejson
from worldagent.errors import InputError
from worldagent.guard.db import (  # the one database error path; re-exported for the stores
    CorruptDatabaseError,
    CorruptRowError,
    DatabaseError,
    ReadOnlyDatabaseError,
    SchemaMismatchError,
    check_schema,
    database_errors,
    install_text_policy,
    scan_rows,
    translate,
)
from worldagent.guard.files import is_regular_file
from worldagent.guard.text import has_bad_string

__all__ = [
    "CorruptDatabaseError",
    "CorruptRowError",
    "DatabaseError",
    "ReadOnlyDatabaseError",
    "SchemaMismatchError",
]

IMMEDIATE = "worldagent_immediate"  # execution option: a write transaction (serialised per database)
# PostgreSQL advisory-lock key every writer takes (the project's writes are short; one lock is enough).
_WRITE_LOCK_KEY = 0x57A6E1

# A URL without a driver gets the one the project installs (SQLAlchemy would pick psycopg2).
_DEFAULT_DRIVERS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg"}


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


def _parse(url: str) -> URL:
    try:
        return make_url(url)
    except ArgumentError as error:
        raise InputError(f"invalid database URL {url!r}: {error}") from None


def _is_sqlite_file(parsed: URL) -> bool:
    database = parsed.database or ""
    not_a_plain_file = database in ("", ":memory:") or database.startswith("file:")  # in memory, or a URI
    return parsed.get_backend_name() == "sqlite" and not not_a_plain_file


def database_url(url: str, root: Path | None = None) -> str:
    """The project's one database-URL rule: the URL every store opens.

    - ``postgresql://`` and ``postgres://`` without a driver use psycopg 3 (``postgresql+psycopg://``);
    - a relative SQLite file path is relative to ``root`` (the project root) when given, made absolute;
    - anything else is returned as written (passwords kept, so the result still connects).
    """
    parsed = _parse(url)
    driver = _DEFAULT_DRIVERS.get(parsed.drivername)
    if driver is not None:
        parsed = parsed.set(drivername=driver)
    if root is not None and _is_sqlite_file(parsed) and not Path(str(parsed.database)).is_absolute():
        parsed = parsed.set(database=str((root / str(parsed.database)).resolve()))
    return parsed.render_as_string(hide_password=False)


def sqlite_path(url: str, root: Path | None = None) -> Path | None:
    """The database file of a SQLite URL, resolved like ``database_url`` (None for in-memory or other URLs)."""
    parsed = _parse(database_url(url, root))
    return Path(str(parsed.database)) if _is_sqlite_file(parsed) else None


def require_sqlite_file(url: str, root: Path, field: str) -> Path:
    """The SQLite file of ``url`` for a stage that writes a database file; ``field`` names the params key."""
    path = sqlite_path(url, root)
    if path is None:
        raise InputError(f"{field}: this stage writes a SQLite database file, got {url!r}")
    return path


UNREADABLE_JSON = {"error": f"stored value nested deeper than {safejson.MAX_DEPTH} levels; not shown"}
INVALID_JSON = {"error": "stored value is not valid JSON (a corrupt row); not shown"}
NOT_TEXT_JSON = {"error": "stored value holds a lone surrogate, which is not text; not shown"}


def stored_json(text: Any) -> Any:
    """How every store reads its JSON columns. A value stored before the stores refused it reads as a
    small placeholder, so listing it never fails: nested too deep (else RecursionError), not JSON at all
    (a corrupt row), or holding a lone surrogate (else every answer or file that includes it fails to
    encode: the text policy, ``worldagent.guard.text``)."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return dict(INVALID_JSON)
    if not isinstance(text, str):
        return text  # SQLite's NUMERIC affinity hands a stored JSON number back as a number
    try:
        value = safejson.loads(text)
    except safejson.JSONDepthError:
        return dict(UNREADABLE_JSON)
    except ValueError:
        return dict(INVALID_JSON)
    return dict(NOT_TEXT_JSON) if has_bad_string(value) else value


def make_engine(url: str, busy_timeout: float = 30.0) -> Engine:
    """An engine for ``url`` (through ``database_url``); writes serialised per database (see the module doc).

    SQLite also gets a busy timeout and its file's parent directory.
    """
    url = database_url(url)
    parsed = _parse(url)
    install_text_policy()  # no session of any store flushes a row that is not text
    if parsed.get_backend_name() != "sqlite":
        try:
            engine = create_engine(url, pool_pre_ping=True, json_deserializer=stored_json)
        except (NoSuchModuleError, ModuleNotFoundError) as error:
            raise InputError(f"database URL {parsed.render_as_string()}: no driver for it here ({error})") from None
        if parsed.get_backend_name() == "postgresql":

            @event.listens_for(engine, "begin")
            def _serialise_writes(connection: Any) -> None:
                if connection.get_execution_options().get(IMMEDIATE):
                    connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_WRITE_LOCK_KEY})")

        return engine
    path = sqlite_path(url)
    if path is not None:
        if os.path.lexists(path) and not is_regular_file(path):  # a FIFO, device or folder: never opened
            raise InputError(f"{path}: not a regular file, so not a SQLite database; point the URL at a database file")
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": busy_timeout}, json_deserializer=stored_json)

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


def location_of(url: str) -> str:
    """How messages name a database: its SQLite file, or its URL without the password."""
    path = sqlite_path(url)
    return str(path) if path is not None else _parse(url).render_as_string(hide_password=True)


def open_failure(error: DBAPIError, what: str, location: str) -> DatabaseError:
    """One clear line for a database that cannot be opened (``worldagent.guard.db``'s one error path)."""
    translated = translate(error, what, location)
    if translated is not None:
        return translated
    return DatabaseError(f"cannot open the {what} at {location}: {_first_line(error)}")


def _first_line(error: DBAPIError) -> str:
    text = str(error.orig if error.orig is not None else error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def create_tables(engine: Engine, metadata: MetaData, what: str, url: str, *, scan: bool = False) -> None:
    """Create ``metadata``'s missing tables (a serialised write), then refuse a database another version
    wrote (``check_schema``) and, with ``scan`` (small databases), one holding a value of the wrong
    kind (``scan_rows``); a read-only, corrupt, drifted or damaged database raises one clear line."""
    location = location_of(url)
    try:
        if _needs_creating(engine, metadata):  # a read-only file that has every table still opens for reading
            metadata.create_all(engine.execution_options(**{IMMEDIATE: True}))
        check_schema(engine, metadata, what, location)
        if scan:
            scan_rows(engine, metadata, what, location)
    except DBAPIError as error:
        engine.dispose()
        raise open_failure(error, what, location) from None
    except DatabaseError:
        engine.dispose()
        raise


def _needs_creating(engine: Engine, metadata: MetaData) -> bool:
    from sqlalchemy import inspect

    present = set(inspect(engine).get_table_names())
    return any(table.name not in present for table in metadata.sorted_tables)


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
        self.location = location_of(url)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    what = "database"  # how messages name it ("model registry", "feedback store")

    @contextmanager
    def _session(self, write: bool) -> Iterator[Session]:
        with (
            database_errors(self.what, self.location),
            Session(self._writer if write else self.engine, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    def _write(self, fn: Callable[[Session], T]) -> T:
        with self._session(True) as session:
            return fn(session)

    def _read(self, fn: Callable[[Session], T]) -> T:
        with self._session(False) as session:
            return fn(session)
