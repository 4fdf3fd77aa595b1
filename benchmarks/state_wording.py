"""Which states a model's failed held-out answers leave out, and whether the intent named the state.

    python -m benchmarks.state_wording                  # the committed SFT evaluation
    python -m benchmarks.state_wording --model grpo --json

A held-out story test asserts states (`button "Breakfast" [disabled=true]`), and an intent asks for
them in its own words: "disabled", or "greyed out", "cannot be toggled", "already chosen". For every
failed answer of ``--model`` (its first row in ``reports/world_agent/eval/<model>.json``), this takes
the states of the assertions it missed (``[...=true...]`` in the answer's errors) and says, per
state, whether the intent names the state by its own word (``STATE_WORDS``) or paraphrases it. Next
to that, over the training stories (``stories.jsonl`` less the held-out ids): how many set the state
in their arguments (``<state>: true`` at any depth; a state a template derives from another argument,
``selected`` from a value or ``invalid`` from an error message, is not counted there) and how many of
those intents name it. Training
that writes a state mostly under a paraphrase, with held-out misses mostly paraphrased too, says the
wording is in the data and the model does not carry it to new intents.

Needs `make pipeline`'s outputs (the generate stage's files and the model's evaluation).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.paths import EVAL_DIR, EVAL_TRAJECTORIES, STORIES
from worldagent.errors import clean_errors
from worldagent.evaluation.model_eval import read_model_eval
from worldagent.io import read_jsonl

# The words that name each state outright; anything else an intent says for it is a paraphrase.
STATE_WORDS: dict[str, tuple[str, ...]] = {
    "disabled": ("disabled",),
    "checked": ("checked",),
    "required": ("required",),
    "invalid": ("invalid",),
    "selected": ("selected",),
    "pressed": ("pressed",),
    "expanded": ("expanded",),
    "readonly": ("read-only", "readonly", "read only"),
    "current": ("current",),
    "busy": ("busy",),
}
# `expected button "Keynote" [disabled=true, expanded=false] was not found`: the bracket's states.
_MISSED = re.compile(r"\[([^\]]*)\] was not found")


@dataclass(frozen=True)
class StateRow:
    """One state: the model's failed held-out answers that missed it, and the training stories' use."""

    state: str
    missed: int  # failed held-out answers that missed an assertion of this state
    missed_named: int  # ... whose intent names the state by its own word
    train_stories: int  # training stories whose arguments set it true
    train_named: int  # ... whose intent names it by its own word


def missed_states(errors: Iterable[str]) -> set[str]:
    """The states asserted true in the assertions an answer missed."""
    states: set[str] = set()
    for error in errors:
        for bracket in _MISSED.findall(error):
            for pair in bracket.split(","):
                key, _, value = pair.strip().partition("=")
                if value == "true" and key.lower() in STATE_WORDS:
                    states.add(key.lower())
    return states


def whole_phrases(phrases: Iterable[str]) -> re.Pattern[str]:
    """Any of ``phrases`` as a whole word (not inside a longer or hyphenated word), any case,
    the longest first."""
    alternatives = "|".join(re.escape(phrase) for phrase in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


def names_state(intent: str, state: str) -> bool:
    """Whether ``intent`` names ``state`` by one of its own words."""
    return whole_phrases(STATE_WORDS[state]).search(intent) is not None


def states_set(args: Any) -> set[str]:
    """The states a story's arguments set true at any depth (``disabled: true`` in a section)."""
    found: set[str] = set()
    if isinstance(args, Mapping):
        for key, value in args.items():
            if value is True and str(key).lower() in STATE_WORDS:
                found.add(str(key).lower())
            found |= states_set(value)
    elif isinstance(args, list):
        for value in args:
            found |= states_set(value)
    return found


def state_rows(per_intent: Iterable[Mapping[str, Any]], train_stories: Iterable[Mapping[str, Any]]) -> list[StateRow]:
    """A row per state that a failed answer missed or a training story sets, most missed first."""
    missed: Counter[str] = Counter()
    missed_named: Counter[str] = Counter()
    for result in per_intent:
        if result.get("story_passed"):
            continue
        for state in missed_states(result.get("errors") or []):
            missed[state] += 1
            missed_named[state] += names_state(str(result.get("intent", "")), state)
    trained: Counter[str] = Counter()
    trained_named: Counter[str] = Counter()
    for story in train_stories:
        for state in states_set(story.get("args")):
            trained[state] += 1
            trained_named[state] += names_state(str(story.get("intent", "")), state)
    states = sorted(set(missed) | set(trained), key=lambda state: (-missed[state], -trained[state], state))
    return [StateRow(s, missed[s], missed_named[s], trained[s], trained_named[s]) for s in states]


def split_stories(stories: Path, eval_trajectories: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stories of ``stories.jsonl``: those training reads, and those held out (the eval rows' ids)."""
    held_out = {str(row["id"]) for row in read_jsonl(eval_trajectories, "eval trajectories")}
    everything = read_jsonl(stories, "stories")
    return [s for s in everything if str(s["id"]) not in held_out], [s for s in everything if str(s["id"]) in held_out]


def table(rows: list[StateRow]) -> str:
    lines = [
        "| state | failed answers missing it | intent names it | training stories setting it | intent names it |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {r.state} | {r.missed} | {r.missed_named} | {r.train_stories} | {r.train_named} |" for r in rows]
    missed, named = sum(r.missed for r in rows), sum(r.missed_named for r in rows)
    trained, trained_named = sum(r.train_stories for r in rows), sum(r.train_named for r in rows)
    lines.append(
        f"\nMissed states: {missed}, {named} named by the intent, {missed - named} paraphrased. "
        f"Training stories setting a state: {trained}, {trained_named} named by their intent."
    )
    return "\n".join(lines)


@clean_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="sft", help="whose evaluation: reports/world_agent/eval/<model>.json")
    parser.add_argument("--eval-dir", type=Path, default=EVAL_DIR)
    parser.add_argument("--stories", type=Path, default=STORIES)
    parser.add_argument("--eval-trajectories", type=Path, default=EVAL_TRAJECTORIES)
    parser.add_argument("--json", action="store_true", help="the rows as JSON")
    args = parser.parse_args(argv)
    evaluation = read_model_eval(args.eval_dir / f"{args.model}.json", args.model)
    train, _ = split_stories(args.stories, args.eval_trajectories)
    rows = state_rows([result.model_dump() for result in evaluation.rows[0].per_intent], train)
    print(json.dumps([asdict(row) for row in rows], indent=1) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
