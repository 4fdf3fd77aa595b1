"""benchmarks.state_wording: the states a failed answer missed, named by the intent or paraphrased."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluation_helpers import intent_result

from benchmarks.state_wording import (
    StateRow,
    main,
    missed_states,
    names_state,
    split_stories,
    state_rows,
    states_set,
)
from worldagent.errors import EXIT_INPUT_ERROR
from worldagent.evaluation.metrics import summarize
from worldagent.evaluation.model_eval import EvalRow, ModelEvalFile, write_model_eval

MISSED_DISABLED = 'assertion: expected button "Breakfast" [disabled=true, expanded=false] was not found'


def test_missed_states_are_the_true_states_of_missed_assertions() -> None:
    errors = [
        MISSED_DISABLED,
        'assertion: expected checkbox "Terms" [checked=true, required=true] was not found',
        'assertion: expected heading "Lunch" [level=2] was not found',
        'assertion: expected region "Keynote" was not found',
        "blocked writeStory: path-outside-sandbox",
    ]
    assert missed_states(errors) == {"disabled", "checked", "required"}
    assert missed_states(['expected button "A" [pressed=false] was not found']) == set()


@pytest.mark.parametrize(
    ("intent", "state", "named"),
    [
        ('A disabled "Archive" button', "disabled", True),
        ('A greyed-out "Archive" button that cannot be clicked', "disabled", False),
        ("Terms, already ticked", "checked", False),
        ("A Read-only field", "readonly", True),
        ("An undisabled-looking button", "disabled", False),  # part of a word is not the word
    ],
)
def test_an_intent_names_a_state_only_by_its_own_word(intent: str, state: str, named: bool) -> None:
    assert names_state(intent, state) is named


def test_states_set_reads_nested_arguments_true_only() -> None:
    args = {"sections": [{"title": "A", "disabled": True}, {"title": "B", "disabled": False}], "required": True}
    assert states_set(args) == {"disabled", "required"}
    assert states_set({"checked": "true", "label": "x"}) == set()


def test_state_rows_count_failures_and_training_stories() -> None:
    per_intent = [
        {"story_passed": False, "intent": "Two sessions that cannot be toggled", "errors": [MISSED_DISABLED]},
        {"story_passed": False, "intent": "A disabled submit", "errors": [MISSED_DISABLED]},
        {"story_passed": True, "intent": "passed: not counted", "errors": [MISSED_DISABLED]},
    ]
    train = [
        {"intent": "A greyed-out Save", "args": {"disabled": True}},
        {"intent": "A disabled Send", "args": {"items": [{"disabled": True}]}},
        {"intent": "A ticked box", "args": {"checked": True}},
    ]
    assert state_rows(per_intent, train) == [
        StateRow("disabled", missed=2, missed_named=1, train_stories=2, train_named=1),
        StateRow("checked", missed=0, missed_named=0, train_stories=1, train_named=0),
    ]


def test_the_command_reads_a_models_evaluation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "eval").mkdir()
    failed = intent_result("a#held", 0.3, intent="Greyed out", errors=[MISSED_DISABLED])
    row = EvalRow(name="sft", metrics=summarize([failed]), per_intent=[failed], outputs=["answer"])
    evaluation = ModelEvalFile(model="sft", intents=["a#held"], components=["a"], rows=[row])
    write_model_eval(tmp_path / "eval" / "sft.json", evaluation)
    (tmp_path / "stories.jsonl").write_text(
        json.dumps({"id": "a#held", "intent": "x", "args": {"disabled": True}})
        + "\n"
        + json.dumps({"id": "a#train", "intent": "A disabled one", "args": {"disabled": True}})
        + "\n"
    )
    (tmp_path / "eval.jsonl").write_text(json.dumps({"id": "a#held"}) + "\n")
    options = ["--eval-dir", str(tmp_path / "eval"), "--stories", str(tmp_path / "stories.jsonl")]
    options += ["--eval-trajectories", str(tmp_path / "eval.jsonl")]
    assert main([*options, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"state": "disabled", "missed": 1, "missed_named": 0, "train_stories": 1, "train_named": 1}
    ]
    assert main(options) == 0
    assert "Missed states: 1, 0 named by the intent, 1 paraphrased" in capsys.readouterr().out
    assert main([*options, "--model", "grpo"]) == EXIT_INPUT_ERROR
    assert "grpo.json: not found" in capsys.readouterr().err


def test_split_stories_holds_out_the_eval_rows_ids(tmp_path: Path) -> None:
    stories, evals = tmp_path / "stories.jsonl", tmp_path / "eval.jsonl"
    rows = [{"id": f"a/a.stories.tsx#s{i}", "intent": str(i)} for i in range(3)]
    stories.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    evals.write_text(json.dumps({"id": rows[1]["id"]}) + "\n", encoding="utf-8")
    assert split_stories(stories, evals) == ([rows[0], rows[2]], [rows[1]])
