"""The champion reference: the registry's champion as a small file that evaluate and compare read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from worldagent.io import directory_hash
from worldagent.registry.api import open_registry
from worldagent.registry.champion import (
    ChampionReferenceError,
    champion_reference,
    load_champion,
    read_champion_reference,
    write_champion_reference,
)


def test_reference_follows_promote_and_rollback_and_is_rewritten_only_on_change(tmp_path: Path) -> None:
    for number, weights in ((1, b"one"), (2, b"two")):
        (tmp_path / f"v{number}").mkdir()
        (tmp_path / f"v{number}" / "adapter_model.safetensors").write_bytes(weights)
    out = tmp_path / "champion.json"
    assert load_champion(out, tmp_path, "fam") is None  # no file: a fresh project has no champion
    with open_registry(f"sqlite:///{tmp_path / 'registry.db'}") as registry:
        none = champion_reference(registry, "fam")
        assert none == {"family": "fam", "version": None, "artifact_path": None, "artifact_hash": None}
        assert write_champion_reference(out, none) and not write_champion_reference(out, none)
        assert load_champion(out, tmp_path, "fam") is None
        for number in (1, 2):
            registry.register_version(
                "fam", artifact_path=f"v{number}", artifact_hash=directory_hash(tmp_path / f"v{number}")
            )
        registry.promote("fam", 1)
        registry.promote("fam", 2)
        assert write_champion_reference(out, champion_reference(registry, "fam"))
        champion = load_champion(out, tmp_path, "fam")
        assert champion is not None and (champion.version, champion.path) == (2, tmp_path / "v2")
        registry.rollback("fam")
        assert write_champion_reference(out, champion_reference(registry, "fam"))
        assert read_champion_reference(out)["version"] == 1
        assert not write_champion_reference(out, champion_reference(registry, "fam"))  # unchanged: DVC sees no change


def test_a_reference_to_changed_or_missing_weights_is_refused(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "weights.bin").write_bytes(b"one")
    out = tmp_path / "champion.json"
    reference = {"family": "fam", "version": 1, "artifact_path": "v1", "artifact_hash": directory_hash(tmp_path / "v1")}
    out.write_text(json.dumps(reference))
    assert load_champion(out, tmp_path, "fam") is not None
    with pytest.raises(ChampionReferenceError, match="expected 'other'"):
        load_champion(out, tmp_path, "other")
    (tmp_path / "v1" / "weights.bin").write_bytes(b"changed")
    with pytest.raises(ChampionReferenceError, match="not the recorded"):
        load_champion(out, tmp_path, "fam")
    out.write_text(json.dumps({**reference, "artifact_path": "gone"}))
    with pytest.raises(ChampionReferenceError, match="missing or empty"):
        load_champion(out, tmp_path, "fam")
    out.write_text(json.dumps({**reference, "version": "one"}))
    with pytest.raises(ChampionReferenceError, match="'version' must be a int"):
        load_champion(out, tmp_path, "fam")
    out.write_text(json.dumps({"family": "fam"}))
    with pytest.raises(ChampionReferenceError, match="exactly the keys"):
        load_champion(out, tmp_path, "fam")
    out.write_text("{oops")
    with pytest.raises(ChampionReferenceError, match=r"champion.json:1:2: invalid JSON"):
        load_champion(out, tmp_path, "fam")


def test_a_reference_is_read_where_sqlalchemy_is_missing(tmp_path: Path) -> None:
    """evaluate_champion runs on a bare training image: reading the pinned file needs no database."""
    weights = tmp_path / "v1"
    weights.mkdir()
    (weights / "adapter_model.safetensors").write_bytes(b"one")
    reference = {"family": "fam", "version": 1, "artifact_path": "v1", "artifact_hash": directory_hash(weights)}
    (tmp_path / "champion.json").write_text(json.dumps(reference), encoding="utf-8")
    script = (
        "import sys; sys.modules['sqlalchemy'] = None\n"  # any `import sqlalchemy` now raises ImportError
        "from pathlib import Path\n"
        "from worldagent.registry.champion import load_champion\n"
        f"root = Path({str(tmp_path)!r})\n"
        "print(load_champion(root / 'champion.json', root, 'fam').version)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
