"""The trainer's web app: ``POST /train``, ``GET /status/{runId}``, ``GET /health``.

Contract::

    POST /train {jobId, datasetRef, runId}  → 202 {runId, status: "pending"}
         400 missing/invalid field or datasetRef outside the data directories; 409 repeated runId
    GET  /status/{runId} → {status: pending|running|completed|failed, output_model_ref, error, ...}; 404 unknown run
    GET  /health         → {status: "ok", pending, running, max_concurrent}

Binds to 127.0.0.1 by default; an optional bearer token guards every route but ``/health`` (the API
docs included). The token and the body limit are checked by the one HTTP guard
(``worldagent.guard.http.RequestGuard``) before a body byte is read.
"""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from worldagent.guard.http import RequestGuard
from worldagent.specialists.http import install_error_handlers
from worldagent.specialists.trainer.runs import RunState
from worldagent.specialists.trainer.supervisor import Supervisor, TrainerConfig, prepare_run

log = logging.getLogger("worldagent.specialists.trainer")


class TrainRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    jobId: str | int = Field(description="the improvement job this run trains")
    datasetRef: str = Field(max_length=4096, description="a dataset file inside the trainer's data directories")
    runId: str = Field(max_length=200, description="the caller's id for this run; unique")


class TrainAccepted(BaseModel):
    runId: str
    status: str


class RunStatus(BaseModel):
    runId: str
    jobId: str
    datasetRef: str
    status: str
    output_model_ref: str | None
    error: str | None
    worker_pid: int | None
    rows: int
    metrics: dict[str, Any]
    created_at: str | None
    started_at: str | None
    finished_at: str | None


def create_trainer_app(config: TrainerConfig, *, supervise: bool = True) -> Any:
    """The FastAPI app; ``supervise=False`` accepts runs without starting workers (schema tests)."""
    state = RunState(str(config.db_url))
    supervisor = Supervisor(config, state)
    submit_lock = threading.Lock()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> Any:
        orphans = state.fail_orphans("the trainer service stopped while this run was running")
        if orphans:
            log.warning("marked %d orphaned run(s) failed: %s", len(orphans), ", ".join(orphans))
        if supervise:
            supervisor.start()
        try:
            yield
        finally:
            if supervise:
                supervisor.stop()
            state.close()

    app = FastAPI(title="worldagent local trainer", version="1", lifespan=lifespan, description=__doc__)
    # Token, body size, UTF-8 and JSON depth before any route or body parsing (worldagent/guard/http.py).
    app.add_middleware(RequestGuard, token=config.token, max_body_bytes=config.max_body_bytes)
    install_error_handlers(app)
    app.state.trainer = {"config": config, "state": state, "supervisor": supervisor}

    error_responses: dict[int | str, dict[str, Any]] = {
        400: {"description": "bad input"},
        401: {"description": "bad token"},
        413: {"description": "body over the limit"},
    }

    @app.post(
        "/train",
        operation_id="train",
        status_code=202,
        response_model=TrainAccepted,
        responses={**error_responses, 409: {"description": "runId exists"}},
    )
    def train(body: TrainRequest) -> Any:
        job_id = str(body.jobId)
        if not job_id.strip():
            raise HTTPException(status_code=400, detail="jobId: must not be empty")
        with submit_lock:  # check, prepare and record one runId at a time
            if state.get(body.runId) is not None:
                raise HTTPException(status_code=409, detail=f"runId: a run {body.runId!r} exists already")
            try:
                rows = prepare_run(config, body.runId, body.datasetRef)
            except ValueError as error:
                raise HTTPException(status_code=400, detail=str(error)) from None
            created = state.create(body.runId, job_id, str(Path(body.datasetRef).resolve()), rows)
        if created is None:
            raise HTTPException(status_code=409, detail=f"runId: a run {body.runId!r} exists already")
        if supervise:
            threading.Thread(target=supervisor.tick, daemon=True).start()  # start at once, not at the next poll
        return JSONResponse(status_code=202, content={"runId": body.runId, "status": "pending"})

    @app.get(
        "/status/{runId}",
        operation_id="status",
        response_model=RunStatus,
        responses={**error_responses, 404: {"description": "unknown run"}},
    )
    def status(runId: str) -> Any:
        found = state.get(runId)
        if found is None:
            raise HTTPException(status_code=404, detail=f"unknown run {runId!r}")
        return found

    @app.get("/health", operation_id="health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            **state.counts(),
            "max_concurrent": config.max_concurrent,
            "warm_workers": int(supervisor.warm),
        }

    return app
