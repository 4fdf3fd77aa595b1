"""generate stage: stories.jsonl + the stories folder → SFT trajectories, DPO pairs and a manifest.

`python -m worldagent.pipeline run generate` is the command dvc.yaml runs, with paths from the stage table.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from worldagent.config import Params
from worldagent.storytest.runner import make_runner
from worldagent.tools.registry import tool_schemas
from worldagent.world_agent.generate import (
    EVAL_PREFERENCES,
    EVAL_TRAJECTORIES,
    TRAIN_PREFERENCES,
    TRAIN_TRAJECTORIES,
    generate_datasets,
    read_stories,
    write_dataset,
)

log = logging.getLogger("generate")


def run(
    params: Params,
    *,
    stories: Path,
    stories_dir: Path,
    trajectories: Path,
    eval_trajectories: Path,
    preferences: Path,
    eval_preferences: Path,
    manifest: Path,
) -> None:
    dataset = generate_datasets(
        read_stories(stories),
        stories_root=stories_dir,
        params=params.generate,
        weights=params.reward,
        runner=make_runner(params.storytest),
        seed=params.seed,
        tool_schemas=tool_schemas(),
        progress=sys.stderr.isatty(),
    )
    files = {
        TRAIN_TRAJECTORIES: trajectories,
        EVAL_TRAJECTORIES: eval_trajectories,
        TRAIN_PREFERENCES: preferences,
        EVAL_PREFERENCES: eval_preferences,
    }
    write_dataset(dataset, files, manifest)
    summary = dataset.manifest
    log.info("wrote %s", ", ".join(f"{name}: {rows} rows" for name, rows in summary["rows"].items()))
    if summary["pairs_dropped_by_verification"]:
        log.info("pairs dropped by verification: %s", summary["pairs_dropped_by_verification"])
    for failure in summary["reference_failures"]:
        log.warning("reference failure: %s", failure)
