"""The story's intent written after its args, measured: SFT on reordered rows against the committed SFT.

Does a model that reaches the arguments before it copies the request write the request's quoted
words where the template renders them?

    python -m benchmarks.intent_last --out /tmp/intent-last          # datasets, SFT, its evaluation (~1 h)
    python -m benchmarks.intent_last --out /tmp/intent-last --data-only

Every training answer writes its story as ``intent: '<the request>'`` first, then ``template`` and
``args``; a model copies the request there and, in the repair-turn measurements, 60 of 85 misses on
training prompts had the quoted words only in that line, which is never rendered. This benchmark
rewrites the generate stage's trajectories (the answers and the example stories the prompts show)
with each story's ``intent`` (or ``description``) moved right after its ``args``, trains SFT on them
with the stage's own command and params, evaluates it with ``tasks.evaluate_sft``, and pairs the
result with the committed SFT evaluation. It is not in the pipeline, because it did not help
(docs/profiles.md, "Levers measured and left out").
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from tree_sitter import Node

from benchmarks.paths import EVAL_DIR, EVAL_TRAJECTORIES, MODELS, STORIES, STORIES_DIR, TRAJECTORIES
from benchmarks.seeds import seed_params
from benchmarks.self_check_intent import quoted_phrases
from worldagent.errors import InputError, clean_errors
from worldagent.evaluation.compare import bootstrap_diff
from worldagent.evaluation.metrics import IntentResult
from worldagent.evaluation.model_eval import read_model_eval
from worldagent.io import atomic_write_text, jsonl, pretty_json, read_jsonl
from worldagent.stories.discover import object_props, story_config
from worldagent.stories.parse import parse_tsx

# A story file inside a prompt (an example) and inside a call (the answer).
_TSX_BLOCK = re.compile(r"(```tsx\n)(.*?)(\n```)", re.DOTALL)
_CALL_CONTENT = re.compile(r"(content:<escape>)(.*?)(<escape>)", re.DOTALL)


STATEMENT_KEYS = ("intent", "description")


def story_configs(root: Node) -> list[Node]:
    """The object of each exported ``story({...})``, in file order."""
    configs = []
    for node in root.named_children:
        declaration = node.child_by_field_name("declaration") if node.type == "export_statement" else None
        for declarator in declaration.named_children if declaration is not None else []:
            config = story_config(declarator.child_by_field_name("value"))
            if config is not None:
                configs.append(config)
    return configs


def intent_after_args(story_text: str, file: str) -> str:
    """The story file with each story's ``intent`` (or ``description``) moved to right after its ``args``.

    Why: a model copies the request into ``intent:`` first and then no longer writes its quoted
    words into the arguments the template renders; with ``args`` first, those words are still to
    be written when it gets there. Only a multi-line object whose properties each start a line is
    reordered (the project's own format); any other story is left as it is. The result parses to
    the same properties.
    """
    source = story_text.encode("utf-8")
    lines = source.splitlines(keepends=True)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))
    moves: list[tuple[int, int, int]] = []  # (intent line, first line after it, insert before line)
    for obj in story_configs(parse_tsx(source, file).root_node):
        props = object_props(obj)  # name -> value node, in source order
        statement = next((key for key in STATEMENT_KEYS if key in props), None)
        if statement is None or "args" not in props:
            continue
        keys = list(props)
        # a shorthand property is its own node; any other value's property is its parent pair
        pairs = [value if value.type == "shorthand_property_identifier" else value.parent for value in props.values()]
        rows = [pair.start_point[0] for pair in pairs]
        intent, args = keys.index(statement), keys.index("args")
        starts_lines = all(source[line_starts[pair.start_point[0]] : pair.start_byte].strip() == b"" for pair in pairs)
        if intent > args or not starts_lines or len(set(rows)) != len(rows):
            continue
        intent_end = rows[intent + 1]  # the intent's lines run up to the next property's line
        if source[pairs[intent].end_byte : line_starts[intent_end]].strip() != b",":
            continue
        after_args = rows[args + 1] if args + 1 < len(pairs) else None
        if after_args is None:
            last = pairs[-1].end_byte
            if source[last : last + 1] != b",":
                continue
            after_args = pairs[-1].end_point[0] + 1
        moves.append((rows[intent], intent_end, after_args))
    for start, end, before in reversed(moves):
        lines[before:before] = lines[start:end]
        del lines[start:end]
    return b"".join(lines).decode("utf-8")


def _reorder_match(match: re.Match[str]) -> str:
    return match.group(1) + intent_after_args(match.group(2), "story.stories.tsx") + match.group(3)


def reorder_message(content: str) -> str:
    """A chat message with every story it shows or writes reordered (other files come out unchanged)."""
    return _CALL_CONTENT.sub(_reorder_match, _TSX_BLOCK.sub(_reorder_match, content))


def reorder_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A trajectory row with its intent written after its args in every message."""
    messages = [{**message, "content": reorder_message(str(message["content"]))} for message in row["messages"]]
    return {**row, "messages": messages}


def rewrite_trajectories(
    source: Path, target: Path, change: Callable[[Mapping[str, Any]], dict[str, Any] | None]
) -> Counter[str]:
    """Rewrite a trajectories file row by row (the generate stage's JSON form): ``change``'s row where
    it returns one, the row as it was where it returns None; counts rows ``changed`` and ``kept``."""
    counts: Counter[str] = Counter()
    rows = []
    for row in read_jsonl(source, "trajectories"):
        changed = change(row)
        counts["changed" if changed is not None else "kept"] += 1
        rows.append(row if changed is None else changed)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, jsonl(rows))
    return counts


