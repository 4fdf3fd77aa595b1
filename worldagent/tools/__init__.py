"""Agent tools: the FunctionGemma call format, the sandbox, and the tool registry."""

from worldagent.tools.callformat import (
    CallParseError,
    ParsedOutput,
    ParsedResponses,
    ToolCall,
    ToolResponse,
    parse_calls,
    parse_json_call,
    parse_responses,
    render_call,
    render_calls,
    render_response,
)
from worldagent.tools.registry import (
    ToolError,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    default_registry,
    tool_schemas,
)
from worldagent.tools.sandbox import Sandbox, SandboxError

__all__ = [
    "CallParseError",
    "ParsedOutput",
    "ParsedResponses",
    "Sandbox",
    "SandboxError",
    "ToolCall",
    "ToolError",
    "ToolRegistry",
    "ToolResponse",
    "ToolResult",
    "ToolSpec",
    "default_registry",
    "tool_schemas",
    "parse_calls",
    "parse_json_call",
    "parse_responses",
    "render_call",
    "render_calls",
    "render_response",
]
