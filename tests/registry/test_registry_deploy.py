"""The deploy step: a passing gate publishes and moves the champion; a failing gate never publishes."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from fake_hub import TOKEN, FakeHub

from worldagent.config import Params, parse_params
from worldagent.io import directory_hash
from worldagent.pipeline import deploy as deploy_stage
from worldagent.pipeline.deploy import deploy_world_agent
from worldagent.registry.api import CHAMPION, open_registry
from worldagent.registry.deploy import DeployError, params_hash
from worldagent.registry.publishers import PublishedRef, PublishError

EVAL = {
    "models": {
        "grpo": {"mean_reward": 0.62, "story_pass_rate": 0.5},
        "base": {"mean_reward": 0.11, "story_pass_rate": 0.0},
    }
}


def make_params(**deploy_section: Any) -> Params:
    return parse_params(
        {"registry": {"url": "sqlite:///models/registry.db"}, "deploy": deploy_section or {"publisher": "local"}}
    )


def deploy(params: Params, root: Path, **options: Any):  # type: ignore[no-untyped-def]
    return deploy_world_agent(params, root, **options)


def write_reports(root: Path, passed: bool, reasons: list[str] | None = None) -> None:
    """gate.json as the gate stage writes it: scoring the adapter that is on disk now."""
    reports = root / "reports" / "world_agent"
    reports.mkdir(parents=True, exist_ok=True)
    scored = directory_hash(root / "models" / "world_agent" / "grpo")
    gate = {
        "passed": passed,
        "reasons": reasons or [],
        "candidate": "grpo",
        "family": "world-agent",
        "artifact_hash": scored,
    }
    (reports / "gate.json").write_text(json.dumps(gate))
    (reports / "eval.json").write_text(json.dumps(EVAL))
    data = root / "data" / "generated" / "world_agent"
    data.mkdir(parents=True, exist_ok=True)
    (data / "manifest.json").write_text('{"trajectories": 12}\n')


class SpyPublisher:
    def __init__(self) -> None:
        self.calls: list[tuple[Path, str, str]] = []

    def publish(self, artifact_dir: Path, card_markdown: str, version_label: str) -> PublishedRef:
        self.calls.append((artifact_dir, card_markdown, version_label))
        return PublishedRef(kind="local", uri=f"spy://{version_label}", version_label=version_label)


def registry_for(root: Path):  # type: ignore[no-untyped-def]
    return open_registry(f"sqlite:///{root / 'models' / 'registry.db'}")


def test_passing_gate_publishes_registers_and_promotes(tmp_path: Path, adapter_dir: Path) -> None:
    write_reports(tmp_path, passed=True, reasons=["story pass rate 0.50 >= 0.00"])
    alerts: list[str] = []
    result = deploy(make_params(), tmp_path, alert=alerts.append, env={})
    assert (result.action, result.version, result.champion, result.previous_champion) == ("deployed", 1, 1, None)
    assert alerts == []

    published = tmp_path / "models" / "published" / "world-agent" / "v1"
    assert result.published and Path(result.published["uri"]) == published
    readme = (published / "README.md").read_text()
    assert "library_name: peft" in readme and "| mean_reward | 0.6200 | 0.1100 |" in readme
    assert (published / "adapter_model.safetensors").is_file() and not (published / "checkpoint-10").exists()

    with registry_for(tmp_path) as registry:
        version = registry.get_version("world-agent", 1)
        assert registry.get_alias("world-agent", CHAMPION).number == 1  # type: ignore[union-attr]
    assert version.status == "published" and version.published_uri == str(published)
    assert version.metrics == EVAL["models"]["grpo"]
    assert version.params_hash == params_hash(make_params()) and len(version.data_hash or "") == 64
    # the champion loads from the immutable published copy, not from the training output
    assert (
        version.artifact_path == "models/published/world-agent/v1" and version.source_path == "models/world_agent/grpo"
    )
    assert version.artifact_hash
    original = (adapter_dir / "adapter_model.safetensors").read_bytes()

    # nothing changed: a second run neither registers nor publishes again
    again = deploy(make_params(), tmp_path, alert=alerts.append, env={})
    assert (again.action, again.version, again.champion) == ("unchanged", 1, 1)
    assert [p.name for p in published.parent.iterdir()] == ["v1"]

    # a new adapter that passes becomes v2 and the champion; rollback returns to v1
    (adapter_dir / "adapter_model.safetensors").write_bytes(b"new weights")
    write_reports(tmp_path, passed=True)  # the gate scores the new adapter
    newer = deploy(make_params(), tmp_path, alert=alerts.append, env={})
    assert (newer.action, newer.version, newer.champion, newer.previous_champion) == ("deployed", 2, 2, 1)
    with registry_for(tmp_path) as registry:
        assert registry.rollback("world-agent").version == 1
        champion = registry.get_alias("world-agent", CHAMPION)
    assert (
        champion is not None
        and (tmp_path / champion.artifact_path / "adapter_model.safetensors").read_bytes() == original
    )


def test_failing_gate_never_publishes_registers_rejected_alerts_and_keeps_the_champion(
    tmp_path: Path, adapter_dir: Path
) -> None:
    write_reports(tmp_path, passed=True)
    deploy(make_params(), tmp_path, alert=lambda _m: None, env={})  # v1 champion
    (adapter_dir / "adapter_model.safetensors").write_bytes(b"worse weights")
    write_reports(tmp_path, passed=False, reasons=["story pass rate 0.10 < 0.50", "mean reward not non-inferior"])

    spy = SpyPublisher()
    alerts: list[str] = []
    result = deploy(make_params(), tmp_path, publishers=[spy], alert=alerts.append, env={})
    assert spy.calls == []
    assert (result.action, result.version, result.champion) == ("rejected", 2, 1)
    assert (
        len(alerts) == 1
        and "v2 failed the gate" in alerts[0]
        and "story pass rate 0.10 < 0.50" in alerts[0]
        and "stays v1" in alerts[0]
    )
    assert not (tmp_path / "models" / "published" / "world-agent" / "v2").exists()
    with registry_for(tmp_path) as registry:
        rejected = registry.get_version("world-agent", 2)
        assert registry.get_alias("world-agent", CHAMPION).number == 1  # type: ignore[union-attr]
    assert rejected.status == "rejected" and rejected.notes == [
        "story pass rate 0.10 < 0.50",
        "mean reward not non-inferior",
    ]
    assert rejected.published_uri is None


def test_failing_gate_with_the_hub_publisher_sends_nothing_to_the_hub(
    tmp_path: Path, adapter_dir: Path, fake_hub: FakeHub
) -> None:
    write_reports(tmp_path, passed=False, reasons=["below threshold"])
    params = make_params(publisher="hub", hub_repo="acme/world-agent")
    result = deploy(params, tmp_path, alert=lambda _m: None, env={"HF_TOKEN": TOKEN, "HF_ENDPOINT": fake_hub.url})
    assert result.action == "rejected"
    assert fake_hub.requests == []


def test_passing_gate_publishes_to_the_hub_and_tags_the_version(
    tmp_path: Path, adapter_dir: Path, fake_hub: FakeHub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    write_reports(tmp_path, passed=True)
    params = make_params(publisher="hub", hub_repo="acme/world-agent")
    result = deploy(params, tmp_path, alert=lambda _m: None, env={"HF_TOKEN": TOKEN, "HF_ENDPOINT": fake_hub.url})
    repo = fake_hub.repo("acme/world-agent")
    assert result.action == "deployed" and list(repo["tags"]) == ["v1"]
    assert result.published and result.published["uri"] == f"{fake_hub.url}/acme/world-agent"
    assert (tmp_path / "models" / "published" / "world-agent" / "v1" / "README.md").read_bytes() == repo["files"][
        "README.md"
    ]
    assert "# world-agent v1" in repo["files"]["README.md"].decode()
    with registry_for(tmp_path) as registry:
        version = registry.get_version("world-agent", 1)
    assert version.published_revision == repo["tags"]["v1"]["revision"] == fake_hub.commits[0].oid
    assert (
        version.published_uri == f"{fake_hub.url}/acme/world-agent"
        and version.artifact_path == "models/published/world-agent/v1"
    )
    assert TOKEN not in caplog.text and TOKEN not in json.dumps(result.to_dict())


def test_hub_publisher_needs_a_token_and_fails_before_registering(tmp_path: Path, adapter_dir: Path) -> None:
    write_reports(tmp_path, passed=True)
    with pytest.raises(DeployError, match="HF_TOKEN"):
        deploy(make_params(publisher="hub", hub_repo="acme/x"), tmp_path, env={})
    with registry_for(tmp_path) as registry:
        assert registry.list_versions("world-agent") == []


def test_publish_failure_marks_the_version_failed_alerts_and_keeps_the_champion(
    tmp_path: Path, adapter_dir: Path
) -> None:
    class Broken:
        def publish(self, artifact_dir: Path, card_markdown: str, version_label: str) -> PublishedRef:
            raise OSError("disk full")

    write_reports(tmp_path, passed=True)
    alerts: list[str] = []
    with pytest.raises(OSError, match="disk full"):
        deploy(make_params(), tmp_path, publishers=[Broken()], alert=alerts.append, env={})
    with registry_for(tmp_path) as registry:
        assert registry.get_version("world-agent", 1).status == "failed"
        assert registry.get_alias("world-agent", CHAMPION) is None
    assert "publishing failed: disk full" in alerts[0]


def write_project(root: Path) -> Path:
    params = root / "params.yaml"
    params.write_text("registry:\n  url: sqlite:///models/registry.db\ndeploy:\n  publisher: local\n")
    return params


def test_stage_command_exit_codes(
    tmp_path: Path, adapter_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    params = write_project(tmp_path)
    argv = ["--params", str(params), "--root", str(tmp_path)]
    assert deploy_stage.main(argv) == 2  # no gate.json yet
    assert "gate.json" in capsys.readouterr().err

    write_reports(tmp_path, passed=False, reasons=["too few stories pass"])
    monkeypatch.delenv("CI", raising=False)
    assert deploy_stage.main(argv) == 0  # locally a failed gate is a normal outcome
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["action"] == "rejected"
    monkeypatch.setenv("CI", "true")
    assert deploy_stage.main(argv) == 1  # in CI it fails the job
    assert "gate failed" in capsys.readouterr().err

    write_reports(tmp_path, passed=True)
    assert deploy_stage.main(argv) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["action"], result["version"], result["champion"]) == (
        "deployed",
        2,
        2,
    )  # v1 stays the rejected record


def test_a_different_adapter_next_to_an_old_passing_gate_is_refused(tmp_path: Path, adapter_dir: Path) -> None:
    write_reports(tmp_path, passed=True)  # the gate scored these bytes
    (adapter_dir / "adapter_model.safetensors").write_bytes(b"weights the gate never saw")
    spy = SpyPublisher()
    with pytest.raises(DeployError, match="is not the artifact the gate scored") as refused:
        deploy(make_params(), tmp_path, publishers=[spy], env={})
    assert "rerun evaluate and gate" in str(refused.value) and str(adapter_dir) in str(refused.value)
    assert spy.calls == []
    with registry_for(tmp_path) as registry:
        assert registry.list_versions("world-agent") == []


def test_a_passing_gate_without_a_content_hash_is_refused(tmp_path: Path, adapter_dir: Path) -> None:
    write_reports(tmp_path, passed=True)
    gate_json = tmp_path / "reports" / "world_agent" / "gate.json"
    old = {k: v for k, v in json.loads(gate_json.read_text()).items() if k != "artifact_hash"}
    gate_json.write_text(json.dumps(old))  # written by a gate that did not record what it scored
    with pytest.raises(DeployError, match="records no artifact_hash"):
        deploy(make_params(), tmp_path, publishers=[SpyPublisher()], env={})


def test_the_registry_version_records_the_hash_the_gate_scored(tmp_path: Path, adapter_dir: Path) -> None:
    write_reports(tmp_path, passed=True)
    scored = json.loads((tmp_path / "reports" / "world_agent" / "gate.json").read_text())["artifact_hash"]
    deploy(make_params(), tmp_path, alert=lambda _m: None, env={})
    with registry_for(tmp_path) as registry:
        version = registry.get_version("world-agent", 1)
    assert version.artifact_hash == scored
    # the published copy (with its model card) has the same content hash: the card is not part of it
    assert directory_hash(tmp_path / version.artifact_path) == scored


def test_hub_deploys_to_an_unreachable_endpoint_leave_one_failed_record_and_no_copies(
    tmp_path: Path, adapter_dir: Path, fake_hub: FakeHub
) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    write_reports(tmp_path, passed=True)
    params = make_params(publisher="hub", hub_repo="acme/world-agent")
    unreachable = {"HF_TOKEN": TOKEN, "HF_ENDPOINT": f"http://127.0.0.1:{closed}"}
    alerts: list[str] = []
    for _ in range(3):
        with pytest.raises(PublishError, match="acme/world-agent"):
            deploy(params, tmp_path, alert=alerts.append, env=unreachable)
    with registry_for(tmp_path) as registry:
        versions = registry.list_versions("world-agent")
        assert registry.get_alias("world-agent", CHAMPION) is None
    assert [(v.number, v.status) for v in versions] == [(1, "failed")]
    assert "publish failed" in versions[0].notes[-1] and len(alerts) == 3
    published = tmp_path / "models" / "published" / "world-agent"
    assert not published.exists() or list(published.iterdir()) == []  # the local copy was removed again

    # once the Hub is reachable, the retry reuses the failed record
    result = deploy(params, tmp_path, alert=alerts.append, env={"HF_TOKEN": TOKEN, "HF_ENDPOINT": fake_hub.url})
    assert (result.action, result.version, result.champion) == ("deployed", 1, 1)
    with registry_for(tmp_path) as registry:
        assert [(v.number, v.status) for v in registry.list_versions("world-agent")] == [(1, "published")]
    assert [p.name for p in published.iterdir()] == ["v1"]
    assert list(fake_hub.repo("acme/world-agent")["tags"]) == ["v1"]


def test_the_intervention_family_honours_the_hub_publisher(tmp_path: Path, fake_hub: FakeHub) -> None:
    from worldagent.evaluation.family import INTERVENTION
    from worldagent.registry.deploy import deploy as deploy_family

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "predictor.json").write_text('{"format": 1}\n')
    (bundle / "head.pt").write_bytes(b"head")
    gate_json = tmp_path / "gate.json"
    gate = {"passed": True, "reasons": ["ok"], "candidate": "predictor", "artifact_hash": directory_hash(bundle)}
    gate_json.write_text(json.dumps(gate))
    metrics_json = tmp_path / "metrics.json"
    metrics_json.write_text(json.dumps({"f1": 0.9, "auc": 0.95, "model": {"clip": "wa-tiny-vit"}}))
    params = make_params(publisher="hub", hub_repo="acme/intervention")
    result = deploy_family(
        INTERVENTION,
        params,
        gate_json=gate_json,
        artifact_dir=bundle,
        metrics_json=metrics_json,
        root=tmp_path,
        alert=lambda _m: None,
        env={"HF_TOKEN": TOKEN, "HF_ENDPOINT": fake_hub.url},
    )
    assert (result.action, result.family, result.version) == ("deployed", "intervention-predictor", 1)
    repo = fake_hub.repo("acme/intervention")
    assert list(repo["tags"]) == ["v1"] and repo["files"]["head.pt"] == b"head"
    assert "open_clip:wa-tiny-vit" in repo["files"]["README.md"].decode()
    assert (tmp_path / "models" / "published" / "intervention-predictor" / "v1" / "head.pt").read_bytes() == b"head"
