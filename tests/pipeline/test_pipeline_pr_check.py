"""The pull-request check's parts: which stories changed, that each must pass its own story test,
which rows the changed stories' evaluation takes, the stage commands it reuses, and its summary."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from worldagent.config import Params
from worldagent.pipeline import pr_check

ROOT = Path(__file__).resolve().parents[2]
STORY = Path("data/stories/badge/badge.stories.tsx")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _repo(tmp_path: Path) -> Path:
    """A git repository holding the badge component's files, committed."""
    shutil.copytree(ROOT / STORY.parent, tmp_path / STORY.parent)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "stories")
    return tmp_path


def test_changed_stories_are_the_added_modified_and_untracked_story_files_still_there(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert pr_check.changed_stories("HEAD", Path("data/stories"), root) == []
    (root / STORY).write_text((root / STORY).read_text() + "\n// edited\n")
    added = STORY.parent / "new.stories.tsx"
    (root / added).write_text("export const x = 1\n")
    (root / STORY.parent / "notes.md").write_text("not a story")
    assert pr_check.changed_stories("HEAD", Path("data/stories"), root) == sorted([STORY, added])
    (root / added).unlink()
    assert pr_check.changed_stories("HEAD", Path("data/stories"), root) == [STORY]


def test_only_new_stories_and_stories_that_declare_something_else_are_scored(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    text = (root / STORY).read_text()
    (root / STORY).write_text(text + "\n// a comment moves no story\n")
    assert pr_check.changed_story_ids("HEAD", [STORY], Path("data/stories"), root) == []
    (root / STORY).write_text(text.replace("intent: '", "intent: 'Now: ", 1))
    [edited] = pr_check.changed_story_ids("HEAD", [STORY], Path("data/stories"), root)
    assert edited.startswith("badge/badge.stories.tsx#")
    copy = STORY.parent / "more.stories.tsx"
    (root / copy).write_text(text)  # a new file: every story in it is new
    ids = pr_check.changed_story_ids("HEAD", [copy], Path("data/stories"), root)
    assert ids and all(i.startswith("badge/more.stories.tsx#") for i in ids)


def test_each_changed_story_must_render_and_pass_its_own_assertions(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    good = pr_check.story_test(STORY, Path("data/stories"), root)
    assert good.passed and "passed, 0 failed, 0 errors" in good.output
    broken = STORY.parent / "broken.stories.tsx"
    (root / broken).write_text((root / STORY).read_text().replace("</", "<", 1))  # a tag that never closes
    bad = pr_check.story_test(broken, Path("data/stories"), root)
    assert not bad.passed


def test_the_changed_stories_are_scored_on_their_original_intents_and_the_baseline_never_copies_them(
    tmp_path: Path,
) -> None:
    rows = {
        "held": [{"id": "badge/badge.stories.tsx#a", "turns": "single"}, {"id": "alert/alert.stories.tsx#b"}],
        "train": [
            {"id": "badge/badge.stories.tsx#c", "turns": "single"},
            {"id": "badge/badge.stories.tsx#c~relabel-1", "turns": "single"},
            {"id": "badge/badge.stories.tsx#d", "turns": "multi"},
            {"id": "alert/alert.stories.tsx#e", "turns": "single"},
        ],
    }
    for name, items in rows.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    step = pr_check.stage("evaluate_nearest")
    step = type(step)(
        name=step.name,
        entry=step.entry,
        description="",
        inputs={"eval_trajectories": "held.jsonl", "trajectories": "train.jsonl"},
    )
    changed = ["badge/badge.stories.tsx#a", "badge/badge.stories.tsx#c"]
    own, others = pr_check.new_story_rows(step, Params(), tmp_path, changed)
    assert [r["id"] for r in own] == changed  # the originals only: no relabelled copy, no multi-turn row
    assert [r["id"] for r in others] == ["badge/badge.stories.tsx#d", "alert/alert.stories.tsx#e"]


def test_the_evaluations_reuse_the_stage_commands_with_other_paths() -> None:
    step = pr_check.stage("evaluate_champion")
    command = pr_check.stage_command(step, Params(), {"eval_trajectories": Path("/x/new.jsonl")})
    assert command[:5] == [sys.executable, "-m", "worldagent.pipeline", "run", "evaluate_champion"]
    pairs = dict(zip(command[5::2], command[6::2], strict=True))
    assert pairs["--name"] == "champion"  # the stage's options too
    assert pairs["--eval-trajectories"] == "/x/new.jsonl"
    assert pairs["--stories-dir"] == Params().discover.stories_dir  # ${discover.stories_dir} read from params
    assert pairs["--champion"] == "models/world_agent/champion.json"


def test_the_summary_has_the_story_tests_both_models_on_both_sets_and_the_metrics_diff(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    eval_dir = root / "reports/world_agent/eval"
    eval_dir.mkdir(parents=True)
    metrics = {"story_pass_rate": 0.25, "mean_reward": 0.5, "a11y_pass_rate": 1.0, "n": 4}
    (eval_dir / "nearest.json").write_text(json.dumps({"rows": [{"name": "nearest", "metrics": metrics}]}))
    (eval_dir / "champion.json").write_text(json.dumps({"rows": [], "notes": ["no champion yet"]}))
    out = root / "logs/pr-check"
    out.mkdir(parents=True)
    tests = [pr_check.StoryTest(STORY, True, ""), pr_check.StoryTest(Path("x.stories.tsx"), False, "render: boom")]
    text = pr_check.summary(tests, root, out, "HEAD", 90.0)
    assert "- PASS `data/stories/badge/badge.stories.tsx`" in text and "- FAIL `x.stories.tsx`" in text
    assert "render: boom" in text
    assert "| held out, nearest: nearest | 1/4 | 0.250 | 0.500 | 1.000 |" in text
    assert "| held out, champion | no champion yet |" in text
    assert "| changed stories, nearest | not evaluated |" in text
    assert "### `dvc metrics diff HEAD`" in text and "(1.5 min, no training)" in text


DVC_YAML = """\
stages:
  base:
    cmd: python -c "import pathlib; p = pathlib.Path('base.txt'); p.write_text(pathlib.Path('stories.txt').read_text() + '!')"
    deps: [stories.txt]
    outs: [base.txt]
  evaluate_champion:
    cmd: python -c "import pathlib; pathlib.Path('eval.txt').write_text(pathlib.Path('base.txt').read_text() + '?')"
    deps: [base.txt]
    outs: [eval.txt]
"""


def _dvc(root: Path, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "dvc", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def test_the_base_the_champion_was_trained_on_is_not_rebuilt_when_the_stories_change(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _dvc(tmp_path, "init", "-q")
    (tmp_path / "dvc.yaml").write_text(DVC_YAML, encoding="utf-8")
    (tmp_path / "stories.txt").write_text("v1", encoding="utf-8")
    pr_check.dvc_repro(["evaluate_champion"], tmp_path)
    assert (tmp_path / "eval.txt").read_text(encoding="utf-8") == "v1!?"
    (tmp_path / "stories.txt").write_text("v2", encoding="utf-8")  # the pull request's new story
    before = (tmp_path / "dvc.yaml").read_bytes()
    with pr_check.frozen(["base"], tmp_path):
        pr_check.dvc_repro(["evaluate_champion"], tmp_path)
    assert (tmp_path / "base.txt").read_text(encoding="utf-8") == "v1!"  # kept, not refitted
    assert (tmp_path / "eval.txt").read_text(encoding="utf-8") == "v1!?"
    assert (tmp_path / "dvc.yaml").read_bytes() == before  # unfrozen to the byte
    assert "base" in _dvc(tmp_path, "status")  # and DVC sees the stale base again


def test_freezing_restores_dvc_yaml_when_the_repro_fails(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _dvc(tmp_path, "init", "-q")
    (tmp_path / "dvc.yaml").write_text(DVC_YAML, encoding="utf-8")
    before = (tmp_path / "dvc.yaml").read_bytes()
    try:
        with pr_check.frozen(["base"], tmp_path):
            assert b"frozen: true" in (tmp_path / "dvc.yaml").read_bytes()
            raise RuntimeError("the repro failed")
    except RuntimeError:
        pass
    assert (tmp_path / "dvc.yaml").read_bytes() == before


def test_only_a_base_that_is_here_is_pinned(tmp_path: Path) -> None:
    params = Params()
    assert pr_check.pinnable(params, tmp_path) == []
    for out in pr_check.stage("base").outputs.values():
        (tmp_path / pr_check._resolve(out, params)).mkdir(parents=True)
    assert pr_check.pinnable(params, tmp_path) == ["base"]
