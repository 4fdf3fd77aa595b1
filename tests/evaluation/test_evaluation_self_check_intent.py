"""benchmarks.self_check_intent: the stricter own check (the page shows every phrase the intent quotes)."""

from __future__ import annotations

from evaluation_helpers import STORIES

from benchmarks.self_check_intent import missing_phrases, quoted_check, quoted_phrases, replay_counts
from worldagent.config import RewardWeights
from worldagent.evaluation.evaluate import Scorer, prompts_of
from worldagent.evaluation.metrics import summarize
from worldagent.evaluation.model_eval import EvalRow, ModelEvalFile
from worldagent.evaluation.policies import StaticPolicy
from worldagent.evaluation.self_check import SelfCheckingPolicy, row_check
from worldagent.storytest.runner import PythonStoryRunner

COOKIES_ID = "checkbox/checkbox.stories.tsx#essentialCookiesLocked"


def test_quoted_phrases_are_the_users_own_words() -> None:
    intent = 'A "Create account"  button, a "Terms\n of  use" link and an unquoted Cancel; "" is nothing'
    assert quoted_phrases(intent) == ["Create account", "Terms of use"]
    assert quoted_phrases("Create a secondary button that says Cancel") == []


def test_a_phrase_counts_as_shown_in_text_names_or_states_and_case_matters() -> None:
    html = (
        '<button type="button">Create account</button>'
        '<input type="text" aria-label="Phone number" aria-describedby="hint" aria-invalid="true">'
        '<p id="hint">Enter 10 digits</p>'
        '<div role="progressbar" aria-label="Storage" aria-valuenow="12" aria-valuetext="12 GB of 15 GB used"></div>'
    )
    shown = 'A "Create account" button, a "Phone number" field hinting "Enter 10 digits", "12 GB of 15 GB used"'
    assert missing_phrases(shown, html) == []
    assert missing_phrases('"create account", "Sign in" and "Create account"', html) == ["create account", "Sign in"]


def test_the_quoted_check_fails_a_story_that_leaves_out_the_intents_words(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    rows = [row for row in eval_rows if row["id"] == COOKIES_ID]
    assert quoted_phrases(rows[0]["intent"]) == ["Essential cookies"]
    reference = rows[0]["messages"][2]["content"]
    wrong = reference.replace("label: 'Essential cookies'", "label: 'Marketing cookies'")
    plain, quoted = row_check(scorer, rows), quoted_check(scorer, rows)
    assert quoted(0, reference) and plain(0, reference)
    assert plain(0, wrong) and not quoted(0, wrong)  # renders accessibly, but not what the user asked for
    broken = reference.replace("export const", "export cnst", 1)
    assert not quoted(0, broken)  # the story's own failures still fail it


def test_a_self_checking_policy_with_the_quoted_check_answers_again_until_the_words_show(
    eval_rows, token_files
) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    rows = [row for row in eval_rows if row["id"] == COOKIES_ID]
    reference = rows[0]["messages"][2]["content"]
    wrong = reference.replace("label: 'Essential cookies'", "label: 'Marketing cookies'")
    first, retry = StaticPolicy([wrong]), StaticPolicy([reference])
    policy = SelfCheckingPolicy(first, lambda k: retry, quoted_check(scorer, rows), 2)
    assert policy.complete(prompts_of(rows)) == [reference]
    assert (policy.counts.first_passed, policy.counts.fixed, policy.counts.failed) == (0, 1, 0)


def test_the_benchmark_counts_what_the_stricter_check_catches_and_what_it_leaves_alone(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row = next(row for row in eval_rows if row["id"] == COOKIES_ID)
    reference = row["messages"][2]["content"]
    wrong = reference.replace("label: 'Essential cookies'", "label: 'Marketing cookies'")
    results = [scorer.score(row, answer) for answer in (reference, wrong)]
    evaluation = ModelEvalFile(
        model="sft",
        intents=[COOKIES_ID, COOKIES_ID],
        components=["checkbox"],
        rows=[EvalRow(name="sft", metrics=summarize(results), per_intent=results, outputs=[reference, wrong])],
    )
    assert replay_counts(evaluation, [row], scorer) == [
        {
            "row": "sft",
            "n": 2,
            "hidden_passed": 1,
            "own_passed": 2,
            "own_passed_hidden_failed": 1,
            "caught": 1,
            "false_alarms": 0,
        }
    ]
