"""Prompt-lookup drafts (worldagent/lm/speculation.py) and the continuous decoder's steps with them:
the drafts are what a search of the context finds, and an answer is the one-token decoder's answer
token for token (float32) in fewer steps."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_fixtures import PROMPTS
from test_lm_continuous import MANY, llama, stream

from worldagent.lm import continuous
from worldagent.lm.continuous import Request, decode_stream
from worldagent.lm.rollout import GenerationStats, SamplingConfig, encode_prompt
from worldagent.lm.speculation import NGRAM, PromptLookup


def _searched(tokens: list[int], limit: int) -> list[int]:
    """The draft by brute force: the longest tail (NGRAM tokens, then fewer) found earlier, the latest
    occurrence ending before the tail's own end, and up to ``limit`` of the tokens after it."""
    end = len(tokens)
    for n in range(min(NGRAM, end - 1), 0, -1):
        tail = tokens[end - n :]
        for start in range(end - n - 1, -1, -1):
            if tokens[start : start + n] == tail:
                return tokens[start + n : min(start + n + limit, end)]
    return []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=0, max_size=40),
    st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=6), max_size=8),
    st.integers(0, 6),
)
def test_a_draft_is_what_a_search_of_the_context_finds_however_it_grew(
    prompt: list[int], written: list[list[int]], limit: int
) -> None:
    lookup = PromptLookup(list(prompt))
    context = list(prompt)
    assert lookup.draft(limit) == _searched(context, limit)
    for tokens in written:  # an answer's tokens come a step at a time, one or several
        lookup.extend(tokens)
        context += tokens
        assert lookup.draft(limit) == _searched(context, limit)
        assert lookup.draft(limit) == PromptLookup(list(context)).draft(limit)


def test_a_draft_copies_what_followed_the_latest_earlier_occurrence() -> None:
    assert PromptLookup([1, 2, 3, 4, 9, 1, 2, 3, 5, 6, 1, 2, 3]).draft(3) == [5, 6, 1]
    assert PromptLookup([7, 8, 9, 8]).draft(4) == [9, 8]  # the tail "8" seen once before
    assert PromptLookup([1, 2, 3]).draft(4) == []  # no tail occurred before
    assert PromptLookup([1, 2, 1, 2]).draft(0) == []


