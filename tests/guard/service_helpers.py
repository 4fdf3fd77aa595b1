"""A platform service on a temporary folder (feedback store, registry), for the guard's tests and fuzzing."""

from __future__ import annotations

from pathlib import Path

from worldagent.config import Params
from worldagent.specialists.service import SpecialistsService
from worldagent.specialists.store import open_store


def platform_service(root: Path) -> SpecialistsService:
    params = Params()
    params = params.model_copy(
        update={"specialists": params.specialists.model_copy(update={"data_dir": str(root / "data")})}
    )
    return SpecialistsService(
        store=open_store(f"sqlite:///{root / 'feedback.db'}"),
        specialists=params.specialists,
        tiny=params.model.tiny,
        seed=params.seed,
        root=root,
        registry_url=f"sqlite:///{root / 'registry.db'}",
        trainer_url="http://127.0.0.1:9",
    )
