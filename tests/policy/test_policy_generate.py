"""The generate stage on the bundled corpus: rewards from real story runs, verified pairs, held-out components."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldagent.config import GenerateParams, RewardWeights
from worldagent.policy.generate import (
    EVAL_PREFERENCES,
    EVAL_TRAJECTORIES,
    MANIFEST,
    TRAIN_PREFERENCES,
    TRAIN_TRAJECTORIES,
    GenerateError,
    GeneratedDataset,
    generate_datasets,
    split_components,
    write_dataset,
)
from worldagent.stories.discover import discover_stories
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.tools.callformat import parse_calls
from worldagent.tools.registry import tool_schemas

STORIES = Path(__file__).resolve().parents[2] / "data" / "stories"

# The rules a degradation must break: the story runner fails each degraded variant for its rule.
EXPECTED_RULES = {
    "div-soup": {"div-soup", "interactive-handler", "assertion"},
    "missing-aria": {"assertion"},
    "no-keyboard": {"focusable-interactive", "interactive-handler", "div-soup", "assertion"},
    "inline-style": {"inline-style"},
    "hardcoded-color": {"hardcoded-color"},
    "missing-label": {"label", "button-name", "image-alt", "aria-dialog-name", "aria-progressbar-name", "aria-input-field-name", "aria-toggle-field-name", "assertion"},
}


def run_generate(seed: int = 7) -> GeneratedDataset:
    records = discover_stories([STORIES], root=STORIES).stories
    return generate_datasets(records, STORIES, GenerateParams(), RewardWeights(), PythonStoryRunner(), seed, tool_schemas(), progress=False)


@pytest.fixture(scope="module")
def dataset() -> GeneratedDataset:
    return run_generate()


def rows(dataset: GeneratedDataset, name: str) -> list[dict]:
    return [json.loads(line) for line in dataset.files[name].splitlines()]


def test_every_reference_story_passes_its_own_story_test(dataset: GeneratedDataset) -> None:
    assert dataset.manifest["reference_failures"] == []
    trajectories = rows(dataset, TRAIN_TRAJECTORIES) + rows(dataset, EVAL_TRAJECTORIES)
    assert len(trajectories) == 2 * dataset.manifest["stories"]  # single- and multi-turn
    for row in trajectories:
        result = row["storyResult"]
        assert result["passed"] and result["a11yPassed"] and result["errors"] == []
        assert row["reward"] == (1.0 if result["totalAssertions"] else 0.8)


def test_eval_components_never_appear_in_training(dataset: GeneratedDataset) -> None:
    held_out = set(dataset.manifest["components"]["eval"])
    assert held_out and held_out.isdisjoint(dataset.manifest["components"]["train"])
    for name in (TRAIN_TRAJECTORIES, TRAIN_PREFERENCES):
        assert {row["component"] for row in rows(dataset, name)}.isdisjoint(held_out)
    for name in (EVAL_TRAJECTORIES, EVAL_PREFERENCES):
        assert {row["component"] for row in rows(dataset, name)} <= held_out


def test_each_kept_pair_scores_strictly_lower_and_breaks_its_rule(dataset: GeneratedDataset) -> None:
    pairs = rows(dataset, TRAIN_PREFERENCES) + rows(dataset, EVAL_PREFERENCES)
    assert {pair["degradation"] for pair in pairs} == set(EXPECTED_RULES)
    for pair in pairs:
        assert pair["rejected_reward"] < pair["chosen_reward"], pair["id"]
        assert set(pair["rejected_rules"]) & EXPECTED_RULES[pair["degradation"]], (pair["id"], pair["degradation"], pair["rejected_rules"])
        assert not any(rule == "render" for rule in pair["rejected_rules"]), pair["rejected_storyResult"]["errors"]


def test_assistant_turns_are_parseable_function_calls(dataset: GeneratedDataset) -> None:
    multi = [row for row in rows(dataset, TRAIN_TRAJECTORIES) if row["turns"] == "multi"]
    row = multi[0]
    roles = [m["role"] for m in row["messages"]]
    assert roles[:2] == ["system", "user"] and roles[-1] == "assistant" and "tool" in roles
    names = [parse_calls(m["content"]).calls[0].name for m in row["messages"][2:-1] if m["role"] == "assistant"]
    assert names[-1] == "runStory" and "writeStory" in names and "writeStyles" in names
    single = next(r for r in rows(dataset, TRAIN_TRAJECTORIES) if r["turns"] == "single" and r["id"] == row["id"])
    parsed = parse_calls(single["messages"][-1]["content"])
    assert parsed.errors == [] and [c.name for c in parsed.calls] == names


def test_generation_is_deterministic_for_a_seed() -> None:
    first, second = run_generate(seed=11), run_generate(seed=11)
    assert first.files == second.files and first.manifest == second.manifest
    assert run_generate(seed=12).files[TRAIN_TRAJECTORIES] != first.files[TRAIN_TRAJECTORIES]


def test_datasets_load_in_trl_conversational_formats(dataset: GeneratedDataset, tmp_path: Path) -> None:
    from datasets import load_dataset
    from trl.data_utils import is_conversational

    write_dataset(dataset, tmp_path)
    assert json.loads((tmp_path / MANIFEST).read_text())["sha256"].keys() == dataset.files.keys()
    sft = load_dataset("json", data_files=str(tmp_path / TRAIN_TRAJECTORIES), split="train")
    dpo = load_dataset("json", data_files=str(tmp_path / TRAIN_PREFERENCES), split="train")
    assert len(sft) == dataset.manifest["rows"][TRAIN_TRAJECTORIES] and len(dpo) == dataset.manifest["rows"][TRAIN_PREFERENCES]
    assert is_conversational(sft[0]) and is_conversational(dpo[0])
    assert {"prompt", "chosen", "rejected", "rejected_rules"} <= set(dpo.column_names)
    assert {"messages", "reward", "storyResult"} <= set(sft.column_names)


def test_split_components_validates_explicit_choice() -> None:
    train, held = split_components(["a", "b", "c"], GenerateParams(eval_components=["b"]), seed=1)
    assert (train, held) == (["a", "c"], ["b"])
    with pytest.raises(GenerateError, match=r"generate.eval_components names unknown components \['zz'\]"):
        split_components(["a", "b"], GenerateParams(eval_components=["zz"]), seed=1)
    train, held = split_components(["a", "b"], GenerateParams(eval_fraction=0.01), seed=1)
    assert len(held) == 1 and len(train) == 1
