"""discover stage: data/stories/**/*.stories.tsx → data/generated/world_agent/stories.jsonl.

`python -m tasks.discover` is the command in dvc.yaml; `discover_task` is the Prefect task that
runs the same stage through DVC.
"""

from __future__ import annotations

import logging
from pathlib import Path

from prefect import task

from tasks._stage import dvc_repro, stage_main
from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.stories.discover import discover_stories, discovery_to_jsonl

STORIES_OUT = Path("data/generated/world_agent/stories.jsonl")
REPORT_OUT = Path("reports/world_agent/discover.json")
log = logging.getLogger("discover")


def run(params: Params, root: Path) -> None:
    stories_dir = root / params.discover.stories_dir
    discovery = discover_stories([stories_dir], root=stories_dir, strict=params.discover.strict, max_bytes=params.discover.max_file_bytes)
    for problem in discovery.problems:
        log.warning("%s", problem)
    atomic_write_text(root / STORIES_OUT, discovery_to_jsonl(discovery.stories))
    report = {
        "stories": len(discovery.stories),
        "components": len({story.component for story in discovery.stories}),
        "problems": len(discovery.problems),
        "problem_list": [str(problem) for problem in discovery.problems],
    }
    atomic_write_text(root / REPORT_OUT, pretty_json(report))
    log.info("discovered %d stories in %d components (%d problems)", report["stories"], report["components"], report["problems"])


@task(name="discover", retries=0)
def discover_task(root: Path = Path(".")) -> list[str]:
    return dvc_repro("discover", root)


def main(argv: list[str] | None = None) -> int:
    return stage_main(__doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
