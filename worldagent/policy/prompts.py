"""The conversation an agent sees: system prompt with the tools, user turn with the intent."""

from __future__ import annotations

import json
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


def system_prompt(tool_schemas: Sequence[Mapping[str, Any]]) -> str:
    tools = "\n".join(json.dumps(schema, sort_keys=True, ensure_ascii=False) for schema in tool_schemas)
    return f"{SYSTEM_PREAMBLE}\n\nTools:\n{tools}"


def user_prompt(intent: str, directory: str, tokens: Mapping[str, str]) -> str:
    parts = [intent, "", f"Work in `{directory}/`."]
    for path, source in sorted(tokens.items()):
        parts += ["", f"Design tokens, already in `{path}`:", "```ts", source.rstrip("\n"), "```"]
    return "\n".join(parts)


def prompt_messages(tool_schemas: Sequence[Mapping[str, Any]], intent: str, directory: str, tokens: Mapping[str, str]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system_prompt(tool_schemas)},
        {"role": "user", "content": user_prompt(intent, directory, tokens)},
    ]
