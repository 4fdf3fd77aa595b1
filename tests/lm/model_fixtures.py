"""A random-init tiny causal LM and its tokenizer (built in seconds) for generation tests."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tests.lm.training_fixtures import TINY, dpo_rows, sft_rows

PROMPTS = [
    [{"role": "system", "content": "You are a UI agent."}, {"role": "user", "content": f"Create a {name}."}]
    for name in ("button", "badge with a long description of what it should do", "card", "switch", "tabs")
]


@lru_cache(maxsize=1)
def tiny_model_and_tokenizer() -> tuple[Any, Any]:
    """Same weights every call (seed 7); the tokenizer has the call markers as single tokens."""
    from worldagent.lm.base import build_tiny_model
    from worldagent.lm.tokenizer import train_tokenizer

    texts = [m["content"] for row in sft_rows() for m in row["messages"]]
    texts += [m["content"] for row in dpo_rows() for m in row["rejected"]]
    tokenizer = train_tokenizer(texts, TINY.vocab_size)
    model = build_tiny_model(TINY, tokenizer, seed=7)
    model.eval()
    return model, tokenizer


def tiny_llama_model() -> Any:
    """A random-init Llama on the same tokenizer (see :func:`_tiny_llama_model`), a copy of its own
    each call: a test may cast it, adapt it or switch its attention without touching the next's."""
    import copy

    return copy.deepcopy(_tiny_llama_model())


@lru_cache(maxsize=1)
def _tiny_llama_model() -> Any:
    """A random-init Llama on the same tokenizer: every layer full attention, as in SmolLM2, so
    ``rollout.prefill_rows`` prefills it row by row (the Gemma-3 above has sliding-window layers,
    prefilled as one padded batch)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    _, tokenizer = tiny_model_and_tokenizer()
    torch.manual_seed(7)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        initializer_range=0.1,  # distinct logits: greedy answers do not hinge on rounding
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config).eval()
