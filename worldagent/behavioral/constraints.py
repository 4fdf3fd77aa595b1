"""The agent's constraints as blocking b-threads over tool-call events.

A proposed tool call becomes the triggered event
``{"type": "tool:<name>", "detail": {"name": name, "arguments": arguments}}``.
Each rule is one b-thread, named by its rule id, that blocks the calls it rejects
and records why. A call that no rule blocks is selected, so it reaches the
program's feedback handlers (where an executor runs it); a blocked call is dropped
by the engine and its reasons are read back from the blocking threads.

Content checks are supplied by the caller (e.g. built from ``worldagent.storytest``
helpers) so that this package stays independent of the story tooling.

Size first: a call whose string arguments exceed ``max_content_bytes`` (the sandbox's limit by
default) is blocked by ``content-too-large`` and no content check reads it, so a check's cost is
bounded by the size limit, never by what a model or an attacker sends.

Decisions: a rule whose own code raises blocks the call (fail closed) and reports
the exception as its message; a rule reports one :class:`Violation` per blocked
call, joining several messages with ``"; "``, so ``violation_count`` equals the
number of (call, rule) pairs that blocked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .engine import BPEvent, BThread, Program, SnapshotRecord, behavioral, bsync, bthread

__all__ = [
    "AgentConstraints",
    "ContentCheck",
    "Decision",
    "Violation",
    "default_constraint_rules",
    "tool_event",
    "TOOL_EVENT_PREFIX",
    "UNKNOWN_TOOL",
    "PATH_OUTSIDE_SANDBOX",
    "HARDCODED_COLOR",
    "INLINE_STYLE",
    "A11Y",
    "CONTENT_TOO_LARGE",
    "DEFAULT_MAX_CONTENT_BYTES",
]

TOOL_EVENT_PREFIX = "tool:"
UNKNOWN_TOOL = "unknown-tool"
PATH_OUTSIDE_SANDBOX = "path-outside-sandbox"
HARDCODED_COLOR = "hardcoded-color"
INLINE_STYLE = "inline-style"
A11Y = "a11y"
CONTENT_TOO_LARGE = "content-too-large"
DEFAULT_MAX_CONTENT_BYTES = 256 * 1024  # the sandbox's write limit (worldagent.tools.sandbox)

Arguments = dict[str, Any]
Evaluate = Callable[[str, Arguments], list[str]]


def default_constraint_rules() -> dict[str, str]:
    """Rule ids used by the agent's constraints, with what each one blocks.

    ``unknown-tool``, ``path-outside-sandbox`` and ``content-too-large`` are built in; the others are the
    conventional ids for the caller-supplied :class:`ContentCheck` objects.
    """
    return {
        UNKNOWN_TOOL: "a call to a tool that is not registered",
        PATH_OUTSIDE_SANDBOX: "an argument named 'path' that the sandbox rejects",
        HARDCODED_COLOR: "styles or templates with colour literals instead of tokens",
        INLINE_STYLE: "templates with an inline style attribute instead of createStyles",
        A11Y: "templates whose rendered markup fails accessibility rules",
        CONTENT_TOO_LARGE: "a string argument larger than the sandbox accepts (checked before any content check)",
    }


class ContentCheck(NamedTuple):
    """A caller-supplied rule over a call's arguments.

    ``applies_to(tool_name, arguments)`` selects the calls it inspects;
    ``violations_of(arguments)`` returns messages, empty when the call is fine.
    """

    rule: str
    applies_to: Callable[[str, Arguments], bool]
    violations_of: Callable[[Arguments], list[str]]


@dataclass(frozen=True)
class Violation:
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    violations: list[Violation] = field(default_factory=list)

    @property
    def messages(self) -> list[str]:
        """Violations as ``"rule: message"`` strings (the form trajectories store)."""
        return [str(v) for v in self.violations]


def tool_event(name: str, arguments: Mapping[str, Any]) -> BPEvent:
    """The event a proposed tool call becomes (arguments are copied)."""
    return {"type": TOOL_EVENT_PREFIX + name, "detail": {"name": name, "arguments": dict(arguments)}}


class _Rule:
    """A blocking b-thread named by its rule id that remembers why it blocked."""

    def __init__(self, rule: str, evaluate: Evaluate) -> None:
        self.rule = rule
        self._evaluate = evaluate
        self._last: tuple[Any, list[str]] | None = None

    def thread(self) -> BThread:
        # No request and no wait_for: the thread stays parked, blocking forever.
        return bthread([bsync(block=self.blocks)])

    def blocks(self, event: BPEvent) -> bool:
        call = _as_call(event)
        if call is None:
            return False
        messages = self._safe_evaluate(*call)
        self._last = (event["detail"], messages)
        return bool(messages)

    def messages_for(self, detail: Any) -> list[str]:
        if self._last is not None and self._last[0] is detail:
            return self._last[1]
        return self._safe_evaluate(str(detail["name"]), dict(detail["arguments"]))

    def _safe_evaluate(self, name: str, arguments: Arguments) -> list[str]:
        try:
            return [str(m) for m in self._evaluate(name, arguments)]
        except Exception as error:  # a broken check must not let calls through
            return [f"check raised {type(error).__name__}: {error}"]


def _as_call(event: BPEvent) -> tuple[str, Arguments] | None:
    if not event["type"].startswith(TOOL_EVENT_PREFIX):
        return None
    detail = event["detail"] if isinstance(event["detail"], Mapping) else {}
    arguments = detail.get("arguments")
    name = event["type"][len(TOOL_EVENT_PREFIX) :]
    return name, dict(arguments) if isinstance(arguments, Mapping) else {}


def _unknown_tool(known: frozenset[str]) -> Evaluate:
    def evaluate(name: str, _arguments: Arguments) -> list[str]:
        return [] if name in known else [f"unknown tool {name!r}; known tools: {', '.join(sorted(known))}"]

    return evaluate


def _path_outside(path_allowed: Callable[[str], bool]) -> Evaluate:
    def evaluate(_name: str, arguments: Arguments) -> list[str]:
        if "path" not in arguments:
            return []
        path = arguments["path"]
        if not isinstance(path, str):
            return [f"path must be a string, got {type(path).__name__}"]
        try:
            allowed = path_allowed(path)
        except Exception as error:  # sandbox resolvers signal rejection by raising
            return [f"path {path!r} is outside the sandbox: {error}"]
        return [] if allowed else [f"path {path!r} is outside the sandbox"]

    return evaluate


def _utf8_size_over(text: str, limit: int) -> bool:
    """Whether ``text`` encodes to more than ``limit`` UTF-8 bytes (O(1) unless it is close)."""
    if len(text) > limit:
        return True  # at least one byte per character
    if 4 * len(text) <= limit:
        return False  # at most four bytes per character
    return len(text.encode("utf-8", "surrogatepass")) > limit


def _oversized(arguments: Arguments, limit: int) -> list[str]:
    return [key for key, value in arguments.items() if isinstance(value, str) and _utf8_size_over(value, limit)]


def _too_large(limit: int) -> Evaluate:
    def evaluate(_name: str, arguments: Arguments) -> list[str]:
        return [f"argument {key!r} is larger than {limit} bytes" for key in _oversized(arguments, limit)]

    return evaluate


def _content(check: ContentCheck, limit: int) -> Evaluate:
    def evaluate(name: str, arguments: Arguments) -> list[str]:
        if _oversized(arguments, limit):
            return []  # blocked by content-too-large; never scan what is over the limit
        if not check.applies_to(name, arguments):
            return []
        found = list(check.violations_of(arguments))
        return ["; ".join(str(m) for m in found)] if found else []

    return evaluate


class AgentConstraints:
    """Vets tool calls with blocking b-threads and counts the violations."""

    def __init__(
        self,
        known_tools: Collection[str],
        path_allowed: Callable[[str], bool],
        checks: Sequence[ContentCheck] = (),
        max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES,
    ) -> None:
        if isinstance(known_tools, str):
            raise TypeError("known_tools must be a collection of names, not a string")
        rules = [
            _Rule(UNKNOWN_TOOL, _unknown_tool(frozenset(known_tools))),
            _Rule(PATH_OUTSIDE_SANDBOX, _path_outside(path_allowed)),
            _Rule(CONTENT_TOO_LARGE, _too_large(max_content_bytes)),
            *(_Rule(c.rule, _content(ContentCheck(*c), max_content_bytes)) for c in checks),
        ]
        self._rules = _unique(rules)
        self._known = frozenset(known_tools)
        self._counts: Counter[str] = Counter()
        self._proposing: Any = None
        self._outcome: SnapshotRecord | None = None
        self.program: Program = behavioral()
        self.program.bthreads.set({rule.rule: rule.thread() for rule in rules})
        self.program.use_snapshot(self._observe)

    def propose(self, call: Any, arguments: Mapping[str, Any] | None = None) -> Decision:
        """Offer a tool call; allowed calls reach the feedback handlers.

        ``call`` is the tool name, or any object with ``name`` and ``arguments``
        (such as ``worldagent.tools.ToolCall``) when ``arguments`` is omitted.
        """
        name, args = (call, arguments or {}) if isinstance(call, str) else (call.name, call.arguments)
        event = tool_event(name, args)
        self._proposing, self._outcome = event["detail"], None
        try:
            self.program.trigger(event)
            outcome = self._outcome
        finally:
            self._proposing, self._outcome = None, None
        if outcome is None:
            raise RuntimeError("propose() cannot be called from inside a feedback handler")
        return self._decide(outcome)

    def use_feedback(self, handlers: Mapping[str, Callable[[Any], None]]) -> Callable[[], None]:
        """Feedback handlers keyed by event type (``"tool:<name>"``); returns disconnect."""
        return self.program.use_feedback(handlers)

    def on_allowed(self, handler: Callable[[str, Arguments], None]) -> Callable[[], None]:
        """Call ``handler(name, arguments)`` for every allowed call; returns disconnect."""

        def forward(detail: Mapping[str, Any]) -> None:
            handler(detail["name"], detail["arguments"])

        return self.use_feedback({TOOL_EVENT_PREFIX + tool: forward for tool in self._known})

    @property
    def violation_count(self) -> int:
        """Total (call, rule) pairs that blocked a call so far."""
        return sum(self._counts.values())

    def violations_by_rule(self) -> dict[str, int]:
        return dict(self._counts)

    def _observe(self, records: list[SnapshotRecord]) -> None:
        for record in records:
            # Identity, not equality: only the record of the call being proposed counts.
            if (
                self._proposing is not None
                and record.get("source") == "trigger"
                and record.get("detail") is self._proposing
            ):
                self._outcome = record

    def _decide(self, outcome: SnapshotRecord) -> Decision:
        if outcome["selected"]:
            return Decision(True, [])
        # Every blocking rule, not only Plaited's first (`blockedBy`): one violation per rule broken.
        violations = [self._violation(ref["label"], outcome["detail"]) for ref in outcome["blockers"]]
        self._counts.update(v.rule for v in violations)
        return Decision(False, violations)

    def _violation(self, thread: str, detail: Any) -> Violation:
        rule = self._rules.get(thread)
        if rule is None:  # a b-thread added to ``program`` by the caller
            return Violation(thread, f"blocked by b-thread {thread!r}")
        messages = rule.messages_for(detail)
        return Violation(thread, "; ".join(messages) or "blocked")


def _unique(rules: list[_Rule]) -> dict[str, _Rule]:
    by_id: dict[str, _Rule] = {}
    for rule in rules:
        if rule.rule in by_id:
            raise ValueError(f"duplicate constraint rule id {rule.rule!r}")
        by_id[rule.rule] = rule
    return by_id
