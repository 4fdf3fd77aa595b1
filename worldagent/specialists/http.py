"""Shared FastAPI plumbing: request-validation errors are 400s that name the field, never 500s; a
database that is read-only, drifted or corrupt (``worldagent.guard.db``) is a 503 with its one line."""

from __future__ import annotations

from typing import Any


def describe_validation_errors(errors: list[dict[str, Any]]) -> str:
    parts = []
    for item in errors:
        loc = [str(p) for p in item.get("loc", ()) if p not in ("body", "query", "path", "header")]
        where = ".".join(loc) or "body"
        message = "missing field" if item.get("type") == "missing" else item.get("msg", "invalid")
        parts.append(f"{where}: {message}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: Any) -> None:
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    from worldagent.guard.db import DatabaseError
    from worldagent.guard.text import TextError

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": describe_validation_errors(list(error.errors()))})

    @app.exception_handler(TextError)
    async def _text(_request: Request, error: TextError) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": str(error)})

    @app.exception_handler(DatabaseError)
    async def _database(_request: Request, error: DatabaseError) -> JSONResponse:
        return JSONResponse(status_code=503, content={"detail": str(error)})
