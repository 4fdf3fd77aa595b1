"""The sections no stage computes with: ``registry`` (the model registry), ``upload`` (the generated
datasets), ``deploy`` (the publisher) and ``orchestrate`` (how the Prefect flows run the tables).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from worldagent.config.base import Section


class RegistryParams(Section):
    url: str = "sqlite:///models/registry.db"  # any SQLAlchemy URL (PostgreSQL in production)
    family: str = "world-agent"


class UploadParams(Section):
    hub_repo: str | None = None  # a Hugging Face dataset repo; needs HF_TOKEN
    private: bool = True


class DeployParams(Section):
    publisher: Literal["local", "hub"] = "local"
    local_dir: str = "models/published"
    hub_repo: str | None = None  # a Hugging Face model repo; needs HF_TOKEN
    private: bool = True


class OrchestrateParams(Section):
    """How the Prefect flows run the stage tables. No stage reads this section, so changing it
    reruns nothing."""

    task_runner: Literal["sequential", "dask"] = "sequential"
    """``sequential``: one stage at a time (fastest on a small shared machine); ``dask``: independent
    stages and families at once on a Dask cluster."""
    dask_address: str | None = None
    """A running Dask scheduler (``tcp://host:8786``); None starts a local cluster for the run."""
    dask_workers: int = Field(default=2, gt=0)
    """Worker processes of the local cluster (one thread each: a stage is one process's work)."""
