"""Every prompt prefilled once per model: group members, repeated prompts and retries reuse it, and
the counts say how far the work is from the least any engine must do."""

from __future__ import annotations

import pytest
import torch
from model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer

from worldagent.lm.rollout import (
    GenerationStats,
    ModelShape,
    PromptCache,
    SamplingConfig,
    encode_prompt,
    full_attention_only,
    generate_batched,
    shared_prefix_length,
    unique_prefix_tokens,
)


def llama():
    _, tokenizer = tiny_model_and_tokenizer()
    return tiny_llama_model(), tokenizer


def test_unique_prefix_tokens_counts_the_prompts_trie():
    assert unique_prefix_tokens([[1, 2, 3], [1, 2, 4], [1, 2, 3], [5]]) == 5
    assert unique_prefix_tokens([[1, 2], [1, 2, 3]]) == 3
    assert unique_prefix_tokens([]) == 0


def test_a_retry_prefills_nothing_and_answers_as_a_fresh_decoding_does():
    model, tokenizer = llama()
    store = PromptCache()
    greedy, sampled = SamplingConfig(max_new_tokens=6), SamplingConfig(max_new_tokens=6, do_sample=True, seed=4)
    first_stats, retry_stats = GenerationStats(), GenerationStats()
    first = generate_batched(model, tokenizer, PROMPTS, greedy, 2, stats=first_stats, prompt_cache=store)
    retry = generate_batched(model, tokenizer, PROMPTS[1:4], sampled, 2, stats=retry_stats, prompt_cache=store)
    assert first_stats.prefilled_tokens > 0 and retry_stats.prefilled_tokens == 0
    assert (
        retry_stats.reused_tokens
        == retry_stats.prompt_tokens
        == sum(len(encode_prompt(tokenizer, p)) for p in PROMPTS[1:4])
    )
    # the same answers as without any kept prompt: greedy token for token, samples for the same seed
    assert [g[0].token_ids for g in first] == [
        g[0].token_ids for g in generate_batched(model, tokenizer, PROMPTS, greedy, 2)
    ]
    assert [g[0].token_ids for g in retry] == [
        g[0].token_ids for g in generate_batched(model, tokenizer, PROMPTS[1:4], sampled, 2)
    ]


def test_group_members_and_batches_share_one_prefill_and_stay_near_the_minimum():
    model, tokenizer = llama()
    encoded = [encode_prompt(tokenizer, p) for p in PROMPTS]
    prefix = shared_prefix_length(encoded)
    config = SamplingConfig(max_new_tokens=5, do_sample=True, num_return_sequences=4, seed=2)
    stats = GenerationStats()
    groups = generate_batched(model, tokenizer, PROMPTS + PROMPTS[:1], config, batch_size=2, stats=stats)
    assert [len(g) for g in groups] == [4] * 6
    # the call's prefix once, each distinct prompt's own tokens once: not once a batch, a sample or a copy
    assert stats.prefilled_tokens == prefix + sum(len(ids) - prefix for ids in encoded)
    assert stats.prompt_tokens == 4 * (sum(len(ids) for ids in encoded) + len(encoded[0]))
    assert stats.unique_prompt_tokens == unique_prefix_tokens(encoded) <= stats.prefilled_tokens
    # an answer's first token comes from the prefill and its last is never run through the model
    assert stats.decoded_tokens == stats.new_tokens - stats.completions
    assert stats.minimum_tokens == stats.unique_prompt_tokens + stats.decoded_tokens
    assert 1.0 <= stats.spent_over_minimum <= 1.3
    shape = ModelShape.of(model)
    assert shape.minimum_flops(stats) <= shape.spent_flops(stats)


def test_without_a_shared_cache_every_call_prefills_again():
    model, tokenizer = llama()
    stats = GenerationStats()
    for _ in range(2):
        generate_batched(model, tokenizer, PROMPTS[:2], SamplingConfig(max_new_tokens=2), 2, stats=stats)
    assert stats.spent_over_minimum > 1.5  # the counter sees the repeated work


def test_a_sliding_window_model_prefills_each_distinct_row_once():
    model, tokenizer = tiny_model_and_tokenizer()
    assert not full_attention_only(model) and full_attention_only(tiny_llama_model())
    config = SamplingConfig(max_new_tokens=4, do_sample=True, num_return_sequences=3, seed=1)
    stats = GenerationStats()
    together = generate_batched(model, tokenizer, PROMPTS[:2], config, batch_size=2, stats=stats)
    width = max(len(encode_prompt(tokenizer, p)) for p in PROMPTS[:2])
    assert stats.prefilled_tokens == 2 * width  # not 6 rows: the copies take the cache of their prompt
    alone = [generate_batched(model, tokenizer, [p], config, batch_size=1)[0] for p in PROMPTS[:2]]
    assert [[c.token_ids for c in g] for g in together] == [[c.token_ids for c in g] for g in alone]


