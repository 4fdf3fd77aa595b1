"""Browser decisions and the chat format the specialists are trained on.

A browser decision is a feedback row with ``input = {pageSnapshot, task, previousActions?}`` and
``output = {action: click|fill|select|navigate, selectorOrRef, value}``. Any other JSON input/output is a
*generic* row: it is trained on as text. Feedback ``input``/``output`` may arrive as JSON values or
as JSON-encoded strings (as other platforms export them); :func:`decode_json_value` makes both the
same value, so they are stored and read back identically.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from worldagent import safejson

ACTIONS: tuple[str, ...] = ("click", "fill", "select", "navigate")
SYSTEM_PROMPT = (
    "You are a browser agent specialist. Given the task, the page snapshot and the previous actions, "
    'answer with the next action as JSON: {"action": "click|fill|select|navigate", "selectorOrRef": "...", "value": "..."}.'
)
GENERIC_SYSTEM_PROMPT = "You are an agent specialist. Answer the input with the expected output."
MAX_SNAPSHOT_CHARS = 2000  # long snapshots are cut (head kept) so prompts fit the trainer's max_length


class BrowserAction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["click", "fill", "select", "navigate"]
    selectorOrRef: str = Field(min_length=1, max_length=2000)
    value: str | None = None


class BrowserInput(BaseModel):
    model_config = ConfigDict(extra="allow")

    pageSnapshot: str
    task: str
    previousActions: list[BrowserAction] = Field(default_factory=list)


def decode_json_value(value: Any) -> Any:
    """A JSON-encoded string (object, array or string literal) → its value; anything else unchanged."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[", '"'):
            try:
                return safejson.loads(text)  # a depth limit: the row must stay storable and listable
            except json.JSONDecodeError:
                return value
    return value


def as_browser_input(value: Any) -> BrowserInput | None:
    if not isinstance(value, Mapping) or "pageSnapshot" not in value or "task" not in value:
        return None
    try:
        return BrowserInput.model_validate(dict(value))
    except ValueError:
        return None


def as_browser_action(value: Any) -> BrowserAction | None:
    if not isinstance(value, Mapping) or "action" not in value:
        return None
    try:
        return BrowserAction.model_validate({k: value[k] for k in ("action", "selectorOrRef", "value") if k in value})
    except ValueError:
        return None


def is_browser_decision(input_value: Any, output_value: Any) -> bool:
    return as_browser_input(input_value) is not None and as_browser_action(output_value) is not None


def render_action(action: BrowserAction | Mapping[str, Any]) -> str:
    """The assistant's answer: canonical JSON with a fixed key order."""
    data = action.model_dump() if isinstance(action, BrowserAction) else dict(action)
    return json.dumps(
        {"action": data.get("action"), "selectorOrRef": data.get("selectorOrRef"), "value": data.get("value")},
        ensure_ascii=False,
    )


def render_browser_prompt(
    page_snapshot: str, task: str, previous: Sequence[BrowserAction | Mapping[str, Any]] = ()
) -> str:
    snapshot = page_snapshot if len(page_snapshot) <= MAX_SNAPSHOT_CHARS else page_snapshot[:MAX_SNAPSHOT_CHARS] + "\n…"
    lines = [f"Task: {task}", "Previous actions:"]
    lines += [f"- {render_action(a)}" for a in previous] or ["- none"]
    lines += ["Page snapshot:", snapshot]
    return "\n".join(lines)


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def prompt_messages(input_value: Any) -> list[dict[str, str]]:
    """System + user messages for one input (a browser input or any JSON value)."""
    browser = as_browser_input(input_value)
    if browser is not None:
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {
                "role": "user",
                "content": render_browser_prompt(browser.pageSnapshot, browser.task, browser.previousActions),
            },
        ]
    return [{"role": "system", "content": GENERIC_SYSTEM_PROMPT}, {"role": "user", "content": as_text(input_value)}]


def completion_text(input_value: Any, output_value: Any) -> str:
    action = as_browser_action(output_value)
    if as_browser_input(input_value) is not None and action is not None:
        return render_action(action)
    return as_text(output_value)


def conversation(input_value: Any, output_value: Any) -> list[dict[str, str]]:
    return [*prompt_messages(input_value), {"role": "assistant", "content": completion_text(input_value, output_value)}]


def parse_action(text: str) -> BrowserAction | None:
    """The first JSON object in a model's answer, as a browser action (None when there is none)."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        return as_browser_action(value)
    return None


def corrected_action(notes: str | None) -> BrowserAction | None:
    """A corrected action written in a bad row's notes (a JSON object, possibly after some text)."""
    if not notes:
        return None
    return parse_action(notes)
