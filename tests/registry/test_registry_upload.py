"""The upload step: Hub dataset repo, else the DVC remote, else a logged skip."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fake_hub import TOKEN, FakeHub

from worldagent.config import parse_params
from worldagent.pipeline.upload import run_upload

FILES = {
    "trajectories.jsonl": '{"messages": []}\n',
    "dpo-preferences.jsonl": '{"prompt": "p"}\n',
    "manifest.json": '{"n": 2}\n',
}


def write_datasets(root: Path) -> None:
    data = root / "data" / "generated" / "world_agent"
    data.mkdir(parents=True)
    for name, content in FILES.items():
        (data / name).write_text(content)


def test_skips_with_a_reason_when_nothing_is_configured(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_datasets(tmp_path)
    caplog.set_level(logging.INFO, logger="upload")
    result = run_upload(parse_params({}), tmp_path, env={})
    assert result["action"] == "skipped"
    assert "upload.hub_repo is not set" in result["reason"] and "no default remote" in result["reason"]
    assert "upload skipped" in caplog.text


def test_hub_repo_without_token_does_not_upload_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, fake_hub: FakeHub
) -> None:
    write_datasets(tmp_path)
    result = run_upload(
        parse_params({"upload": {"hub_repo": "acme/data"}}), tmp_path, env={"HF_ENDPOINT": fake_hub.url}
    )
    assert result["action"] == "skipped" and "HF_TOKEN is not set" in result["reason"]
    assert fake_hub.requests == []


def test_uploads_datasets_and_manifest_to_the_hub(
    tmp_path: Path, fake_hub: FakeHub, caplog: pytest.LogCaptureFixture
) -> None:
    write_datasets(tmp_path)
    caplog.set_level(logging.DEBUG)
    params = parse_params({"upload": {"hub_repo": "acme/world-agent-data"}})
    result = run_upload(params, tmp_path, env={"HF_TOKEN": TOKEN, "HF_ENDPOINT": fake_hub.url})
    assert result["action"] == "hub" and result["repo"] == "acme/world-agent-data"
    repo = fake_hub.repo("acme/world-agent-data", "dataset")
    assert {name: data.decode() for name, data in repo["files"].items()} == FILES
    assert repo["private"] is True
    assert TOKEN not in caplog.text and TOKEN not in str(result)


def test_pushes_dvc_tracked_datasets_to_the_default_remote(tmp_path: Path) -> None:
    from dvc.repo import Repo

    write_datasets(tmp_path)
    remote = tmp_path / "remote"
    with Repo.init(str(tmp_path), no_scm=True) as repo:
        repo.add([str(tmp_path / "data" / "generated" / "world_agent" / "trajectories.jsonl")])
        with repo.config.edit() as config:
            config["remote"]["storage"] = {"url": str(remote)}
            config["core"]["remote"] = "storage"
    result = run_upload(parse_params({}), tmp_path, env={})
    assert result["action"] == "dvc" and result["remote"] == "storage"
    assert result["targets"] == [
        "data/generated/world_agent/trajectories.jsonl"
    ]  # untracked files are not DVC's to push
    assert result["pushed"] == 1
    stored = [p for p in remote.rglob("*") if p.is_file()]
    assert [p.read_text() for p in stored] == [FILES["trajectories.jsonl"]]