def write_reordered(source: Path, target: Path) -> int:
    """Rewrite a trajectories file with every row reordered; the rows written."""
    return rewrite_trajectories(source, target, reorder_row)["changed"]


def _per_intent(path: Path) -> dict[str, tuple[IntentResult, str]]:
    """Each intent's scores and kept answer from an SFT evaluation file."""
    row = read_model_eval(path, "sft").rows[0]
    return {scores.id: (scores, output) for scores, output in zip(row.per_intent, row.outputs, strict=True)}


def words_outside_intent(intent: str, answer: str) -> bool | None:
    """Whether the answer writes every phrase the intent quotes somewhere other than its story's
    ``intent:``/``description:`` line (None: the intent quotes nothing)."""
    phrases = quoted_phrases(intent)
    if not phrases:
        return None
    body = " ".join(
        line for line in answer.splitlines() if not line.strip().startswith(tuple(f"{key}:" for key in STATEMENT_KEYS))
    )
    body = " ".join(body.split())
    return all(phrase in body for phrase in phrases)


def paired_scores(
    before: Mapping[str, IntentResult], after: Mapping[str, IntentResult], name: str, what: str
) -> tuple[list[str], dict[str, Any]]:
    """The intents both sides scored, and ``after`` (labelled ``name``) against ``before`` (labelled
    ``baseline``) on them: means, stories passed and paired bootstrap differences (after − before).
    No intent in common is an error naming ``what`` was paired."""
    ids = sorted(set(before) & set(after))
    if not ids:
        raise InputError(f"{what}: no intent in common")
    rewards = ([after[i].reward for i in ids], [before[i].reward for i in ids])
    stories = ([float(after[i].story_passed) for i in ids], [float(before[i].story_passed) for i in ids])
    return ids, {
        "intents": len(ids),
        "mean_reward": {"baseline": sum(rewards[1]) / len(ids), name: sum(rewards[0]) / len(ids)},
        "stories_passed": {"baseline": int(sum(stories[1])), name: int(sum(stories[0]))},
        "reward_diff": bootstrap_diff(*rewards, seed=1234),
        "story_diff": bootstrap_diff(*stories, seed=1234),
    }


def paired(baseline: Path, measured: Path, name: str = "intent_last") -> dict[str, Any]:
    """The measured SFT (labelled ``name``) against the ``baseline`` SFT (labelled ``baseline``: the
    committed one, or another seed's) on the intents both scored (measured − baseline)."""
    before, after = _per_intent(baseline), _per_intent(measured)
    ids, result = paired_scores(
        {i: r for i, (r, _) in before.items()},
        {i: r for i, (r, _) in after.items()},
        name,
        f"{measured} and {baseline}",
    )
    outside = {
        label: [words_outside_intent(rows[i][0].intent, rows[i][1]) for i in ids]
        for label, rows in (("baseline", before), (name, after))
    }
    return {
        **result,
        "quoting_intents": sum(flag is not None for flag in outside["baseline"]),
        "quoted_words_outside_intent_line": {
            label: sum(bool(flag) for flag in flags) for label, flags in outside.items()
        },
    }


