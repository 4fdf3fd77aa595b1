"""The one database error path: read-only files, schema drift, corrupt files and rows → one line."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from worldagent.errors import InputError
from worldagent.guard.db import (
    CorruptDatabaseError,
    CorruptRowError,
    ReadOnlyDatabaseError,
    SchemaMismatchError,
    translate,
)
from worldagent.registry.api import open_registry

needs_non_root = pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")


def registry_file(tmp_path: Path) -> Path:
    db = tmp_path / "registry.db"
    registry = open_registry(f"sqlite:///{db}")
    registry.close()
    return db


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_missing_column_is_schema_drift_at_open(tmp_path: Path) -> None:
    db = registry_file(tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("ALTER TABLE versions DROP COLUMN published_uri")
    with pytest.raises(SchemaMismatchError) as raised:
        open_registry(f"sqlite:///{db}")
    assert "lacks column(s) published_uri" in one_line(raised.value)
    assert "another version" in str(raised.value)
    assert isinstance(raised.value, InputError)


def test_required_extra_column_is_schema_drift(tmp_path: Path) -> None:
    db = registry_file(tmp_path)
    with sqlite3.connect(db) as connection:
        connection.execute("ALTER TABLE families ADD COLUMN owner TEXT NOT NULL DEFAULT 'x'")
        connection.execute("CREATE TABLE t (x)")
    open_registry(f"sqlite:///{db}").close()  # an extra column with a default (or an extra table) is fine
    with sqlite3.connect(db) as connection:
        connection.executescript(
            "CREATE TABLE f2 (id INTEGER PRIMARY KEY, name VARCHAR(200) NOT NULL UNIQUE, created_at DATETIME NOT NULL,"
            " tenant TEXT NOT NULL); INSERT INTO f2 SELECT id, name, created_at, 'x' FROM families;"
            " PRAGMA foreign_keys=OFF; DROP TABLE families; ALTER TABLE f2 RENAME TO families;"
        )
    with pytest.raises(SchemaMismatchError, match="required column.*tenant"):
        open_registry(f"sqlite:///{db}")


def test_corrupt_file_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "registry.db"
    db.write_bytes(b"not a database" * 1000)
    with pytest.raises(CorruptDatabaseError) as raised:
        open_registry(f"sqlite:///{db}")
    one_line(raised.value)


def test_corrupt_row_is_one_line(tmp_path: Path) -> None:
    db = registry_file(tmp_path)
    registry = open_registry(f"sqlite:///{db}")
    registry.register_version("fam", artifact_path=str(tmp_path / "model"), metrics={"a": 1})
    registry.close()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE versions SET created_at = 'not a date'")
    registry = open_registry(f"sqlite:///{db}")
    with pytest.raises(CorruptRowError) as raised:
        registry.list_versions("fam")
    assert "restore the file from a backup" in one_line(raised.value)


def test_corrupt_json_column_reads_as_a_placeholder(tmp_path: Path) -> None:
    db = registry_file(tmp_path)
    registry = open_registry(f"sqlite:///{db}")
    registry.register_version("fam", artifact_path=str(tmp_path / "model"), metrics={"a": 1})
    registry.close()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE versions SET metrics = '{not json', notes = '[\"\\ud800\"]'")
    registry = open_registry(f"sqlite:///{db}")
    (version,) = registry.list_versions("fam")
    assert "not valid JSON" in version.metrics["error"]
    registry.close()


@needs_non_root
def test_read_only_file_is_one_line(tmp_path: Path) -> None:
    db = registry_file(tmp_path)
    registry = open_registry(f"sqlite:///{db}")
    db.chmod(0o444)
    try:
        with pytest.raises(ReadOnlyDatabaseError) as raised:
            registry.register_version("fam", artifact_path=str(tmp_path / "model"))
        assert "read-only" in one_line(raised.value)
    finally:
        db.chmod(0o644)
        registry.close()


def test_read_only_error_from_sqlite_is_translated(tmp_path: Path) -> None:
    # Root ignores file modes; a read-only connection gives the same error SQLite gives a read-only file.
    db = registry_file(tmp_path)
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError) as raised:
            connection.execute("INSERT INTO families (name, created_at) VALUES ('x', '2020-01-01')")
    finally:
        connection.close()
    translated = translate(raised.value, "model registry", str(db))
    assert isinstance(translated, ReadOnlyDatabaseError)
    assert "chmod u+w" in one_line(translated)


def test_project_errors_and_bugs_are_not_translated() -> None:
    assert translate(InputError("x"), "w", "l") is None
    assert translate(KeyError("x"), "w", "l") is None
    assert translate(ValueError("plain"), "w", "l") is None  # not raised inside SQLAlchemy
