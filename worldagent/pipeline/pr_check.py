"""The pull-request check of a change to the stories: no training, a verdict within half an hour.

    python -m worldagent.pipeline.pr_check --base origin/main      # `make pr-check BASE=origin/main`

1. The story files changed since ``--base`` (added, modified or renamed ``*.stories.tsx`` under
   ``discover.stories_dir``) each render and pass their own assertions and the accessibility rules
   (``worldagent story-test FILE``: exit status 1 when one does not).
2. DVC brings the data stages and the two evaluations up to date (``dvc repro evaluate_nearest
   evaluate_champion``: discover and generate when the stories changed them), after pinning the
   registry's current champion (``registry.url``; none yet: an empty row). The base stays the one
   the champion was trained on: ``base`` is frozen for the repro where its outputs are here (its
   marker rows are fitted on training conversations, which a new story changes; a refitted base
   under the champion's adapter is not the champion).
3. The champion and the nearest-story baseline answer the intents of the stories that are new or
   declare something else since ``--base`` (each story's original intent; the baseline copies from
   the training stories without those, so it cannot copy the story it is scored on), by the same
   stage commands with other paths.
4. ``summary.md`` in ``--out``: the story tests, a table of both models on the held-out set and on
   the changed stories, and ``dvc metrics diff`` against ``--base``: what the workflow writes to
   the job summary.

Nothing is trained and nothing is pushed; dvc.lock records the evaluations DVC ran (a pull-request
runner's copy). DESIGN.md §8, "Runs fit their runners".
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldagent.config import Params, load_params
from worldagent.errors import InputError, RunError, clean_errors
from worldagent.guard import files
from worldagent.io import atomic_write_bytes, atomic_write_text, jsonl, read_json, read_jsonl
from worldagent.pipeline.table import Pipeline, Stage
from worldagent.pipeline.world_agent import PIPELINE

STORY_SUFFIX = ".stories.tsx"
MODELS = ("champion", "nearest")  # evaluated on the held-out set and on the changed stories
PINNED = ("base",)  # what the champion was trained on: not rebuilt by a pull request (module docstring, 2.)
DEFAULT_OUT = Path("logs/pr-check")
_PARAM = re.compile(r"\$\{([a-z_]+)\.([a-z_]+)\}")


@dataclass(frozen=True)
class StoryTest:
    story: Path
    passed: bool
    output: str


def _run(command: Sequence[str], root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), cwd=root, capture_output=True, text=True, check=False)


def changed_stories(base: str, stories_dir: Path, root: Path) -> list[Path]:
    """The story files under ``stories_dir`` that differ from ``base`` (committed or not) and still
    exist: added, modified or renamed; relative to ``root``."""
    done = _run(["git", "diff", "--name-only", "--diff-filter=AMR", base, "--", str(stories_dir)], root)
    if done.returncode != 0:
        raise InputError(f"git diff {base}: {done.stderr.strip() or 'failed'} (is {base!r} a commit here?)")
    untracked = _run(["git", "ls-files", "--others", "--exclude-standard", "--", str(stories_dir)], root)
    names = {*done.stdout.split(), *untracked.stdout.split()}
    return sorted(Path(name) for name in names if name.endswith(STORY_SUFFIX) and (root / name).is_file())


# What says whether a story changed: all it declares, not where it sits or its file's hash (which moves
# with every other story of the file).
_POSITION = {"content_hash", "line", "col"}


def _declared(paths: Sequence[Path], stories_root: Path) -> dict[str, dict[str, Any]]:
    from worldagent.stories.discover import discover_stories

    if not paths:
        return {}
    found = discover_stories(list(paths), root=stories_root).stories
    return {story.id: {k: v for k, v in story.model_dump(mode="json").items() if k not in _POSITION} for story in found}


def changed_story_ids(base: str, files: Sequence[Path], stories_dir: Path, root: Path) -> list[str]:
    """The ids (``<file>#<export>``) of the stories in ``files`` that are new since ``base`` or declare
    something else (intent, arguments, template...): the ones the models are scored on."""
    import tempfile

    now = _declared([root / f for f in files], root / stories_dir)
    with tempfile.TemporaryDirectory() as scratch:
        # The stories folder as it is, with each file as it was at base: the story's imports and styles
        # resolve as they do now, so only what the story itself declares can differ.
        old_root = Path(scratch) / "stories"
        shutil.copytree(root / stories_dir, old_root)
        old_files = []
        for f in files:
            copy = old_root / f.relative_to(stories_dir)
            shown = _run(["git", "show", f"{base}:{f.as_posix()}"], root)
            if shown.returncode == 0:
                copy.write_text(shown.stdout, encoding="utf-8")
                old_files.append(copy)
            else:  # absent at base: every story in it is new
                copy.unlink()
        before = _declared(old_files, old_root)
    return sorted(story_id for story_id, declared in now.items() if before.get(story_id) != declared)


def story_test(story: Path, stories_dir: Path, root: Path) -> StoryTest:
    """``worldagent story-test STORY --root STORIES_DIR``: every export renders and passes its own checks."""
    done = _run([sys.executable, "-m", "worldagent.cli", "story-test", str(story), "--root", str(stories_dir)], root)
    return StoryTest(story, done.returncode == 0, (done.stdout + done.stderr).strip())


def pin_champion(registry_url: str, family: str, pipeline: Pipeline, root: Path) -> dict[str, Any]:
    """Pin the registry's (``registry.url``) current champion of ``family`` in the pipeline's champion
    reference (as the flows do)."""
    from worldagent.registry.champion import read_champion_reference, refresh_champion_reference
    from worldagent.registry.db import database_url

    refresh_champion_reference(database_url(registry_url, root), family, root / pipeline.champion)
    return read_champion_reference(root / pipeline.champion)


def dvc_repro(stages: Sequence[str], root: Path) -> None:
    """``dvc repro STAGES`` (and whatever they need that is out of date)."""
    done = subprocess.run([sys.executable, "-m", "dvc", "repro", *stages], cwd=root, check=False)
    if done.returncode != 0:
        raise RunError(f"dvc repro {' '.join(stages)} failed (exit {done.returncode}): the log above says why")


@contextlib.contextmanager
def frozen(stages: Sequence[str], root: Path) -> Iterator[None]:
    """``dvc freeze STAGES`` for the duration (``dvc repro`` neither reruns them nor checks their
    dependencies; the stages after them read their outputs as they are); dvc.yaml is restored to its
    bytes afterwards, whatever happened, since DVC rewrites the file when it freezes."""
    dvc_yaml = root / "dvc.yaml"
    before = files.read_bytes(dvc_yaml, root=root, what="the pipeline's dvc.yaml")
    try:
        for name in stages:
            done = _run([sys.executable, "-m", "dvc", "freeze", name], root)
            if done.returncode != 0:
                raise RunError(f"dvc freeze {name} failed: {done.stderr.strip() or done.stdout.strip()}")
        yield
    finally:
        atomic_write_bytes(dvc_yaml, before)


def pinnable(params: Params, root: Path) -> list[str]:
    """The stages of :data:`PINNED` whose outputs are all here (a cold cache builds them instead)."""
    return [
        name for name in PINNED if all((root / _resolve(out, params)).exists() for out in stage(name).outputs.values())
    ]


def _resolve(path: str, params: Params) -> str:
    """A stage path with its ``${section.key}`` read from params.yaml (any key a path names, as DVC
    interpolates it: so this and the functions that pass it a stage's paths take the whole params)."""
    return _PARAM.sub(lambda m: str(getattr(getattr(params, m[1]), m[2])), path)


def stage(name: str, pipeline: Pipeline = PIPELINE) -> Stage:
    found = [step for step in pipeline.steps if isinstance(step, Stage) and step.name == name]
    if not found:
        raise InputError(f"{pipeline.family} has no stage {name!r}")
    return found[0]


def stage_command(step: Stage, params: Params, overrides: dict[str, Path]) -> list[str]:
    """The stage's own command (``python -m worldagent.pipeline run <stage> --<option> <value> ...``, as
    dvc.yaml runs it) with some paths replaced."""
    from worldagent.pipeline.entry import option

    command = [sys.executable, "-m", "worldagent.pipeline", "run", step.name]
    for argument, value in {**step.options, **step.arguments}.items():
        resolved = str(overrides[argument]) if argument in overrides else _resolve(value, params)
        command += [option(argument), resolved]
    return command


def story_of(row_id: str) -> str:
    """The story id of a row id (a relabelled copy ``<file>#<export>~relabel-N`` is its story's)."""
    return row_id.split("~", 1)[0]


def new_story_rows(step: Stage, params: Params, root: Path, stories: Sequence[str]) -> tuple[list[dict], list[dict]]:
    """(the changed stories' original intents from both splits, the training rows of every other story)."""
    wanted = set(stories)
    held_out = read_jsonl(root / _resolve(step.inputs["eval_trajectories"], params), "held-out trajectories")
    training = read_jsonl(root / _resolve(step.inputs["trajectories"], params), "training trajectories")
    own = [row for row in [*held_out, *training] if row["id"] in wanted and row.get("turns", "single") == "single"]
    others = [row for row in training if story_of(row["id"]) not in wanted]
    return own, others


def evaluate_new_stories(params: Params, root: Path, stories: Sequence[str], out: Path) -> dict[str, Path]:
    """Each of :data:`MODELS` on the intents of ``stories`` (ids): ``out/<model>.new.json`` by model."""
    nearest = stage("evaluate_nearest")
    own, others = new_story_rows(nearest, params, root, stories)
    if not own:
        return {}
    rows, training = out / "new-stories.jsonl", out / "training-without-new.jsonl"
    atomic_write_text(rows, jsonl(own))
    atomic_write_text(training, jsonl(others))
    written = {}
    for model in MODELS:
        step = stage(f"evaluate_{model}")
        overrides = {"eval_trajectories": rows.resolve(), "out": (out / f"{model}.new.json").resolve()}
        if "trajectories" in step.inputs:
            overrides["trajectories"] = training.resolve()
        if "speed" in step.arguments:
            overrides["speed"] = (out / f"{model}.new.speed.json").resolve()
        done = subprocess.run(stage_command(step, params, overrides), cwd=root, check=False)
        if done.returncode != 0:
            raise RunError(f"evaluate_{model} on the changed stories failed (exit {done.returncode})")
        written[model] = out / f"{model}.new.json"
    return written


def _metrics_row(label: str, path: Path) -> list[str]:
    """One table line per row of a model's evaluation file (none: the file's note)."""
    if not path.is_file():
        return [f"| {label} | not evaluated | | | |"]
    evaluation = read_json(path, "a model's evaluation", expect=dict)
    if not evaluation.get("rows"):
        note = "; ".join(evaluation.get("notes", [])) or "no rows"
        return [f"| {label} | {note} | | | |"]
    lines = []
    for row in evaluation["rows"]:
        m = row["metrics"]
        passed = round(m["story_pass_rate"] * m["n"])
        lines.append(
            f"| {label}: {row['name']} | {passed}/{m['n']} | {m['story_pass_rate']:.3f} | "
            f"{m['mean_reward']:.3f} | {m['a11y_pass_rate']:.3f} |"
        )
    return lines


def summary(tests: Sequence[StoryTest], root: Path, out: Path, base: str, seconds: float) -> str:
    """The markdown the workflow writes to the job summary."""
    lines = [f"## Pull-request check against `{base}` ({seconds / 60:.1f} min, no training)", ""]
    if tests:
        lines += ["### Changed stories (each renders and passes its own assertions)", ""]
        for test in tests:
            lines.append(f"- {'PASS' if test.passed else 'FAIL'} `{test.story}`")
            if not test.passed:
                lines += ["", "```", test.output[-3000:], "```", ""]
    else:
        lines.append("No story file changed.")
    lines += ["", "### The champion and the nearest-story baseline", ""]
    lines += ["| model | stories passed | story pass rate | mean reward | a11y |", "|---|---:|---:|---:|---:|"]
    eval_dir = root / Path(stage("evaluate_champion").arguments["out"]).parent
    for model in MODELS:
        lines += _metrics_row(f"held out, {model}", eval_dir / f"{model}.json")
    for model in MODELS:
        lines += _metrics_row(f"changed stories, {model}", out / f"{model}.new.json")
    diff = subprocess.run(
        [sys.executable, "-m", "dvc", "metrics", "diff", "--md", base], cwd=root, capture_output=True, text=True
    )
    lines += ["", f"### `dvc metrics diff {base}`", "", diff.stdout.strip() or diff.stderr.strip() or "no change"]
    return "\n".join(lines) + "\n"


def _took(what: str, since: float) -> float:
    """Print how long ``what`` took (the check's own timing, for its budget); the time now."""
    now = time.monotonic()
    print(f"pr-check: {what} took {now - since:.1f} s", flush=True)
    return now


def run(base: str, root: Path, out: Path, params_path: Path) -> tuple[bool, str]:
    """The whole check; (every changed story passed, the summary's markdown)."""
    started = time.monotonic()
    params = load_params(params_path)
    stories_dir = Path(params.discover.stories_dir)
    changed = changed_stories(base, stories_dir, root)
    print(f"pr-check: {len(changed)} changed story file(s) since {base}", flush=True)
    tests = [story_test(story, stories_dir, root) for story in changed]
    for test in tests:
        print(f"{'PASS' if test.passed else 'FAIL'} {test.story}\n{test.output}", flush=True)
    mark = _took("the story tests", started)
    family = _resolve("${" + PIPELINE.registry_family + "}", params)
    champion = pin_champion(params.registry.url, family, PIPELINE, root)
    print(f"pr-check: champion {champion.get('version') or 'none yet'}", flush=True)
    pinned = pinnable(params, root)
    print(
        f"pr-check: kept as the champion was trained on: {', '.join(pinned) or 'nothing (not built yet)'}", flush=True
    )
    with frozen(pinned, root):
        dvc_repro([f"evaluate_{model}" for model in MODELS], root)
    mark = _took("dvc repro (data stages, held-out evaluations)", mark)
    out.mkdir(parents=True, exist_ok=True)
    stories = changed_story_ids(base, [s for s in changed if s.is_relative_to(stories_dir)], stories_dir, root)
    print(f"pr-check: {len(stories)} new or changed stories to score: {', '.join(stories) or 'none'}", flush=True)
    evaluate_new_stories(params, root, stories, out)
    _took("the changed stories' evaluations", mark)
    text = summary(tests, root, out, base, time.monotonic() - started)
    atomic_write_text(out / "summary.md", text)
    return all(test.passed for test in tests), text


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="origin/main", help="the commit the pull request is compared with")
    parser.add_argument("--root", default=".", help="project root (default: .)")
    parser.add_argument("--params", default="params.yaml", help="parameters file, relative to --root")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"where summary.md goes (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    passed, text = run(args.base, root, root / args.out, root / args.params)
    print(text)
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