def run_module(args: Sequence[str]) -> None:
    """``python -m <args>`` with this interpreter, echoed first; a failure stops the benchmark."""
    print("+ " + " ".join(args), flush=True)
    subprocess.run([sys.executable, "-m", *args], check=True)


def sft_and_paired(
    params: Path,
    out: Path,
    trajectories: Path,
    eval_trajectories: Path,
    name: str,
    baseline: Path = EVAL_DIR / "sft.json",
    stories: Path = STORIES,
    stories_dir: Path = STORIES_DIR,
) -> dict[str, Any]:
    """Train SFT on ``trajectories`` and evaluate it (:func:`train_and_evaluate`), and pair it
    (labelled ``name``) with the ``baseline`` SFT evaluation (the committed one by default);
    everything under ``out``, the pairing also in ``out/result.json``."""
    eval_report = train_and_evaluate(params, out, trajectories, eval_trajectories, stories, stories_dir)
    result = paired(baseline, eval_report, name)
    atomic_write_text(out / "result.json", pretty_json(result))
    print(pretty_json(result), end="")
    return result


def train_and_evaluate(
    params: Path,
    out: Path,
    trajectories: Path,
    eval_trajectories: Path,
    stories: Path = STORIES,
    stories_dir: Path = STORIES_DIR,
) -> Path:
    """Train SFT on ``trajectories`` with the stage's own command and params into ``out/sft``,
    evaluate it on ``eval_trajectories`` (their stories in ``stories`` and ``stories_dir``) with
    ``tasks.evaluate_sft``; the evaluation file written (``out/sft-eval.json``)."""
    adapter, eval_report = out / "sft", out / "sft-eval.json"
    common = ["--params", str(params), "--base", str(MODELS / "base")]
    run_module(
        ["worldagent.world_agent.stages.sft", *common, "--trajectories", str(trajectories), "--out", str(adapter)]
        + ["--metrics", str(out / "sft-metrics.json"), "--curves", str(out / "sft-curves.json")]
    )
    run_module(
        ["tasks.evaluate_sft", *common, "--eval-trajectories", str(eval_trajectories), "--stories", str(stories)]
        + ["--stories-dir", str(stories_dir), "--adapter", str(adapter), "--out", str(eval_report)]
        + ["--speed", str(out / "sft-speed.json")]
    )
    return eval_report


def seeded_params(params: Path, seed: int | None, out: Path) -> Path:
    """``params``, or where ``seed`` is given a copy in ``out`` with that seed (:func:`seed_params`)."""
    if seed is None:
        return params
    seeded = out / "params.yaml"
    raw = yaml.safe_load(params.read_text(encoding="utf-8"))
    atomic_write_text(seeded, yaml.safe_dump(seed_params(raw, seed), sort_keys=False))
    return seeded


def sft_benchmark_parser(description: str, data_only: str, seeds: bool = False) -> argparse.ArgumentParser:
    """The options of a benchmark that rewrites the trajectories, then runs :func:`sft_and_paired`;
    with ``seeds``, ``--seed`` (for :func:`seeded_params`) and ``--baseline`` (to pair with)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="the parameters file")
    parser.add_argument("--out", type=Path, required=True, help="a scratch directory for datasets, adapter and results")
    parser.add_argument("--data-only", action="store_true", help=data_only)
    if seeds:
        parser.add_argument("--seed", type=int, help="train with this seed instead of params.yaml's")
        parser.add_argument(
            "--baseline",
            type=Path,
            default=EVAL_DIR / "sft.json",
            help="the same seed's SFT evaluation without the change, to pair with (default: the committed one)",
        )
    return parser


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = sft_benchmark_parser(__doc__.splitlines()[0], "write the reordered datasets and stop")
    args = parser.parse_args(argv)
    data = args.out / "data"
    for source in (TRAJECTORIES, EVAL_TRAJECTORIES):
        if not source.is_file():
            raise InputError(f"{source}: not found; run `make pipeline` (or `dvc repro generate`) first")
        print(f"{source}: {write_reordered(source, data / source.name)} rows reordered", flush=True)
    if args.data_only:
        return 0
    sft_and_paired(args.params, args.out, data / TRAJECTORIES.name, data / EVAL_TRAJECTORIES.name, "intent_last")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
