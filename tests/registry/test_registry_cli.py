"""`worldagent models list|show|promote|rollback` through argparse, as the main CLI wires it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from worldagent.registry.api import open_registry
from worldagent.registry.cli import add_models_commands


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="worldagent")
    add_models_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


@pytest.fixture
def registry_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with open_registry(url) as registry:
        registry.register_version(
            "world-agent",
            artifact_path="models/world_agent/grpo",
            metrics={"mean_reward": 0.4, "story_pass_rate": 0.25},
            git_revision="a" * 40,
        )
        registry.register_version(
            "world-agent", artifact_path="models/world_agent/grpo", metrics={"mean_reward": 0.6}, status="published"
        )
        registry.register_version(
            "world-agent",
            artifact_path="models/world_agent/grpo",
            status="rejected",
            notes=["story pass rate below 0.5"],
        )
        registry.promote("world-agent", 1)
        registry.promote("world-agent", 2)
    return url


def test_list_table_and_json(registry_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["models", "list", "--registry", registry_url, "--family", "world-agent"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[1].split() == ["VERSION", "STATUS", "ALIASES", "CREATED", "(UTC)", "GIT", "METRICS"]
    row1 = next(line for line in lines if line.startswith("v1 "))
    assert "registered" in row1 and "aaaaaaaaaa" in row1 and "mean_reward=0.400" in row1
    assert "champion" in next(line for line in lines if line.startswith("v2 "))
    assert "rejected" in next(line for line in lines if line.startswith("v3 "))

    assert run(["models", "list", "--registry", registry_url, "--family", "world-agent", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [v["version"] for v in data["versions"]] == [1, 2, 3]
    assert data["versions"][1]["aliases"] == ["champion"] and data["versions"][2]["status"] == "rejected"


def test_show_defaults_to_the_champion_and_accepts_numbers(
    registry_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["models", "show", "--registry", registry_url, "--family", "world-agent", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 2
    assert run(["models", "show", "v3", "--registry", registry_url, "--family", "world-agent"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("world-agent v3") and "status:" in out and "note: story pass rate below 0.5" in out
    assert run(["models", "show", "9", "--registry", registry_url, "--family", "world-agent"]) == 2
    assert "has no version 9" in capsys.readouterr().err
    assert run(["models", "show", "challenger", "--registry", registry_url, "--family", "world-agent"]) == 1


def test_promote_and_rollback(registry_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--registry", registry_url, "--family", "world-agent"]
    assert run(["models", "rollback", *common]) == 0
    assert capsys.readouterr().out.strip() == "world-agent champion: v2 -> v1"
    assert run(["models", "rollback", *common]) == 1
    assert "no previous version" in capsys.readouterr().err
    assert run(["models", "promote", "3", *common]) == 1  # rejected by the gate
    assert "rejected" in capsys.readouterr().err
    assert run(["models", "promote", "v3", "--force", "--json", *common]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "family": "world-agent",
        "alias": "champion",
        "version": 3,
        "previous": 1,
    }
    assert run(["models", "promote", "x1", *common]) == 2


def test_defaults_come_from_params_yaml(
    tmp_path: Path, registry_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "params.yaml").write_text(f"registry:\n  url: {registry_url}\n  family: world-agent\n")
    monkeypatch.chdir(tmp_path)
    assert run(["models", "list", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["versions"]) == 3
    (tmp_path / "params.yaml").write_text("registry:\n  ulr: x\n")
    assert run(["models", "list"]) == 2
    assert "registry.ulr: unknown key" in capsys.readouterr().err


def test_empty_registry_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(["models", "list", "--registry", f"sqlite:///{tmp_path / 'new' / 'r.db'}", "--family", "world-agent"]) == 0
    )
    assert "no versions of world-agent" in capsys.readouterr().out


def test_pin_writes_the_champion_into_the_familys_reference(
    tmp_path: Path, registry_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    common = ["--registry", registry_url, "--family", "world-agent"]
    assert run(["models", "pin", *common]) == 0
    reference = tmp_path / "models" / "world_agent" / "champion.json"  # the world agent's, from its stage table
    assert json.loads(reference.read_text())["version"] == 2
    assert capsys.readouterr().out.strip() == "models/world_agent/champion.json: world-agent champion v2"
    assert run(["models", "pin", *common]) == 0
    assert capsys.readouterr().out.strip().endswith("(unchanged)")
    assert run(["models", "rollback", *common]) == 0
    assert run(["models", "pin", "--json", *common]) == 0
    pinned = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (pinned["version"], pinned["changed"]) == (1, True)
    assert run(["models", "pin", "--registry", registry_url, "--family", "other"]) == 2
    assert "--to" in capsys.readouterr().err
