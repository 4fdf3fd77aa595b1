"""What every request to a project service passes before its route: token, size, text, JSON depth.

One pure ASGI middleware (no FastAPI import) guards every service the project runs (the platform
API, the trainer service), so it runs before a body is read or parsed:

- an optional bearer token (``Authorization: Bearer <token>``) on every route but ``/health``
  (supervisors probe it), the API docs (``/docs``, ``/redoc``, ``/openapi.json``) included, as
  docs/production.md states; an unauthenticated request is answered 401 before one body byte is
  read, so it costs the service nothing;
- a request-body limit: a declared ``Content-Length`` over it is refused before anything is read,
  a streamed body as soon as it passes the limit (413);
- the text policy (``worldagent.guard.text``): a JSON body that is not UTF-8, or holds a lone
  surrogate escape (``"\\ud800"``) anywhere, is a 400 naming the field, so it is never stored and
  can never break a later answer;
- JSON nested deeper than the limit is a 400 naming the offset, before a JSON parser could
  recurse on it (Python's ``json`` raises ``RecursionError`` on deep input, a 500).

FastAPI parses a body as JSON when its content type says JSON or says nothing, so both are checked.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from worldagent import safejson
from worldagent.guard.text import SURROGATE_ESCAPE_BYTES, TextError, check_value, decode_utf8

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024  # a recorded session with page snapshots fits; 50 MB does not
OPEN_PATHS = frozenset({"/health"})


async def _answer(send: Send, status: int, detail: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps({"detail": detail}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


def token_matches(authorization: str, token: str) -> bool:
    """Constant-time comparison of an ``Authorization`` header with ``Bearer <token>``."""
    return hmac.compare_digest(authorization.encode("utf-8", "replace"), f"Bearer {token}".encode())


def json_body_problem(body: bytes, max_depth: int = safejson.MAX_DEPTH) -> str | None:
    """Why a JSON request body must be refused before a route sees it, or None.

    Linear in the body: UTF-8 is decoded once, the depth scanned once, and the body is parsed here
    only when it holds a surrogate escape (to tell a valid pair from a lone half).
    """
    try:
        text = decode_utf8(body, "body")
    except TextError as error:
        return str(error)
    at = safejson.depth_exceeded_at(text, max_depth)
    if at is not None:
        return f"body: JSON nested deeper than {max_depth} levels (at offset {at})"
    if SURROGATE_ESCAPE_BYTES.search(body):
        try:
            value = json.loads(text)
        except ValueError:
            return None  # not JSON: the route's own parser answers 400 with its position
        try:
            check_value(value, "body")
        except TextError as error:
            return str(error)
    return None


class RequestGuard:
    """Wrap ``app``: token (when set), body size and JSON depth are checked before it sees a request."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_json_depth: int = safejson.MAX_DEPTH,
    ) -> None:
        self.app = app
        self.token = token or None
        self.max_body_bytes = max_body_bytes
        self.max_json_depth = max_json_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        if (
            self.token
            and scope.get("path") not in OPEN_PATHS
            and not token_matches(headers.get("authorization", ""), self.token)
        ):
            await _answer(
                send,
                401,
                "missing or wrong bearer token (Authorization: Bearer <token>)",
                [(b"www-authenticate", b"Bearer")],
            )
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await _answer(send, 413, f"request body is {declared} bytes; the limit is {self.max_body_bytes}")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await _answer(send, 413, f"request body is over the limit of {self.max_body_bytes} bytes")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        content_type = headers.get("content-type", "")
        if body and (not content_type or "json" in content_type):
            problem = json_body_problem(body, self.max_json_depth)
            if problem is not None:
                await _answer(send, 400, problem)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
