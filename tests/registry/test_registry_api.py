"""The registry API: numbering, aliases, promote/rollback, concurrency and lock errors.

Tests taking ``db_url`` run twice: on a SQLite file and on a real PostgreSQL server (tests/conftest.py)."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from worldagent.registry.api import CHAMPION, NotFoundError, RegistryBusyError, RegistryError, open_registry
from worldagent.registry.db import CorruptDatabaseError, DatabaseError, sqlite_path


def url_for(path: Path) -> str:
    return f"sqlite:///{path}"


def test_creates_the_sqlite_files_parent_directory(tmp_path: Path) -> None:
    db = tmp_path / "deep" / "models" / "registry.db"
    with open_registry(url_for(db)) as registry:
        registry.register_version("alpha", artifact_path="m/a1")
    assert db.is_file()


def test_numbers_versions_per_family_and_persists(db_url: str) -> None:
    with open_registry(db_url) as registry:
        a1 = registry.register_version(
            "alpha", artifact_path="m/a1", metrics={"mean_reward": 0.5}, git_revision="abc", data_hash="d1"
        )
        a2 = registry.register_version("alpha", artifact_path="m/a2")
        b1 = registry.register_version("beta", artifact_path="m/b1")
        assert (a1.number, a2.number, b1.number) == (1, 2, 1)
        assert a1.status == "registered" and a1.metrics == {"mean_reward": 0.5} and a1.git_revision == "abc"
        got = registry.get_version("alpha", 1)
        assert got.artifact_path == "m/a1" and got.data_hash == "d1" and got.label == "v1"
        assert [v.number for v in registry.list_versions("alpha")] == [1, 2]
        assert registry.list_versions("nobody") == []
        assert registry.list_families() == ["alpha", "beta"]
    # persisted: a new connection sees the same data
    with open_registry(db_url) as again:
        assert again.get_version("alpha", 2).artifact_path == "m/a2"


def test_unknown_family_or_version_and_bad_names_are_clear_errors(db_url: str) -> None:
    with open_registry(db_url) as registry:
        registry.register_version("fam", artifact_path="x")
        with pytest.raises(NotFoundError, match="fam has no version 7"):
            registry.get_version("fam", 7)
        with pytest.raises(NotFoundError, match="unknown model family 'other'"):
            registry.promote("other", 1)
        with pytest.raises(RegistryError, match="invalid family name"):
            registry.register_version("bad name/../x", artifact_path="x")
        with pytest.raises(RegistryError, match="invalid status"):
            registry.register_version("fam", artifact_path="x", status="weird")  # type: ignore[arg-type]
        assert registry.get_alias("fam", CHAMPION) is None


def test_aliases_promote_and_rollback_walk_the_history(db_url: str) -> None:
    with open_registry(db_url) as registry:
        for _ in range(4):
            registry.register_version("fam", artifact_path="x")
        with pytest.raises(RegistryError, match="no champion"):
            registry.rollback("fam")
        assert registry.promote("fam", 1).previous is None
        move = registry.promote("fam", 2)
        assert (move.version, move.previous) == (2, 1)
        registry.promote("fam", 3)
        registry.promote("fam", 3)  # promoting the champion again changes nothing
        registry.set_alias("fam", "challenger", 4)
        assert registry.get_alias("fam", "challenger").number == 4  # type: ignore[union-attr]
        assert registry.get_alias("fam", CHAMPION).number == 3  # type: ignore[union-attr]
        assert registry.get_version("fam", 3).aliases == (CHAMPION,)

        back = registry.rollback("fam")
        assert (back.version, back.previous) == (2, 3)
        assert registry.get_alias("fam", CHAMPION).number == 2  # type: ignore[union-attr]
        assert registry.rollback("fam").version == 1
        with pytest.raises(RegistryError, match="no previous version"):
            registry.rollback("fam")
        assert registry.get_alias("fam", CHAMPION).number == 1  # type: ignore[union-attr]
        # the challenger never moved with the champion
        assert registry.get_alias("fam", "challenger").number == 4  # type: ignore[union-attr]
        history = [(m.version, m.previous) for m in registry.alias_history("fam")]
        assert history == [(1, None), (2, 1), (3, 2), (2, 3), (1, 2)]


def test_rejected_versions_are_not_promoted_unless_forced(db_url: str) -> None:
    with open_registry(db_url) as registry:
        registry.register_version("fam", artifact_path="x", status="rejected", notes=["story pass rate 0.1 < 0.5"])
        with pytest.raises(RegistryError, match="rejected"):
            registry.promote("fam", 1)
        assert registry.get_alias("fam", CHAMPION) is None
        assert registry.promote("fam", 1, allow_rejected=True).version == 1


def _register_many(url: str, count: int, tag: str, start: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    registry = open_registry(url, busy_timeout=60)
    start.wait(30)
    for i in range(count):
        registry.register_version("race", artifact_path=f"{tag}/{i}", metrics={"writer": tag, "i": i})
    registry.close()


def test_two_processes_registering_at_once_get_consecutive_unique_numbers(db_url: str) -> None:
    url = db_url
    open_registry(url).close()
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    workers = [ctx.Process(target=_register_many, args=(url, 15, tag, start)) for tag in ("a", "b")]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    with open_registry(url) as registry:
        versions = registry.list_versions("race")
    assert [v.number for v in versions] == list(range(1, 31))
    by_writer = {tag: [v.metrics["i"] for v in versions if v.metrics["writer"] == tag] for tag in ("a", "b")}
    assert by_writer == {"a": list(range(15)), "b": list(range(15))}  # each writer's order kept, none lost
    db = sqlite_path(url)
    if db is not None:
        with sqlite3.connect(db) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_second_writer_waits_for_the_lock_then_succeeds(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    registry = open_registry(url_for(db), busy_timeout=10)
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO families (name, created_at) VALUES ('held', '2024-01-01 00:00:00')")
    timer = threading.Timer(0.4, holder.execute, args=("COMMIT",))
    timer.start()
    started = time.monotonic()
    version = registry.register_version("fam", artifact_path="x")
    assert time.monotonic() - started >= 0.3  # it waited for the other writer...
    assert version.number == 1  # ...and then wrote
    assert registry.list_families() == ["fam", "held"]
    timer.join()
    holder.close()
    registry.close()


def test_a_writer_that_cannot_get_the_lock_fails_naming_the_database(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    registry = open_registry(url_for(db), busy_timeout=0.2)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(RegistryBusyError, match=r"locked\.db is locked by another writer"):
            registry.register_version("fam", artifact_path="x")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert registry.register_version("fam", artifact_path="x").number == 1  # nothing half-written
    registry.close()


def test_a_corrupt_registry_file_is_one_clear_line(tmp_path: Path) -> None:
    db = tmp_path / "registry.db"
    db.write_bytes(b"this is not a database" * 300)
    with pytest.raises(CorruptDatabaseError) as raised:
        open_registry(url_for(db))
    message = str(raised.value)
    assert "\n" not in message and str(db) in message and "not a readable SQLite database" in message


def test_an_unreachable_postgresql_server_is_a_run_error_naming_it_without_the_password() -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DatabaseError) as raised:
        open_registry(f"postgresql://user:secret@127.0.0.1:{port}/registry?connect_timeout=2")
    message = str(raised.value)
    assert "\n" not in message and f"127.0.0.1:{port}" in message and "secret" not in message
    assert not isinstance(raised.value, CorruptDatabaseError)
