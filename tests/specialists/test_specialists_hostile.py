"""The platform service under hostile input: token, sizes, depth, model paths, artifact hashes, evaluation cost."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from specialists_helpers import service_settings

from worldagent.io import directory_hash
from worldagent.specialists.api import create_app
from worldagent.specialists.service import EVAL_MAX_ROWS, EVAL_MAX_SNAPSHOT_CHARS, ServiceError, SpecialistsService
from worldagent.specialists.store import MAX_VALUE_BYTES, StoreError, open_store


def make_service(root: Path) -> SpecialistsService:
    return SpecialistsService(
        store=open_store(f"sqlite:///{root / 'feedback.db'}"),
        **service_settings(data_dir=str(root / "data" / "specialists")),
        root=root,
        registry_url=f"sqlite:///{root / 'registry.db'}",
        trainer_url="http://127.0.0.1:9",
    )


@pytest.fixture
def service(tmp_path: Path):  # type: ignore[no-untyped-def]
    service = make_service(tmp_path)
    yield service
    service.close()


def feedback(input_value: object) -> dict[str, object]:
    return {
        "targetType": "agent",
        "targetId": "a",
        "input": input_value,
        "output": {"action": "click"},
        "label": "good",
    }


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_bearer_token_guards_every_route_but_health(service: SpecialistsService) -> None:
    with TestClient(create_app(service, token="s3cret")) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/feedback").status_code == 401
        assert client.post("/feedback", json=feedback({})).status_code == 401
        assert client.get("/feedback", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/feedback", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_no_token_configured_means_open(service: SpecialistsService) -> None:
    with TestClient(create_app(service)) as client:
        assert client.get("/feedback").status_code == 200


def test_a_body_over_the_limit_is_413_before_it_is_read(service: SpecialistsService) -> None:
    with TestClient(create_app(service, max_body_bytes=10_000)) as client:
        response = client.post("/feedback", json=feedback("x" * 20_000))
        assert response.status_code == 413 and "limit is 10000" in response.json()["detail"]
        assert client.get("/feedback").json() == []


def test_a_50_mb_feedback_row_is_refused_by_the_default_limits(service: SpecialistsService) -> None:
    big = "x" * (50 * 1024 * 1024)
    with TestClient(create_app(service)) as client:
        assert client.post("/feedback", json=feedback(big)).status_code == 413
    with pytest.raises(StoreError, match="input: .* the limit is"):  # and the store refuses it on its own
        service.create_feedback(**feedback("y" * (MAX_VALUE_BYTES + 1)))


def test_deep_json_bodies_are_400_and_nothing_is_stored(service: SpecialistsService) -> None:
    with TestClient(create_app(service)) as client:
        deep_body = (
            '{"targetType": "agent", "targetId": "a", "input": ' + nested(100_000) + ', "output": 1, "label": "good"}'
        )
        response = client.post("/feedback", content=deep_body, headers={"content-type": "application/json"})
        assert response.status_code == 400 and "nested deeper than" in response.json()["detail"]
        # 256 deep inside a JSON-encoded string: passes the body check, refused by the store before it is stored
        response = client.post("/feedback", json=feedback(nested(256)))
        assert response.status_code == 400 and "input: JSON nested deeper than 64 levels" in response.json()["detail"]
        value: object = 1
        for _ in range(70):  # 70 deep as a JSON value is over the body depth limit too
            value = [value]
        assert client.post("/feedback", json=feedback(value)).status_code == 400
        assert client.get("/feedback").status_code == 200 and client.get("/feedback").json() == []
    with pytest.raises(StoreError, match="nested deeper"):
        service.create_feedback(**feedback(value))  # the store checks parsed values too


def test_listing_survives_a_deep_row_stored_before_the_limits(tmp_path: Path) -> None:
    service = make_service(tmp_path)
    service.create_feedback(**feedback({"ok": True}))
    service.close()
    with sqlite3.connect(tmp_path / "feedback.db") as connection:  # as an older version would have stored it
        connection.execute("UPDATE feedback SET input = ?", (nested(100_000),))
    service = make_service(tmp_path)
    with TestClient(create_app(service)) as client:
        response = client.get("/feedback")
        assert response.status_code == 200
        assert "nested deeper than 64 levels" in json.dumps(response.json()[0]["input"])
    service.close()


def test_model_paths_are_confined_to_the_model_directories(service: SpecialistsService) -> None:
    job = service.create_improvement_job(name="j", scopeType="agent", scopeId="a")
    with pytest.raises(ServiceError, match="currentModelRef: /etc/passwd is outside the model directories"):
        service.update_improvement_job(job["id"], currentModelRef="/etc/passwd")
    with pytest.raises(ServiceError, match="outside the model directories"):
        service.update_improvement_job(job["id"], currentModelRef="models/../../../etc/passwd")
    with pytest.raises(ServiceError, match="outside"):
        service.create_improvement_job(name="k", scopeType="agent", scopeId="a", currentModelRef="/etc")
    inside = service.update_improvement_job(job["id"], currentModelRef="models/specialist/v1")
    assert inside["currentModelRef"] == str(service.root / "models" / "specialist" / "v1")
    with TestClient(create_app(service)) as client:
        response = client.patch(f"/jobs/{job['id']}", json={"currentModelRef": "/etc/passwd"})
        assert response.status_code == 400 and "outside the model directories" in response.json()["detail"]


def _fake_adapter(directory: Path, claimed: str | None) -> Path:
    directory.mkdir(parents=True)
    (directory / "adapter_model.safetensors").write_bytes(b"weights")
    (directory / "adapter_config.json").write_text("{}")
    stage = {"stage": "specialist", "chain": []}
    if claimed is not None:
        stage["adapter_sha256"] = claimed
    (directory / "stage.json").write_text(json.dumps(stage))
    return directory


def test_registering_requires_an_adapter_whose_files_match_its_hash(
    service: SpecialistsService, tmp_path: Path
) -> None:
    from worldagent.specialists.service import adapter_files_hash

    job = service.create_improvement_job(name="j", scopeType="agent", scopeId="a")
    models = service.root / "models"
    lying = _fake_adapter(models / "lying", claimed="0" * 64)
    with pytest.raises(ServiceError, match="do not hash to the adapter_sha256"):
        service.register_trained_model(outputModelRef=str(lying), name="x", jobId=job["id"])
    no_hash = _fake_adapter(models / "no-hash", claimed=None)
    with pytest.raises(ServiceError, match="do not hash"):
        service.register_trained_model(outputModelRef=str(no_hash), name="x", jobId=job["id"])
    with pytest.raises(ServiceError, match="not a complete trained adapter"):
        service.register_trained_model(outputModelRef=str(models), name="x", jobId=job["id"])  # an arbitrary directory
    outside = _fake_adapter(tmp_path.parent / f"{tmp_path.name}-outside", claimed=None)
    (outside / "stage.json").write_text(json.dumps({"adapter_sha256": adapter_files_hash(outside)}))
    with pytest.raises(ServiceError, match="outside the model directories"):
        service.register_trained_model(outputModelRef=str(outside), name="x", jobId=job["id"])
    linked = _fake_adapter(models / "linked", claimed=None)
    (linked / "leak").symlink_to("/etc/passwd")
    with pytest.raises(ServiceError, match="symbolic link"):
        service.register_trained_model(outputModelRef=str(linked), name="x", jobId=job["id"])
    honest = _fake_adapter(models / "honest", claimed=None)
    (honest / "stage.json").write_text(
        json.dumps({"stage": "specialist", "chain": [], "adapter_sha256": adapter_files_hash(honest)})
    )
    registered = service.register_trained_model(outputModelRef=str(honest), name="ok", jobId=job["id"])
    assert registered["version"] == 1 and registered["registry"]["artifact_hash"] == directory_hash(honest)


def test_one_evaluation_request_generates_for_a_bounded_number_of_short_prompts(
    service: SpecialistsService, monkeypatch: pytest.MonkeyPatch
) -> None:
    import worldagent.lm.training as training
    import worldagent.specialists.modeling as modeling

    seen: list[list[dict]] = []  # type: ignore[type-arg]

    def fake_evaluate(_base, _adapter, row_sets, _tokens, **_settings):  # type: ignore[no-untyped-def]
        seen.append(list(row_sets["feedback"]))
        return {name: {"n": len(rows)} for name, rows in row_sets.items()}

    monkeypatch.setattr(modeling, "evaluate_model_dir", fake_evaluate)
    monkeypatch.setattr(modeling, "base_accuracy", lambda *_a, **_k: {"action_accuracy": 0.0})
    monkeypatch.setattr(training, "read_stage", lambda _path: {})
    monkeypatch.setattr(SpecialistsService, "base_dir", lambda self: Path("base"))
    monkeypatch.setattr(SpecialistsService, "_adapter", lambda self, ref, field: Path(ref))
    job = service.create_improvement_job(name="j", scopeType="agent", scopeId="a")
    snapshot = "s" * 200_000
    for _ in range(EVAL_MAX_ROWS + 50):
        service.create_feedback(**{**feedback({"pageSnapshot": snapshot, "task": "t"}), "output": {"action": "click"}})
    service.evaluate_model(modelRef="m", jobId=job["id"], rows="all")
    assert len(seen[0]) == EVAL_MAX_ROWS
    assert all(len(row["input"]["pageSnapshot"]) == EVAL_MAX_SNAPSHOT_CHARS for row in seen[0])
    assert len(service.list_feedback(limit=1)[0]["input"]["pageSnapshot"]) == 200_000  # stored rows untouched
