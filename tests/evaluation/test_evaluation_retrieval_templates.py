"""benchmarks.retrieval_templates: is the example a held-out prompt shows of the reference's template?"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.retrieval_templates import argument_coverage, measure, shown_example_intent, story_arguments
from worldagent.stories.discover import discover_stories, discovery_to_jsonl
from worldagent.world_agent.generate import ExampleIndex

STORIES_DIR = Path(__file__).resolve().parents[2] / "data" / "stories"


def _row(story_id: str, intent: str, example: str | None, turns: int = 1) -> dict:
    user = f"{intent}\n\nWork in `checkbox/`."
    if example is not None:
        user += f"\n\nAn existing story, `checkbox/x.stories.tsx` (“{example}”):\n```tsx\n...\n```"
    messages = [{"role": "system", "content": "tools"}, {"role": "user", "content": user}]
    messages += [{"role": "assistant", "content": "calls"}] * turns
    kind = "single" if turns == 1 else "multi"
    return {"id": story_id, "intent": intent, "component": "checkbox", "messages": messages, "turns": kind}


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_shown_example_is_read_from_the_prompt() -> None:
    assert (
        shown_example_intent(_row("a", "Lock a box", 'A "Files" picker with a “dash”'))
        == 'A "Files" picker with a “dash”'
    )
    assert shown_example_intent(_row("a", "Lock a box", None)) is None


def test_prompts_shown_another_template_are_counted_and_listed(tmp_path: Path) -> None:
    stories = [
        {"id": "c#locked", "intent": "A locked box", "template": "Checkbox", "component": "checkbox"},
        {"id": "c#plain", "intent": "A plain box", "template": "Checkbox", "component": "checkbox"},
        {"id": "c#files", "intent": "A files picker", "template": "SelectAllGroup", "component": "checkbox"},
        {"id": "c#photos", "intent": "A photos picker", "template": "SelectAllGroup", "component": "checkbox"},
    ]
    held_out = [
        _row("c#locked", "A locked box", "A files picker"),  # shown the wrong template
        _row("c#photos", "A photos picker", "A files picker"),  # the right one
        _row("c#photos", "A photos picker", "A plain box", turns=2),  # a multi-turn row is not counted
    ]
    training = [_row("c#plain", "A plain box", None), _row("c#files", "A files picker", None)]
    result = measure(
        False,
        _write(tmp_path / "stories.jsonl", stories),
        _write(tmp_path / "eval.jsonl", held_out),
        _write(tmp_path / "train.jsonl", training),
    )
    figures = result["bm25 (the prompts as generated)"]
    assert (result["prompts"], figures["same_template"]) == (2, 1)
    assert figures["misses"] == [
        {"id": "c#locked", "intent": "A locked box", "reference": "Checkbox", "shown": "SelectAllGroup"}
    ]


def test_story_arguments_keep_boolean_values_and_other_keys() -> None:
    args = {"label": "Locked", "checked": True, "disabled": False, "max": 2}
    assert story_arguments(args) == {"label", "checked=true", "disabled=false", "max"}
    assert story_arguments(None) == set()  # args discovery could not read statically


def test_argument_coverage_retrieves_as_the_generate_stage_does(tmp_path: Path) -> None:
    records = discover_stories([STORIES_DIR / "checkbox"], root=STORIES_DIR).stories
    stories_path = tmp_path / "stories.jsonl"
    stories_path.write_text(discovery_to_jsonl(records), encoding="utf-8")
    ticked = [r for r in records if "checked=true" in story_arguments(r.args)]
    held, also_held = ticked[0], ticked[1]  # the second is held out too: never shown
    eval_path = _write(
        tmp_path / "eval.jsonl", [_row(held.id, held.intent, None), _row(also_held.id, also_held.intent, None, turns=2)]
    )
    wanted = story_arguments(held.args)
    every = len(records) - 2
    coverage = argument_coverage(every, STORIES_DIR, 10**6, stories_path, eval_path)
    assert (coverage["arguments"], coverage["true_states"]) == (len(wanted), sum(a.endswith("=true") for a in wanted))
    training = [r for r in records if r.id not in {held.id, also_held.id}]
    anywhere = set().union(*(story_arguments(r.args) for r in training))
    assert coverage["covered"][every] == len(wanted & anywhere) / len(wanted)
    covered = list(coverage["covered"].values())
    assert covered == sorted(covered) and covered[-1] > covered[0]  # more examples never show less
    # the generate stage's own index: its first pick is the first example a prompt shows
    first = ExampleIndex(training, STORIES_DIR, 10**6).nearest(held, 1)[0]
    first_args = next(story_arguments(r.args) for r in training if r.intent == first.intent)
    assert coverage["covered"][1] == len(wanted & first_args) / len(wanted)
    # sources over the budget are never shown, as in the prompts
    assert argument_coverage(2, STORIES_DIR, 0, stories_path, eval_path)["covered"] == {1: 0.0, 2: 0.0}
