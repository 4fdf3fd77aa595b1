"""A random-init tiny causal LM and its tokenizer (built in seconds) for generation tests."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tests.policy.training_fixtures import TINY, dpo_rows, sft_rows

PROMPTS = [
    [{"role": "system", "content": "You are a UI agent."}, {"role": "user", "content": f"Create a {name}."}]
    for name in ("button", "badge with a long description of what it should do", "card", "switch", "tabs")
]


@lru_cache(maxsize=1)
def tiny_model_and_tokenizer() -> tuple[Any, Any]:
    """Same weights every call (seed 7); the tokenizer has the call markers as single tokens."""
    from worldagent.policy.base import build_tiny_model
    from worldagent.policy.tokenizer import train_tokenizer

    texts = [m["content"] for row in sft_rows() for m in row["messages"]]
    texts += [m["content"] for row in dpo_rows() for m in row["rejected"]]
    tokenizer = train_tokenizer(texts, TINY.vocab_size)
    model = build_tiny_model(TINY, tokenizer, seed=7)
    model.eval()
    return model, tokenizer
