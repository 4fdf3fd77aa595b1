"""benchmarks.state_check: state cues mined from training intents, and the own check's third rank."""

from __future__ import annotations

from evaluation_helpers import STORIES, cookies_answers

from benchmarks.state_check import (
    OWN,
    STATES,
    WORDS,
    StateCues,
    mine_state_cues,
    phrases,
    prediction_counts,
    states_check,
)
from worldagent.config import RewardWeights
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.world_agent.evaluate import Scorer


def story(sid: str, intent: str, **args: object) -> dict:
    return {"id": f"{sid}/{sid}.stories.tsx#s", "intent": intent, "args": args}


def test_phrases_are_short_lowercase_runs_of_words_without_quoted_names() -> None:
    assert phrases('A "Greyed Out" button, greyed out', longest=2) == {
        "a",
        "button",
        "greyed",
        "out",
        "a button",
        "button greyed",
        "greyed out",
    }


def test_a_cue_needs_support_and_precision_among_the_components_that_set_the_state() -> None:
    stories = [
        story("button", "A greyed out Save button", disabled=True),
        story("button", "A greyed out Send button", disabled=True),
        story("button", "A Save button", disabled=False),
        story("button", "An unavailable Print button", disabled=True),  # one story: below the support
        story("button", "Greyed out, but clickable", disabled=False),  # "greyed out": 2 of 3 set it
        story("card", "A greyed out card"),  # cards never set disabled: not counted
    ]
    cues = mine_state_cues(stories, min_support=2, min_precision=0.6)
    assert cues.components == {"disabled": frozenset({"button"})}
    assert "greyed out" in cues.cues["disabled"] and "unavailable" not in cues.cues["disabled"]
    assert "greyed out" not in mine_state_cues(stories, min_support=2, min_precision=0.8).cues["disabled"]


def test_a_prediction_needs_a_cue_outside_the_quotes_and_a_component_that_sets_the_state() -> None:
    cues = StateCues({"disabled": frozenset({"button"})}, {"disabled": frozenset({"greyed out"})})
    assert cues.predict("button", "A greyed out Delete button") == {"disabled"}
    assert cues.predict("card", "A greyed out card") == set()
    assert cues.predict("button", 'A "Greyed out" button') == set()


def test_prediction_counts_right_wrong_and_missed_states() -> None:
    cues = StateCues({"disabled": frozenset({"button"})}, {"disabled": frozenset({"greyed out"})})
    held_out = [
        story("button", "A greyed out Archive button", disabled=True),
        story("button", "A greyed out Share button"),
        story("button", "An Undo button that cannot be clicked", disabled=True),
    ]
    assert prediction_counts(cues, held_out) == {"stories": 3, "predicted": 2, "right": 1, "wrong": 1, "missed": 1}


def test_the_third_rank_asks_the_page_for_every_predicted_state(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, (reference, mislabelled, unparsed) = cookies_answers(eval_rows)
    unlocked = reference.replace("disabled: true", "disabled: false")
    assert unlocked != reference
    locked = StateCues({"disabled": frozenset({"checkbox"})}, {"disabled": frozenset({"impossible to untick"})})
    level = states_check(scorer, [row], locked)
    assert [level(0, answer) for answer in (reference, unlocked, mislabelled, unparsed)] == [STATES, WORDS, OWN, 0]
    # nothing predicted: every answer that shows the words reaches the top
    assert states_check(scorer, [row], StateCues())(0, unlocked) == STATES
