"""benchmarks.self_check_intent: the stricter own check (the page shows every phrase the intent quotes)."""

from __future__ import annotations

from evaluation_helpers import COOKIES_ID, STORIES, cookies_answers, scored_row

from benchmarks.self_check_intent import feedback_prompts, feedback_targets, replay_counts
from worldagent.config import Params, RewardWeights
from worldagent.evaluation.model_eval import ModelEvalFile
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.world_agent.evaluate import Scorer, prompts_of
from worldagent.world_agent.self_check import quoted_check, row_check


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
    from worldagent.world_agent.stages import evaluate_model as evaluate_stage

    seen = []
    monkeypatch.setattr(
        evaluate_stage,
        "evaluate_model",
        lambda params, *args, **kwargs: (
            seen.append((evaluate_stage.row_check, params.evaluate.self_check_words)),
            None,
        ),
    )
    params = Params()
    for tiered in (False, True):
        self_check_intent.rerun_stage(params, "sft", [], None, tiered=tiered)
        assert evaluate_stage.row_check is row_check
    # the stricter check alone: patched in with the ranks off; as ranks: the evaluation's own setting
    assert seen == [(quoted_check, False), (row_check, True)]
