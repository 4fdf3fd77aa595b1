"""Suite-wide fixtures.

Several tests read the generated world-agent datasets. On a fresh clone those DVC outputs do not
exist yet, so they are materialised once per session with the same library code the discover and
generate stages run (byte-deterministic, so the bytes match dvc.lock).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from filelock import FileLock

from worldagent.pipeline.table import stage_paths

PROJECT = Path(__file__).resolve().parents[1]
GENERATED = PROJECT / "data" / "generated" / "world_agent"
DATASETS = (
    "stories.jsonl",
    "trajectories.jsonl",
    "trajectories.eval.jsonl",
    "dpo-preferences.jsonl",
    "dpo-preferences.eval.jsonl",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse tests that share a node id: pytest-xdist schedules by node id, so all but one of them
    would silently never run under ``make test``."""
    shared = sorted(nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1)
    if shared:
        raise pytest.UsageError(f"tests share a node id (give each a distinct parametrize id): {shared}")


@pytest.fixture(scope="session", autouse=True)
def generated_datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Under pytest-xdist every worker runs this fixture: the first one writes, the others wait
    # (the workers' temporary directories share a parent; without xdist it is this run's own).
    with FileLock(tmp_path_factory.getbasetemp().parent / "generated-datasets.lock"):
        if not all((GENERATED / name).exists() for name in DATASETS):
            from worldagent.config import load_params
            from worldagent.pipeline.entry import resolve
            from worldagent.pipeline.world_agent import PIPELINE

            params = load_params(PROJECT / "params.yaml")
            for stage in (PIPELINE.stage("discover"), PIPELINE.stage("generate")):
                resolve(stage.entry)(params, **stage_paths(stage, PROJECT, params))
    return GENERATED


@pytest.fixture(scope="session")
def postgres_server():  # type: ignore[no-untyped-def]
    """A real PostgreSQL server for the session (skipped, with the reason, when it cannot start here)."""
    from tests.databases import PostgresServer, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database URL: a SQLite file under tmp_path, then a new database on the PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db' / 'store.db'}"
    return request.getfixturevalue("postgres_server").create_database()
