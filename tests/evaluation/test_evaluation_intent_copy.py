"""benchmarks.intent_copy: a decoding nudge toward the words the intent names."""

from __future__ import annotations

import argparse
from functools import partial

import pytest
import torch
from evaluation_helpers import DATA, STORIES

from benchmarks.intent_copy import (
    Chained,
    IntentCopyBias,
    Setting,
    checked_policy,
    copy_policy,
    intent_phrases,
    parse_setting,
    phrase_token_sequences,
    prompt_lookup,
)
from worldagent.config import Params, RewardWeights
from worldagent.io import read_jsonl
from worldagent.lm.rollout import encode_prompt
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.world_agent.evaluate import Scorer, prompts_of, select_eval_rows
from worldagent.world_agent.policies import decoding_policy
from worldagent.world_agent.stages.evaluate_model import generate_rows, score_policy_row


def test_the_phrases_are_the_quoted_words_then_the_named_ones() -> None:
    intent = 'A "Photos to share" selection of beach.jpg, harbour.jpg and Sunset where "Select all" reads 3 of 3'
    assert intent_phrases(intent) == ["Photos to share", "Select all", "beach.jpg", "harbour.jpg", "Sunset", "3"]
    assert intent_phrases("Grey out a secondary action") == []  # the first word is capitalised as a sentence


def test_a_setting_reads_start_and_continue() -> None:
    assert parse_setting("1:4") == Setting(1.0, 4.0)
    assert parse_setting("2") == Setting(2.0, 2.0)
    assert parse_setting("0:0").name == "copy 0:0"
    for bad in ("a:1", "-1:2"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_setting(bad)


def _bias(setting: Setting, width: int = 2) -> IntentCopyBias:
    return IntentCopyBias(width, lambda prompt: [(5, 6, 7)] if prompt[0] == 1 else [], setting)


def test_the_first_token_is_raised_by_start_and_the_next_one_by_continue() -> None:
    bias = _bias(Setting(1.0, 4.0))
    scores = bias(torch.tensor([[1, 0], [2, 0]]), torch.zeros(2, 10))
    assert scores[0].tolist() == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    assert scores[1].abs().sum() == 0  # a row whose prompt names no phrase is left alone
    scores = bias(torch.tensor([[1, 0, 5], [2, 0, 5]]), torch.zeros(2, 10))
    assert (scores[0, 5].item(), scores[0, 6].item()) == (1.0, 4.0)
    scores = bias(torch.tensor([[1, 0, 5, 6], [2, 0, 5, 6]]), torch.zeros(2, 10))
    assert (scores[0, 6].item(), scores[0, 7].item()) == (0.0, 4.0)  # 5, 6 written: 7 continues it


def test_rows_that_leave_the_batch_take_their_phrases_with_them() -> None:
    bias = _bias(Setting(0.0, 4.0))
    bias(torch.tensor([[2, 0], [1, 0]]), torch.zeros(2, 10))
    bias.select_rows([1])
    scores = bias(torch.tensor([[1, 0, 5]]), torch.zeros(1, 10))
    assert scores[0, 6].item() == 4.0


def test_a_zero_setting_changes_nothing_and_a_forbidden_token_stays_forbidden() -> None:
    ids, scores = torch.tensor([[1, 0, 5]]), torch.randn(1, 10)
    assert torch.equal(_bias(Setting(0.0, 0.0))(ids, scores.clone()), scores)

    def grammar(_: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        s[:, 6] = float("-inf")
        return s

    chained = Chained([grammar, _bias(Setting(1.0, 4.0))])
    assert chained(ids, torch.zeros(1, 10))[0, 6].item() == float("-inf")


def test_each_phrase_is_tokenized_where_an_argument_starts(tiny_model) -> None:
    _, tokenizer = tiny_model
    sequences = phrase_token_sequences(tokenizer, ["harbour.jpg"])
    assert 1 <= len(sequences) <= 3 and len(set(sequences)) == len(sequences)
    for sequence in sequences:
        assert tokenizer.decode(list(sequence)) == "harbour.jpg"  # no quote, no space of its own
    rows = select_eval_rows(read_jsonl(DATA / "trajectories.eval.jsonl", "eval"), 2)
    lookup = prompt_lookup(tokenizer, [str(row["intent"]) for row in rows])
    expected = phrase_token_sequences(tokenizer, intent_phrases(str(rows[1]["intent"])))
    assert expected and lookup(encode_prompt(tokenizer, prompts_of(rows[1:])[0])) == expected


def test_no_bias_decodes_what_the_evaluation_decodes(tiny_model) -> None:
    model, tokenizer = tiny_model
    rows = select_eval_rows(read_jsonl(DATA / "trajectories.eval.jsonl", "eval"), 2)
    params = Params.model_validate({"evaluate": {"max_new_tokens": 24, "batch_size": 2, "no_repeat_ngram": 0}})
    evaluation = decoding_policy(model, tokenizer, constrained=True, max_new_tokens=24, batch_size=2)
    plain = copy_policy(model, tokenizer, params, rows, Setting(0.0, 0.0))
    assert plain.complete(prompts_of(rows)) == evaluation.complete(prompts_of(rows))


def test_no_bias_with_retries_answers_what_the_sft_evaluation_answers(tiny_model, token_files) -> None:
    model, tokenizer = tiny_model
    rows = select_eval_rows(read_jsonl(DATA / "trajectories.eval.jsonl", "eval"), 2)
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    settings = {"max_new_tokens": 24, "batch_size": 2, "self_check_attempts": 2, "unconstrained_models": []}
    params = Params.model_validate({"evaluate": settings})
    (evaluated,), _ = generate_rows(params, "sft", model, tokenizer, rows, scorer)
    decode = partial(copy_policy, model, tokenizer, params, rows, Setting(0, 0))
    row = score_policy_row("copy 0:0", checked_policy(decode, params, rows, scorer, True), rows, scorer)
    assert evaluated.self_check is not None and evaluated.self_check.retried_answers > 0  # the retries ran
    assert (row.outputs, row.self_check) == (evaluated.outputs, evaluated.self_check)
