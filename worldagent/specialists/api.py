"""The specialists API (FastAPI, thin): each route validates, calls one :class:`SpecialistsService` method.

Operation ids are the seed names (``generate_training_data``, ``trigger_training``,
``get_training_status``, ``register_trained_model``, ``list_specialist_models``,
``evaluate_model``) plus ``create_feedback``, ``list_feedback``, ``record_browser_actions``,
``create_execution`` and ``create/get/update/list_improvement_job(s)``. Bad input is a 400 naming
the field, an unknown id a 404.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Body, FastAPI, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from worldagent.guard.http import DEFAULT_MAX_BODY_BYTES, RequestGuard
from worldagent.registry.api import NotFoundError, RegistryBusyError, RegistryError
from worldagent.specialists.http import describe_validation_errors, install_error_handlers
from worldagent.specialists.service import ServiceError, SpecialistsService
from worldagent.specialists.store import NotFound, StoreError
from worldagent.specialists.strategies import TrainingDataError

MAX_ID = 2**62
JobId = Annotated[int, Path(ge=1, le=MAX_ID, description="improvement job id")]
Text = Annotated[str, Field(min_length=1, max_length=10_000)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FeedbackIn(Model):
    targetType: Literal["agent", "chat"]
    targetId: Annotated[str, Field(min_length=1, max_length=200)]
    executionId: Annotated[str, Field(max_length=200)] | None = None
    input: Any = Field(description="a JSON value or a JSON-encoded string; browser decisions: {pageSnapshot, task}")
    output: Any = Field(
        description="a JSON value or a JSON-encoded string; browser decisions: {action, selectorOrRef, value}"
    )
    label: Literal["good", "bad"]
    notes: Annotated[str, Field(max_length=10_000)] | None = None


class RecordedAction(Model):
    pageSnapshot: Annotated[str, Field(max_length=200_000)] = ""
    action: Literal["click", "fill", "select", "navigate"]
    selectorOrRef: Annotated[str, Field(min_length=1, max_length=2000)]
    value: Annotated[str, Field(max_length=10_000)] | None = None


class RecordIn(Model):
    targetType: Literal["agent", "chat"] = "agent"
    targetId: Annotated[str, Field(min_length=1, max_length=200)]
    task: Text
    executionId: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    actions: Annotated[list[RecordedAction], Field(min_length=1, max_length=1000)]


class StepIn(Model):
    kind: Annotated[str, Field(min_length=1, max_length=32)] = "browser"
    pageSnapshot: Annotated[str, Field(max_length=200_000)] | None = None
    action: dict[str, Any] | None = None
    data: Any = None


class ExecutionIn(Model):
    id: Annotated[str, Field(min_length=1, max_length=200)]
    targetType: Literal["agent", "chat"] = "agent"
    targetId: Annotated[str, Field(min_length=1, max_length=200)]
    task: Text
    steps: Annotated[list[StepIn], Field(max_length=10_000)]


class JobIn(Model):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    scopeType: Literal["agent", "chat"]
    scopeId: Annotated[str, Field(min_length=1, max_length=200)]
    instanceRefs: list[Annotated[str, Field(max_length=1000)]] = Field(default_factory=list)
    architectureSpec: dict[str, Any] = Field(default_factory=dict)
    strategy: Annotated[str, Field(min_length=1, max_length=32)] = "from_feedback"
    currentModelRef: Annotated[str, Field(max_length=4096)] | None = None


class JobUpdate(Model):
    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    instanceRefs: list[Annotated[str, Field(max_length=1000)]] | None = None
    architectureSpec: dict[str, Any] | None = None
    strategy: Annotated[str, Field(min_length=1, max_length=32)] | None = None
    currentModelRef: Annotated[str, Field(max_length=4096)] | None = None
    lastTrainedAt: Annotated[str, Field(max_length=64)] | None = None


class DataIn(Model):
    strategy: Annotated[str, Field(min_length=1, max_length=32)] | None = None
    since: Annotated[str, Field(max_length=64)] | None = None
    limit: Annotated[int, Field(ge=1, le=1_000_000)] | None = None


class TriggerIn(Model):
    datasetRef: Annotated[str, Field(min_length=1, max_length=4096)]


class RegisterIn(Model):
    outputModelRef: Annotated[str, Field(min_length=1, max_length=4096)]
    name: Annotated[str, Field(min_length=1, max_length=200)]
    jobId: Annotated[int, Field(ge=1, le=MAX_ID)]


class EvaluateIn(Model):
    modelRef: Annotated[str, Field(min_length=1, max_length=4096)]
    jobId: Annotated[int, Field(ge=1, le=MAX_ID)]
    rows: Literal["heldout", "all"] = "heldout"


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "bad input (names the field)"},
    401: {"description": "missing or wrong bearer token (when the service has one)"},
    404: {"description": "unknown id"},
    413: {"description": "request body over the limit"},
    503: {"description": "the database is read-only, from another version, or corrupt (the detail says what to do)"},
}


def create_app(
    service: SpecialistsService, *, token: str | None = None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
) -> FastAPI:
    """The app; ``token`` requires ``Authorization: Bearer <token>`` on every route but /health."""
    app = FastAPI(title="worldagent specialists", version="1", description=__doc__)
    # Before any route or body parsing: token, body size, JSON depth (worldagent/guard/http.py).
    app.add_middleware(RequestGuard, token=token, max_body_bytes=max_body_bytes)
    install_error_handlers(app)
    app.state.service = service

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse(status_code=status, content={"detail": message})

    @app.exception_handler(NotFound)
    async def _not_found(_r: Request, e: NotFound) -> JSONResponse:
        return error(404, str(e.args[0] if e.args else e))

    @app.exception_handler(NotFoundError)
    async def _registry_not_found(_r: Request, e: NotFoundError) -> JSONResponse:
        return error(404, str(e))

    @app.exception_handler(RegistryBusyError)
    async def _busy(_r: Request, e: RegistryBusyError) -> JSONResponse:
        return error(503, str(e))

    @app.exception_handler(RegistryError)
    async def _registry(_r: Request, e: RegistryError) -> JSONResponse:
        return error(400, str(e))

    @app.exception_handler(ValidationError)
    async def _pydantic(_r: Request, e: ValidationError) -> JSONResponse:
        return error(400, describe_validation_errors(list(e.errors())))

    for kind in (StoreError, ServiceError, TrainingDataError):

        @app.exception_handler(kind)
        async def _bad(_r: Request, e: Exception) -> JSONResponse:
            return error(400, str(e))

    @app.post("/feedback", operation_id="create_feedback", status_code=201, responses=ERRORS)
    def create_feedback(body: FeedbackIn) -> dict[str, Any]:
        return service.create_feedback(**body.model_dump())

    @app.get("/feedback", operation_id="list_feedback", responses=ERRORS)
    def list_feedback(
        targetId: Annotated[str | None, Query(max_length=200)] = None,
        targetType: Literal["agent", "chat"] | None = None,
        label: Literal["good", "bad"] | None = None,
        since: Annotated[str | None, Query(max_length=64)] = None,
        limit: Annotated[int | None, Query(ge=1, le=100_000)] = None,
    ) -> list[dict[str, Any]]:
        return service.list_feedback(targetId=targetId, targetType=targetType, since=since, label=label, limit=limit)

    @app.post("/feedback/record", operation_id="record_browser_actions", status_code=201, responses=ERRORS)
    def record_browser_actions(body: RecordIn) -> dict[str, Any]:
        data = body.model_dump()
        return service.record_browser_actions(**data)

    @app.post("/executions", operation_id="create_execution", status_code=201, responses=ERRORS)
    def create_execution(body: ExecutionIn) -> dict[str, Any]:
        return service.create_execution(**body.model_dump())

    @app.post("/jobs", operation_id="create_improvement_job", status_code=201, responses=ERRORS)
    def create_improvement_job(body: JobIn) -> dict[str, Any]:
        return service.create_improvement_job(**body.model_dump())

    @app.get("/jobs", operation_id="list_improvement_jobs", responses=ERRORS)
    def list_improvement_jobs(scopeType: Literal["agent", "chat"] | None = None) -> list[dict[str, Any]]:
        return service.list_improvement_jobs(scopeType)

    @app.get("/jobs/{jobId}", operation_id="get_improvement_job", responses=ERRORS)
    def get_improvement_job(jobId: JobId) -> dict[str, Any]:
        return service.get_improvement_job(jobId)

    @app.patch("/jobs/{jobId}", operation_id="update_improvement_job", responses=ERRORS)
    def update_improvement_job(jobId: JobId, body: JobUpdate) -> dict[str, Any]:
        return service.update_improvement_job(jobId, **body.model_dump(exclude_unset=True))

    @app.post("/jobs/{jobId}/training-data", operation_id="generate_training_data", status_code=201, responses=ERRORS)
    def generate_training_data(jobId: JobId, body: Annotated[DataIn | None, Body()] = None) -> dict[str, Any]:
        body = body or DataIn()
        return service.generate_training_data(jobId, strategy=body.strategy, since=body.since, limit=body.limit)

    @app.post("/jobs/{jobId}/training-runs", operation_id="trigger_training", status_code=201, responses=ERRORS)
    def trigger_training(jobId: JobId, body: TriggerIn) -> dict[str, Any]:
        return service.trigger_training(jobId, datasetRef=body.datasetRef)

    @app.get("/training-runs/{runId}", operation_id="get_training_status", responses=ERRORS)
    def get_training_status(runId: Annotated[str, Path(min_length=1, max_length=200)]) -> dict[str, Any]:
        return service.get_training_status(runId)

    @app.post("/models", operation_id="register_trained_model", status_code=201, responses=ERRORS)
    def register_trained_model(body: RegisterIn) -> dict[str, Any]:
        return service.register_trained_model(**body.model_dump())

    @app.get("/agents/{agentId}/models", operation_id="list_specialist_models", responses=ERRORS)
    def list_specialist_models(agentId: Annotated[str, Path(min_length=1, max_length=200)]) -> list[dict[str, Any]]:
        return service.list_specialist_models(agentId)

    @app.post("/models/evaluate", operation_id="evaluate_model", responses=ERRORS)
    def evaluate_model(body: EvaluateIn) -> dict[str, Any]:
        return service.evaluate_model(**body.model_dump())

    @app.get("/health", operation_id="health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
