"""The local trainer service, in three parts: the run table (:mod:`.runs`), the supervisor of worker
processes (:mod:`.supervisor`) and the web app (:mod:`.app`): ``POST /train``, ``GET /status/{runId}``, ``GET /health``.

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

from worldagent.specialists.trainer.app import RunStatus, TrainAccepted, TrainRequest, create_trainer_app
from worldagent.specialists.trainer.runs import LOG_FILE, RUN_ID, TRAIN_FILE, RunState, TrainerRunRow, status_dict
from worldagent.specialists.trainer.supervisor import Supervisor, TrainerConfig, prepare_run

__all__ = [
    "LOG_FILE",
    "RUN_ID",
    "TRAIN_FILE",
    "RunState",
    "RunStatus",
    "Supervisor",
    "TrainAccepted",
    "TrainRequest",
    "TrainerConfig",
    "TrainerRunRow",
    "create_trainer_app",
    "prepare_run",
    "status_dict",
]
