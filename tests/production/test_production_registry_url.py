"""The production registry URL comes from the environment (a CI secret), not params.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldagent.config import REGISTRY_URL_ENV, load_params, with_environment
from worldagent.registry.api import open_registry


def test_the_environment_overrides_registry_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    params_file = tmp_path / "params.yaml"
    params_file.write_text("registry:\n  url: sqlite:///models/registry.db\n")
    monkeypatch.delenv(REGISTRY_URL_ENV, raising=False)
    assert load_params(params_file).registry.url == "sqlite:///models/registry.db"
    monkeypatch.setenv(REGISTRY_URL_ENV, "postgresql://ci:secret@db.example/registry")
    params = load_params(params_file)
    assert params.registry.url == "postgresql://ci:secret@db.example/registry"
    assert with_environment(params, {REGISTRY_URL_ENV: "  "}) is params  # blank: unchanged


def test_last_weeks_champion_is_read_from_the_shared_database(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the weekly run relies on: a fresh runner (no models/registry.db) sees the champion that the
    previous run promoted, through WORLDAGENT_REGISTRY_URL (SQLite file and real PostgreSQL)."""
    with open_registry(db_url) as last_week:
        version = last_week.register_version(
            "world-agent", artifact_path="models/published/v1", metrics={"mean_reward": 0.7}
        )
        last_week.promote("world-agent", version.number)
    params_file = tmp_path / "params.yaml"
    params_file.write_text("registry:\n  url: sqlite:///models/registry.db\n  family: world-agent\n")
    monkeypatch.setenv(REGISTRY_URL_ENV, db_url)
    params = load_params(params_file)
    with open_registry(params.registry.url) as this_week:
        champion = this_week.get_alias(params.registry.family, "champion")
    assert champion is not None and champion.number == 1 and champion.metrics == {"mean_reward": 0.7}