def _row_steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of the rows each decode step carries, summed over the steps."""
    counted = [0]
    step = continuous._Batch.step

    def counting(batch: Any) -> None:
        counted[0] += len(batch.rows)
        step(batch)

    monkeypatch.setattr(continuous._Batch, "step", counting)
    return counted


@pytest.mark.parametrize("grammar", [False, True])
@pytest.mark.parametrize("slots,spare", [(3, None), (2, 0), (8, 1)])
def test_greedy_answers_with_drafts_are_the_one_token_decoders_in_fewer_steps(
    monkeypatch: pytest.MonkeyPatch, slots: int, spare: int | None, grammar: bool
) -> None:
    """Rows refill, drafts are kept and dropped (their columns written over by the next step): every
    answer is token for token the one-token decoder's (float32), the call grammar and the loop guard
    judging each drafted token in turn, and each kept draft saves a row a step."""
    from worldagent.lm.constrained import tool_call_processor_factory
    from worldagent.tools.registry import tool_schemas

    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=40, no_repeat_ngram=4 if grammar else 0)
    factory = tool_call_processor_factory(tokenizer, tool_schemas(), 40, model, calls_only=True) if grammar else None
    counted = _row_steps(monkeypatch)
    one, one_stats = stream(model, tokenizer, MANY, config, slots, spare, factory)
    one_steps, counted[0] = counted[0], 0
    drafted, stats = stream(model, tokenizer, MANY, replace(config, draft_tokens=4), slots, spare, factory)
    assert [a.token_ids for a in drafted] == [a.token_ids for a in one]
    assert [a.steered for a in drafted] == [a.steered for a in one]
    assert one_stats.drafted_tokens == one_stats.kept_drafts == 0
    assert stats.drafted_tokens > stats.kept_drafts > 0  # some drafts kept, some dropped
    assert counted[0] == one_steps - stats.kept_drafts
    assert stats.decoded_tokens == one_stats.decoded_tokens - stats.kept_drafts + stats.drafted_tokens


@pytest.mark.parametrize("draft_tokens", [0, 3])
def test_sampled_rows_draw_what_the_one_token_decoder_draws_beside_greedy_rows(draft_tokens: int) -> None:
    """One stream of greedy rows and sampled rows (each with its seed), drafting or not: every answer
    is the one a stream of its kind alone gives without drafts (a sampled row draws once a token, as
    a one-token step does)."""
    model, tokenizer = llama()
    greedy = SamplingConfig(max_new_tokens=32, no_repeat_ngram=3, draft_tokens=draft_tokens)
    sampled = SamplingConfig(max_new_tokens=32, do_sample=True, temperature=0.6, top_k=8, draft_tokens=draft_tokens)
    requests = [
        Request(tuple(encode_prompt(tokenizer, prompt)), config, seed=i, key=i)
        for i, (prompt, config) in enumerate([(p, greedy) for p in MANY] + [(p, sampled) for p in PROMPTS * 2])
    ]

    def answers(chosen: list[Request]) -> tuple[dict[int, list[int]], GenerationStats]:
        done: dict[int, list[int]] = {}
        stats = GenerationStats()
        decode_stream(model, tokenizer, chosen, lambda r, c: done.setdefault(r.key, c.token_ids) and [], 4, stats=stats)
        return done, stats

    mixed, stats = answers(requests)
    undrafted = [replace(r, config=replace(r.config, draft_tokens=0)) for r in requests]
    alone, _ = answers([r for r in undrafted if r.config.do_sample])
    one, _ = answers([r for r in undrafted if not r.config.do_sample])
    assert {key: mixed[key] for key in alone} == alone
    assert {key: mixed[key] for key in one} == one
    _, sampled_stats = answers([r for r in requests if r.config.do_sample])
    assert (sampled_stats.kept_drafts > 0) == (draft_tokens > 0)


def test_a_draft_never_runs_past_the_token_budget() -> None:
    model, tokenizer = llama()
    for budget in (1, 2, 5):
        config = SamplingConfig(max_new_tokens=budget, draft_tokens=8)
        answers, _ = stream(model, tokenizer, MANY, config, 3)
        plain, _ = stream(model, tokenizer, MANY, replace(config, draft_tokens=0), 3)
        assert [a.token_ids for a in answers] == [a.token_ids for a in plain]
        assert all(len(a.token_ids) + a.stopped <= budget for a in answers)


def test_a_batch_on_the_models_own_forward_takes_one_token_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drafts need the lean step (its rows of queries over one cache row); the model's forward
    decodes one token a row a step and gives the same answers."""
    from worldagent.lm import lean_step

    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=24, draft_tokens=4)
    drafted, _ = stream(model, tokenizer, MANY, config, 3)
    monkeypatch.setenv(lean_step.ENV, "off")
    forward, stats = stream(model, tokenizer, MANY, config, 3)
    assert stats.drafted_tokens == 0
    assert [a.token_ids for a in forward] == [a.token_ids for a in drafted]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(MANY) + len(PROMPTS) - 1), st.booleans(), st.integers(1, 30), st.sampled_from([0, 3])
        ),
        min_size=1,
        max_size=9,
    ),
    st.integers(1, 5),
    st.integers(1, 6),
)
def test_any_stream_with_drafts_answers_as_one_token_a_step(
    asked: list[tuple[int, bool, int, int]], slots: int, draft_tokens: int
) -> None:
    """Random streams (prompts, greedy or sampled, budgets, the loop guard, rows, draft sizes): every
    answer is the one-token decoder's, token for token (float32)."""
    model, tokenizer = llama()
    prompts = MANY + PROMPTS
    requests = [
        Request(
            tuple(encode_prompt(tokenizer, prompts[index])),
            SamplingConfig(
                max_new_tokens=budget,
                do_sample=sampled,
                temperature=0.8,
                no_repeat_ngram=guard,
                draft_tokens=draft_tokens,
            ),
            seed=key,
            key=key,
        )
        for key, (index, sampled, budget, guard) in enumerate(asked)
    ]

    def answers(chosen: list[Request]) -> dict[int, list[int]]:
        done: dict[int, list[int]] = {}
        decode_stream(model, tokenizer, chosen, lambda r, c: done.setdefault(r.key, c.token_ids) and [], slots)
        return done

    one = answers([replace(r, config=replace(r.config, draft_tokens=0)) for r in requests])
    assert answers(requests) == one
