"""The one database error path: every failure a database file can cause becomes one line that says
what to do, for every store (model registry, feedback store, trainer run state, experience store).

- **read-only**: a file (or its folder) the process may not write: make it writable or point the
  setting at a writable copy;
- **schema drift**: a database another version of the project wrote (a table lacks a column this
  version reads, or has a required column it does not fill): :func:`check_schema` says which, at
  open time, instead of a ``no such column`` traceback at the first query;
- **corrupt file**: not a SQLite database, or a malformed one;
- **corrupt rows**: a value SQLAlchemy cannot turn back into Python (a date that is not a date,
  JSON that does not parse): named with the table's database and what to do;
- **the text policy on writes** (:func:`install_text_policy`): a row holding a lone surrogate is
  refused before it is flushed, so no stored row can break a later read.

:func:`database_errors` wraps every session and open; it leaves the project's own errors alone.
"""

from __future__ import annotations

import json
import sqlite3
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, MetaData, event, inspect
from sqlalchemy.exc import DBAPIError, SQLAlchemyError, StatementError
from sqlalchemy.orm import Session

from worldagent.errors import InputError, RunError, WorldAgentError
from worldagent.guard.text import TextError, first_bad_string, has_bad_string


class DatabaseError(RunError):
    """A database could not be opened or reached; the message names it and says why, in one line."""


class CorruptDatabaseError(DatabaseError, InputError):
    """The database file is not a (readable) database; the message names the file."""


class ReadOnlyDatabaseError(DatabaseError, InputError):
    """The database file (or its folder) cannot be written."""


class SchemaMismatchError(DatabaseError, InputError):
    """The database was written by another version: a table or column this version needs is not there."""


class CorruptRowError(DatabaseError, InputError):
    """A stored value cannot be read back (a bad date, JSON that does not parse)."""


def _first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else type(text).__name__


def _reason(error: BaseException) -> str:
    orig = getattr(error, "orig", None)
    return _first_line(orig if orig is not None else error)


def _from_sqlalchemy(error: BaseException) -> bool:
    """Whether ``error`` was raised inside SQLAlchemy (turning a stored value back into Python)."""
    return any("sqlalchemy" in frame.filename.replace("\\", "/") for frame in traceback.extract_tb(error.__traceback__))


def translate(error: BaseException, what: str, location: str) -> DatabaseError | None:
    """The one-line project error for a database ``error`` of the ``what`` at ``location``, or None
    when ``error`` is not a database problem (a bug keeps its traceback)."""
    if isinstance(error, WorldAgentError):
        return None
    reason = _reason(error)
    lowered = reason.lower()
    if "readonly" in lowered or "read-only" in lowered or "read only" in lowered:
        return ReadOnlyDatabaseError(
            f"{location}: the {what} is read-only ({reason}); make the file and its folder writable "
            "(chmod u+w), or point the setting at a writable copy"
        )
    if "no such column" in lowered or "has no column named" in lowered or "no such table" in lowered:
        return SchemaMismatchError(
            f"{location}: the {what} was written by another version of worldagent ({reason}); "
            "move it aside to start a new one, or open it with the version that wrote it"
        )
    if "not a database" in lowered or "malformed" in lowered or "file is encrypted" in lowered:
        return CorruptDatabaseError(f"{location}: the {what} is not a readable SQLite database ({reason})")
    if "locked" in lowered or "busy" in lowered:
        return DatabaseError(
            f"{location}: the {what} is locked by another writer ({reason}); retry when the other run has finished"
        )
    if "unable to open database" in lowered or "disk i/o" in lowered or "could not connect" in lowered:
        return DatabaseError(f"cannot open the {what} at {location}: {reason}")
    if isinstance(error, DBAPIError | sqlite3.Error):
        orig = getattr(error, "orig", error)
        if isinstance(orig, sqlite3.DatabaseError) and not isinstance(orig, sqlite3.OperationalError):
            return CorruptDatabaseError(f"{location}: the {what} is not a readable SQLite database ({reason})")
        return None  # an integrity error, a constraint: the caller's logic decides
    if isinstance(error, json.JSONDecodeError | ValueError | TypeError | UnicodeError | OverflowError) and (
        _from_sqlalchemy(error) or isinstance(error, StatementError)
    ):
        return CorruptRowError(
            f"{location}: a stored row of the {what} cannot be read ({reason}); restore the file from a "
            "backup, or remove the row"
        )
    return None


