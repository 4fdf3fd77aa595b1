"""benchmarks.repair_turn: training rows for a repair turn that only the fixed answer is trained on."""

from __future__ import annotations

from pathlib import Path

import torch
from evaluation_helpers import COOKIES_ID, STORIES, cookies_answers

from benchmarks.repair_turn import own_repairs, relabelled_repairs, repair_row
from benchmarks.self_check_intent import feedback_prompts, quoted_check
from worldagent.config import Params, RewardWeights
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.world_agent.evaluate import Scorer, prompts_of
from worldagent.world_agent.self_check import row_check


def _with_answer(row: dict, intent: str, answer: str, story_id: str) -> dict:
    messages = [*row["messages"][:2], {"role": "assistant", "content": answer}]
    return {**row, "id": story_id, "intent": intent, "messages": messages}


def test_relabelled_copies_give_repairs_both_ways_and_skip_what_shows_every_phrase(eval_rows) -> None:
    row, (reference, mislabelled, _) = cookies_answers(eval_rows)
    original = _with_answer(row, row["intent"], reference, COOKIES_ID)
    copy_intent = row["intent"].replace('"Essential cookies"', '"Marketing cookies"')
    mislabelled = mislabelled.replace(row["intent"], copy_intent)  # a copy's story states its own intent
    copy = {**_with_answer(row, copy_intent, mislabelled, f"{COOKIES_ID}~relabel-1"), "relabelled": {"x": "y"}}
    unquoted = _with_answer(row, "An always-on cookie option", reference, "checkbox/other.stories.tsx#plain")
    same_words = {**_with_answer(row, row["intent"], reference, f"{COOKIES_ID}~relabel-2"), "relabelled": {"x": "y"}}

    repairs = relabelled_repairs([original, copy, unquoted, same_words])

    # the copy answered with the original's labels, the original with its first copy's
    assert [r["completion"][0]["content"] for r in repairs] == [mislabelled, reference]
    to_copy, to_original = (r["prompt"] for r in repairs)
    assert to_copy == feedback_prompts(prompts_of([copy])[0], reference, copy_intent)["repair turn"]
    assert to_original[2]["content"] == mislabelled and '"Essential cookies"' in to_original[3]["content"]


def test_own_repairs_are_the_answers_that_pass_the_own_check_and_miss_a_quoted_phrase(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, answers = cookies_answers(eval_rows)
    rows = [row, row, row]
    repairs = own_repairs(rows, answers, row_check(scorer, rows), quoted_check(scorer, rows))
    assert repairs == [repair_row(prompts_of([row])[0], answers[1], row["intent"], answers[0])]


def test_a_repair_row_trains_the_fixed_answer_only(eval_rows, tiny_model, tmp_path: Path) -> None:
    from datasets import Dataset
    from trl import SFTTrainer

    from worldagent.world_agent.sft import sft_config

    model, tokenizer = tiny_model
    row, (reference, mislabelled, _) = cookies_answers(eval_rows)
    params = Params.model_validate({"sft": {"max_steps": 1, "max_length": 8192}})
    args = sft_config(params, params.sft, tmp_path, "cpu", torch.float32, model)
    repair = repair_row(prompts_of([row])[0], mislabelled, row["intent"], reference)
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list([repair]), processing_class=tokenizer)
    batch = trainer.data_collator([trainer.train_dataset[0]])
    labels, ids = batch["labels"][0], batch["input_ids"][0]
    trained = tokenizer.decode(ids[labels != -100])
    assert trained.strip().startswith(reference.strip()[:40])
    assert "Marketing cookies" not in trained and "Marketing cookies" in tokenizer.decode(ids)
