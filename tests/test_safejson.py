"""Recursion-safe JSON for input (worldagent/safejson.py) and the parsers that use it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldagent import safejson
from worldagent.errors import InputError


def test_deep_nesting_is_a_json_decode_error_and_an_input_error() -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        safejson.loads("[" * 100_000)
    assert isinstance(raised.value, InputError) and raised.value.pos == safejson.MAX_DEPTH
    assert "nested deeper than 64 levels" in str(raised.value)


def test_brackets_inside_strings_do_not_count_and_ordinary_json_parses() -> None:
    text = json.dumps({"a": "[" * 10_000 + '"{' * 100, "b": [[[1]]], "c": "x\\", "d": "]"})
    assert safejson.loads(text) == json.loads(text)
    assert safejson.loads(b'{"a": [1, 2]}') == {"a": [1, 2]}
    assert safejson.loads("[" * 64 + "]" * 64) == json.loads("[" * 64 + "]" * 64)
    with pytest.raises(safejson.JSONDepthError):
        safejson.loads("[" * 65 + "]" * 65)
    with pytest.raises(json.JSONDecodeError):  # ordinary errors unchanged
        safejson.loads("{")


def test_value_depth_is_iterative_and_bounded() -> None:
    value: object = 1
    for _ in range(5_000):
        value = {"a": [value]}
    assert safejson.value_depth(value) == safejson.MAX_DEPTH + 1  # stops counting once over
    assert safejson.value_depth({"a": [1, {"b": 2}]}) == 3
    assert safejson.value_depth("text") == 0


def test_tool_call_json_nested_too_deep_is_the_documented_parse_error() -> None:
    from worldagent.tools.callformat import CallParseError, parse_json_call

    with pytest.raises(CallParseError, match="invalid JSON in tool call at line 1 col 33"):
        parse_json_call("[" * 100_000)
    with pytest.raises(CallParseError, match="invalid JSON in arguments of tool call 'w'"):
        parse_json_call(json.dumps({"name": "w", "arguments": "[" * 100_000}))


def test_a_dataset_row_of_100000_nested_brackets_is_a_400_from_the_trainer(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from worldagent.specialists.trainer import TrainerConfig, create_trainer_app

    data = tmp_path / "data"
    data.mkdir()
    (data / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with TestClient(create_trainer_app(TrainerConfig(data_dirs=[data]), supervise=False)) as client:
        response = client.post("/train", json={"jobId": "j", "datasetRef": str(data / "deep.jsonl"), "runId": "r1"})
    assert response.status_code == 400
    assert "deep.jsonl:1:65: invalid JSON: JSON nested deeper than 64 levels" in response.json()["detail"]


def test_intervention_logs_nested_too_deep_are_a_clear_import_error(tmp_path: Path) -> None:
    from worldagent.intervention.importer import read_reference_logs

    (tmp_path / "interventions.json").write_text("[" * 100_000)
    (tmp_path / "successes.json").write_text("[]")
    with pytest.raises(ValueError, match="interventions.json"):
        read_reference_logs(tmp_path)
