"""generate stage: stories.jsonl + data/stories → SFT trajectories, DPO pairs and a manifest.

`python -m tasks.generate` is the command in dvc.yaml; `generate_task` is the Prefect task that
runs the same stage through DVC.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from tasks.discover import STORIES_OUT
from worldagent.config import Params
from worldagent.policy.generate import generate_datasets, read_stories, write_dataset
from worldagent.storytest.runner import make_runner
from worldagent.tools.registry import tool_schemas

OUT_DIR = Path("data/generated/world_agent")
log = logging.getLogger("generate")


def run(params: Params, root: Path) -> None:
    records = read_stories(root / STORIES_OUT)
    runner = make_runner(params.storytest)
    dataset = generate_datasets(
        records,
        stories_root=root / params.discover.stories_dir,
        params=params.generate,
        weights=params.reward,
        runner=runner,
        seed=params.seed,
        tool_schemas=tool_schemas(),
        progress=sys.stderr.isatty(),
    )
    write_dataset(dataset, root / OUT_DIR)
    manifest = dataset.manifest
    log.info("wrote %s", ", ".join(f"{name}: {rows} rows" for name, rows in manifest["rows"].items()))
    if manifest["pairs_dropped_by_verification"]:
        log.info("pairs dropped by verification: %s", manifest["pairs_dropped_by_verification"])
    for failure in manifest["reference_failures"]:
        log.warning("reference failure: %s", failure)


@task(name="generate", retries=0)
def generate_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("generate", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
