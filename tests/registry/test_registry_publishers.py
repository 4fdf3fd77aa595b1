"""Publishers: the local folder (atomic, never overwrites) and the Hub (real client, fake server)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fake_hub import TOKEN, FakeHub

from worldagent.registry.publishers import HubPublisher, LocalPublisher, Publisher, PublishError, upload_datasets

CARD = "---\nlibrary_name: peft\ntags:\n- world-agent\n---\n\n# world-agent v1\n"
ADAPTER_FILES = ["adapter_config.json", "adapter_model.safetensors", "tokenizer.json"]


def test_local_publisher_copies_adapter_and_card_and_never_overwrites(tmp_path: Path, adapter_dir: Path) -> None:
    publisher = LocalPublisher(root=tmp_path / "published", family="world-agent")
    assert isinstance(publisher, Publisher)
    ref = publisher.publish(adapter_dir, CARD, "v1")
    target = tmp_path / "published" / "world-agent" / "v1"
    assert ref.kind == "local" and Path(ref.uri) == target
    assert sorted(p.name for p in target.iterdir()) == sorted(
        [*ADAPTER_FILES, "README.md"]
    )  # no checkpoints, no dotfiles
    assert (target / "README.md").read_text() == CARD
    assert (target / "adapter_model.safetensors").read_bytes() == (
        adapter_dir / "adapter_model.safetensors"
    ).read_bytes()

    (adapter_dir / "adapter_config.json").write_text("{}")
    with pytest.raises(PublishError, match="never overwritten"):
        publisher.publish(adapter_dir, "# other", "v1")
    assert (target / "README.md").read_text() == CARD  # untouched
    assert [p.name for p in target.parent.iterdir()] == ["v1"]  # no staging directory left behind


def test_local_publisher_leaves_nothing_when_the_copy_fails(
    tmp_path: Path, adapter_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    real_copy = shutil.copy2
    calls = []

    def failing_copy(src: object, dst: object) -> object:
        calls.append(src)
        if len(calls) == 2:
            raise OSError("disk full")
        return real_copy(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copy2", failing_copy)
    with pytest.raises(OSError, match="disk full"):
        LocalPublisher(root=tmp_path / "pub").publish(adapter_dir, CARD, "v2")
    assert list((tmp_path / "pub" / "world-agent").iterdir()) == []


def test_local_publisher_rejects_empty_or_missing_adapters(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(PublishError, match="no files"):
        LocalPublisher(root=tmp_path / "pub").publish(tmp_path / "empty", CARD, "v1")
    with pytest.raises(PublishError, match="not found"):
        LocalPublisher(root=tmp_path / "pub").publish(tmp_path / "missing", CARD, "v1")


def test_hub_publisher_creates_repo_commits_once_and_tags_that_commit(
    fake_hub: FakeHub, adapter_dir: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    publisher = HubPublisher(repo_id="acme/world-agent", token=TOKEN, endpoint=fake_hub.url)
    ref = publisher.publish(adapter_dir, CARD, "v1")

    repo = fake_hub.repo("acme/world-agent")
    assert repo["private"] is True and repo["create_payload"]["type"] == "model"
    assert len(fake_hub.commits) == 1
    commit = fake_hub.commits[0]
    assert commit.summary == "Publish v1"
    assert sorted(commit.files) == sorted([*ADAPTER_FILES, "README.md"])
    assert commit.files["README.md"].decode() == CARD
    assert commit.files["adapter_model.safetensors"] == (adapter_dir / "adapter_model.safetensors").read_bytes()
    assert repo["tags"] == {"v1": {"revision": commit.oid, "message": "Release v1"}}
    assert ref.kind == "hub" and ref.revision == commit.oid and ref.uri == f"{fake_hub.url}/acme/world-agent"
    assert ("POST", "/api/models/acme/world-agent/preupload/main") in fake_hub.requests
    assert all(header == f"Bearer {TOKEN}" for header in fake_hub.auth_headers)  # the token was used...

    # ...and never shown: not in logs, not on the console, not in repr/str
    captured = capsys.readouterr()
    assert TOKEN not in caplog.text and TOKEN not in captured.out + captured.err
    assert TOKEN not in repr(publisher) and TOKEN not in str(publisher) and "***" in repr(publisher)


def test_hub_publisher_second_version_reuses_the_repo_and_refuses_an_existing_tag(
    fake_hub: FakeHub, adapter_dir: Path
) -> None:
    publisher = HubPublisher(repo_id="acme/world-agent", token=TOKEN, endpoint=fake_hub.url)
    publisher.publish(adapter_dir, CARD, "v1")
    (adapter_dir / "adapter_config.json").write_text('{"r": 8}\n')
    second = publisher.publish(adapter_dir, CARD.replace("v1", "v2"), "v2")
    repo = fake_hub.repo("acme/world-agent")
    assert sorted(repo["tags"]) == ["v1", "v2"] and repo["tags"]["v2"]["revision"] == second.revision
    assert repo["files"]["adapter_config.json"] == b'{"r": 8}\n'
    with pytest.raises(PublishError) as error:
        publisher.publish(adapter_dir, CARD, "v2")
    assert "acme/world-agent" in str(error.value) and TOKEN not in str(error.value)
    assert repo["tags"]["v2"]["revision"] == second.revision  # the tag still points at the v2 commit


def test_hub_errors_name_the_repo_and_hide_the_token(fake_hub: FakeHub, adapter_dir: Path) -> None:
    dead = HubPublisher(repo_id="acme/x", token=TOKEN, endpoint="http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(PublishError, match="acme/x") as error:
        dead.publish(adapter_dir, CARD, "v1")
    assert TOKEN not in str(error.value)


def test_upload_datasets_pushes_files_to_a_dataset_repo(fake_hub: FakeHub, tmp_path: Path) -> None:
    files = []
    for name, content in (("trajectories.jsonl", '{"a": 1}\n'), ("manifest.json", '{"n": 1}\n')):
        (tmp_path / name).write_text(content)
        files.append(tmp_path / name)
    ref = upload_datasets(files, "acme/world-agent-data", TOKEN, endpoint=fake_hub.url)
    repo = fake_hub.repo("acme/world-agent-data", "dataset")
    assert repo["create_payload"]["type"] == "dataset"
    assert repo["files"] == {"manifest.json": b'{"n": 1}\n', "trajectories.jsonl": b'{"a": 1}\n'}
    assert fake_hub.commits[0].repo_type == "dataset"
    assert ref.uri == f"{fake_hub.url}/datasets/acme/world-agent-data" and ref.files == (
        "manifest.json",
        "trajectories.jsonl",
    )
