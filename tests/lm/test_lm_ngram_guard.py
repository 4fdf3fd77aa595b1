"""The loop guard: no n-gram the completion already wrote is written again; the prompt does not count."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from model_fixtures import PROMPTS, tiny_model_and_tokenizer

from worldagent.lm.ngram_guard import GeneratedNgramGuard
from worldagent.lm.rollout import SamplingConfig, constrained_policy, generate_batched


def repeated_ngrams(tokens: list[int], n: int) -> int:
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return len(grams) - len(set(grams))


def guard_scores(guard: GeneratedNgramGuard, sequence: list[int], vocab: int = 8) -> torch.Tensor:
    """Feed ``sequence`` one token a step, as generate does; the scores after the last step."""
    scores = torch.zeros(1, vocab)
    for end in range(guard.prompt_width, len(sequence) + 1):
        scores = guard(torch.tensor([sequence[:end]]), torch.zeros(1, vocab))
    return scores


def test_the_token_that_would_repeat_a_generated_ngram_is_pushed_down():
    guard = GeneratedNgramGuard(prompt_width=2, ngram=3, penalty=100.0)
    scores = guard_scores(guard, [7, 7, 1, 2, 3, 1, 2])  # generated 1 2 3 1 2: "1 2 3" again is banned
    assert scores[0, 3] == -100.0
    assert (scores[0, [0, 1, 2, 4, 5, 6, 7]] == 0).all()


def test_ngrams_of_the_prompt_do_not_count():
    guard = GeneratedNgramGuard(prompt_width=3, ngram=3, penalty=100.0)
    scores = guard_scores(guard, [1, 2, 3, 1, 2])  # "1 2 3" is in the prompt only: copying it is fine
    assert (scores == 0).all()


def test_a_token_the_grammar_forces_still_wins():
    guard = GeneratedNgramGuard(prompt_width=0, ngram=2, penalty=1e4)
    forced = torch.full((1, 4), float("-inf"))
    forced[0, 1] = 0.0
    guard(torch.tensor([[1]]), forced.clone())
    scores = guard(torch.tensor([[1, 1]]), forced.clone())  # "1 1" again is banned, but 1 is all there is
    assert scores.argmax().item() == 1 and torch.isfinite(scores[0, 1])


def test_generation_with_the_guard_never_repeats_an_ngram():
    model, tokenizer = tiny_model_and_tokenizer()
    free = generate_batched(model, tokenizer, PROMPTS, SamplingConfig(max_new_tokens=48), batch_size=2)
    guarded = generate_batched(
        model, tokenizer, PROMPTS, SamplingConfig(max_new_tokens=48, no_repeat_ngram=3), batch_size=2
    )
    assert sum(repeated_ngrams(g[0].token_ids, 3) for g in free) > 0  # the untrained model loops
    assert all(repeated_ngrams(g[0].token_ids, 3) == 0 for g in guarded)


def test_constrained_answers_with_the_guard_still_parse():
    from worldagent.tools.callformat import parse_calls
    from worldagent.tools.registry import tool_schemas

    model, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=40, no_repeat_ngram=4)
    for answer in constrained_policy(model, tokenizer, tool_schemas(), config, batch_size=3).complete(
        [list(p) for p in PROMPTS]
    ):
        parsed = parse_calls(answer)
        assert parsed.calls and not parsed.errors


@pytest.mark.parametrize("ngram", [1, -1])
def test_a_guard_shorter_than_two_is_refused(ngram):
    with pytest.raises(ValueError):
        SamplingConfig(no_repeat_ngram=ngram)
    if ngram == 1:
        with pytest.raises(ValueError):
            GeneratedNgramGuard(0, ngram)


def banned_by_definition(generated: list[int], ngram: int) -> set[int]:
    """The tokens that would end an n-gram ``generated`` already holds, after its last n - 1 tokens."""
    if len(generated) < ngram - 1:
        return set()
    last = tuple(generated[len(generated) - ngram + 1 :])
    return {
        generated[end - 1]
        for end in range(ngram, len(generated) + 1)
        if tuple(generated[end - ngram : end - 1]) == last
    }


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=30), min_size=1, max_size=3),
    prompt=st.integers(0, 4),
    ngram=st.integers(2, 5),
)
def test_the_guard_bans_at_every_step_what_the_definition_bans(rows, prompt, ngram):
    length = min(map(len, rows))
    sequences = [[9] * prompt + row[:length] for row in rows]
    guard = GeneratedNgramGuard(prompt_width=prompt, ngram=ngram, penalty=1.0)
    for end in range(prompt, prompt + length + 1):
        scores = guard(torch.tensor([s[:end] for s in sequences]), torch.zeros(len(rows), 10))
        for index, sequence in enumerate(sequences):
            banned = {int(t) for t in (scores[index] < 0).nonzero().flatten()}
            assert banned == banned_by_definition(sequence[prompt:end], ngram)
