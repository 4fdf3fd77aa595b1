"""Suite-wide fixtures.

Several tests read the generated world-agent datasets. On a fresh clone those DVC outputs do not
exist yet, so they are materialised once per session with the same library code the discover and
generate stages run (byte-deterministic, so the bytes match dvc.lock).
"""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
GENERATED = PROJECT / "data" / "generated" / "world_agent"
DATASETS = ("stories.jsonl", "trajectories.jsonl", "trajectories.eval.jsonl", "dpo-preferences.jsonl", "dpo-preferences.eval.jsonl")


@pytest.fixture(scope="session", autouse=True)
def generated_datasets() -> Path:
    if not all((GENERATED / name).exists() for name in DATASETS):
        from tasks import discover, generate
        from worldagent.config import load_params

        params = load_params(PROJECT / "params.yaml")
        discover.run(params, PROJECT)
        generate.run(params, PROJECT)
    return GENERATED
