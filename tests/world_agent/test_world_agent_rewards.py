"""The GRPO reward: story tests through the constraints (blocked or unparsable → 0)."""

from __future__ import annotations

import re

import pytest

from tests.lm.training_fixtures import STORIES, TRAJECTORIES, real_single_turn_rows
from worldagent.config import RewardWeights
from worldagent.tools.callformat import parse_calls, render_calls
from worldagent.world_agent.rewards import StoryTestReward, completion_text, story_test_reward


def _reference(row: dict) -> dict:
    return {
        "id": row["id"],
        "prompt": row["messages"][:-1],
        "answer": row["messages"][-1]["content"],
        "reward": row["reward"],
        "given_files": row["given_files"],
    }


@pytest.fixture(scope="module")
def reference() -> dict:
    """A task that creates its component: nothing but the tokens is given."""
    return _reference(next(row for row in real_single_turn_rows(200) if not row["given_files"]))


@pytest.fixture(scope="module")
def existing_component() -> dict:
    """A task that adds a story to an existing component: its styles and template module are given."""
    return _reference(next(row for row in real_single_turn_rows(200) if row["given_files"]))


def _as_completion(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


def _inline_styled(answer: str) -> str:
    """The reference answer with an inline ``style`` on the first JSX element of its template (or story)."""
    calls = parse_calls(answer).calls
    for call in calls:
        content = call.arguments.get("content")
        if call.name not in ("writeTemplate", "writeStory") or not isinstance(content, str):
            continue
        match = re.search(r"<([a-z][a-z0-9]*)\b", content)
        if match is None:
            continue
        call.arguments["content"] = content[: match.end()] + " style={{ padding: '4px' }}" + content[match.end() :]
        return render_calls(calls)
    raise AssertionError("no JSX element in the reference answer")


def test_reference_completion_scores_high_garbage_and_inline_styles_score_zero(reference: dict) -> None:
    reward = StoryTestReward(STORIES)
    prompts = [reference["prompt"]] * 4
    completions = [
        _as_completion(reference["answer"]),
        _as_completion("I would write a button here."),  # no calls
        _as_completion(reference["answer"][: len(reference["answer"]) // 2]),  # cut off mid-call: unparsable
        _as_completion(_inline_styled(reference["answer"])),  # blocked by the inline-style constraint
    ]
    scores = reward(prompts=prompts, completions=completions, id=[reference["id"]] * 4)
    assert scores[0] >= 0.8
    assert scores[0] == pytest.approx(reference["reward"])  # the same score the generate stage gave it
    assert scores[1:] == [0.0, 0.0, 0.0]


def test_function_form_plain_text_completions_and_weights(reference: dict) -> None:
    scores = story_test_reward(
        [reference["prompt"]],
        [reference["answer"]],
        [reference["id"]],
        stories_root=STORIES,
        weights=RewardWeights(passed=1.0, a11y=0.0, assertions=0.0),
    )
    assert scores == [1.0]


def test_completion_ids_are_decoded_with_the_call_markers_kept(reference: dict) -> None:
    class Tokenizer:
        def decode(self, ids, skip_special_tokens=False):
            assert skip_special_tokens is False
            return reference["answer"] if ids == [1] else "garbage"

    reward = StoryTestReward(STORIES, tokenizer=Tokenizer())
    # trl's own decoded text (markers stripped) is ignored in favour of the ids
    scores = reward(
        prompts=[[], []],
        completions=[_as_completion("call:runStory"), _as_completion("x")],
        id=[reference["id"]] * 2,
        completion_ids=[[1], [2]],
    )
    assert scores[0] >= 0.8 and scores[1] == 0.0


def test_completion_text_shapes() -> None:
    assert completion_text("abc") == "abc"
    assert completion_text([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]) == "ab"
    assert completion_text({"role": "assistant", "content": "c"}) == "c"


def test_bad_story_id_is_reported(reference: dict) -> None:
    with pytest.raises(ValueError, match="not '<file>#<export>'"):
        StoryTestReward(STORIES)(prompts=[[]], completions=[reference["answer"]], id=["no-export"])


def test_given_files_column_seeds_the_sandbox_of_an_existing_component(existing_component: dict) -> None:
    import json

    from worldagent.world_agent.experience_loop import prompt_rows

    reward = StoryTestReward(STORIES)
    given = json.dumps(existing_component["given_files"], sort_keys=True)
    answer = _as_completion(existing_component["answer"])
    with_given, without = reward(
        prompts=[[]] * 2, completions=[answer] * 2, id=[existing_component["id"]] * 2, given_files=[given, "[]"]
    )
    assert with_given == pytest.approx(existing_component["reward"]) and with_given >= 0.8
    assert without < with_given  # the story imports a template module that only the given files provide
    assert any(row["given_files"] != "[]" for row in prompt_rows(TRAJECTORIES, 200))
