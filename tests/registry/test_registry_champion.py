"""The champion reference: the registry's champion as a small file that evaluate and compare read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldagent.io import directory_hash
from worldagent.registry.api import open_registry
from worldagent.registry.champion import (
    ChampionReferenceError,
    champion_reference,
    load_champion,
    write_champion_reference,
)


def test_reference_follows_promote_and_rollback_and_loads_verified(tmp_path: Path) -> None:
    for number, weights in ((1, b"one"), (2, b"two")):
        (tmp_path / f"v{number}").mkdir()
        (tmp_path / f"v{number}" / "adapter_model.safetensors").write_bytes(weights)
    out = tmp_path / "champion.json"
    with open_registry(f"sqlite:///{tmp_path / 'registry.db'}") as registry:
        assert champion_reference(registry, "fam") == {"family": "fam", "champion": None}
        write_champion_reference(registry, "fam", out, tmp_path)
        assert load_champion(out, tmp_path, "fam") is None  # the first run: no champion
        for number in (1, 2):
            registry.register_version(
                "fam", artifact_path=f"v{number}", artifact_hash=directory_hash(tmp_path / f"v{number}")
            )
        registry.promote("fam", 1)
        registry.promote("fam", 2)
        write_champion_reference(registry, "fam", out, tmp_path)
        assert json.loads(out.read_text())["version"] == 2
        champion = load_champion(out, tmp_path, "fam")
        assert champion is not None and (champion.version, champion.path) == (2, tmp_path / "v2")

        registry.rollback("fam")
        before = out.stat().st_mtime_ns
        write_champion_reference(registry, "fam", out, tmp_path)
        assert json.loads(out.read_text())["version"] == 1 and out.stat().st_mtime_ns != before
        unchanged = out.stat().st_mtime_ns
        write_champion_reference(registry, "fam", out, tmp_path)  # no change: the file is not rewritten
        assert out.stat().st_mtime_ns == unchanged


def test_a_reference_to_changed_or_missing_weights_is_refused(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "weights.bin").write_bytes(b"one")
    out = tmp_path / "champion.json"
    reference = {"family": "fam", "version": 1, "sha256": directory_hash(tmp_path / "v1"), "path": "v1"}
    out.write_text(json.dumps(reference))
    assert load_champion(out, tmp_path, "fam") is not None
    with pytest.raises(ChampionReferenceError, match="expected 'other'"):
        load_champion(out, tmp_path, "other")
    (tmp_path / "v1" / "weights.bin").write_bytes(b"changed")
    with pytest.raises(ChampionReferenceError, match="not the recorded"):
        load_champion(out, tmp_path, "fam")
    out.write_text(json.dumps({**reference, "path": "gone"}))
    with pytest.raises(ChampionReferenceError, match="missing or empty"):
        load_champion(out, tmp_path, "fam")
    out.write_text(json.dumps({**reference, "version": "one"}))
    with pytest.raises(ChampionReferenceError, match="'version' must be a int"):
        load_champion(out, tmp_path, "fam")
    out.write_text("{oops")
    with pytest.raises(ChampionReferenceError, match=r"champion.json:1:2: invalid JSON"):
        load_champion(out, tmp_path, "fam")
