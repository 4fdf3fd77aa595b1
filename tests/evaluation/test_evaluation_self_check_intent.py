"""benchmarks.self_check_intent: the stricter own check (the page shows every phrase the intent quotes)."""

from __future__ import annotations

from evaluation_helpers import COOKIES_ID, STORIES, cookies_answers, scored_row

from benchmarks.self_check_intent import (
    OWN,
    SHOWN,
    TieredSelfCheckingPolicy,
    feedback_prompts,
    feedback_targets,
    missing_phrases,
    quoted_check,
    quoted_phrases,
    replay_counts,
    tiered_check,
)
from worldagent.config import RewardWeights
from worldagent.evaluation.evaluate import Scorer, prompts_of
from worldagent.evaluation.model_eval import ModelEvalFile
from worldagent.evaluation.policies import StaticPolicy
from worldagent.evaluation.self_check import SelfCheckingPolicy, row_check
from worldagent.storytest.runner import PythonStoryRunner


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
    row, (reference, wrong, broken) = cookies_answers(eval_rows)
    assert quoted_phrases(row["intent"]) == ["Essential cookies"]
    plain, quoted = row_check(scorer, [row]), quoted_check(scorer, [row])
    assert quoted(0, reference) and plain(0, reference)
    assert plain(0, wrong) and not quoted(0, wrong)  # renders accessibly, but not what the user asked for
    assert not quoted(0, broken)  # the story's own failures still fail it


def test_a_self_checking_policy_with_the_quoted_check_answers_again_until_the_words_show(
    eval_rows, token_files
) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, (reference, wrong, _) = cookies_answers(eval_rows)
    rows = [row]
    first, retry = StaticPolicy([wrong]), StaticPolicy([reference])
    policy = SelfCheckingPolicy(first, lambda k: retry, quoted_check(scorer, rows), 2)
    assert policy.complete(prompts_of(rows)) == [reference]
    assert (policy.counts.first_passed, policy.counts.fixed, policy.counts.failed) == (0, 1, 0)


def test_the_tiered_check_keeps_the_best_level_and_retries_only_below_the_top() -> None:
    levels = {"shown a": SHOWN, "own b": OWN, "bad b": 0, "shown b": SHOWN, "bad c": 0, "own c": OWN, "own c2": OWN}
    asked: list[list[str]] = []

    class Answers(StaticPolicy):
        def __init__(self, by_prompt: dict[str, str]) -> None:
            super().__init__([])
            self.by_prompt = by_prompt

        def complete(self, prompts):
            asked.append([prompt[0]["content"] for prompt in prompts])
            return [self.by_prompt[prompt[0]["content"]] for prompt in prompts]

    first = Answers({"a": "shown a", "b": "own b", "c": "bad c"})
    retries = [Answers({"b": "bad b", "c": "own c"}), Answers({"b": "shown b", "c": "own c2"})]
    policy = TieredSelfCheckingPolicy(first, lambda k: retries[k - 1], lambda i, answer: levels[answer], 2)
    prompts = [[{"role": "user", "content": name}] for name in "abc"]
    # b: a worse retry never replaces a better answer, a better one does; c: an equal level keeps the earlier
    assert policy.complete(prompts) == ["shown a", "shown b", "own c"]
    assert asked == [["a", "b", "c"], ["b", "c"], ["b", "c"]]
    assert policy.answered_by == [0, 2, 1]
    assert policy.first_levels == [SHOWN, OWN, 0] and policy.levels == [SHOWN, SHOWN, OWN]
    counts = policy.counts
    assert (counts.first_passed, counts.fixed, counts.failed, counts.retried_answers) == (1, 1, 1, 4)


def test_the_tiered_check_ranks_the_words_above_the_own_check(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, (reference, wrong, broken) = cookies_answers(eval_rows)
    level = tiered_check(scorer, [row])
    assert [level(0, answer) for answer in (reference, wrong, broken)] == [SHOWN, OWN, 0]
    # where no retry shows the words, the answer the own check passes stays (not the first one)
    policy = TieredSelfCheckingPolicy(StaticPolicy([broken]), lambda k: StaticPolicy([wrong]), level, 2)
    assert policy.complete(prompts_of([row])) == [wrong]


def test_the_benchmark_counts_what_the_stricter_check_catches_and_what_it_leaves_alone(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, answers = cookies_answers(eval_rows)
    evaluation = ModelEvalFile(
        model="sft",
        intents=[COOKIES_ID, COOKIES_ID],
        components=["checkbox"],
        rows=[scored_row(scorer, row, answers[:2])],  # the reference and the mislabelled one
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


def test_feedback_names_the_missing_words_in_the_request_or_in_a_repair_turn(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, answers = cookies_answers(eval_rows)
    wrong = answers[1]
    kept = scored_row(scorer, row, answers)
    # only the answer that passes the own check and leaves out the quoted words is told again
    assert feedback_targets(kept, [row, row, row], scorer) == [1]

    prompt = prompts_of([row])[0]
    forms = feedback_prompts(prompt, wrong, row["intent"])
    appended, repair = forms["appended"], forms["repair turn"]
    assert appended[0] == prompt[0] and len(appended) == 2
    assert appended[1]["content"].startswith(prompt[1]["content"])
    assert '("Essential cookies")' in appended[1]["content"]
    assert [message["role"] for message in repair] == ["system", "user", "assistant", "user"]
    assert repair[:2] == prompt and repair[2]["content"] == wrong
    assert repair[3]["content"] == appended[1]["content"][len(prompt[1]["content"]) + 2 :]
    assert prompt == prompts_of([row])[0]  # the prompt itself is left as it was


def test_a_rerun_swaps_the_check_in_for_its_own_call_only(monkeypatch) -> None:
    from benchmarks import self_check_intent
    from worldagent.evaluation.stages import evaluate_model as evaluate_stage

    seen = []
    monkeypatch.setattr(
        evaluate_stage,
        "evaluate_model",
        lambda *args, **kwargs: (seen.append((evaluate_stage.row_check, evaluate_stage.SelfCheckingPolicy)), None),
    )
    for tiered in (False, True):
        self_check_intent.rerun_stage(None, "sft", [], None, tiered=tiered)
        assert evaluate_stage.row_check is row_check and evaluate_stage.SelfCheckingPolicy is SelfCheckingPolicy
    assert seen == [(quoted_check, SelfCheckingPolicy), (tiered_check, TieredSelfCheckingPolicy)]
