"""Schemathesis against every service's OpenAPI schema, with a token set: without it every route but
/health answers 401 (the docs routes included) before reading a body; with it no request is a 5xx and
every answer is JSON text. (tests/specialists/test_specialists_schema.py covers the services without
a token.)"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.guard.service_helpers import platform_service
from worldagent.specialists.api import create_app
from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

TOKEN = "fuzz-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
_WORK = Path(tempfile.mkdtemp(prefix="guard-schema-"))
(_WORK / "data").mkdir()
SERVICE = platform_service(_WORK)
SERVICE.create_improvement_job(name="j", scopeType="agent", scopeId="a")
APPS: dict[str, Any] = {
    "trainer": create_trainer_app(TrainerConfig(data_dirs=[_WORK / "data"], token=TOKEN), supervise=False),
    "platform": create_app(SERVICE, token=TOKEN),
}
SCHEMAS = {name: schemathesis.openapi.from_asgi("/openapi.json", app, headers=AUTH) for name, app in APPS.items()}
SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
OPERATIONS = [
    pytest.param(name, result.ok(), id=f"{name} {result.ok().label}")
    for name, schema in SCHEMAS.items()
    for result in schema.get_all_operations()
]


@pytest.mark.parametrize(("service", "operation"), OPERATIONS)
@SETTINGS
@given(data=st.data())
def test_with_and_without_the_token(service: str, operation: Any, data: st.DataObject) -> None:
    case = data.draw(operation.as_strategy())
    anonymous = case.call(headers={"Authorization": "Bearer wrong"})
    if case.path == "/health":
        assert anonymous.status_code == 200
    else:
        assert anonymous.status_code == 401, f"{service} {case.method} {case.path}: {anonymous.status_code}"
    answer = case.call(headers=AUTH)
    assert answer.status_code < 500, f"{service} {case.method} {case.path}: {answer.status_code} {answer.text[:300]}"
    json.loads(answer.content.decode("utf-8"))  # every answer is JSON text (no lone surrogate stored or echoed)


@pytest.mark.parametrize("service", sorted(APPS))
@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json"])
def test_docs_follow_the_token_rule(service: str, path: str) -> None:
    from fastapi.testclient import TestClient

    with TestClient(APPS[service]) as client:
        assert client.get(path).status_code == 401
        assert client.get(path, headers=AUTH).status_code == 200
