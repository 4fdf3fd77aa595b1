"""The trainer's supervisor: starts pending runs in worker processes (at most ``max_concurrent``),
keeps one pre-imported spare worker warm, and reaps workers, failing a run whose worker died
without reporting (with its exit code or signal).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.io import atomic_write_text, jsonl
from worldagent.specialists.strategies import TrainingDataError, read_dataset_file
from worldagent.specialists.trainer.runs import LOG_FILE, RUN_ID, TRAIN_FILE, RunState

log = logging.getLogger("worldagent.specialists.trainer")
SHUTDOWN_ERROR = "the trainer service shut down while this run was running; trigger it again with a new runId"


@dataclass
class TrainerConfig:
    data_dirs: list[Path]
    params_path: Path | None = None
    db_url: str | None = None
    max_concurrent: int = 1
    token: str | None = None
    max_body_bytes: int = 64 * 1024  # a /train request is three short fields; the guard refuses more unread
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


LOG_TAIL_BYTES = 64 * 1024


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        # The worker's own log, through the file guard all the same; only its last bytes are read.
        with files.open_regular(path) as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - LOG_TAIL_BYTES))
            text = handle.read(LOG_TAIL_BYTES).decode("utf-8", "replace").strip().splitlines()
    except (InputError, OSError):
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
                    self.state.finish(
                        run_id,
                        "failed",
                        error=SHUTDOWN_ERROR,
                    )
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
        command = [
            self.config.python,
            "-m",
            "worldagent.specialists.worker",
            "--db-url",
            str(self.config.db_url),
            "--runs-dir",
            str(self.config.runs),
            "--adapters-dir",
            str(self.config.adapters),
            "--cache-dir",
            str(self.config.root / "base-cache"),
        ]
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
        env = {
            **os.environ,
            **self.config.extra_env,
            "PYTHONPATH": os.pathsep.join(
                [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
            ).rstrip(os.pathsep),
        }
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
        return (
            self.spare is not None
            and self.spare.poll() is None
            and self.spare_ready is not None
            and self.spare_ready.exists()
        )


def prepare_run(config: TrainerConfig, run_id: str, dataset_ref: str) -> int:
    """Validate ``datasetRef`` and write the run's conversations; returns the row count.

    Raises ``ValueError`` naming the field for a bad runId, a path outside the data directories,
    or a dataset with nothing to train on.
    """
    if not RUN_ID.match(run_id):
        raise ValueError(
            f"runId: {run_id!r} must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or digit)"
        )
    if not dataset_ref.strip() or "\x00" in dataset_ref:
        raise ValueError("datasetRef: must be a path to a dataset file")
    path = Path(dataset_ref).expanduser()
    try:
        inside = config.allowed(path)
    except (OSError, RuntimeError, ValueError) as error:
        raise ValueError(f"datasetRef: cannot resolve {dataset_ref!r}: {error}") from None
    if not inside:
        raise ValueError(
            f"datasetRef: {dataset_ref} is outside the allowed data directories"
            f" ({', '.join(map(str, config.data_dirs))})"
        )
    try:
        conversations = read_dataset_file(path)
    except TrainingDataError as error:
        raise ValueError(str(error)) from None
    atomic_write_text(config.runs / run_id / TRAIN_FILE, jsonl(conversations))
    return len(conversations)
