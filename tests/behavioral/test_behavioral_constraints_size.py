"""Size first: arguments over the limit are blocked before any content check reads them."""

from __future__ import annotations

from worldagent.behavioral import AgentConstraints, ContentCheck
from worldagent.behavioral.constraints import CONTENT_TOO_LARGE


def test_oversized_content_is_blocked_and_never_reaches_a_content_check() -> None:
    seen: list[int] = []

    def record(arguments: dict) -> list[str]:  # type: ignore[type-arg]
        seen.append(len(arguments["content"]))
        return []

    constraints = AgentConstraints(
        known_tools=["writeTemplate"],
        path_allowed=lambda _path: True,
        checks=[ContentCheck("probe", lambda _tool, _args: True, record)],
        max_content_bytes=1000,
    )
    decision = constraints.propose("writeTemplate", {"path": "a/a.tsx", "content": "x" * 1001})
    assert not decision.allowed
    assert [v.rule for v in decision.violations] == [CONTENT_TOO_LARGE]
    assert "'content' is larger than 1000 bytes" in decision.messages[0]
    assert seen == []  # the content check never ran
    assert constraints.propose("writeTemplate", {"path": "a/a.tsx", "content": "x" * 1000}).allowed
    assert seen == [1000]


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    constraints = AgentConstraints(known_tools=["w"], path_allowed=lambda _path: True, max_content_bytes=1000)
    assert constraints.propose("w", {"content": "é" * 500}).allowed  # 1000 bytes
    assert not constraints.propose("w", {"content": "é" * 501}).allowed  # 1002 bytes
    assert not constraints.propose("w", {"content": "\U0001f600" * 251}).allowed  # 1004 bytes in 251 characters
