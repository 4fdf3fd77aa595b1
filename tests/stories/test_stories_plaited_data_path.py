"""The data path on Plaited-API stories: with `discover.stories_dir` pointed at the fixture corpus,
`dvc repro generate` produces trajectories and preference pairs, and no story fails to render."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.harness import PROJECT, copy_project, dvc
from worldagent.pipeline import world_agent as world_agent_table

FIXTURES = PROJECT / "tests" / "fixtures" / "plaited"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_dvc_repro_generate_from_plaited_stories(tmp_path: Path) -> None:
    root = copy_project(tmp_path, {"discover": {"stories_dir": "stories/plaited"}, "storytest": {"runner": "python"}})
    shutil.copytree(FIXTURES, root / "stories" / "plaited")
    output = dvc(root, "repro", "generate")
    assert "Running stage 'discover'" in output and "Running stage 'generate'" in output

    records = rows(root / world_agent_table.STORIES)
    assert len(records) >= 40
    element_story = next(r for r in records if r["export"] == "labelledSwitch")
    assert "elements/toggle-switch.tsx" in element_story["style_files"]  # the element module travels with it

    manifest = json.loads((root / world_agent_table.MANIFEST).read_text())
    assert manifest["rows"]["trajectories.jsonl"] > 0 and manifest["rows"]["dpo-preferences.jsonl"] > 0
    assert not [f for f in manifest["reference_failures"] if "render:" in f]
    trajectories = rows(root / world_agent_table.TRAJECTORIES) + rows(root / world_agent_table.EVAL_TRAJECTORIES)
    switch = [t for t in trajectories if t["id"].endswith("#labelledSwitch") and t["turns"] == "single"]
    assert switch, "the element's first story is a trajectory"
    calls = switch[0]["messages"][-1]["content"]
    # The agent is taught to write the element module (bElement) and then the story.
    assert "writeTemplate" in calls and "toggle-switch.tsx" in calls and "bElement" in calls
    assert calls.index("toggle-switch.tsx") < calls.index("labelled-switch.stories.tsx")
