"""The HTTP guard: token, then size, UTF-8, surrogates and depth, before a route reads the body."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from worldagent.guard.http import RequestGuard, json_body_problem


class Recorder:
    """An ASGI app that records what reached it, and a client side that counts body reads."""

    def __init__(self) -> None:
        self.seen: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        self.seen.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def call(
    guard: RequestGuard, path: str, chunks: list[bytes], headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any] | None, int]:
    """(status, JSON answer, body chunks the guard pulled) for one request."""
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        index = pulled - 1
        return {"type": "http.request", "body": chunks[index], "more_body": index < len(chunks) - 1}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "path": path,
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
    }
    asyncio.run(guard(scope, receive, send))
    status = sent[0]["status"]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    return status, answer, pulled


def test_unauthenticated_body_is_never_read() -> None:
    app = Recorder()
    guard = RequestGuard(app, token="t")
    status, answer, pulled = call(guard, "/train", [b"x" * 1024] * 50, {"content-length": str(50 * 1024)})
    assert (status, pulled, app.seen) == (401, 0, [])
    assert answer is not None and "bearer token" in answer["detail"]


def test_docs_routes_follow_the_token_rule_and_health_stays_open() -> None:
    guard = RequestGuard(Recorder(), token="t")
    for path in ("/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"):
        assert call(guard, path, [b""])[0] == 401, path
    assert call(guard, "/health", [b""])[0] == 200
    assert call(guard, "/docs", [b""], {"authorization": "Bearer t"})[0] == 200


def test_declared_size_over_the_limit_is_refused_unread() -> None:
    guard = RequestGuard(Recorder(), max_body_bytes=1000)
    status, _, pulled = call(guard, "/x", [b"x" * 10], {"content-length": str(50 * 1024 * 1024)})
    assert (status, pulled) == (413, 0)


def test_streamed_body_stops_at_the_limit() -> None:
    guard = RequestGuard(Recorder(), max_body_bytes=1000)
    status, _, pulled = call(guard, "/x", [b"x" * 600] * 100)
    assert (status, pulled) == (413, 2)


def test_surrogate_escape_is_refused_pairs_pass() -> None:
    app = Recorder()
    guard = RequestGuard(app)
    bad = b'{"steps": [{"action": "\\ud800"}]}'
    status, answer, _ = call(guard, "/executions", [bad], {"content-type": "application/json"})
    assert status == 400 and answer is not None and "steps[0].action" in answer["detail"]
    status, _, _ = call(guard, "/executions", [bad])  # no content type: FastAPI parses JSON anyway
    assert status == 400
    good = b'{"a": "\\ud83d\\ude00 \\\\ud800"}'
    assert call(guard, "/executions", [good], {"content-type": "application/json"})[0] == 200
    assert app.seen == [good]


def test_invalid_utf8_and_depth_are_400() -> None:
    guard = RequestGuard(Recorder())
    status, answer, _ = call(guard, "/x", [b'{"a": "\xff"}'], {"content-type": "application/json"})
    assert status == 400 and answer is not None and "not UTF-8" in answer["detail"]
    status, answer, _ = call(guard, "/x", [b"[" * 1000 + b"]" * 1000], {"content-type": "application/json"})
    assert status == 400 and answer is not None and "nested deeper" in answer["detail"]


def test_non_json_bodies_are_passed_through() -> None:
    assert json_body_problem(b"not json \\ud800") is None
