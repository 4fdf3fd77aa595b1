"""The conversation an agent sees: system prompt with the tools, user turn with the intent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CALL_FORMAT = "<start_function_call>call:NAME{argument:<escape>value<escape>,...}<end_function_call>"

SYSTEM_PREAMBLE = (
    "You are a UI agent that builds accessible Plaited components. "
    "Answer with tool calls only, each in the format " + CALL_FORMAT + ". "
    "Style with createStyles and the provided design tokens (never hard-coded colours or inline style), "
    "use semantic HTML elements, give every control an accessible name, "
    "then run the story to check it."
)


def tool_signature(schema: Mapping[str, Any]) -> str:
    """One line per tool: ``- name(arg, ...): description``.

    The full JSON schemas cost a small model more prompt tokens than the task itself; the
    argument names and the description carry what the agent needs, and the tool registry
    still validates every call against the schema.
    """
    function = schema["function"]
    properties = function.get("parameters", {}).get("properties", {})
    return f"- {function['name']}({', '.join(properties)}): {function['description']}"


def system_prompt(tool_schemas: Sequence[Mapping[str, Any]]) -> str:
    tools = "\n".join(tool_signature(schema) for schema in tool_schemas)
    return f"{SYSTEM_PREAMBLE}\n\nTools:\n{tools}"


def user_prompt(intent: str, directory: str, tokens: Mapping[str, str], export: str | None = None, story_path: str | None = None) -> str:
    """The task: the intent, where to work, the story to write (its export is what gets tested), the tokens."""
    parts = [intent, "", f"Work in `{directory}/`."]
    if export and story_path:
        parts.append(f"Export the story as `{export}` from `{story_path}`.")
    for path, source in sorted(tokens.items()):
        parts += ["", f"Design tokens, already in `{path}`:", "```ts", source.rstrip("\n"), "```"]
    return "\n".join(parts)


def prompt_messages(
    tool_schemas: Sequence[Mapping[str, Any]],
    intent: str,
    directory: str,
    tokens: Mapping[str, str],
    export: str | None = None,
    story_path: str | None = None,
) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system_prompt(tool_schemas)},
        {"role": "user", "content": user_prompt(intent, directory, tokens, export, story_path)},
    ]
