from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from worldagent.tools.callformat import ToolCall
from worldagent.tools.registry import (
    ToolRegistry,
    ToolResult,
    ToolSpec,
    default_registry,
)
from worldagent.tools.sandbox import Sandbox

STORY_RESULT = {
    "passed": True,
    "totalAssertions": 2,
    "passedAssertions": 2,
    "a11yPassed": True,
    "errors": [],
}

ECHO = ToolSpec(
    "echo",
    "Echo a message.",
    {
        "type": "object",
        "properties": {"message": {"type": "string"}, "times": {"type": "integer"}},
        "required": ["message"],
        "additionalProperties": False,
    },
)


@pytest.fixture()
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(ECHO, lambda message, times=1: {"echo": message * times})

    def boom() -> None:
        raise RuntimeError("kaput")

    reg.register(ToolSpec("boom", "Always fails."), boom)
    return reg


@pytest.fixture()
def tools(tmp_path: Path) -> tuple[ToolRegistry, list[str]]:
    ran: list[str] = []

    def run_story(path: str) -> dict[str, Any]:
        ran.append(path)
        return STORY_RESULT

    return default_registry(Sandbox(tmp_path), run_story), ran


def test_tool_result_to_dict_omits_none() -> None:
    assert ToolResult(True).to_dict() == {"success": True}
    assert ToolResult(False, error="x").to_dict() == {"success": False, "error": "x"}
    assert ToolResult(True, data={"a": 1}).to_dict() == {"success": True, "data": {"a": 1}}


def test_schemas_use_hf_function_format(registry: ToolRegistry) -> None:
    schema = registry.schemas()[0]
    assert schema == {
        "type": "function",
        "function": {"name": "echo", "description": "Echo a message.", "parameters": dict(ECHO.parameters)},
    }
    schema["function"]["parameters"]["properties"].clear()  # a copy: the spec is unchanged
    assert registry.schemas()[0]["function"]["parameters"]["properties"]


def test_execute_ok(registry: ToolRegistry) -> None:
    result = registry.execute(ToolCall("echo", {"message": "hi", "times": 2}))
    assert result == ToolResult(True, {"echo": "hihi"})


def test_unknown_tool(registry: ToolRegistry) -> None:
    result = registry.execute(ToolCall("nope", {}))
    assert not result.success
    assert result.error == "unknown tool 'nope'; known tools: boom, echo"


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "missing required argument 'message'"),
        ({"message": 3}, "argument 'message' must be of type string, got integer"),
        ({"message": "x", "times": True}, "argument 'times' must be of type integer, got boolean"),
        ({"message": "x", "colour": "red"}, "unexpected argument 'colour'"),
    ],
)
def test_bad_arguments(registry: ToolRegistry, arguments: dict[str, Any], fragment: str) -> None:
    result = registry.execute(ToolCall("echo", arguments))
    assert not result.success and result.error is not None
    assert result.error.startswith("invalid arguments for tool 'echo': ")
    assert fragment in result.error


def test_handler_exception_becomes_error(registry: ToolRegistry) -> None:
    result = registry.execute(ToolCall("boom", {}))
    assert result == ToolResult(False, error="boom failed: RuntimeError: kaput")


def test_register_rejects_bad_specs(registry: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.register(ECHO, print)
    with pytest.raises(ValueError, match="identifier"):
        registry.register(ToolSpec("a-b", "x"), print)
    with pytest.raises(ValueError, match="type 'object'"):
        registry.register(ToolSpec("arr", "x", {"type": "array"}), print)
    with pytest.raises(ValueError, match="not a valid JSON schema"):
        registry.register(ToolSpec("bad", "x", {"type": "object", "properties": 3}), print)


def test_default_tools_schemas(tools: tuple[ToolRegistry, list[str]]) -> None:
    registry, _ = tools
    names = [schema["function"]["name"] for schema in registry.schemas()]
    assert names == ["writeTemplate", "writeStyles", "writeStory", "runStory"]
    for schema in registry.schemas():
        params = schema["function"]["parameters"]
        assert params["additionalProperties"] is False and "path" in params["required"]
        assert len(schema["function"]["description"]) > 40


def test_write_tools(tools: tuple[ToolRegistry, list[str]], tmp_path: Path) -> None:
    registry, _ = tools
    cases = [
        ("writeTemplate", "button/button.tsx"),
        ("writeStyles", "button/button.css.ts"),
        ("writeStory", "button/button.stories.tsx"),
    ]
    for tool, path in cases:
        result = registry.execute(ToolCall(tool, {"path": path, "content": "export {}\n"}))
        assert result == ToolResult(True, {"path": path, "bytes": 10})
        assert (tmp_path / path).read_text() == "export {}\n"


@pytest.mark.parametrize(
    ("tool", "path"),
    [
        ("writeTemplate", "button.ts"),
        ("writeStyles", "button.css"),
        ("writeStyles", "button.tsx"),
        ("writeStory", "button.tsx"),
        ("writeStory", ".stories.tsx"),
    ],
)
def test_write_tools_check_extension(tools: tuple[ToolRegistry, list[str]], tool: str, path: str) -> None:
    registry, _ = tools
    result = registry.execute(ToolCall(tool, {"path": path, "content": "x"}))
    assert not result.success and result.error is not None and "must end with" in result.error


def test_sandbox_error_is_reported(tools: tuple[ToolRegistry, list[str]]) -> None:
    registry, _ = tools
    result = registry.execute(ToolCall("writeStory", {"path": "../evil.stories.tsx", "content": "x"}))
    assert result == ToolResult(False, error="path '../evil.stories.tsx' refused: '..' components are not allowed")


def test_run_story(tools: tuple[ToolRegistry, list[str]]) -> None:
    registry, ran = tools
    missing = registry.execute(ToolCall("runStory", {"path": "b/b.stories.tsx"}))
    assert not missing.success and "does not exist" in (missing.error or "")
    registry.execute(ToolCall("writeStory", {"path": "b/b.stories.tsx", "content": "x"}))
    result = registry.execute(ToolCall("runStory", {"path": "./b/b.stories.tsx"}))
    assert result == ToolResult(True, STORY_RESULT)
    assert ran == ["b/b.stories.tsx"]


def test_run_story_accepts_pydantic_results(tmp_path: Path) -> None:
    class Model:
        def model_dump(self) -> dict[str, Any]:
            return STORY_RESULT

    registry = default_registry(Sandbox(tmp_path), lambda path: Model())
    (tmp_path / "a.stories.tsx").write_text("x")
    assert registry.execute(ToolCall("runStory", {"path": "a.stories.tsx"})).data == STORY_RESULT
