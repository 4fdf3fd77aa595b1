"""The data path on Plaited-API stories: with `discover.stories_dir` pointed at the fixture
corpus, the discover and generate stages (what `dvc repro generate` runs) produce trajectories
and preference pairs, and no story fails to render. Runs in a temporary project root."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from worldagent.config import parse_params

PROJECT = Path(__file__).resolve().parents[2]
FIXTURES = PROJECT / "tests" / "fixtures" / "plaited"


@pytest.mark.slow
def test_generate_from_plaited_stories(tmp_path: Path) -> None:
    from tasks import discover, generate  # the stage commands dvc.yaml runs

    shutil.copytree(FIXTURES, tmp_path / "stories" / "plaited")
    raw = yaml.safe_load((PROJECT / "params.yaml").read_text(encoding="utf-8"))
    raw["discover"]["stories_dir"] = "stories/plaited"
    raw["storytest"]["runner"] = "python"
    params = parse_params(raw)

    discover.run(params, tmp_path)
    records = [json.loads(line) for line in (tmp_path / discover.STORIES_OUT).read_text().splitlines()]
    assert len(records) >= 40
    element_story = next(r for r in records if r["export"] == "labelledSwitch")
    assert "elements/toggle-switch.tsx" in element_story["style_files"]  # the element module travels with it

    generate.run(params, tmp_path)
    out = tmp_path / generate.OUT_DIR
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["rows"]["trajectories.jsonl"] > 0 and manifest["rows"]["dpo-preferences.jsonl"] > 0
    assert not [f for f in manifest["reference_failures"] if "render:" in f]
    trajectories = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    trajectories += [json.loads(line) for line in (out / "trajectories.eval.jsonl").read_text().splitlines()]
    switch = [t for t in trajectories if t["id"].endswith("#labelledSwitch") and t["turns"] == "single"]
    assert switch, "the element's first story is a trajectory"
    calls = switch[0]["messages"][-1]["content"]
    # The agent is taught to write the element module (bElement) and then the story.
    assert "writeTemplate" in calls and "toggle-switch.tsx" in calls and "bElement" in calls
    assert calls.index("toggle-switch.tsx") < calls.index("labelled-switch.stories.tsx")
