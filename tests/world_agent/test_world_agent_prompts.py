"""The agent's prompt: a compact tool list and a task that names the story the test will run."""

from __future__ import annotations

from worldagent.tools.registry import tool_schemas
from worldagent.world_agent.prompts import prompt_messages, system_prompt, tool_signature


def test_tool_list_is_one_signature_line_per_tool() -> None:
    schemas = tool_schemas()
    text = system_prompt(schemas)
    lines = text.split("Tools:\n", 1)[1].splitlines()
    assert [line.split("(", 1)[0] for line in lines] == [f"- {s['function']['name']}" for s in schemas]
    assert "- writeStyles(path, content): Write a styles module" in text
    assert "- runStory(path): " in text
    assert '"parameters"' not in text  # the JSON schemas stay in the registry, not in every prompt


def test_signature_lists_arguments_in_schema_order() -> None:
    schema = {"function": {"name": "f", "description": "Does f.", "parameters": {"properties": {"b": {}, "a": {}}}}}
    assert tool_signature(schema) == "- f(b, a): Does f."


def test_user_turn_names_the_export_and_file_only_when_both_are_known() -> None:
    tokens = {"x/x.tokens.ts": "export const t = 1\n"}
    messages = prompt_messages(tool_schemas(), "Make an x", "x", tokens, "bigX", "x/big-x.stories.tsx")
    user = messages[1]["content"]
    assert user.startswith("Make an x\n\nWork in `x/`.\n")
    assert "```ts\nexport const t = 1\n```" in user
    assert user.endswith("\n\nExport the story as `bigX` from `x/big-x.stories.tsx`.")
    assert "Export the story" not in prompt_messages(tool_schemas(), "Make an x", "x", tokens)[1]["content"]


def test_single_and_multi_turn_prompts_differ_only_in_the_turn_instruction() -> None:
    single, multi = system_prompt(tool_schemas()), system_prompt(tool_schemas(), "multi")
    assert "Answer with every tool call in one turn." in single and "one tool call per turn" in multi
    assert single.replace("Answer with every tool call in one turn.", "") == multi.replace(
        "Make one tool call per turn and wait for its result.", ""
    )


def test_user_turn_lists_existing_signatures_and_shows_example_stories_before_the_task() -> None:
    from worldagent.world_agent.prompts import ExampleStory

    example = ExampleStory("x/small-x.stories.tsx", "Make a small x", "export const smallX = story({})\n")
    existing = {"x/x.template.tsx": ["X: FT<{ size?: string }>"]}
    user = prompt_messages(
        tool_schemas(), "Make a big x", "x", {}, "bigX", "x/big-x.stories.tsx", existing=existing, examples=[example]
    )[1]["content"]
    assert "- `x/x.template.tsx`: `X: FT<{ size?: string }>`" in user
    assert "An existing story, `x/small-x.stories.tsx` (“Make a small x”):\n```tsx\nexport const smallX" in user
    assert user.index("An existing story") < user.index("Export the story as `bigX`")
