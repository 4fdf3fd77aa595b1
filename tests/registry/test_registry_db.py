"""The project's one database-URL rule (worldagent/registry/db.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldagent.errors import InputError
from worldagent.registry.db import database_url, make_engine, require_sqlite_file, sqlite_path


def test_postgresql_urls_without_a_driver_use_psycopg_3() -> None:
    assert database_url("postgresql://u:pw@db:5432/reg") == "postgresql+psycopg://u:pw@db:5432/reg"
    assert database_url("postgres://u@db/reg") == "postgresql+psycopg://u@db/reg"
    assert database_url("postgresql+psycopg://u@db/reg") == "postgresql+psycopg://u@db/reg"
    assert make_engine("postgresql://u@127.0.0.1/reg").dialect.driver == "psycopg"


def test_relative_sqlite_paths_are_relative_to_the_root(tmp_path: Path) -> None:
    assert (
        database_url("sqlite:///models/registry.db", tmp_path) == f"sqlite:///{tmp_path.resolve()}/models/registry.db"
    )
    assert database_url("sqlite:////abs/registry.db", tmp_path) == "sqlite:////abs/registry.db"
    assert database_url("sqlite:///models/registry.db") == "sqlite:///models/registry.db"  # no root: unchanged
    assert database_url("sqlite://", tmp_path) == "sqlite://"  # in memory
    assert sqlite_path("sqlite:///x/r.db", tmp_path) == tmp_path.resolve() / "x" / "r.db"
    assert sqlite_path("postgresql://u@db/reg", tmp_path) is None


def test_make_engine_creates_the_sqlite_files_directory(tmp_path: Path) -> None:
    make_engine(f"sqlite:///{tmp_path / 'a' / 'b' / 'c.db'}").dispose()
    assert (tmp_path / "a" / "b").is_dir()


def test_bad_urls_and_non_file_urls_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="invalid database URL"):
        database_url("not a url")
    with pytest.raises(InputError, match="intervention.store_url"):
        require_sqlite_file("postgresql://u@db/x", tmp_path, "intervention.store_url")
    assert require_sqlite_file("sqlite:///e.db", tmp_path, "x") == tmp_path.resolve() / "e.db"
