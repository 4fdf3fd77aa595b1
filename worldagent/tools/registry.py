"""Tool specs, a registry that validates and executes calls, and the world agent's default tools."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import SchemaError

from worldagent.errors import WorldAgentError
from worldagent.tools.callformat import ToolCall
from worldagent.tools.sandbox import Sandbox, SandboxError

Handler = Callable[..., Any]


class ToolError(WorldAgentError):
    """An expected failure inside a handler; its message is the tool's error text."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}, "additionalProperties": False}
    )

    def schema(self) -> dict[str, Any]:
        """The transformers / OpenAI "function" tool format (a fresh copy)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(dict(self.parameters)),
            },
        }


@dataclass
class ToolResult:
    success: bool
    data: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{success, data?, error?}`` with None fields left out."""
        out: dict[str, Any] = {"success": self.success}
        if self.data is not None:
            out["data"] = self.data
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def ok(cls, data: Any = None) -> ToolResult:
        return cls(True, data=data)

    @classmethod
    def fail(cls, error: str) -> ToolResult:
        return cls(False, error=error)


@dataclass(frozen=True)
class _Entry:
    spec: ToolSpec
    handler: Handler
    validator: Draft202012Validator


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, _Entry] = {}

    def register(self, spec: ToolSpec, handler: Handler) -> None:
        """Add a tool; ValueError for a bad name, a duplicate, or an invalid parameters schema."""
        if not spec.name.isidentifier():
            raise ValueError(f"tool name {spec.name!r} must be an identifier")
        if spec.name in self._tools:
            raise ValueError(f"tool {spec.name!r} is already registered")
        _check_parameters(spec)
        self._tools[spec.name] = _Entry(spec, handler, Draft202012Validator(dict(spec.parameters)))

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def spec(self, name: str) -> ToolSpec:
        return self._tools[name].spec

    def schemas(self) -> list[dict[str, Any]]:
        """Tool schemas in registration order, e.g. for ``tokenizer.apply_chat_template(tools=...)``."""
        return [entry.spec.schema() for entry in self._tools.values()]

    def validate(self, call: ToolCall) -> str | None:
        """The error text for ``call`` if it is unknown or its arguments are invalid, else None."""
        entry = self._tools.get(call.name)
        if entry is None:
            known = ", ".join(sorted(self._tools)) or "(none)"
            return f"unknown tool {call.name!r}; known tools: {known}"
        return _argument_errors(entry, call)

    def execute(self, call: ToolCall) -> ToolResult:
        """Run ``call``; never raises (except BaseException such as KeyboardInterrupt)."""
        try:
            problem = self.validate(call)
            if problem is not None:
                return ToolResult.fail(problem)
            data = self._tools[call.name].handler(**call.arguments)
        except (SandboxError, ToolError) as exc:
            return ToolResult.fail(str(exc))
        except Exception as exc:  # a tool bug must not crash the agent loop
            return ToolResult.fail(f"{call.name} failed: {type(exc).__name__}: {exc}")
        return data if isinstance(data, ToolResult) else ToolResult.ok(data)


def _check_parameters(spec: ToolSpec) -> None:
    params = spec.parameters
    if not isinstance(params, Mapping) or params.get("type") != "object":
        raise ValueError(f"parameters of tool {spec.name!r} must be a JSON schema with type 'object'")
    try:
        Draft202012Validator.check_schema(dict(params))
    except SchemaError as exc:
        raise ValueError(f"parameters of tool {spec.name!r} are not a valid JSON schema: {exc.message}") from None


def _argument_errors(entry: _Entry, call: ToolCall) -> str | None:
    if not isinstance(call.arguments, Mapping):
        return f"invalid arguments for tool {call.name!r}: expected an object"
    found = sorted(entry.validator.iter_errors(dict(call.arguments)), key=_error_order)
    if not found:
        return None
    messages = list(dict.fromkeys(_describe(error, entry.spec) for error in found))
    return f"invalid arguments for tool {call.name!r}: " + "; ".join(messages)


def _error_order(error: ValidationError) -> tuple[str, str]:
    return ("/".join(map(str, error.absolute_path)), str(error.validator))


def _describe(error: ValidationError, spec: ToolSpec) -> str:
    """One message per problem, always naming the argument concerned."""
    properties = spec.parameters.get("properties", {})
    if error.validator == "required" and not error.absolute_path:
        missing = [name for name in error.validator_value if name not in error.instance]
        return "; ".join(f"missing required argument {name!r}" for name in missing)
    if error.validator == "additionalProperties" and not error.absolute_path:
        extra = sorted(name for name in error.instance if name not in properties)
        allowed = ", ".join(properties) or "none"
        return "; ".join(f"unexpected argument {name!r} (allowed: {allowed})" for name in extra)
    where = "/".join(map(str, error.absolute_path)) or "(arguments)"
    if error.validator == "type":
        return f"argument {where!r} must be of type {error.validator_value}, got {_json_type(error.instance)}"
    return f"argument {where!r}: {error.message}"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    names = {str: "string", dict: "object", list: "array", type(None): "null"}
    return names.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------------------------
