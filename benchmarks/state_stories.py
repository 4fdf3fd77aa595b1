"""More state-setting training stories, measured: SFT on data/stories plus benchmarks/state_stories/.

Held-out answers miss states their intent asks for in paraphrase ("greyed out", "already ticked"),
and only 60 training stories set a state (``python -m benchmarks.state_wording``); no lever on the
prompt, the own check or the relabelled copies moved that (docs/profiles.md). What is left is data:
``benchmarks/state_stories/<component>.tsx`` holds new training stories written for this measurement,
each setting states through its template's arguments and asking for them in varied words, none
reusing a held-out story's scenario or labels.

This benchmark copies data/stories with each of those files appended to its component's story file,
refuses a new story whose intent shares more than ``--max-overlap`` of its words with a held-out
intent, runs the discover and generate stages on the copy with their own commands, trains SFT on the
new trajectories with the stage's command and params (the same steps, so the state stories take a
larger share of the rows seen), evaluates it on the new held-out prompts (the same 67 intents; the
example stories they show may now be new ones) and pairs it with an SFT evaluation without them.

    python -m benchmarks.state_stories --out tmp/state-stories                 # ~1 h 45 min here
    python -m benchmarks.state_stories --out tmp/state-stories --data-only     # stories and datasets
    python -m benchmarks.state_stories --out tmp/state-stories-7 --seed 7 \\
        --baseline tmp/seeds/sft/seed-7/eval-out.json                          # another seed
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.intent_last import run_module, seeded_params, sft_and_paired, sft_benchmark_parser
from benchmarks.paths import STORIES, STORIES_DIR
from benchmarks.seeds import stage_command, written
from benchmarks.state_wording import split_stories, state_rows, table
from worldagent.config import load_params
from worldagent.errors import InputError, clean_errors
from worldagent.io import directory_files, read_jsonl, write_directory
from worldagent.pipeline.table import interpolate
from worldagent.pipeline.world_agent import PIPELINE
from worldagent.world_agent.retrieval import words

STATE_STORIES = Path("benchmarks/state_stories")
STORY_SUFFIX = ".stories.tsx"


def with_state_stories(stories_dir: Path, extra: Path, target: Path) -> list[str]:
    """Copy ``stories_dir`` to ``target`` (replacing it, atomically) with each ``extra/<component>.tsx``
    appended to ``<component>/<component>.stories.tsx``; the story files extended, relative to
    ``target``. A symbolic link in either folder is refused; an extra file without its component's
    story file is an error naming both."""
    additions = {Path(name).stem: extra / name for name in directory_files(extra, ignore=()) if name.endswith(".tsx")}
    if not additions:
        raise InputError(f"{extra}: no <component>.tsx story files to add")
    files = {name: (stories_dir / name).read_bytes() for name in directory_files(stories_dir, ignore=())}
    extended = {component: f"{component}/{component}{STORY_SUFFIX}" for component in additions}
    for component, story_file in extended.items():
        if story_file not in files:
            raise InputError(f"{additions[component]}: {stories_dir / story_file} does not exist to add its stories to")
        files[story_file] += b"\n" + additions[component].read_bytes()
    write_directory(target, files)
    return sorted(extended.values())


def data_commands(params_path: Path, tree: Path, data: Path) -> list[list[str]]:
    """The discover and generate commands as dvc.yaml runs them (the stage table's), reading the
    stories in ``tree`` and writing every file under ``data`` by its own name."""
    params = load_params(params_path)
    stages = [PIPELINE.stage("discover"), PIPELINE.stage("generate")]
    moved = {interpolate(stages[0].inputs["stories_dir"], params): tree}
    for stage in stages:
        moved |= {interpolate(path, params): data / Path(path).name for _, path in written(stage)}
    # stage_command starts `python -m`; run_module adds its own interpreter
    return [stage_command(stage, params, params_path, moved)[2:] for stage in stages]


def word_overlap(a: str, b: str) -> float:
    """Shared words over the words of either (Jaccard), stop words left out."""
    left, right = set(words(a)), set(words(b))
    return len(left & right) / len(left | right) if left | right else 0.0


def closest_heldout(
    added: Iterable[Mapping[str, Any]], heldout: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str, float]]:
    """Per added story: its id, the held-out story whose intent shares most of its words, and the share;
    the closest first."""
    if not heldout:
        raise InputError("no held-out stories to compare the added ones with")
    rows = []
    for story in added:
        intent = str(story.get("intent", ""))
        nearest = max(heldout, key=lambda other: word_overlap(intent, str(other.get("intent", ""))))
        rows.append((str(story["id"]), str(nearest["id"]), word_overlap(intent, str(nearest.get("intent", "")))))
    return sorted(rows, key=lambda row: (-row[2], row[0]))


def added_stories(before: Iterable[Mapping[str, Any]], after: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The stories of ``after`` whose ids ``before`` does not have."""
    known = {str(story["id"]) for story in before}
    return [dict(story) for story in after if str(story["id"]) not in known]


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = sft_benchmark_parser(__doc__.splitlines()[0], "write the stories and datasets and stop", seeds=True)
    parser.add_argument("--stories-dir", type=Path, default=STORIES_DIR, help="the stories to add to")
    parser.add_argument("--add", type=Path, default=STATE_STORIES, help="the <component>.tsx files of new stories")
    parser.add_argument(
        "--max-overlap",
        type=float,
        default=0.5,
        help="refuse an added intent sharing more of its words with a held-out one",
    )
    args = parser.parse_args(argv)
    if not STORIES.is_file():
        raise InputError(f"{STORIES}: not found; run `make pipeline` (or `dvc repro discover`) first")
    params = seeded_params(args.params, args.seed, args.out)
    tree, data = args.out / "stories", args.out / "data"
    for story_file in with_state_stories(args.stories_dir, args.add, tree):
        print(f"{tree / story_file}: stories added", flush=True)
    for command in data_commands(params, tree, data):
        run_module(command)
    stories, eval_trajectories = data / "stories.jsonl", data / "trajectories.eval.jsonl"
    train, heldout = split_stories(stories, eval_trajectories)
    added = added_stories(read_jsonl(STORIES, "stories"), train)
    closest = closest_heldout(added, heldout)
    for story_id, nearest, share in closest[:3]:
        print(f"closest to a held-out intent: {story_id} ~ {nearest} ({share:.2f} of the words)")
    too_close = [row for row in closest if row[2] > args.max_overlap]
    if too_close:
        story_id, nearest, share = too_close[0]
        raise InputError(f"{story_id}: its intent shares {share:.2f} of its words with held-out {nearest}")
    print(f"{len(added)} training stories added, {len(train)} in all; the training stories' states:")
    print(table(state_rows([], train)), flush=True)
    if args.data_only:
        return 0
    sft_and_paired(
        params, args.out, data / "trajectories.jsonl", eval_trajectories, "state_stories", args.baseline, stories, tree
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
