"""The conversation an agent sees: system prompt with the tools, user turn with the intent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CALL_FORMAT = "<start_function_call>call:NAME{argument:<escape>value<escape>,...}<end_function_call>"

SYSTEM_PREAMBLE = (
    "You are a UI agent that builds accessible Plaited components. "
    "Answer with tool calls only, each in the format " + CALL_FORMAT + ". "
    "Style with createStyles and the provided design tokens (never hard-coded colours or inline style), "
    "use semantic HTML elements, give every control an accessible name, "
    "then run the story to check it."
)
# Single- and multi-turn trajectories share their task; only this line tells a model which
# answer is wanted, so that it can learn both without guessing when to end its turn.
TURN_INSTRUCTIONS = {
    "single": "Answer with every tool call in one turn.",
    "multi": "Make one tool call per turn and wait for its result.",
}


def tool_signature(schema: Mapping[str, Any]) -> str:
    """One line per tool: ``- name(arg, ...): description``.

    The full JSON schemas cost a small model more prompt tokens than the task itself; the
    argument names and the description carry what the agent needs, and the tool registry
    still validates every call against the schema.
    """
    function = schema["function"]
    properties = function.get("parameters", {}).get("properties", {})
    return f"- {function['name']}({', '.join(properties)}): {function['description']}"


def system_prompt(tool_schemas: Sequence[Mapping[str, Any]], turns: str = "single") -> str:
    if turns not in TURN_INSTRUCTIONS:
        raise ValueError(f"turns must be one of {sorted(TURN_INSTRUCTIONS)}, not {turns!r}")
    tools = "\n".join(tool_signature(schema) for schema in tool_schemas)
    return f"{SYSTEM_PREAMBLE} {TURN_INSTRUCTIONS[turns]}\n\nTools:\n{tools}"


@dataclass(frozen=True)
class ExampleStory:
    """An existing story shown in the prompt: what a real agent would open before writing its own."""

    path: str
    intent: str
    source: str


def user_prompt(
    intent: str,
    directory: str,
    tokens: Mapping[str, str],
    export: str | None = None,
    story_path: str | None = None,
    existing: Mapping[str, Sequence[str]] | None = None,
    examples: Sequence[ExampleStory] = (),
) -> str:
    """The task: the intent, where to work, the component's modules that already exist (path →
    exported signatures), the nearest existing stories, the tokens, and last the story to write
    (its export is what gets tested)."""
    parts = [intent, "", f"Work in `{directory}/`."]
    if existing:
        parts.append("The component already exists. Import from these modules; do not rewrite them:")
        parts += [
            f"- `{path}`: " + ", ".join(f"`{signature}`" for signature in signatures)
            for path, signatures in sorted(existing.items())
        ]
    for example in examples:
        parts += [
            "",
            f"An existing story, `{example.path}` (“{example.intent}”):",
            "```tsx",
            example.source.rstrip("\n"),
            "```",
        ]
    for path, source in sorted(tokens.items()):
        parts += ["", f"Design tokens, already in `{path}`:", "```ts", source.rstrip("\n"), "```"]
    if export and story_path:  # last: what the answer must name comes right before it
        parts += ["", f"Export the story as `{export}` from `{story_path}`."]
    return "\n".join(parts)


def prompt_messages(
    tool_schemas: Sequence[Mapping[str, Any]],
    intent: str,
    directory: str,
    tokens: Mapping[str, str],
    export: str | None = None,
    story_path: str | None = None,
    turns: str = "single",
    existing: Mapping[str, Sequence[str]] | None = None,
    examples: Sequence[ExampleStory] = (),
) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system_prompt(tool_schemas, turns)},
        {"role": "user", "content": user_prompt(intent, directory, tokens, export, story_path, existing, examples)},
    ]
