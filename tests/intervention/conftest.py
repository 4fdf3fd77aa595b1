"""A small configuration of the intervention pipeline, run once per session in a temp project."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from worldagent.config import Params, parse_params
from worldagent.pipeline.entry import resolve, scoped_params
from worldagent.pipeline.intervention import PIPELINE
from worldagent.pipeline.table import stage_paths
from worldagent.registry.champion import refresh_champion_reference
from worldagent.registry.db import database_url

PROJECT = Path(__file__).resolve().parents[2]
SMALL: dict[str, Any] = {
    "simulate": {"episodes": 40, "image_width": 64, "image_height": 40, "max_steps": 10},
    "export": {"validation_fraction": 0.2, "test_fraction": 0.25, "history": 4},
    "clip": {"batch_size": 32},
    "encoder": {
        "dim": 32,
        "visual_dim": 32,
        "action_dim": 16,
        "action_layers": 1,
        "action_heads": 2,
        "page_hidden": 16,
        "url_buckets": 8,
    },
    "train": {"epochs_contrastive": 2, "epochs_predictor": 2, "batch_size": 64, "threads": 1},
    "compare": {"bootstrap_samples": 50},
}


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def small_raw() -> dict[str, Any]:
    raw = yaml.safe_load((PROJECT / "params.yaml").read_text(encoding="utf-8"))
    raw["intervention"] = merge(raw["intervention"], SMALL)
    return raw


@pytest.fixture(scope="session")
def small_params() -> Params:
    return parse_params(small_raw())


def run_stage(name: str, params: Params, root: Path) -> Any:
    """The intervention stage ``name`` on the paths its table gives, under ``root``."""
    stage = PIPELINE.stage(f"intervention_{name}")
    run = resolve(stage.entry)
    options = {"root": root} if "root" in inspect.signature(run).parameters else {}
    # as the stage entry hands it: only the params sections the table entry declares
    return run(scoped_params(params, stage.params, stage.name), **stage_paths(stage, root, params), **options)


def pin_champion(params: Params, root: Path) -> None:
    """What the flow's first step does: pin the registry's champion in the champion reference."""
    url = database_url(params.registry.url, root)
    refresh_champion_reference(url, params.intervention.family, root / PIPELINE.champion)


@pytest.fixture(scope="session")
def pipeline_root(tmp_path_factory: pytest.TempPathFactory, small_params: Params) -> Path:
    """simulate → export → embed → train_encoder → train_predictor → evaluate on the small config."""
    logging.getLogger("worldagent").setLevel(logging.WARNING)
    root = tmp_path_factory.mktemp("intervention")
    for name in ("simulate", "export", "embed", "train_encoder", "train_predictor", "evaluate"):
        run_stage(name, small_params, root)
    return root
