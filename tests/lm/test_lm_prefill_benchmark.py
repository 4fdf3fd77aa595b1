"""benchmarks/prefill.py: both prefills of the same batch give the same logits; the figures add up."""

from __future__ import annotations

from model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer

from benchmarks.prefill import measure
from worldagent.lm.rollout import encode_prompt


def test_the_prefill_benchmark_measures_both_prefills_of_one_batch() -> None:
    _, tokenizer = tiny_model_and_tokenizer()
    result = measure(tiny_llama_model(), tokenizer, [list(p) for p in PROMPTS], steps=2)
    lengths = sorted(len(encode_prompt(tokenizer, p)) for p in PROMPTS)
    assert result["prompts"] == len(PROMPTS) and result["tokens"] == sum(lengths)
    assert result["padded_tokens"] == len(PROMPTS) * lengths[-1] > result["tokens"]
    assert 0 < result["shared_prefix"] < lengths[0]
    assert result["max_logit_difference"] < 1e-3  # the same logits, prefilled two ways
    assert all(result[key] >= 0 for key in ("padded_seconds", "row_by_row_seconds", "decode_step_seconds"))