# The world agent's tools

TEMPLATE_SUFFIX = ".tsx"
STORY_SUFFIX = ".stories.tsx"
STYLES_SUFFIX = ".css.ts"


def _file_parameters(what: str, path_hint: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": path_hint},
            "content": {"type": "string", "description": f"The complete {what} source (UTF-8)."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }


WRITE_TEMPLATE = ToolSpec(
    "writeTemplate",
    "Write a Plaited function template (FT) module: a TSX file exporting `const Name: FT = "
    "(props) => <jsx/>` components. Use semantic, accessible elements (button, label, nav, ...), "
    "spread createStyles entries for styling (no inline `style`), and bind events with "
    "`p-trigger`. Replaces the whole file.",
    _file_parameters("TSX template", "Relative path ending in .tsx, e.g. 'button/button.tsx'."),
)
WRITE_STYLES = ToolSpec(
    "writeStyles",
    "Write a styles module: `export const styles = createStyles({ key: { cssProp: value } })`. "
    "Use design tokens from the component's *.tokens.ts (createTokens) instead of hard-coded "
    "colours. Replaces the whole file.",
    _file_parameters("styles module", "Relative path ending in .css.ts, e.g. 'button/button.css.ts'."),
)
WRITE_STORY = ToolSpec(
    "writeStory",
    "Write a story file: local FT components plus story exports `export const name = story({ "
    "intent, template, args?, play? })`. The intent states what the story demonstrates. "
    "Replaces the whole file.",
    _file_parameters("story file", "Relative path ending in .stories.tsx, e.g. 'button/button.stories.tsx'."),
)
RUN_STORY = ToolSpec(
    "runStory",
    "Render a story file and test it: accessibility rules, Plaited pattern rules (createStyles, "
    "tokens, semantic elements) and accessibility-tree assertions. Returns {passed, "
    "totalAssertions, passedAssertions, a11yPassed, errors}.",
    {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "Relative path of a .stories.tsx file written earlier.",
            }
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)

DEFAULT_TOOL_NAMES: tuple[str, ...] = (
    WRITE_TEMPLATE.name,
    WRITE_STYLES.name,
    WRITE_STORY.name,
    RUN_STORY.name,
)


DEFAULT_TOOL_SPECS: tuple[ToolSpec, ...] = (WRITE_TEMPLATE, WRITE_STYLES, WRITE_STORY, RUN_STORY)


def tool_schemas() -> list[dict[str, Any]]:
    """The default tools' schemas, for prompts: no sandbox needed."""
    return [spec.schema() for spec in DEFAULT_TOOL_SPECS]


def default_registry(sandbox: Sandbox, run_story: Callable[[str], Any]) -> ToolRegistry:
    """writeTemplate/writeStyles/writeStory write into ``sandbox``; runStory calls
    ``run_story(relative_posix_path)`` and returns its StoryResult dict as data."""
    registry = ToolRegistry()
    registry.register(WRITE_TEMPLATE, _writer(sandbox, TEMPLATE_SUFFIX, "a template"))
    registry.register(WRITE_STYLES, _writer(sandbox, STYLES_SUFFIX, "a styles module"))
    registry.register(WRITE_STORY, _writer(sandbox, STORY_SUFFIX, "a story"))
    registry.register(RUN_STORY, _story_runner(sandbox, run_story))
    return registry


def _writer(sandbox: Sandbox, suffix: str, what: str) -> Handler:
    def write(path: str, content: str) -> dict[str, Any]:
        _check_suffix(path, suffix, what)
        written = sandbox.write_text(path, content)
        return {"path": sandbox.relative(path), "bytes": written}

    return write


def _story_runner(sandbox: Sandbox, run_story: Callable[[str], Any]) -> Handler:
    def run(path: str) -> Any:
        _check_suffix(path, STORY_SUFFIX, "a story")
        relative = sandbox.relative(path)
        if not sandbox.resolve(path).is_file():
            raise ToolError(f"story file {relative!r} does not exist; write it with writeStory first")
        result = run_story(relative)
        # Runners may hand back a pydantic StoryResult; data must stay JSON-like.
        return result.model_dump() if hasattr(result, "model_dump") else result

    return run


def _check_suffix(path: str, suffix: str, what: str) -> None:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if not name.endswith(suffix) or len(name) <= len(suffix):
        raise ToolError(f"path {path!r} must end with {suffix!r} for {what}")
