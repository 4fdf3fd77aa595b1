"""Relabelled training rows: label extraction, whole-word replacement, reproducible mappings, and
the generate stage's relabelled copies (verified, SFT-only, never a prompt or a baseline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldagent.config import GenerateParams, RewardWeights
from worldagent.stories.discover import discover_stories
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.tools.callformat import parse_calls
from worldagent.tools.registry import tool_schemas
from worldagent.world_agent.experience_loop import prompt_rows, reference_answers, reference_rows
from worldagent.world_agent.generate import (
    EVAL_PREFERENCES,
    EVAL_TRAJECTORIES,
    TRAIN_PREFERENCES,
    TRAIN_TRAJECTORIES,
    GeneratedDataset,
    generate_datasets,
)
from worldagent.world_agent.relabel import (
    RELABEL_SUFFIX,
    is_original_single_turn,
    is_relabelled,
    label_mappings,
    label_pool,
    quoted_labels,
    relabel,
)
from worldagent.world_agent.retrieval import documents_from_trajectories

STORIES = Path(__file__).resolve().parents[2] / "data" / "stories"


def test_quoted_labels_are_the_intents_double_quoted_words_in_order_once() -> None:
    intent = 'A "Save" button next to a "Cancel" link, then "Save" again and an apostrophe\'s "x"'
    assert quoted_labels(intent) == ["Save", "Cancel"]  # one-character quotes are not labels


def test_label_pool_leaves_out_labels_that_would_break_a_string_or_jsx_text() -> None:
    pool = label_pool(['Say "Don\'t go"', 'Show "a {b}"', 'Press "Next"', 'Then "Back" and "Next"'])
    assert pool == ["Back", "Next"]


def test_relabel_replaces_whole_words_only_and_never_a_path_or_a_name() -> None:
    source = "import { styles } from './alert.css.ts'\n<p>On</p> <p>Only alert-box alert</p> label: 'On'"
    out = relabel(source, {"On": "Off", "alert": "Note"})
    assert out == "import { styles } from './alert.css.ts'\n<p>Off</p> <p>Only alert-box Note</p> label: 'Off'"


def test_relabel_is_one_pass_so_a_new_label_containing_an_old_one_stays() -> None:
    assert relabel("Save and Cancel", {"Save": "Cancel order", "Cancel": "Save"}) == "Cancel order and Save"


def test_label_mappings_are_reproducible_distinct_and_new_to_the_source() -> None:
    intent = 'A "Save" button beside "Cancel"'
    source = "<Button>Save</Button><Button>Cancel</Button><p>Help</p>"
    pool = ["Cancel", "Help", "Next", "Back", "Delete", "Retry"]
    first = label_mappings(intent, source, pool, 3, "seed")
    assert first == label_mappings(intent, source, pool, 3, "seed")
    assert len(first) == 3 and len({tuple(m.values()) for m in first}) == 3
    for mapping in first:
        assert list(mapping) == ["Save", "Cancel"]
        assert len(set(mapping.values())) == 2
        assert not {"Save", "Cancel", "Help"} & set(mapping.values())  # never a word the story already shows
    assert label_mappings(intent, source, pool, 3, "other seed") != first


def test_only_single_turn_rows_as_written_are_originals() -> None:
    assert is_original_single_turn({"id": "a", "turns": "single"})
    assert is_original_single_turn({"id": "a"})  # rows written before `turns` existed were single-turn
    assert not is_original_single_turn({"id": "a", "turns": "multi"})
    assert not is_original_single_turn({"id": f"a{RELABEL_SUFFIX}1", "turns": "single", "relabelled": {"Save": "Go"}})


def test_label_mappings_need_a_quoted_label_the_source_shows() -> None:
    assert label_mappings('A "Save" button', "<Button>Store</Button>", ["Next", "Back"], 2, "s") == []
    assert label_mappings("A button", "<Button>Save</Button>", ["Next", "Back"], 2, "s") == []
    assert label_mappings('A "Save" button', "<Button>Save</Button>", ["Save"], 2, "s") == []  # nothing new to draw


def _generate(variants: int) -> GeneratedDataset:
    records = discover_stories([STORIES], root=STORIES).stories
    params = GenerateParams(relabelled_variants=variants, multi_turn=False)
    return generate_datasets(records, STORIES, params, RewardWeights(), PythonStoryRunner(), 7, tool_schemas(), False)


@pytest.fixture(scope="module")
def datasets() -> tuple[GeneratedDataset, GeneratedDataset]:
    return _generate(0), _generate(2)


def _rows(dataset: GeneratedDataset, name: str) -> list[dict]:
    return [json.loads(line) for line in dataset.files[name].splitlines()]


def test_relabelled_copies_are_verified_training_rows_with_the_new_words(
    datasets: tuple[GeneratedDataset, GeneratedDataset],
) -> None:
    plain, relabelled = datasets
    copies = [row for row in _rows(relabelled, TRAIN_TRAJECTORIES) if is_relabelled(row)]
    assert relabelled.manifest["relabelled"] == {"kept": len(copies)} and len(copies) >= 40
    originals = {row["id"]: row for row in _rows(plain, TRAIN_TRAJECTORIES)}
    train_labels = set(label_pool(row["intent"] for row in originals.values()))
    for row in copies:
        story_id, _, number = row["id"].partition(RELABEL_SUFFIX)
        original = originals[story_id]
        assert number in {"1", "2"} and row["given_files"] == original["given_files"] != []
        assert row["storyResult"]["passed"] and row["storyResult"]["a11yPassed"] and row["reward"] == original["reward"]
        story = _story_source(row)
        for old, new in row["relabelled"].items():
            assert new in train_labels  # drawn from the training intents only
            assert f'"{new}"' in row["intent"] and f'"{old}"' not in row["intent"]
            assert new in story
        prompt = row["messages"][1]["content"]
        assert row["intent"] in prompt
        # The copy's example is another story, never the one it was copied from.
        assert _story_source(original) not in prompt


def _story_source(row: dict) -> str:
    (story,) = [c for c in parse_calls(row["messages"][-1]["content"]).calls if c.name == "writeStory"]
    return str(story.arguments["content"])


def test_relabelled_copies_change_no_other_file_and_no_original_row(
    datasets: tuple[GeneratedDataset, GeneratedDataset],
) -> None:
    plain, relabelled = datasets
    for name in (EVAL_TRAJECTORIES, TRAIN_PREFERENCES, EVAL_PREFERENCES):
        assert relabelled.files[name] == plain.files[name]
    kept = sorted(json.dumps(r, sort_keys=True) for r in _rows(relabelled, TRAIN_TRAJECTORIES) if not is_relabelled(r))
    assert kept == sorted(json.dumps(r, sort_keys=True) for r in _rows(plain, TRAIN_TRAJECTORIES))
    assert relabelled.files == _generate(2).files  # reproducible bytes


def test_prompts_rewards_and_the_nearest_baseline_use_original_stories_only(
    datasets: tuple[GeneratedDataset, GeneratedDataset], tmp_path: Path
) -> None:
    plain, relabelled = datasets
    path = tmp_path / "trajectories.jsonl"
    path.write_text(relabelled.files[TRAIN_TRAJECTORIES], encoding="utf-8")
    originals = {row["id"] for row in _rows(plain, TRAIN_TRAJECTORIES)}
    assert {row["id"] for row in prompt_rows(path, 10_000)} == originals
    assert set(reference_answers(path)) == originals
    assert len(reference_rows(path)) == len(originals)
    assert {d.id for d in documents_from_trajectories(_rows(relabelled, TRAIN_TRAJECTORIES))} == originals
