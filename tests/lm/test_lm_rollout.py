"""Batched KV-cache generation: same greedy answers as one prompt at a time, seeded groups."""

from __future__ import annotations

import pytest
import torch
from model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer

from worldagent.lm.rollout import (
    BatchedPolicy,
    GenerationStats,
    SamplingConfig,
    constrained_policy,
    cut_at_stop,
    encode_prompt,
    generate_batched,
    generate_one_at_a_time,
    left_pad,
    pad_token_id,
    preallocated_cache,
    prefill_rows,
    prompt_occurrences,
    sampling_seed,
    shared_prefix_length,
    stop_token_ids,
)


def test_left_pad_right_aligns_every_prompt():
    ids, mask = left_pad([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_the_shared_prefix_leaves_every_row_a_token_of_its_own():
    assert shared_prefix_length([[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 2, 7]]) == 2
    assert shared_prefix_length([[1, 2, 3], [1, 2, 3, 4]]) == 2  # not all of the shorter row
    assert shared_prefix_length([[1, 2, 3]]) == 2
    assert shared_prefix_length([[5], [6, 7]]) == 0
    assert shared_prefix_length([]) == 0


def test_the_preallocated_cache_writes_in_place_and_follows_the_rows_kept():
    model, _ = tiny_model_and_tokenizer()
    cache = preallocated_cache(model, capacity=6)
    layer = next(layer for layer in cache.layers if hasattr(layer, "key_buffer"))  # a full-attention layer
    first = torch.randn(3, 1, 4, 2)
    keys, values = layer.update(first, -first)
    buffer = layer.key_buffer.data_ptr()
    step = torch.randn(3, 1, 1, 2)
    keys, values = layer.update(step, -step)
    assert layer.key_buffer.data_ptr() == buffer  # no new allocation for a step
    assert torch.equal(keys, torch.cat([first, step], dim=2)) and torch.equal(values, -keys)
    layer.batch_select_indices(torch.tensor([0, 2]))
    assert torch.equal(layer.keys, torch.cat([first, step], dim=2)[[0, 2]]) and layer.get_seq_length() == 5
    assert torch.equal(layer.values, -layer.keys)
    assert layer.key_buffer.data_ptr() == buffer  # the rows kept moved down in place
    with pytest.raises(ValueError, match="ascending order"):
        layer.batch_select_indices(torch.tensor([1, 0]))
    with pytest.raises(ValueError, match="holds 6 positions, 7 needed"):
        layer.update(torch.randn(2, 1, 2, 2), torch.randn(2, 1, 2, 2))


@pytest.fixture(params=["gemma", "llama"])
def model_and_tokenizer(request):
    """The tiny Gemma-3 (sliding-window layers: one padded prefill) and a tiny Llama (full attention
    only: prefilled row by row, the shared prefix once)."""
    model, tokenizer = tiny_model_and_tokenizer()
    return (model if request.param == "gemma" else tiny_llama_model()), tokenizer


def test_row_by_row_prefill_matches_one_padded_batch():
    model = tiny_llama_model()
    _, tokenizer = tiny_model_and_tokenizer()
    encoded = [encode_prompt(tokenizer, prompt) for prompt in PROMPTS]
    input_ids, mask = left_pad(encoded, pad_token_id(tokenizer))
    width, prefix = input_ids.shape[1], shared_prefix_length(encoded)
    assert prefix > 0
    with torch.inference_mode():
        rows = preallocated_cache(model, width + 4)
        logits = prefill_rows(model, input_ids, mask, prefix, rows)
        padded = preallocated_cache(model, width + 4)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        expected = model(input_ids=input_ids, attention_mask=mask, position_ids=positions, past_key_values=padded)
    torch.testing.assert_close(logits, expected.logits[:, -1, :], atol=1e-4, rtol=1e-4)
    real = mask.bool()[:, None, :, None]  # (rows, heads, columns, dim)
    for layer, reference in zip(rows.layers, padded.layers, strict=True):
        assert layer.get_seq_length() == width
        torch.testing.assert_close(layer.keys * real, reference.keys * real, atol=1e-4, rtol=1e-4)
        assert not layer.keys.masked_select(~real.expand_as(layer.keys)).any()  # padding columns stay zero


def test_batches_share_their_prompts_prefix():
    """The greedy-equality tests below run the shared-prefix prefill: the prompts share their system turn."""
    _, tokenizer = tiny_model_and_tokenizer()
    encoded = [encode_prompt(tokenizer, prompt) for prompt in PROMPTS]
    system = len(encode_prompt(tokenizer, PROMPTS[0][:1]))
    assert shared_prefix_length(encoded) >= system - 2


def test_cut_at_stop():
    assert cut_at_stop([4, 5, 1, 6], {1}) == ([4, 5], True)
    assert cut_at_stop([4, 5], {1}) == ([4, 5], False)


def test_stop_ids_include_end_of_turn_and_the_generation_config_eos():
    model, tokenizer = tiny_model_and_tokenizer()
    stops = stop_token_ids(tokenizer, model)
    assert tokenizer.convert_tokens_to_ids("<end_of_turn>") in stops
    assert tokenizer.convert_tokens_to_ids("<eos>") in stops


def test_greedy_batched_equals_one_prompt_at_a_time(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    config = SamplingConfig(max_new_tokens=24)
    batched = generate_batched(model, tokenizer, PROMPTS, config, batch_size=4)
    single = generate_one_at_a_time(model, tokenizer, PROMPTS, config)
    assert [g[0].token_ids for g in batched] == [g[0].token_ids for g in single]
    assert all(len(g) == 1 for g in batched)
    assert len({g[0].text for g in batched}) > 1  # prompts of different lengths really differ


class StopAfter:
    """Stateless: forces the stop token once a row has written ``1 + (sum of its prompt ids) % 9``
    tokens, so the rows of one batch stop at different steps."""

    def __init__(self, prompt_width: int, stop: int, pad: int) -> None:
        self.prompt_width, self.stop, self.pad = prompt_width, stop, pad

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        written = input_ids.shape[1] - self.prompt_width
        for row, ids in enumerate(input_ids[:, : self.prompt_width].tolist()):
            if written == 1 + sum(t for t in ids if t != self.pad) % 9:
                scores[row] = float("-inf")
                scores[row, self.stop] = 0.0
        return scores


def test_rows_that_stop_early_leave_the_batch_without_changing_any_answer(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    stop, pad = stop_token_ids(tokenizer, model)[0], tokenizer.pad_token_id
    factory = lambda width: StopAfter(width, stop, pad)  # noqa: E731
    config = SamplingConfig(max_new_tokens=12, no_repeat_ngram=2)  # the guard's row state is followed too
    batched = generate_batched(model, tokenizer, PROMPTS, config, batch_size=len(PROMPTS), logits_processor=factory)
    single = generate_one_at_a_time(model, tokenizer, PROMPTS, config, logits_processor=factory)
    lengths = [len(g[0].token_ids) for g in batched]
    assert len(set(lengths)) > 1 and all(g[0].stopped for g in batched)  # rows really left at different steps
    assert [g[0].token_ids for g in batched] == [g[0].token_ids for g in single]


def test_constrained_answers_are_the_same_batched_and_one_at_a_time(model_and_tokenizer):
    from worldagent.lm.constrained import tool_call_processor_factory
    from worldagent.tools.registry import tool_schemas

    model, tokenizer = model_and_tokenizer
    config = SamplingConfig(max_new_tokens=40, no_repeat_ngram=3)
    factory = tool_call_processor_factory(tokenizer, tool_schemas(), config.max_new_tokens, model, calls_only=True)
    batched = generate_batched(model, tokenizer, PROMPTS, config, batch_size=len(PROMPTS), logits_processor=factory)
    single = generate_one_at_a_time(model, tokenizer, PROMPTS, config, logits_processor=factory)
    assert [g[0].token_ids for g in batched] == [g[0].token_ids for g in single]


def test_seeded_sampling_is_deterministic_and_groups_have_the_requested_size(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    config = SamplingConfig(max_new_tokens=16, do_sample=True, num_return_sequences=4, seed=5)
    first = generate_batched(model, tokenizer, PROMPTS, config, batch_size=2)
    again = generate_batched(model, tokenizer, PROMPTS, config, batch_size=2)
    other = generate_batched(model, tokenizer, PROMPTS, SamplingConfig(**{**config.__dict__, "seed": 6}), batch_size=2)
    texts = [[c.text for c in group] for group in first]
    assert texts == [[c.text for c in group] for group in again]
    assert texts != [[c.text for c in group] for group in other]
    assert all(len(group) == 4 for group in texts)
    assert any(len(set(group)) > 1 for group in texts)  # a group really samples


def test_a_prompts_samples_do_not_depend_on_the_prompts_beside_it(model_and_tokenizer):
    # the retry of one prompt must not change because another prompt is (or is no longer) retried
    # with it: per-batch seeding made every retried prompt's sample depend on the whole subset
    model, tokenizer = model_and_tokenizer
    config = SamplingConfig(max_new_tokens=16, do_sample=True, num_return_sequences=2, seed=3)
    together = generate_batched(model, tokenizer, PROMPTS, config, batch_size=len(PROMPTS))
    for index, prompt in enumerate(PROMPTS):
        alone = generate_batched(model, tokenizer, [prompt], config, batch_size=1)
        assert [c.token_ids for c in alone[0]] == [c.token_ids for c in together[index]]
    reordered = generate_batched(model, tokenizer, PROMPTS[::-1], config, batch_size=2)
    assert [[c.token_ids for c in g] for g in reordered[::-1]] == [[c.token_ids for c in g] for g in together]


def test_a_prompt_asked_twice_in_one_call_draws_two_samples(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    config = SamplingConfig(max_new_tokens=16, do_sample=True, seed=3)
    groups = generate_batched(model, tokenizer, [PROMPTS[0]] * 4, config, batch_size=4)
    assert len({tuple(group[0].token_ids) for group in groups}) > 1
    assert prompt_occurrences([[1, 2], [3], [1, 2], [1, 2]]) == [0, 0, 1, 2]


def test_sampling_seeds_are_stable_and_tell_every_part_apart():
    seeds = {
        sampling_seed(0, [1, 2, 3], 0, 0),
        sampling_seed(1, [1, 2, 3], 0, 0),
        sampling_seed(0, [1, 2, 4], 0, 0),
        sampling_seed(0, [1, 2, 3], 1, 0),
        sampling_seed(0, [1, 2, 3], 0, 1),
        sampling_seed(0, [12, 3], 0, 0),
    }
    assert len(seeds) == 6
    assert all(0 <= seed < 2**63 for seed in seeds)
    assert sampling_seed(0, [1, 2, 3], 0, 0) == 4804720172448998833  # the same on every run and machine


def test_the_global_rng_is_left_alone():
    model, tokenizer = tiny_model_and_tokenizer()
    torch.manual_seed(0)
    expected = torch.rand(1)
    torch.manual_seed(0)
    generate_batched(model, tokenizer, PROMPTS[:1], SamplingConfig(max_new_tokens=4, do_sample=True, seed=1))
    assert torch.equal(torch.rand(1), expected)


def test_stats_and_policy():
    model, tokenizer = tiny_model_and_tokenizer()
    stats = GenerationStats()
    generate_batched(model, tokenizer, PROMPTS, SamplingConfig(max_new_tokens=8), batch_size=2, stats=stats)
    assert (stats.prompts, stats.completions, stats.batches) == (5, 5, 3)
    assert 0 < stats.new_tokens <= 40 and stats.tokens_per_second > 0
    policy = BatchedPolicy(model, tokenizer, SamplingConfig(max_new_tokens=8), batch_size=2)
    assert len(policy.complete([list(p) for p in PROMPTS])) == len(PROMPTS)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_new_tokens": 0},
        {"num_return_sequences": 0},
        {"num_return_sequences": 2},
        {"do_sample": True, "temperature": 0},
    ],
)
def test_bad_sampling_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        SamplingConfig(**kwargs)


def test_constrained_policy_answers_with_parseable_calls_only():
    from worldagent.tools.callformat import parse_calls
    from worldagent.tools.registry import tool_schemas

    model, tokenizer = tiny_model_and_tokenizer()
    policy = constrained_policy(model, tokenizer, tool_schemas(), SamplingConfig(max_new_tokens=40), batch_size=3)
    for answer in policy.complete([list(p) for p in PROMPTS]):
        parsed = parse_calls(answer)
        assert parsed.calls and not parsed.errors and not parsed.text.strip()
