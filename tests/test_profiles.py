"""Profiles: one command switches params.yaml, reversibly, keeping its comments; bad profiles are clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from worldagent import profiles
from worldagent.cli import main as cli
from worldagent.config import load_params

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def test_every_profile_names_the_same_keys_and_all_of_them_exist_in_params_yaml(project: Path) -> None:
    names = profiles.available(project / "profiles")
    assert {"tiny", "smollm2"} <= set(names)
    keys = {
        name: {key for key, _ in profiles.leaf_keys(profiles.read_profile(name, project / "profiles"))}
        for name in names
    }
    first = keys[names[0]]
    assert all(k == first for k in keys.values()), keys  # otherwise switching back would leave values behind
    for name in names:  # applies cleanly: every key exists, the result validates
        profiles.apply_profile((project / "params.yaml").read_text(), profiles.read_profile(name, project / "profiles"))


def test_switching_there_and_back_restores_params_yaml_byte_for_byte(project: Path) -> None:
    params, directory = project / "params.yaml", project / "profiles"
    before = params.read_text()
    [current] = profiles.matching(params, directory)
    other = next(name for name in profiles.available(directory) if name != current)
    changed = profiles.use_profile(other, params, directory)
    assert changed and profiles.matching(params, directory) == [other]
    after = params.read_text()
    assert after != before and after.count("#") == before.count("#")  # comments kept
    assert load_params(params).model.base == profiles.read_profile(other, directory)["model"]["base"]
    assert profiles.use_profile(current, params, directory) == changed
    assert params.read_text() == before


def test_the_cli_switches_and_shows_the_profile(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--params", str(project / "params.yaml"), "--profiles", str(project / "profiles")]
    [current] = profiles.matching(project / "params.yaml", project / "profiles")
    other = next(name for name in profiles.available(project / "profiles") if name != current)
    assert cli(["profile", "use", other, *args]) == 0
    assert "model.base" in capsys.readouterr().out
    assert cli(["profile", "show", *args]) == 0
    assert capsys.readouterr().out.strip() == other
    assert cli(["profile", "use", other, *args]) == 0
    assert "already set" in capsys.readouterr().out


def test_unknown_profiles_and_keys_are_one_line_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--params", str(project / "params.yaml"), "--profiles", str(project / "profiles")]
    before = (project / "params.yaml").read_text()
    assert cli(["profile", "use", "huge", *args]) == 2
    assert "no such profile (known: smollm2, tiny)" in capsys.readouterr().err
    (project / "profiles" / "typo.yaml").write_text("sft:\n  epochz: 3\n")
    assert cli(["profile", "use", "typo", *args]) == 2
    assert "`sft.epochz` is not a key of params.yaml" in capsys.readouterr().err
    (project / "profiles" / "invalid.yaml").write_text("sft:\n  epochs: -1\n")
    assert cli(["profile", "use", "invalid", *args]) == 2
    assert "sft.epochs" in capsys.readouterr().err
    assert (project / "params.yaml").read_text() == before  # nothing written on error
