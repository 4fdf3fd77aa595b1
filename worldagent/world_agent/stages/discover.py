"""discover stage: data/stories/**/*.stories.tsx → data/generated/world_agent/stories.jsonl.

`python -m worldagent.pipeline run discover` is the command dvc.yaml runs (paths from the stage table).
"""

from __future__ import annotations

import logging
from pathlib import Path

from worldagent.config import Params
from worldagent.io import atomic_write_text, pretty_json
from worldagent.stories.discover import discover_stories, discovery_to_jsonl

log = logging.getLogger("discover")


def run(params: Params, *, stories_dir: Path, stories: Path, report: Path) -> None:
    discovery = discover_stories(
        [stories_dir], root=stories_dir, strict=params.discover.strict, max_bytes=params.discover.max_file_bytes
    )
    for problem in discovery.problems:
        log.warning("%s", problem)
    atomic_write_text(stories, discovery_to_jsonl(discovery.stories))
    summary = {
        "stories": len(discovery.stories),
        "components": len({story.component for story in discovery.stories}),
        "problems": len(discovery.problems),
        "problem_list": [str(problem) for problem in discovery.problems],
    }
    atomic_write_text(report, pretty_json(summary))
    log.info(
        "discovered %d stories in %d components (%d problems)",
        summary["stories"],
        summary["components"],
        summary["problems"],
    )