@contextmanager
def database_errors(what: str, location: str) -> Iterator[None]:
    """Turn database failures inside the block into one-line project errors (see :func:`translate`)."""
    try:
        yield
    except (SQLAlchemyError, sqlite3.Error, ValueError, TypeError, UnicodeError, OverflowError) as error:
        translated = translate(error, what, location)
        if translated is None:
            raise
        raise translated from None


def check_schema(engine: Engine, metadata: MetaData, what: str, location: str) -> None:
    """Refuse a database whose tables another version wrote: a column this version reads is missing,
    or a required column (NOT NULL, no default) this version would never fill is there. Tables that
    are missing altogether are created by the caller's ``create_all`` before this runs."""
    with database_errors(what, location):
        inspector = inspect(engine)
        present = set(inspector.get_table_names())
        problems: list[str] = []
        for table in metadata.sorted_tables:
            if table.name not in present:
                problems.append(f"table {table.name!r} is missing")
                continue
            columns = {column["name"]: column for column in inspector.get_columns(table.name)}
            missing = [column.name for column in table.columns if column.name not in columns]
            if missing:
                problems.append(f"table {table.name!r} lacks column(s) {', '.join(missing)}")
            required: list[str] = []
            for name, column in columns.items():
                if name in table.columns:
                    continue
                if (
                    not column.get("nullable", True)
                    and column.get("default") is None
                    and not column.get("autoincrement")
                ):
                    required.append(name)
            if required:
                problems.append(
                    f"table {table.name!r} has required column(s) {', '.join(required)} this version does not know"
                )
    if problems:
        raise SchemaMismatchError(
            f"{location}: the {what} was written by another version of worldagent ({'; '.join(problems)}); "
            "move it aside to start a new one, or open it with the version that wrote it"
        )


_SQLITE_TYPES = {
    "INTEGER": ("integer", "null"),
    "FLOAT": ("integer", "real", "null"),
    "VARCHAR": ("text", "null"),
    "TEXT": ("text", "null"),
    "DATETIME": ("text", "null"),
}


def scan_rows(engine: Engine, metadata: MetaData, what: str, location: str) -> None:
    """Refuse a SQLite database holding a value of the wrong kind (text in a number column, a number
    where a date belongs): SQLite keeps whatever it is given, and the first query that does arithmetic
    on it would fail far from the cause. One indexed-free scan per column: for small databases (the
    registry, the trainer's run state), at open time."""
    if engine.dialect.name != "sqlite":
        return  # other databases enforce column types themselves
    from sqlalchemy import text

    with database_errors(what, location), engine.connect() as connection:
        for table in metadata.sorted_tables:
            for column in table.columns:
                allowed = _SQLITE_TYPES.get(type(column.type).__visit_name__.upper()) or _SQLITE_TYPES.get(
                    str(column.type).split("(")[0].upper()
                )
                if allowed is None:
                    continue
                kinds = ", ".join(f"'{kind}'" for kind in allowed)
                row = connection.execute(
                    text(
                        f'SELECT rowid, typeof("{column.name}") FROM "{table.name}" '  # noqa: S608 - schema names
                        f'WHERE typeof("{column.name}") NOT IN ({kinds}) LIMIT 1'
                    )
                ).first()
                if row is not None:
                    raise CorruptRowError(
                        f"{location}: row {row[0]} of table {table.name!r} holds {row[1]} in column {column.name!r} "
                        f"of the {what}; restore the file from a backup, or fix or remove the row"
                    )


def _refuse_non_text(session: Session, _context: Any, _instances: Any) -> None:
    """Before any flush: a row whose string or JSON value holds a lone surrogate is refused, naming the
    table and column (a JSON column stores it escaped, and every later answer or file that includes it
    fails to encode: one stored row would break every later request)."""
    for row in [*session.new, *session.dirty]:
        state = inspect(row)
        table = getattr(state.mapper.local_table, "name", type(row).__name__)
        loaded = state.dict  # only what is loaded: reading an expired attribute would run a query
        for attribute in state.mapper.column_attrs:
            value = loaded.get(attribute.key)
            if isinstance(value, str | dict | list) and has_bad_string(value):
                found = first_bad_string(value)
                field = attribute.key if found is None or found[0] == "<value>" else f"{attribute.key}.{found[0]}"
                raise TextError(f"{table}.{field}: holds a lone surrogate, which is not text; not stored")


def install_text_policy() -> None:
    """Apply the text policy to every session's writes (idempotent; every store's engine calls it)."""
    if not event.contains(Session, "before_flush", _refuse_non_text):
        event.listen(Session, "before_flush", _refuse_non_text)
