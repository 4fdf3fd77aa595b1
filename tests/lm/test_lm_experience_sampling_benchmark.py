"""benchmarks/experience_sampling.py's ``grpo`` engine: trl's call shape through the stage's hook."""

from __future__ import annotations

from model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer

from benchmarks.experience_sampling import grpo_rollouts
from worldagent.lm import rollout


def test_grpo_rollouts_sample_each_group_through_the_decoder_in_trls_call_shape(monkeypatch):
    """Each ``generate`` call holds ``batch_size`` prompts' groups and goes through the project's
    decoder (the stage's hook) with the policy in training mode, as trl holds it; the policy is in
    eval mode at the end, and the tokens written are counted."""
    _, tokenizer = tiny_model_and_tokenizer()
    model = tiny_llama_model()
    calls: list[tuple[int, bool]] = []
    original = rollout.generate_tensor

    def counted(model, input_ids, *args, **kwargs):
        calls.append((int(input_ids.shape[0]), model.training))
        return original(model, input_ids, *args, **kwargs)

    monkeypatch.setattr(rollout, "generate_tensor", counted)
    rows = [{"prompt": list(prompt)} for prompt in PROMPTS[:3]]
    groups, written = grpo_rollouts(model, tokenizer, rows, samples=2, new_tokens=5, batch_size=2)
    assert calls == [(4, True), (2, True)]  # 2 prompts x 2 samples, then the third prompt's group
    assert [len(group) for group in groups] == [2, 2, 2]
    assert 0 < written <= 6 * 5
    assert not model.training
