"""benchmarks.intent_last: every story an answer or a prompt shows, its intent written after its args."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from evaluation_helpers import STORIES, intent_result

from benchmarks.intent_last import (
    intent_after_args,
    paired,
    reorder_row,
    seeded_params,
    story_configs,
    words_outside_intent,
)
from worldagent.config import RewardWeights
from worldagent.errors import InputError
from worldagent.evaluation.metrics import summarize
from worldagent.evaluation.model_eval import EvalRow, ModelEvalFile, write_model_eval
from worldagent.stories.discover import object_props
from worldagent.stories.parse import parse_tsx
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.tools.callformat import parse_calls
from worldagent.world_agent.evaluate import Scorer

TWO_STORIES = """import { story } from 'plaited/testing'
import { Button } from './button.template.tsx'

export const first = story({
  intent: 'A "Save" button',
  template: Button,
  args: {
    children: 'Save',
  },
  play: async ({ assert }) => {
    assert({ given: 'a', should: 'b', actual: 1, expected: 1 })
  },
})

export const second = story({
  description: 'A "Send" button, args last',
  template: Button,
  args: { children: 'Send' },
})
"""


def story_properties(source: str) -> list[list[tuple[str, str]]]:
    """(name, value text) of each exported story's properties, in source order."""
    root = parse_tsx(source.encode("utf-8"), "story.stories.tsx").root_node
    return [
        [(name, (value.text or b"").decode()) for name, value in object_props(config).items()]
        for config in story_configs(root)
    ]


def names(source: str) -> list[list[str]]:
    return [[name for name, _ in story] for story in story_properties(source)]


def test_intent_moves_right_after_args_in_every_story_of_a_file() -> None:
    moved = intent_after_args(TWO_STORIES, "story.stories.tsx")
    assert names(moved) == [["template", "args", "intent", "play"], ["template", "args", "description"]]
    assert [sorted(story) for story in story_properties(moved)] == [
        sorted(story) for story in story_properties(TWO_STORIES)
    ]


def test_a_story_not_written_one_property_a_line_is_left_as_it_is() -> None:
    one_line = (
        "import { story } from 'plaited/testing'\n\nexport const a = story({ intent: 'x', template: B, args: {} })\n"
    )
    no_args = (
        "import { story } from 'plaited/testing'\n\nexport const a = story({\n  intent: 'x',\n  template: B,\n})\n"
    )
    for source in (one_line, no_args):
        assert intent_after_args(source, "story.stories.tsx") == source


def test_reordered_reference_answers_write_args_first_and_still_pass(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    moved = examples = 0
    for row in eval_rows:
        reordered = reorder_row(row)
        answer = reordered["messages"][2]["content"]
        for call in parse_calls(answer).calls:
            if call.name == "writeStory":
                for story in names(str(call.arguments["content"])):
                    if "args" in story and "intent" in story:
                        assert story.index("intent") == story.index("args") + 1, row["id"]
        moved += answer != row["messages"][2]["content"]
        result = scorer.score(row, answer)
        assert result.story_passed and result.a11y_passed, (row["id"], result.errors)
        for example in re.findall(r"```tsx\n(.*?)\n```", reordered["messages"][1]["content"], re.DOTALL):
            for story in names(example):  # the prompt's example stories are reordered the same way
                if "args" in story and "intent" in story:
                    assert story.index("intent") == story.index("args") + 1, row["id"]
                    examples += 1
    assert moved > len(eval_rows) // 2
    assert examples > len(eval_rows) // 2


def test_quoted_words_count_only_outside_the_intent_line() -> None:
    only_intent = TWO_STORIES.replace("children: 'Save'", "children: 'Keep'")
    assert words_outside_intent('A "Save" button', TWO_STORIES) is True
    assert words_outside_intent('A "Save" button', only_intent) is False
    assert words_outside_intent("A button", TWO_STORIES) is None


def test_seeded_params_is_the_file_itself_or_a_copy_with_the_seed(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1234\nsft:\n  max_steps: 150\nevaluate:\n  unconstrained_models: [grpo]\n")
    assert seeded_params(params, None, tmp_path / "out") == params
    copy = seeded_params(params, 7, tmp_path / "out")
    assert copy == tmp_path / "out" / "params.yaml"
    assert yaml.safe_load(copy.read_text()) == {
        "seed": 7,
        "sft": {"max_steps": 150},
        "evaluate": {"unconstrained_models": []},
    }
    assert yaml.safe_load(params.read_text())["seed"] == 1234


def test_paired_sets_the_measured_sft_against_the_baseline_on_the_intents_both_scored(tmp_path: Path) -> None:
    ids = ["button/b.stories.tsx#one", "button/b.stories.tsx#two", "button/b.stories.tsx#three"]

    def evaluation(path: Path, rewards: list[float], passed: list[bool], intents: list[str]) -> Path:
        results = [
            intent_result(i, reward, story_passed=ok, intent=f'A "{i[-3:]}" button')
            for i, reward, ok in zip(intents, rewards, passed, strict=True)
        ]
        row = EvalRow(name="sft", metrics=summarize(results), per_intent=results, outputs=[""] * len(results))
        return write_model_eval(path, ModelEvalFile(model="sft", intents=intents, components=["button"], rows=[row]))

    baseline = evaluation(tmp_path / "baseline.json", [0.4, 1.0, 0.2], [False, True, False], ids)
    measured = evaluation(tmp_path / "measured.json", [0.6, 1.0], [True, True], ids[:2])  # `three` not scored

    result = paired(baseline, measured, "more_stories")

    assert result["intents"] == 2
    assert result["mean_reward"]["baseline"] == pytest.approx(0.7)
    assert result["mean_reward"]["more_stories"] == pytest.approx(0.8)
    assert result["stories_passed"] == {"baseline": 1, "more_stories": 2}
    assert result["reward_diff"]["mean"] == pytest.approx(0.1)
    assert result["story_diff"]["mean"] == pytest.approx(0.5)
    assert result["quoting_intents"] == 2
    other = evaluation(tmp_path / "other.json", [0.5], [False], ["card/c.stories.tsx#four"])
    with pytest.raises(InputError, match="no intent in common"):
        paired(baseline, other)
