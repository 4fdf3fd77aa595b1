"""The world agent's environment: a sandbox, the tools, the constraints and the story runner.

The same environment scores reference solutions in the generate stage and model outputs in
evaluation and GRPO: every call passes through the behavioral constraints first, an allowed call
is executed in the sandbox, and ``runStory`` runs the story test against the reference story's
assertions.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldagent.behavioral.constraints import AgentConstraints, ContentCheck
from worldagent.storytest.a11y import check_accessibility
from worldagent.storytest.assertions import Assertion
from worldagent.storytest.patterns import find_hardcoded_colors, find_inline_styles
from worldagent.storytest.result import StoryResult
from worldagent.storytest.runner import StoryRunner
from worldagent.tools.callformat import ToolCall
from worldagent.tools.registry import ToolResult, default_registry
from worldagent.tools.sandbox import Sandbox, SandboxError

WRITE_TOOLS = ("writeTemplate", "writeStyles", "writeStory")


def _writes_source(tool: str, arguments: Mapping[str, Any]) -> bool:
    return tool in WRITE_TOOLS and isinstance(arguments.get("content"), str)


def _colour_violations(arguments: Mapping[str, Any]) -> list[str]:
    path = str(arguments.get("path", ""))
    if path.endswith(".tokens.ts"):
        return []
    return [
        f"hard-coded colour {colour} in {path} (use a design token)"
        for colour in find_hardcoded_colors(arguments["content"])
    ]


# One blocked call needs a few examples, not every one: bounds the check on hostile content.
MAX_REPORTED_INLINE_STYLES = 5


def _inline_style_violations(arguments: Mapping[str, Any]) -> list[str]:
    styles = find_inline_styles(arguments["content"], limit=MAX_REPORTED_INLINE_STYLES)
    return [f"inline style {_excerpt(style)} in {arguments.get('path', '')} (use createStyles)" for style in styles]


def _excerpt(text: str, limit: int = 120) -> str:
    """At most ``limit`` characters of ``text`` (an unclosed ``style={`` would quote the rest of the file)."""
    return text if len(text) <= limit else text[:limit] + "…"


def content_checks() -> list[ContentCheck]:
    """Source-level checks that block a write before it reaches the sandbox."""
    return [
        ContentCheck("hardcoded-color", _writes_source, _colour_violations),
        ContentCheck(
            "inline-style",
            lambda tool, args: _writes_source(tool, args) and tool != "writeStyles",
            _inline_style_violations,
        ),
    ]


@dataclass
class StepOutcome:
    call: ToolCall
    allowed: bool
    violations: list[str]
    result: ToolResult


# An answer writes a template, styles and a story and runs it: a few calls. Past this many, calls are
# blocked without running (each one a story render and a write), and count as violations.
MAX_CALLS_PER_ANSWER = 16
CALL_CAP_RULE = "too-many-calls"


def _over_the_call_cap(call: ToolCall) -> StepOutcome:
    message = f"{CALL_CAP_RULE}: more than {MAX_CALLS_PER_ANSWER} tool calls in one answer; this one was not run"
    return StepOutcome(call, False, [message], ToolResult(success=False, error="blocked by constraints: " + message))


@dataclass
class Episode:
    """What happened when one list of calls ran in a fresh sandbox."""

    steps: list[StepOutcome] = field(default_factory=list)
    story_result: StoryResult | None = None

    @property
    def violations(self) -> list[str]:
        return [v for step in self.steps for v in step.violations]


class AgentEnvironment:
    """One sandbox per episode; constraints, tools and the story test wired together."""

    def __init__(
        self,
        sandbox_root: Path,
        runner: StoryRunner,
        export: str,
        expected: Sequence[Assertion] | None,
        a11y_gate: bool = True,
    ) -> None:
        self.sandbox = Sandbox(sandbox_root)
        self.runner = runner
        self.export = export
        self.expected = list(expected) if expected is not None else None
        self.last_story_result: StoryResult | None = None
        self.registry = default_registry(self.sandbox, self._run_story)
        checks = content_checks()
        if a11y_gate:
            checks.append(ContentCheck("a11y", self._is_story_write, self._story_a11y_violations))
        self.constraints = AgentConstraints(
            known_tools=[schema["function"]["name"] for schema in self.registry.schemas()],
            path_allowed=self._path_allowed,
            checks=checks,
            max_content_bytes=self.sandbox.max_bytes,  # size first: no check reads what the sandbox refuses
        )
        # Allowed calls are executed by the program's feedback handler, as b-threads intend.
        self._executed: ToolResult | None = None
        self.constraints.on_allowed(self._execute)

    def _execute(self, name: str, arguments: dict[str, Any]) -> None:
        self._executed = self.registry.execute(ToolCall(name, dict(arguments)))

    def _path_allowed(self, path: str) -> bool:
        try:
            self.sandbox.resolve(path)
        except SandboxError:
            return False
        return True

    @staticmethod
    def _is_story_write(tool: str, arguments: Mapping[str, Any]) -> bool:
        return (
            tool == "writeStory"
            and isinstance(arguments.get("content"), str)
            and isinstance(arguments.get("path"), str)
        )

    def _story_a11y_violations(self, arguments: Mapping[str, Any]) -> list[str]:
        """Render the proposed story against the sandbox as it is now; block if it is inaccessible."""
        from worldagent.stories.errors import StoryError
        from worldagent.stories.render import render_story

        path = str(arguments["path"])
        try:
            # The same resolver as the write: a path that leaves the sandbox is never rendered, read or
            # reported here (the path rule blocks the call and says why).
            target = self.sandbox.resolve(path)
        except SandboxError:
            return []
        relative = target.relative_to(self.sandbox.root).as_posix()
        overlay = {relative: str(arguments["content"])}
        export = self.story_export(path, str(arguments["content"]))
        try:
            rendered = render_story(target, export, self.sandbox.root, overlay=overlay)
        except StoryError:
            return []  # not renderable yet: the story test reports it, the constraint does not guess
        return [f"{v.rule}: {v.message} ({v.target})" for v in check_accessibility(rendered.html)]

    def story_export(self, path: str, source: str | None = None) -> str:
        """The export a story file is tested under: the task's export when the file has it, else the
        file's one story export (the story the agent wrote, whatever it named it)."""
        from worldagent.world_agent.solution import story_exports

        try:
            text = source if source is not None else self.sandbox.read_text(path)
            exports = story_exports(text, path)
        except (OSError, UnicodeDecodeError, SandboxError):
            return self.export
        return exports[0] if len(exports) == 1 and self.export not in exports else self.export

    def _run_story(self, path: str) -> dict[str, Any]:
        resolved = self.sandbox.resolve(path)
        result = self.runner.run(resolved, self.story_export(path), self.sandbox.root, self.expected)
        self.last_story_result = result
        return result.model_dump()

    def step(self, call: ToolCall) -> StepOutcome:
        self._executed = None
        decision = self.constraints.propose(call.name, call.arguments)
        if not decision.allowed:
            messages = decision.messages
            return StepOutcome(
                call, False, messages, ToolResult(success=False, error="blocked by constraints: " + "; ".join(messages))
            )
        if self._executed is None:  # a known tool always has a handler; guard against wiring bugs
            raise RuntimeError(f"allowed call {call.name!r} was not executed")
        return StepOutcome(call, True, [], self._executed)

    def run(self, calls: Sequence[ToolCall]) -> Episode:
        """Run ``calls`` in order; past :data:`MAX_CALLS_PER_ANSWER` each call is blocked unrun (a
        violation), so an answer of thousands of calls costs no more than a normal one."""
        episode = Episode()
        for index, call in enumerate(calls):
            if index >= MAX_CALLS_PER_ANSWER:
                episode.steps.append(_over_the_call_cap(call))
                continue
            episode.steps.append(self.step(call))
        episode.story_result = self.last_story_result
        return episode


@contextmanager
def episode_sandbox(
    stories_root: Path, given_files: Sequence[str], given_sources: Mapping[str, str] | None = None
) -> Iterator[Path]:
    """A temporary sandbox pre-seeded with the files the agent is given.

    ``given_files`` are copied from ``stories_root`` (design tokens); ``given_sources`` maps further
    sandbox paths to their text (an existing component's styles and template module).
    """
    directory = Path(tempfile.mkdtemp(prefix="worldagent-sandbox-"))
    try:
        for relative in given_files:
            target = directory / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(stories_root / relative, target)
        for relative, text in sorted((given_sources or {}).items()):
            target = Sandbox(directory).resolve(relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)