def test_the_budget_drops_prompts_and_they_are_prefilled_again():
    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=3)
    store, stats = PromptCache(max_bytes=0), GenerationStats()
    kept = generate_batched(model, tokenizer, PROMPTS[:3], config, 3, stats=stats, prompt_cache=store)
    assert len(store) == 0 and store.nbytes == 0
    again = GenerationStats()
    generate_batched(model, tokenizer, PROMPTS[:3], config, 3, stats=again, prompt_cache=store)
    assert again.prefilled_tokens == stats.prefilled_tokens
    roomy = PromptCache()
    assert [g[0].token_ids for g in generate_batched(model, tokenizer, PROMPTS[:3], config, 3, prompt_cache=roomy)] == [
        g[0].token_ids for g in kept
    ]
    assert roomy.nbytes == sum(entry.nbytes for entry in roomy.entries.values()) > 0


@pytest.mark.parametrize("constrained", [False, True])
def test_a_self_check_retry_reuses_the_first_decodings_prompts(constrained):
    from worldagent.world_agent.policies import decoding_policy
    from worldagent.world_agent.self_check import SelfCheckingPolicy

    model, tokenizer = llama()
    store = PromptCache()
    decode = lambda **kw: decoding_policy(  # noqa: E731
        model, tokenizer, constrained=constrained, max_new_tokens=4, batch_size=2, prompt_cache=store, **kw
    )
    policy = SelfCheckingPolicy(decode(), lambda k: decode(temperature=1.0, seed=k), lambda i, a: i == 0, attempts=2)
    policy.complete([list(p) for p in PROMPTS])
    first, *retries = policy.used
    assert len(retries) == 2 and first.stats.prefilled_tokens > 0
    assert all(r.stats.prefilled_tokens == 0 and r.stats.reused_tokens > 0 for r in retries)


def _greedy(tokenizer, model, new_tokens):
    """The greedy ``GenerationConfig`` trl's call would carry for ``model``."""
    from transformers import GenerationConfig

    from worldagent.lm.rollout import pad_token_id, stop_token_ids

    return GenerationConfig(
        max_new_tokens=new_tokens,
        do_sample=False,
        eos_token_id=stop_token_ids(tokenizer, model),
        pad_token_id=pad_token_id(tokenizer),
    )


@pytest.mark.parametrize("which", ["gemma", "llama"])
def test_generate_tensor_answers_as_model_generate_with_each_group_prompt_prefilled_once(which):
    """trl's GRPO repeats every prompt for its group and calls ``generate``: the decoder gives the
    same greedy tensor, prefilling each distinct prompt once."""
    from transformers import GenerationConfig

    from worldagent.lm.rollout import generate_tensor, left_pad, pad_token_id

    gemma, tokenizer = tiny_model_and_tokenizer()
    model = gemma if which == "gemma" else tiny_llama_model()
    encoded = [encode_prompt(tokenizer, p) for p in PROMPTS[:3] for _ in range(2)]
    input_ids, mask = left_pad(encoded, pad_token_id(tokenizer))
    config = _greedy(tokenizer, model, 6)
    stats = GenerationStats()
    ours = generate_tensor(model, input_ids, mask, config, stats=stats)
    theirs = model.generate(input_ids=input_ids, attention_mask=mask, generation_config=config)
    width = input_ids.shape[1]
    assert ours is not None and ours[:, :width].equal(input_ids)
    for row, reference in zip(ours[:, width:].tolist(), theirs[:, width:].tolist(), strict=True):
        cut = min(len(row), len(reference))
        assert row[:cut] == reference[:cut] and set(row[cut:]) | set(reference[cut:]) <= {config.pad_token_id}
    distinct = unique_prefix_tokens(encoded)
    assert stats.completions == 6 and stats.prompts == 3
    assert stats.prefilled_tokens == (3 * width if which == "gemma" else distinct)
    # a setting the decoder does not do: the caller generates as before
    assert generate_tensor(model, input_ids, mask, GenerationConfig(max_new_tokens=2, repetition_penalty=1.2)) is None


def test_generate_tensor_samples_a_training_mode_policy_as_in_eval_mode_and_restores_every_mode(monkeypatch):
    """trl calls ``generate`` with the policy in training mode: the decoder samples it without
    dropout, through the lean step, and every module's mode is as it was afterwards."""
    from peft import LoraConfig, get_peft_model

    from worldagent.lm import rollout
    from worldagent.lm.rollout import generate_tensor, left_pad, pad_token_id

    _, tokenizer = tiny_model_and_tokenizer()
    torch.manual_seed(3)
    lora = LoraConfig(r=4, target_modules=["q_proj", "v_proj"], lora_dropout=0.5, init_lora_weights=False)
    model = get_peft_model(tiny_llama_model(), lora)
    model.train()
    frozen = model.get_base_model().model.layers[0].mlp
    frozen.eval()  # a module the caller keeps in eval mode stays so
    modes = {name: module.training for name, module in model.named_modules()}
    encoded = [encode_prompt(tokenizer, p) for p in PROMPTS[:2] for _ in range(2)]
    input_ids, mask = left_pad(encoded, pad_token_id(tokenizer))
    config = _greedy(tokenizer, model, 8)
    steps = [0]
    original = rollout.decode_step

    def counted(*args, **kwargs):
        steps[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(rollout, "decode_step", counted)
    with torch.no_grad():
        from_training = generate_tensor(model, input_ids, mask, config)
    assert {name: module.training for name, module in model.named_modules()} == modes
    assert steps[0] > 0  # the lean step, which serves only a model in eval mode
    model.eval()
    with torch.no_grad():
        from_eval = generate_tensor(model, input_ids, mask, config)
    assert from_training is not None and from_training.equal(from_eval)
