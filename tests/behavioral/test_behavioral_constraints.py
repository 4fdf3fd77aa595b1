"""The agent's constraints: tool calls vetted by blocking b-threads."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

import pytest

from worldagent.behavioral import AgentConstraints, ContentCheck, Violation, bsync, bthread, default_constraint_rules

TOOLS = ["writeTemplate", "writeStyles", "writeStory", "runStory"]
COLOR = re.compile(r"#[0-9a-fA-F]{3,8}\b|\brgb\(")


def inside_sandbox(path: str) -> bool:
    pure = PurePosixPath(path)
    return not pure.is_absolute() and ".." not in pure.parts


def colors_in(arguments: dict[str, Any]) -> list[str]:
    return [f"hard-coded colour {m}" for m in COLOR.findall(str(arguments.get("content", "")))]


def inline_styles_in(arguments: dict[str, Any]) -> list[str]:
    return ["inline style attribute"] if "style=" in str(arguments.get("content", "")) else []


CHECKS = [
    ContentCheck("hardcoded-color", lambda tool, _a: tool in {"writeStyles", "writeTemplate"}, colors_in),
    ContentCheck("inline-style", lambda tool, _a: tool == "writeTemplate", inline_styles_in),
]


@pytest.fixture
def constraints() -> AgentConstraints:
    return AgentConstraints(TOOLS, inside_sandbox, CHECKS)


def test_unknown_tool_is_blocked_and_counted(constraints: AgentConstraints) -> None:
    decision = constraints.propose("deleteEverything", {})
    assert not decision.allowed
    assert [v.rule for v in decision.violations] == ["unknown-tool"]
    assert "deleteEverything" in decision.violations[0].message
    assert constraints.violation_count == 1
    assert constraints.violations_by_rule() == {"unknown-tool": 1}


def test_path_escaping_the_sandbox_is_blocked(constraints: AgentConstraints) -> None:
    decision = constraints.propose("writeStory", {"path": "../x", "content": ""})
    assert not decision.allowed
    assert decision.violations == [Violation("path-outside-sandbox", "path '../x' is outside the sandbox")]


def test_path_predicate_that_raises_blocks(constraints: AgentConstraints) -> None:
    def strict(path: str) -> bool:
        raise ValueError(f"{path} escapes via symlink")

    guarded = AgentConstraints(TOOLS, strict)
    decision = guarded.propose("runStory", {"path": "a.stories.tsx"})
    assert not decision.allowed
    assert "symlink" in decision.violations[0].message


def test_non_string_path_is_blocked(constraints: AgentConstraints) -> None:
    assert not constraints.propose("runStory", {"path": 3}).allowed


def test_colour_check_blocks_write_styles(constraints: AgentConstraints) -> None:
    decision = constraints.propose("writeStyles", {"path": "a.css.ts", "content": "color: #fff; bg: rgb(1,2,3)"})
    assert not decision.allowed
    assert [v.rule for v in decision.violations] == ["hardcoded-color"]
    assert decision.violations[0].message == "hard-coded colour #fff; hard-coded colour rgb("
    assert decision.messages == ["hardcoded-color: hard-coded colour #fff; hard-coded colour rgb("]


def test_check_only_applies_where_it_says(constraints: AgentConstraints) -> None:
    # writeStory is not covered by the colour check.
    assert constraints.propose("writeStory", {"path": "a.stories.tsx", "content": "#fff"}).allowed


def test_allowed_call_reaches_feedback(constraints: AgentConstraints) -> None:
    executed: list[tuple[str, dict[str, Any]]] = []
    raw: list[Any] = []
    constraints.on_allowed(lambda name, args: executed.append((name, args)))
    constraints.use_feedback({"tool:writeTemplate": raw.append})
    decision = constraints.propose("writeTemplate", {"path": "button.tsx", "content": "<button>Go</button>"})
    assert decision.allowed and decision.violations == []
    assert executed == [("writeTemplate", {"path": "button.tsx", "content": "<button>Go</button>"})]
    assert raw == [{"name": "writeTemplate", "arguments": {"path": "button.tsx", "content": "<button>Go</button>"}}]
    assert constraints.violation_count == 0


def test_blocked_call_never_reaches_feedback(constraints: AgentConstraints) -> None:
    executed: list[str] = []
    constraints.on_allowed(lambda name, _args: executed.append(name))
    constraints.propose("writeStyles", {"path": "../../etc/passwd", "content": ""})
    constraints.propose("nope", {})
    assert executed == []


def test_several_rules_block_one_call_and_counts_per_rule(constraints: AgentConstraints) -> None:
    decision = constraints.propose("writeTemplate", {"path": "/abs.tsx", "content": '<p style="color:#000">x</p>'})
    assert [v.rule for v in decision.violations] == ["path-outside-sandbox", "hardcoded-color", "inline-style"]
    constraints.propose("writeTemplate", {"path": "ok.tsx", "content": '<p style="x">y</p>'})
    constraints.propose("unknown", {})
    constraints.propose("writeStyles", {"path": "ok.css.ts", "content": "ok"})
    assert constraints.violations_by_rule() == {
        "path-outside-sandbox": 1,
        "hardcoded-color": 1,
        "inline-style": 2,
        "unknown-tool": 1,
    }
    assert constraints.violation_count == 5


def test_calls_after_a_block_are_still_vetted(constraints: AgentConstraints) -> None:
    assert not constraints.propose("writeStyles", {"path": "a.css.ts", "content": "#abc"}).allowed
    assert constraints.propose("writeStyles", {"path": "a.css.ts", "content": "tokens.primary"}).allowed
    assert not constraints.propose("writeStyles", {"path": "a.css.ts", "content": "#abc"}).allowed


def test_a_check_that_raises_fails_closed() -> None:
    def broken(_args: dict[str, Any]) -> list[str]:
        raise RuntimeError("renderer crashed")

    constraints = AgentConstraints(TOOLS, inside_sandbox, [ContentCheck("a11y", lambda *_: True, broken)])
    decision = constraints.propose("writeTemplate", {"path": "a.tsx", "content": "<div/>"})
    assert not decision.allowed
    assert decision.violations[0].rule == "a11y"
    assert "renderer crashed" in decision.violations[0].message


def test_propose_accepts_a_call_object(constraints: AgentConstraints) -> None:
    class Call:
        name = "runStory"
        arguments = {"path": "../up"}

    assert constraints.propose(Call()).violations[0].rule == "path-outside-sandbox"


def test_caller_bthreads_can_add_constraints(constraints: AgentConstraints) -> None:
    constraints.program.bthreads.set({"no-run": bthread([bsync(block="tool:runStory")])})
    decision = constraints.propose("runStory", {"path": "a.stories.tsx"})
    assert decision.violations == [Violation("no-run", "blocked by b-thread 'no-run'")]


def test_duplicate_rule_ids_are_rejected() -> None:
    check = ContentCheck("unknown-tool", lambda *_: True, lambda _a: [])
    with pytest.raises(ValueError, match="duplicate"):
        AgentConstraints(TOOLS, inside_sandbox, [check])


def test_default_rule_ids_are_documented() -> None:
    rules = default_constraint_rules()
    assert list(rules) == [
        "unknown-tool",
        "path-outside-sandbox",
        "hardcoded-color",
        "inline-style",
        "a11y",
        "content-too-large",
    ]
    assert all(rules.values())
