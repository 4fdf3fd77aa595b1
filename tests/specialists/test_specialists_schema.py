"""schemathesis against both services' OpenAPI schemas: no generated request may produce a 5xx.

One test per API operation, parametrized by its label ("POST /train"), rather than through
``schema.parametrize()``: that gives every operation the same node id, and pytest-xdist schedules by
node id, so under ``make test`` only one operation per schema ran.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specialists_helpers import raw_export_rows, service_settings

from worldagent.specialists.api import create_app
from worldagent.specialists.service import SpecialistsService
from worldagent.specialists.store import open_store
from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

_WORK = Path(tempfile.mkdtemp(prefix="specialists-schema-"))
(_WORK / "data").mkdir()
(_WORK / "data" / "raw.jsonl").write_text("".join(json.dumps(r) + "\n" for r in raw_export_rows(5)), encoding="utf-8")

TRAINER = create_trainer_app(TrainerConfig(data_dirs=[_WORK / "data"]), supervise=False)
SERVICE = SpecialistsService(
    store=open_store(f"sqlite:///{_WORK / 'feedback.db'}"),
    **service_settings(data_dir=str(_WORK / "data" / "specialists")),
    root=_WORK,
    registry_url=f"sqlite:///{_WORK / 'registry.db'}",
    trainer_url="http://127.0.0.1:9",  # nothing listens: trigger_training must still answer
)
SERVICE.create_improvement_job(name="j", scopeType="agent", scopeId="a")
PLATFORM = create_app(SERVICE)

trainer_schema = schemathesis.openapi.from_asgi("/openapi.json", TRAINER)
platform_schema = schemathesis.openapi.from_asgi("/openapi.json", PLATFORM)
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def operations(schema) -> list:
    return [result.ok() for result in schema.get_all_operations()]


def assert_no_server_error(operation, data) -> None:
    case = data.draw(operation.as_strategy())
    response = case.call()
    assert response.status_code < 500, f"{case.method} {case.path}: {response.status_code} {response.text[:500]}"


@pytest.mark.parametrize("operation", operations(trainer_schema), ids=lambda operation: operation.label)
@SETTINGS
@given(data=st.data())
def test_trainer_no_server_errors(operation, data) -> None:
    assert_no_server_error(operation, data)


@pytest.mark.parametrize("operation", operations(platform_schema), ids=lambda operation: operation.label)
@SETTINGS
@given(data=st.data())
def test_platform_no_server_errors(operation, data) -> None:
    assert_no_server_error(operation, data)
