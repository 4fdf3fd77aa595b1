"""The local trainer service: ``POST /train``, ``GET /status/{runId}``, ``GET /health``.

Contract::

    POST /train {jobId, datasetRef, runId}  → 202 {runId, status: "pending"}
         400 missing/invalid field or datasetRef outside the data directories; 409 repeated runId
    GET  /status/{runId} → {status: pending|running|completed|failed, output_model_ref, error, ...}; 404 unknown run
    GET  /health         → {status: "ok", pending, running, max_concurrent}

Each run is a real short LoRA SFT in its own worker *process* (``python -m
worldagent.specialists.worker``); at most ``max_concurrent`` run at once, the rest wait as
pending. Run state lives in a SQLAlchemy database, so after a restart completed runs still answer,
pending runs are started again, and runs that were running when the service died are marked
failed with the reason. A worker that dies without reporting (killed, crashed) fails its run
with the exit code or signal. Binds to 127.0.0.1 by default; an optional bearer token guards every
route but ``/health``.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import JSON, DateTime, Integer, String, Text, select, update
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from worldagent.io import atomic_write_text, jsonl
from worldagent.registry.db import Database, create_tables, make_engine, utcnow
from worldagent.specialists.http import install_error_handlers
from worldagent.specialists.strategies import TrainingDataError, read_dataset_file

log = logging.getLogger(__name__)
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
TRAIN_FILE = "train.jsonl"
LOG_FILE = "worker.log"


class TrainerBase(DeclarativeBase):
    pass


class TrainerRunRow(TrainerBase):
    __tablename__ = "trainer_runs"

    run_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    job_id: Mapped[str] = mapped_column(String(200), nullable=False)
    dataset_ref: Mapped[str] = mapped_column(Text, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, index=True)
    output_model_ref: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    worker_pid: Mapped[int | None] = mapped_column(Integer)
    rows: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, nullable=False)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="milliseconds") + "Z"


def status_dict(row: TrainerRunRow) -> dict[str, Any]:
    return {
        "runId": row.run_id,
        "jobId": row.job_id,
        "datasetRef": row.dataset_ref,
        "status": row.status,
        "output_model_ref": row.output_model_ref,
        "error": row.error,
        "worker_pid": row.worker_pid,
        "rows": row.rows,
        "metrics": dict(row.metrics or {}),
        "created_at": _iso(row.created_at),
        "started_at": _iso(row.started_at),
        "finished_at": _iso(row.finished_at),
    }


class RunState(Database):
    """The run state machine on one database: pending → running → completed | failed."""

    def __init__(self, url: str) -> None:
        super().__init__(make_engine(url), url)
        create_tables(self.engine, TrainerBase.metadata, "trainer run state", url)

    def create(self, run_id: str, job_id: str, dataset_ref: str, rows: int) -> dict[str, Any] | None:
        """A new pending run; None when ``run_id`` exists already."""

        def do(session: Session) -> dict[str, Any] | None:
            if session.get(TrainerRunRow, run_id) is not None:
                return None
            row = TrainerRunRow(run_id=run_id, job_id=job_id, dataset_ref=dataset_ref, status="pending", rows=rows, metrics={}, created_at=utcnow())
            session.add(row)
            session.flush()
            return status_dict(row)

        return self._write(do)

    def get(self, run_id: str) -> dict[str, Any] | None:
        with self._session(False) as session:
            row = session.get(TrainerRunRow, run_id)
            return None if row is None else status_dict(row)

    def counts(self) -> dict[str, int]:
        with self._session(False) as session:
            out = {s: 0 for s in ("pending", "running", "completed", "failed")}
            for status in session.scalars(select(TrainerRunRow.status)):
                out[status] = out.get(status, 0) + 1
            return out

    def claim_pending(self, limit: int) -> list[str]:
        """Move up to ``limit`` of the oldest pending runs to running; their ids."""

        def do(session: Session) -> list[str]:
            rows = list(session.scalars(select(TrainerRunRow).where(TrainerRunRow.status == "pending").order_by(TrainerRunRow.created_at, TrainerRunRow.run_id).limit(limit)))
            for row in rows:
                row.status, row.started_at = "running", utcnow()
            return [row.run_id for row in rows]

        return self._write(do) if limit > 0 else []

    def set_pid(self, run_id: str, pid: int) -> None:
        self._write(lambda session: session.execute(update(TrainerRunRow).where(TrainerRunRow.run_id == run_id).values(worker_pid=pid)))

    def finish(self, run_id: str, status: str, *, error: str | None = None, output_model_ref: str | None = None, metrics: dict[str, Any] | None = None, only_from: Sequence[str] = ("running",)) -> bool:
        """Terminal transition, only from ``only_from`` (a late worker never overwrites a recorded failure)."""
        values: dict[str, Any] = {"status": status, "error": error, "finished_at": utcnow()}
        if output_model_ref is not None:
            values["output_model_ref"] = output_model_ref
        if metrics is not None:
            values["metrics"] = metrics

        def do(session: Session) -> bool:
            result = session.execute(update(TrainerRunRow).where(TrainerRunRow.run_id == run_id, TrainerRunRow.status.in_(list(only_from))).values(**values))
            return bool(result.rowcount)

        return self._write(do)

    def fail_orphans(self, reason: str) -> list[str]:
        """Runs left ``running`` by a service that stopped: failed, with ``reason`` and their worker pid."""

        def do(session: Session) -> list[str]:
            rows = list(session.scalars(select(TrainerRunRow).where(TrainerRunRow.status == "running")))
            for row in rows:
                row.status, row.finished_at = "failed", utcnow()
                row.error = f"{reason} (worker pid {row.worker_pid}); trigger the run again with a new runId"
            return [row.run_id for row in rows]

        return self._write(do)


@dataclass
class TrainerConfig:
    data_dirs: list[Path]
    params_path: Path | None = None
    db_url: str | None = None
    max_concurrent: int = 1
    token: str | None = None
    base_model: str | None = None  # overrides specialists.base_model
    python: str = sys.executable
    poll_s: float = 0.2
    warm_spare: bool = True  # keep one pre-imported worker ready while the service is idle
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.data_dirs:
            raise ValueError("the trainer needs at least one data directory")
        self.data_dirs = [Path(d).resolve() for d in self.data_dirs]
        if self.db_url is None:
            self.db_url = f"sqlite:///{self.root / 'trainer.db'}"

    @property
    def root(self) -> Path:
        """Where the trainer writes: ``<first data dir>/specialists/trainer``."""
        return self.data_dirs[0] / "specialists" / "trainer"

    @property
    def adapters(self) -> Path:
        return self.root / "adapters"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    def allowed(self, path: Path) -> bool:
        resolved = path.resolve()
        return any(resolved.is_relative_to(d) for d in self.data_dirs)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


class Supervisor:
    """Starts pending runs in worker processes (at most ``max_concurrent``) and reaps them."""

    def __init__(self, config: TrainerConfig, state: RunState) -> None:
        self.config = config
        self.state = state
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self.spare: subprocess.Popen[bytes] | None = None
        self.spare_ready: Path | None = None
        self.spare_log: Path | None = None
        self.spare_started = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="trainer-supervisor", daemon=True)
        self._thread.start()

    def stop(self, kill_workers: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if kill_workers:
            with self._lock:
                for run_id, proc in list(self.procs.items()):
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait(timeout=10)
                    self.state.finish(run_id, "failed", error="the trainer service shut down while this run was running; trigger it again with a new runId")
                self.procs.clear()
                if self.spare is not None:
                    if self.spare.poll() is None:
                        self.spare.kill()
                    self.spare.wait(timeout=10)
                    self.spare = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:  # keep supervising; the next tick retries
                log.exception("trainer supervisor tick failed")
            self._stop.wait(self.config.poll_s)

    def tick(self) -> None:
        with self._lock:
            self._reap()
            for run_id in self.state.claim_pending(self.config.max_concurrent - len(self.procs)):
                self._spawn(run_id)
            self._ensure_spare()

    def _reap(self) -> None:
        for run_id, proc in list(self.procs.items()):
            code = proc.poll()
            if code is None:
                continue
            del self.procs[run_id]
            if code < 0:
                reason = f"worker process {proc.pid} was killed by signal {_signal_name(-code)} before it finished"
            else:
                reason = f"worker process {proc.pid} exited with code {code} without reporting a result"
            tail = _log_tail(self.logs.pop(run_id, self.config.runs / run_id / LOG_FILE))
            if self.state.finish(run_id, "failed", error=f"{reason}{'; log: ' + tail if tail and code >= 0 else ''}"):
                log.warning("run %s failed: %s", run_id, reason)

    def _command(self, run_id: str | None, ready_file: Path | None = None) -> list[str]:
        command = [self.config.python, "-m", "worldagent.specialists.worker", "--db-url", str(self.config.db_url), "--runs-dir", str(self.config.runs), "--adapters-dir", str(self.config.adapters), "--cache-dir", str(self.config.root / "base-cache")]
        if run_id is not None:
            command += ["--run-id", run_id]
        if ready_file is not None:
            command += ["--ready-file", str(ready_file)]
        if self.config.params_path is not None:
            command += ["--params", str(self.config.params_path)]
        if self.config.base_model:
            command += ["--base-model", self.config.base_model]
        return command

    def _popen(self, command: list[str], log_path: Path, stdin: Any) -> subprocess.Popen[bytes]:
        env = {**os.environ, **self.config.extra_env, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as handle:
            return subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, stdin=stdin, env=env)

    def _take_spare(self, run_id: str) -> subprocess.Popen[bytes] | None:
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        if spare.poll() is None and spare.stdin is not None:
            try:
                spare.stdin.write(f"{run_id}\n".encode())
                spare.stdin.close()
                return spare
            except OSError:
                pass
        if spare.poll() is None:
            spare.kill()
        spare.wait(timeout=10)
        return None

    def _spawn(self, run_id: str) -> None:
        work = self.config.runs / run_id
        spare_log = self.spare_log
        try:
            proc = self._take_spare(run_id)
            if proc is not None:
                self.logs[run_id] = spare_log  # type: ignore[assignment]
            else:
                proc = self._popen(self._command(run_id), work / LOG_FILE, subprocess.DEVNULL)
                self.logs[run_id] = work / LOG_FILE
        except OSError as error:
            self.state.finish(run_id, "failed", error=f"cannot start the worker process: {error}")
            return
        self.procs[run_id] = proc
        self.state.set_pid(run_id, proc.pid)

    def _ensure_spare(self) -> None:
        """Keep one warm worker while nothing trains (warming up would compete with a run for the CPU)."""
        if not self.config.warm_spare or self.procs or (self.spare is not None and self.spare.poll() is None):
            return
        if self.spare is not None:  # died while waiting (e.g. the base failed to build): retry, at most every 30 s
            if time.monotonic() - self.spare_started < 30:
                return
            self.spare.wait(timeout=10)
        self.spare_started = time.monotonic()
        stamp = f"{os.getpid()}-{time.monotonic_ns()}"
        self.spare_ready = self.config.runs / f".spare-{stamp}.ready"
        self.spare_log = self.config.runs / f".spare-{stamp}.log"
        try:
            self.spare = self._popen(self._command(None, self.spare_ready), self.spare_log, subprocess.PIPE)
        except OSError as error:
            log.warning("cannot start a warm worker: %s", error)
            self.spare = None

    @property
    def warm(self) -> bool:
        return self.spare is not None and self.spare.poll() is None and self.spare_ready is not None and self.spare_ready.exists()


def prepare_run(config: TrainerConfig, run_id: str, dataset_ref: str) -> int:
    """Validate ``datasetRef`` and write the run's conversations; returns the row count.

    Raises ``ValueError`` naming the field for a bad runId, a path outside the data directories,
    or a dataset with nothing to train on.
    """
    if not RUN_ID.match(run_id):
        raise ValueError(f"runId: {run_id!r} must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or digit)")
    if not dataset_ref.strip() or "\x00" in dataset_ref:
        raise ValueError("datasetRef: must be a path to a dataset file")
    path = Path(dataset_ref).expanduser()
    try:
        inside = config.allowed(path)
    except (OSError, RuntimeError, ValueError) as error:
        raise ValueError(f"datasetRef: cannot resolve {dataset_ref!r}: {error}") from None
    if not inside:
        raise ValueError(f"datasetRef: {dataset_ref} is outside the allowed data directories ({', '.join(map(str, config.data_dirs))})")
    try:
        conversations = read_dataset_file(path)
    except TrainingDataError as error:
        raise ValueError(str(error)) from None
    atomic_write_text(config.runs / run_id / TRAIN_FILE, jsonl(conversations))
    return len(conversations)


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
    install_error_handlers(app)
    app.state.trainer = {"config": config, "state": state, "supervisor": supervisor}

    def check_token(request: Request) -> None:
        if config.token and request.headers.get("authorization", "") != f"Bearer {config.token}":
            raise HTTPException(status_code=401, detail="missing or wrong bearer token (Authorization: Bearer <token>)")

    error_responses: dict[int | str, dict[str, Any]] = {400: {"description": "bad input"}, 401: {"description": "bad token"}}

    @app.post("/train", operation_id="train", status_code=202, response_model=TrainAccepted, dependencies=[Depends(check_token)], responses={**error_responses, 409: {"description": "runId exists"}})
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

    @app.get("/status/{runId}", operation_id="status", response_model=RunStatus, dependencies=[Depends(check_token)], responses={**error_responses, 404: {"description": "unknown run"}})
    def status(runId: str) -> Any:
        found = state.get(runId)
        if found is None:
            raise HTTPException(status_code=404, detail=f"unknown run {runId!r}")
        return found

    @app.get("/health", operation_id="health")
    def health() -> dict[str, Any]:
        return {"status": "ok", **state.counts(), "max_concurrent": config.max_concurrent, "warm_workers": int(supervisor.warm)}

    return app
