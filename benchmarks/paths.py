"""Where `make pipeline` leaves the world-agent files the benchmarks read (dvc.yaml's paths)."""

from __future__ import annotations

from pathlib import Path

TRAJECTORIES = Path("data/generated/world_agent/trajectories.jsonl")
EVAL_TRAJECTORIES = Path("data/generated/world_agent/trajectories.eval.jsonl")
STORIES = Path("data/generated/world_agent/stories.jsonl")
STORIES_DIR = Path("data/stories")
MODELS = Path("models/world_agent")
EVAL_DIR = Path("reports/world_agent/eval")
