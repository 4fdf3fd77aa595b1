"""End to end: `dvc repro generate` (the data path) on a copy of the project reproduces every output byte for byte."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.harness import copy_project, dvc, run

pytestmark = pytest.mark.slow

COMPONENTS = ("button", "checkbox", "tabs", "alert")
OUTPUTS = (
    "data/generated/world_agent/stories.jsonl",
    "data/generated/world_agent/trajectories.jsonl",
    "data/generated/world_agent/trajectories.eval.jsonl",
    "data/generated/world_agent/dpo-preferences.jsonl",
    "data/generated/world_agent/dpo-preferences.eval.jsonl",
    "data/generated/world_agent/manifest.json",
    "reports/world_agent/discover.json",
)


def snapshot(root: Path) -> dict[str, bytes]:
    return {name: (root / name).read_bytes() for name in OUTPUTS}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("project"), {}, COMPONENTS)


def test_repro_then_nothing_to_do_then_identical_bytes_after_deleting_outputs(project: Path) -> None:
    first_run = dvc(project, "repro", "generate")
    assert "Running stage 'discover'" in first_run and "Running stage 'generate'" in first_run
    lock = (project / "dvc.lock").read_text()
    outputs = snapshot(project)

    second_run = dvc(project, "repro", "generate")
    assert "Running stage" not in second_run
    assert "up to date" in dvc(project, "status", "--with-deps", "generate")

    shutil.rmtree(project / "data" / "generated")
    (project / "reports" / "world_agent" / "discover.json").unlink()
    dvc(project, "repro", "generate")
    assert snapshot(project) == outputs
    assert (project / "dvc.lock").read_text() == lock
    assert "up to date" in dvc(project, "status", "--with-deps", "generate")


def test_changing_one_story_reruns_what_depends_on_it(project: Path) -> None:
    dvc(project, "repro", "generate")
    before = snapshot(project)
    story = project / "data" / "stories" / "alert" / "alert.stories.tsx"
    story.write_text(story.read_text().replace("intent: '", "intent: 'Please: ", 1))
    status = dvc(project, "status", "--with-deps", "generate")
    assert "discover" in status and "generate" in status
    dvc(project, "repro", "generate")
    after = snapshot(project)
    assert after["data/generated/world_agent/stories.jsonl"] != before["data/generated/world_agent/stories.jsonl"]
    assert b"Please: " in after["data/generated/world_agent/stories.jsonl"]
    assert "up to date" in dvc(project, "status", "--with-deps", "generate")


def test_strict_discovery_fails_the_stage_and_the_last_good_outputs_can_be_checked_out(project: Path) -> None:
    dvc(project, "repro", "generate")
    before = snapshot(project)
    broken = project / "data" / "stories" / "tabs" / "tabs.stories.tsx"
    original = broken.read_text()
    try:
        broken.write_text(original + "\nexport const broken = story({ intent: 'x', template: () => <div>\n")
        params = project / "params.yaml"
        params.write_text(params.read_text().replace("strict: false", "strict: true"))
        failed = run(project, str(Path(sys.executable).parent / "dvc"), "repro", "generate", check=False)
        assert failed.returncode != 0
        assert "tabs/tabs.stories.tsx:" in failed.stderr + failed.stdout
        # DVC clears a stage's outs before running it; the last good ones stay in its cache.
        dvc(project, "checkout", "generate", "--with-deps")
        cached = [name for name in OUTPUTS if name.endswith(".jsonl")]
        assert {name: (project / name).read_bytes() for name in cached} == {name: before[name] for name in cached}
    finally:
        broken.write_text(original)
        params = project / "params.yaml"
        params.write_text(params.read_text().replace("strict: true", "strict: false"))
