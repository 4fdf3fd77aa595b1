"""The lean decode step: a Llama's logits bit for bit as its forward gives them, and only for the
models it serves."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from peft import LoraConfig, get_peft_model

from tests.lm.model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer
from worldagent.lm import continuous, lean_step
from worldagent.lm import decode_attention as da
from worldagent.lm.continuous import Request, decode_stream
from worldagent.lm.rollout import SamplingConfig, encode_prompt

pytestmark = pytest.mark.skipif(da.kernel() is None, reason="no C compiler to build the decode kernel")

CHOOSE, STEP = continuous._choose, lean_step.decode_step  # the originals, wrapped afresh by each stream
MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def _llama(dtype: torch.dtype) -> Any:
    return tiny_llama_model().to(dtype).eval()


def _adapted_llama(dtype: torch.dtype) -> Any:
    """The tiny Llama in ``dtype`` with a float32 LoRA on every projection (as the policy is trained)."""
    torch.manual_seed(3)
    return get_peft_model(_llama(dtype), LoraConfig(r=4, target_modules=MODULES, init_lora_weights=False)).eval()


def _stream(
    model: Any, monkeypatch: pytest.MonkeyPatch, setting: str
) -> tuple[dict[int, list[int]], list[torch.Tensor], int]:
    """Answers, every row's logits at every step, and how many steps went through the lean step,
    for a stream of greedy and sampled answers in 3 rows (rows of different starts: masked columns)."""
    _, tokenizer = tiny_model_and_tokenizer()
    monkeypatch.setenv(lean_step.ENV, setting)
    seen: list[torch.Tensor] = []
    lean_calls = [0]

    def recorded(row: Any, query: int = 0) -> int:
        seen.append(row.logits[query].clone())
        return CHOOSE(row, query)

    def counted(*args: Any) -> torch.Tensor:
        lean_calls[0] += 1
        return STEP(*args)

    monkeypatch.setattr(continuous, "_choose", recorded)
    monkeypatch.setattr(continuous, "decode_step", counted)
    answers: dict[int, list[int]] = {}
    requests = [
        Request(
            tuple(encode_prompt(tokenizer, prompt)),
            SamplingConfig(max_new_tokens=12, do_sample=i % 2 == 1, temperature=0.9),
            seed=i,
            key=i,
        )
        for i, prompt in enumerate(PROMPTS + PROMPTS[:3])  # a prompt asked twice: rows sharing all of it
    ]
    decode_stream(model, tokenizer, requests, lambda r, c: answers.setdefault(r.key, c.token_ids) and [], 3)
    return answers, seen, lean_calls[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("adapted", [False, True])
def test_every_logit_is_the_forward_s_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, dtype: torch.dtype, adapted: bool
) -> None:
    model = _adapted_llama(dtype) if adapted else _llama(dtype)
    answers, logits, lean_steps = _stream(model, monkeypatch, "on")
    forward_answers, forward_logits, forward_lean_steps = _stream(model, monkeypatch, "off")
    assert lean_steps > 0 and forward_lean_steps == 0
    assert answers == forward_answers
    assert len(logits) == len(forward_logits) > 0
    assert all(torch.equal(a, b) for a, b in zip(logits, forward_logits, strict=True))


def _static(model: Any, monkeypatch: pytest.MonkeyPatch, setting: str, config: SamplingConfig) -> tuple[Any, ...]:
    """The static decoder's answers (left-padded batches, rows leaving as they stop), the scores
    every step gave, and how many steps went through the lean step."""
    from worldagent.lm import rollout

    _, tokenizer = tiny_model_and_tokenizer()
    monkeypatch.setenv(lean_step.ENV, setting)
    seen: list[torch.Tensor] = []
    lean_calls = [0]

    def counted(*args: Any) -> torch.Tensor:
        lean_calls[0] += 1
        return STEP(*args)

    def recording(width: int) -> Any:
        def record(ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            seen.append(scores.clone())
            return scores

        return record

    monkeypatch.setattr(rollout, "decode_step", counted)
    groups = rollout.generate_batched(model, tokenizer, PROMPTS, config, batch_size=3, logits_processor=recording)
    return [[c.token_ids for c in group] for group in groups], seen, lean_calls[0]


@pytest.mark.parametrize("sampled", [False, True])
def test_the_static_decoder_s_scores_are_the_forward_s_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, sampled: bool
) -> None:
    """Experience sampling and GRPO's probe decode this way: groups of samples of a prompt."""
    model = _adapted_llama(torch.bfloat16)
    config = SamplingConfig(max_new_tokens=10, do_sample=sampled, num_return_sequences=3 if sampled else 1, seed=5)
    answers, scores, lean_steps = _static(model, monkeypatch, "on", config)
    forward_answers, forward_scores, forward_lean_steps = _static(model, monkeypatch, "off", config)
    assert lean_steps > 0 and forward_lean_steps == 0
    assert answers == forward_answers
    assert len(scores) == len(forward_scores) > 0
    assert all(torch.equal(a, b) for a, b in zip(scores, forward_scores, strict=True))


def test_only_a_plain_llama_decoding_with_the_kernel_is_served(monkeypatch: pytest.MonkeyPatch) -> None:
    llama = _llama(torch.float32)
    with da.decoding(llama):
        assert lean_step.supports(llama)
        monkeypatch.setenv(lean_step.ENV, "off")
        assert not lean_step.supports(llama)
        monkeypatch.delenv(lean_step.ENV)
        llama.train()
        try:
            assert not lean_step.supports(llama)
        finally:
            llama.eval()
        handle = llama.model.layers[0].mlp.register_forward_hook(lambda *args: None)
        try:
            assert not lean_step.supports(llama)  # a hook would be skipped
        finally:
            handle.remove()
        norm = llama.model.layers[1].input_layernorm
        norm.forward = lambda hidden: hidden  # a patched module computes otherwise
        try:
            assert not lean_step.supports(llama)
        finally:
            del norm.forward
        assert lean_step.supports(llama)
    assert not lean_step.supports(llama)  # outside ``decoding``: its own attention
    adapted = _adapted_llama(torch.float32)
    with da.decoding(adapted):
        assert lean_step.supports(adapted)  # peft's wrapper: the Llama under it
    gemma, _ = tiny_model_and_tokenizer()
    with da.decoding(gemma):
        assert not lean_step.supports(gemma)


def test_a_model_it_does_not_serve_decodes_through_its_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook on one layer: the step would skip it, so the model's forward runs, hook and all."""
    llama = _llama(torch.float32)
    answers, _, _ = _stream(llama, monkeypatch, "on")
    calls: list[int] = []
    llama.model.layers[0].register_forward_hook(lambda *args: calls.append(1))
    hooked_answers, logits, lean_steps = _stream(llama, monkeypatch, "on")
    assert lean_steps == 0 and calls and logits
    assert hooked_answers == answers


def test_a_wrong_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lean_step.ENV, "fast")
    with pytest.raises(ValueError, match="WORLDAGENT_LEAN_STEP='fast'"):
        lean_step.enabled()
