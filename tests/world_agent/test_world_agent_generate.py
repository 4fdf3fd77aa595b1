"""The generate stage on the bundled corpus: rewards from real story runs, verified pairs, held-out intents and components."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from worldagent.config import GenerateParams, RewardWeights
from worldagent.stories.discover import discover_stories
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.tools.callformat import parse_calls
from worldagent.tools.registry import tool_schemas
from worldagent.world_agent.degrade import copied_args
from worldagent.world_agent.generate import (
    EVAL_PREFERENCES,
    EVAL_TRAJECTORIES,
    MANIFEST,
    TRAIN_PREFERENCES,
    TRAIN_TRAJECTORIES,
    GeneratedDataset,
    GenerateError,
    generate_datasets,
    generate_for_story,
    split_components,
    split_stories,
    write_dataset,
)

STORIES = Path(__file__).resolve().parents[2] / "data" / "stories"

# The rules a degradation must break: the story runner fails each degraded variant for its rule.
EXPECTED_RULES = {
    # An argument of the example story: the reference's assertions fail, or it names a value only the
    # example's file declares and the story no longer renders (what the candidate did: `accordion.agenda`).
    "copied-args": {"assertion", "render"},
    "div-soup": {"div-soup", "interactive-handler", "assertion"},
    "missing-aria": {"assertion"},
    "no-keyboard": {"focusable-interactive", "interactive-handler", "div-soup", "assertion"},
    "inline-style": {"inline-style"},
    "hardcoded-color": {"hardcoded-color"},
    "missing-label": {
        "label",
        "select-name",
        "button-name",
        "input-button-name",
        "aria-command-name",
        "image-alt",
        "input-image-alt",
        "role-img-alt",
        "svg-img-alt",
        "aria-tab-name",
        "aria-dialog-name",
        "aria-progressbar-name",
        "aria-input-field-name",
        "aria-toggle-field-name",
        "assertion",
    },
}


def run_generate(seed: int = 7) -> GeneratedDataset:
    records = discover_stories([STORIES], root=STORIES).stories
    return generate_datasets(
        records, STORIES, GenerateParams(), RewardWeights(), PythonStoryRunner(), seed, tool_schemas(), progress=False
    )


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


def test_every_eval_story_states_the_names_its_hidden_test_asserts(dataset: GeneratedDataset) -> None:
    assert dataset.manifest["eval_stories"] and dataset.manifest["eval_unstated_names"] == {}


def test_an_eval_intent_that_hides_an_asserted_name_is_named_in_the_manifest() -> None:
    records = {r.id: r for r in discover_stories([STORIES], root=STORIES).stories}
    record = records["text-input/text-input.stories.tsx#siteSearch"]
    vague = record.model_copy(update={"intent": 'Create a site search form with a "Search" submit button'})
    args = (STORIES, "eval", GenerateParams(), RewardWeights(), PythonStoryRunner(), tool_schemas())
    assert generate_for_story(record, *args).unstated == {}
    assert generate_for_story(vague, *args).unstated == {"Search the documentation": ["the", "documentation"]}
    assert generate_for_story(vague, STORIES, "train", *args[2:]).unstated == {}  # training rows are not audited


def test_eval_intents_are_unseen_but_their_components_are_not(dataset: GeneratedDataset) -> None:
    held_out = set(dataset.manifest["eval_stories"])
    assert dataset.manifest["eval_split"] == "intent" and held_out
    train_ids = {row["id"] for row in rows(dataset, TRAIN_TRAJECTORIES) + rows(dataset, TRAIN_PREFERENCES)}
    eval_ids = {row["id"] for row in rows(dataset, EVAL_TRAJECTORIES) + rows(dataset, EVAL_PREFERENCES)}
    assert eval_ids == held_out and train_ids.isdisjoint(held_out)
    train_intents = {row["intent"] for row in rows(dataset, TRAIN_TRAJECTORIES)}
    assert train_intents.isdisjoint(row["intent"] for row in rows(dataset, EVAL_TRAJECTORIES))
    # Every held-out intent's component keeps at least one story in training.
    assert set(dataset.manifest["components"]["eval"]) <= {
        row["component"] for row in rows(dataset, TRAIN_TRAJECTORIES)
    }


def test_eval_prompt_names_the_story_export_and_file(dataset: GeneratedDataset) -> None:
    for row in rows(dataset, EVAL_TRAJECTORIES):
        export = row["id"].split("#")[1]
        user = row["messages"][1]["content"]
        story_call = (
            next(c for c in parse_calls(row["messages"][2]["content"]).calls if c.name == "writeStory")
            if row["turns"] == "single"
            else None
        )
        assert f"Export the story as `{export}` from `" in user
        if story_call is not None:
            assert f"from `{story_call.arguments['path']}`" in user


def test_prompts_show_the_nearest_training_story_and_never_a_held_out_one(dataset: GeneratedDataset) -> None:
    train = rows(dataset, TRAIN_TRAJECTORIES)
    train_sources = {
        call.arguments["content"]
        for row in train
        if row["turns"] == "single"
        for call in parse_calls(row["messages"][2]["content"]).calls
        if call.name == "writeStory"
    }
    held_out_intents = {row["intent"] for row in rows(dataset, EVAL_TRAJECTORIES)}
    for row in train + rows(dataset, EVAL_TRAJECTORIES):
        user = row["messages"][1]["content"]
        assert user.count("An existing story, `") == GenerateParams().examples
        shown = user.split("```tsx\n", 1)[1].split("\n```", 1)[0] + "\n"
        assert shown in train_sources  # a training story, verbatim
        assert f"intent: '{row['intent']}'" not in shown  # never the row's own answer
        assert not any(f"intent: '{intent}'" in shown for intent in held_out_intents)
        # a story of the row's own component (each has another training story to show)
        assert user.split("An existing story, `", 1)[1].startswith(f"{row['component']}/"), row["id"]


def test_split_stories_holds_out_a_share_of_each_component_never_all() -> None:
    records = discover_stories([STORIES], root=STORIES).stories
    components, held = split_stories(records, GenerateParams(eval_fraction=0.5), seed=3)
    by_component: dict[str, list[str]] = {}
    for record in records:
        by_component.setdefault(record.component, []).append(record.id)
    for component, ids in by_component.items():
        kept = [i for i in ids if i not in held]
        assert kept, f"{component}: every story was held out"
        if len(ids) >= 2:
            assert set(ids) & set(held), f"{component}: nothing held out"
    assert split_stories(records, GenerateParams(eval_fraction=0.5), seed=3) == (components, held)
    assert split_stories(records, GenerateParams(eval_fraction=0.5), seed=4)[1] != held


def test_component_split_never_shows_eval_components_in_training() -> None:
    records = discover_stories([STORIES], root=STORIES).stories
    params = GenerateParams(
        eval_split="component", eval_components=["badge", "card"], heldout=[], max_pairs_per_story=1
    )
    dataset = generate_datasets(
        records, STORIES, params, RewardWeights(), PythonStoryRunner(), 7, tool_schemas(), progress=False
    )
    held_out = set(dataset.manifest["components"]["eval"])
    assert held_out == {"badge", "card"}
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
        assert set(pair["rejected_rules"]) & EXPECTED_RULES[pair["degradation"]], (
            pair["id"],
            pair["degradation"],
            pair["rejected_rules"],
        )
        if pair["degradation"] != "copied-args":  # a rewrite rule keeps the story rendering
            assert "render" not in pair["rejected_rules"], pair["rejected_storyResult"]["errors"]


def _story_source(content: str) -> str:
    call = next(c for c in parse_calls(content).calls if c.name == "writeStory")
    return str(call.arguments["content"])


def test_copied_args_pairs_copy_one_argument_of_the_prompts_example_and_fail_its_story() -> None:
    records = discover_stories([STORIES], root=STORIES).stories
    params = GenerateParams(degradations=["copied-args"], max_pairs_per_story=3, single_turn=True, multi_turn=False)
    dataset = generate_datasets(
        records, STORIES, params, RewardWeights(), PythonStoryRunner(), 7, tool_schemas(), progress=False
    )
    pairs = rows(dataset, TRAIN_PREFERENCES)
    assert len(pairs) >= 20 and {pair["degradation"] for pair in pairs} == {"copied-args"}
    assert max(Counter(pair["id"] for pair in pairs).values()) <= 3
    for pair in pairs:
        example = re.search(r"```tsx\n(.*?)```", pair["prompt"][-1]["content"], re.S)
        assert example is not None, pair["id"]
        chosen = _story_source(pair["chosen"][0]["content"])
        assert _story_source(pair["rejected"][0]["content"]) in copied_args(chosen, [example.group(1)]), pair["id"]
        assert pair["rejected_reward"] < pair["chosen_reward"], pair["id"]
    assert dataset.manifest["pairs_dropped_by_verification"]["copied-args"] > 0  # many copies go unnoticed


def test_assistant_turns_are_parseable_function_calls(dataset: GeneratedDataset) -> None:
    # A story that creates its component (no files given) writes styles, template and story.
    multi = [row for row in rows(dataset, TRAIN_TRAJECTORIES) if row["turns"] == "multi" and not row["given_files"]]
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

    write_dataset(dataset, {name: tmp_path / name for name in dataset.files}, tmp_path / MANIFEST)
    assert json.loads((tmp_path / MANIFEST).read_text())["sha256"].keys() == dataset.files.keys()
    sft = load_dataset("json", data_files=str(tmp_path / TRAIN_TRAJECTORIES), split="train")
    dpo = load_dataset("json", data_files=str(tmp_path / TRAIN_PREFERENCES), split="train")
    assert (
        len(sft) == dataset.manifest["rows"][TRAIN_TRAJECTORIES]
        and len(dpo) == dataset.manifest["rows"][TRAIN_PREFERENCES]
    )
    assert is_conversational(sft[0]) and is_conversational(dpo[0])
    assert {"prompt", "chosen", "rejected", "rejected_rules"} <= set(dpo.column_names)
    assert {"messages", "reward", "storyResult"} <= set(sft.column_names)


def test_split_components_validates_explicit_choice() -> None:
    with pytest.raises(ValueError, match="generate.eval_components is only used with generate.eval_split: component"):
        GenerateParams(eval_components=["b"])
    train, held = split_components(
        ["a", "b", "c"], GenerateParams(eval_split="component", eval_components=["b"]), seed=1
    )
    assert (train, held) == (["a", "c"], ["b"])
    with pytest.raises(GenerateError, match=r"generate.eval_components names unknown components \['zz'\]"):
        split_components(["a", "b"], GenerateParams(eval_split="component", eval_components=["zz"]), seed=1)
    train, held = split_components(["a", "b"], GenerateParams(eval_fraction=0.01), seed=1)
    assert len(held) == 1 and len(train) == 1


def test_first_story_creates_its_component_later_stories_find_it_given(dataset: GeneratedDataset) -> None:
    from worldagent.world_agent.solution import creates_component, module_exports, reference_solution

    records = discover_stories([STORIES], root=STORIES).stories
    button = [r for r in records if r.file == "button/button.stories.tsx"]
    first, later = button[0], button[1]
    assert creates_component(first, STORIES) and not creates_component(later, STORIES)
    created = reference_solution(first, STORIES)
    assert created.given == {} and created.template_path in created.files and created.style_paths
    added = reference_solution(later, STORIES)
    assert list(added.files) == [added.story_path] and added.template_path is None and added.style_paths == ()
    assert module_exports(added.given["button/button.template.tsx"], "t.tsx") == ["Spinner", "Button"]
    assert "button/button.css.ts" in added.given
    by_id = {
        row["id"]: row
        for row in rows(dataset, TRAIN_TRAJECTORIES) + rows(dataset, EVAL_TRAJECTORIES)
        if row["turns"] == "single"
    }
    row = by_id[later.id]
    assert [c.name for c in parse_calls(row["messages"][2]["content"]).calls] == ["writeStory", "runStory"]
    user = row["messages"][1]["content"]
    assert "The component already exists. Import from these modules; do not rewrite them:" in user
    assert (
        "- `button/button.css.ts`: `styles`\n- `button/button.template.tsx`: `Spinner: FT`, `Button: FT<{ variant?:"
        in user
    )
    assert {item["path"] for item in row["given_files"]} == set(added.given)
    assert by_id[first.id]["given_files"] == []


def test_reference_passes_every_held_out_row(dataset: GeneratedDataset) -> None:
    """Scored as the evaluate stage scores a model (against the reference story's assertions), the
    reference answer passes every held-out intent: no eval intent is impossible by construction."""
    from worldagent.world_agent.evaluate import evaluate_outputs, prompts_of, select_eval_rows
    from worldagent.world_agent.policies import ReferencePolicy

    eval_rows = select_eval_rows(rows(dataset, EVAL_TRAJECTORIES))
    assert {row["id"] for row in eval_rows} == set(dataset.manifest["eval_stories"])
    assert set(dataset.manifest["heldout_stories"]) <= set(dataset.manifest["eval_stories"])
    outputs = ReferencePolicy(eval_rows).complete(prompts_of(eval_rows))
    results = evaluate_outputs(eval_rows, outputs, STORIES, PythonStoryRunner(), RewardWeights())
    failed = {r.id: r.errors for r in results if not (r.story_passed and r.a11y_passed and r.reward == 1.0)}
    assert failed == {}
    assert all(r.assertions_total > 0 for r in results)


def test_heldout_stories_leave_the_training_files_byte_identical(dataset: GeneratedDataset) -> None:
    """The corpus without the ``generate.heldout`` stories trains on exactly the same rows, in the same order."""
    explicit = set(dataset.manifest["heldout_stories"])
    assert explicit
    records = [r for r in discover_stories([STORIES], root=STORIES).stories if r.id not in explicit]
    without = generate_datasets(
        records, STORIES, GenerateParams(heldout=[]), RewardWeights(), PythonStoryRunner(), 7, tool_schemas(), False
    )
    for name in (TRAIN_TRAJECTORIES, TRAIN_PREFERENCES):
        assert without.files[name] == dataset.files[name], name
    assert set(without.manifest["eval_stories"]) == set(dataset.manifest["eval_stories"]) - explicit
