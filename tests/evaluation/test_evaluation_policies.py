"""Policies: the reference upper bound, and greedy HF decoding (batching, markers, stop tokens)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from evaluation_helpers import ROOT

from worldagent.config import Params
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.evaluation.evaluate import prompts_of
from worldagent.evaluation.policies import HFPolicy, Policy, ReferencePolicy, StaticPolicy
from worldagent.evaluation.stages.evaluate import evaluate_stage
from worldagent.io import directory_hash
from worldagent.pipeline import world_agent as world_agent_table


def run_evaluate(params: Params, root: Path, loader, champion: dict | None = None) -> None:  # type: ignore[no-untyped-def]
    """The evaluate stage on the project's paths, with the champion reference ``champion``."""
    reference = root / "champion.json"
    none = {"family": "world-agent", "version": None, "artifact_path": None, "artifact_hash": None}
    reference.write_text(json.dumps(champion or none))
    models = root / world_agent_table.MODELS
    evaluate_stage(
        params,
        eval_trajectories=root / world_agent_table.EVAL_TRAJECTORIES,
        stories=root / "data" / "generated" / "world_agent" / "stories.jsonl",
        stories_dir=root / params.discover.stories_dir,
        base=models / "base",
        sft=models / "sft",
        dpo=models / "dpo",
        grpo=models / "grpo",
        champion=reference,
        summary=root / world_agent_table.EVAL,
        intents=root / world_agent_table.EVAL_INTENTS,
        root=root,
        loader=loader,
    )


SPECIALS = ["<pad>", "<bos>", "<eos>", "<end_of_turn>", "<start_function_call>", "<end_function_call>", "<escape>"]


class CharTokenizer:
    """Characters plus whole special tokens; enough of the tokenizer API for HFPolicy."""

    pad_token_id, bos_token_id, eos_token_id = 0, 1, 2

    def __init__(self) -> None:
        self.vocab = {token: i for i, token in enumerate(SPECIALS)}
        for code in range(32, 127):
            self.vocab.setdefault(chr(code), len(self.vocab))
        self.vocab["\n"] = len(self.vocab)
        self.inverse = {i: t for t, i in self.vocab.items()}

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def apply_chat_template(self, messages, add_generation_prompt: bool, tokenize: bool) -> str:
        assert add_generation_prompt and not tokenize
        return "<bos>" + "".join(f"{m['role']}:{m['content'][:20]}<end_of_turn>" for m in messages) + "model:"

    def encode(self, text: str) -> list[int]:
        ids, i = [], 0
        while i < len(text):
            special = next((s for s in SPECIALS if text.startswith(s, i)), None)
            ids.append(self.vocab[special] if special else self.vocab.get(text[i], self.vocab["?"]))
            i += len(special) if special else 1
        return ids

    def __call__(self, text: str, add_special_tokens: bool) -> dict[str, list[int]]:
        assert not add_special_tokens
        return {"input_ids": self.encode(text)}

    def decode(self, ids, skip_special_tokens: bool) -> str:
        assert not skip_special_tokens
        return "".join(self.inverse[int(i)] for i in ids)


class EchoLengthModel:
    """Answers each (left-padded) row with a call marker and its unpadded prompt length, then stops."""

    def __init__(self, tokenizer: CharTokenizer) -> None:
        self.tok = tokenizer
        self.calls: list[dict[str, Any]] = []

    def to(self, device: str) -> EchoLengthModel:
        return self

    def eval(self) -> EchoLengthModel:
        return self

    def generate(self, input_ids, attention_mask, **kwargs) -> torch.Tensor:
        self.calls.append({"shape": tuple(input_ids.shape), **kwargs})
        assert kwargs["do_sample"] is False
        rows = []
        for ids, mask in zip(input_ids.tolist(), attention_mask.tolist(), strict=True):
            first = mask.index(1)
            assert all(m == 0 for m in mask[:first]) and all(m == 1 for m in mask[first:])  # left padding
            assert all(t == self.tok.pad_token_id for t in ids[:first])
            answer = (
                self.tok.encode(f"<start_function_call>{sum(mask)}<end_function_call>")
                + [3]
                + self.tok.encode("after stop")
            )
            rows.append(ids + answer)
        width = max(len(row) for row in rows)
        return torch.tensor([row + [0] * (width - len(row)) for row in rows])


def test_reference_and_static_policies(eval_rows) -> None:
    rows = eval_rows[:3]
    prompts = prompts_of(rows)
    assert isinstance(ReferencePolicy(rows), Policy)
    assert ReferencePolicy(rows).complete(prompts[::-1]) == [row["messages"][2]["content"] for row in rows[::-1]]
    with pytest.raises(KeyError, match="no reference output"):
        ReferencePolicy(rows[:1]).complete(prompts)
    with pytest.raises(ValueError):
        StaticPolicy(["a"]).complete(prompts)


def test_hf_policy_batches_by_length_and_keeps_call_markers() -> None:
    tok = CharTokenizer()
    model = EchoLengthModel(tok)
    prompts = [[{"role": "user", "content": "x" * n}] for n in (15, 2, 9, 20, 1)]
    policy = HFPolicy(model, tok, max_new_tokens=64, batch_size=2, device="cpu", progress=False)
    outputs = policy.complete(prompts)
    expected = [f"<start_function_call>{len(policy.encode(p))}<end_function_call>" for p in prompts]
    assert outputs == expected  # prompt order restored, markers kept, nothing after <end_of_turn>
    assert [call["shape"][0] for call in model.calls] == [2, 2, 1]
    assert model.calls[0]["eos_token_id"] == [2, 3]  # eos and end-of-turn both stop
    assert model.calls[0]["max_new_tokens"] == 64


@pytest.fixture(scope="module")
def tiny_hf() -> tuple[Any, Any]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE(unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<bos>", "<eos>", "<unk>", *SPECIALS[3:]],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    backend.train_from_iterator(["Create an accessible button", "writeStory runStory avatar card"], trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )
    tokenizer.chat_template = (
        "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}<end_of_turn>{% endfor %}model: "
    )
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config), tokenizer


def test_hf_policy_with_a_real_tiny_model(tiny_hf) -> None:
    model, tokenizer = tiny_hf
    prompts = [
        [{"role": "system", "content": "tools"}, {"role": "user", "content": "Create an accessible button" * k}]
        for k in (1, 3, 2)
    ]
    batched = HFPolicy(model, tokenizer, max_new_tokens=6, batch_size=3, device="cpu", progress=False).complete(prompts)
    single = HFPolicy(model, tokenizer, max_new_tokens=6, batch_size=1, device="cpu", progress=False).complete(prompts)
    assert len(batched) == 3 and all(isinstance(text, str) for text in batched)
    assert batched == single  # left padding with an attention mask does not change greedy output
    assert all("<pad>" not in text and "<eos>" not in text for text in batched)


def test_evaluate_stage_with_injected_loader_and_no_champion(tmp_path: Path, tiny_hf) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data")
    (tmp_path / "models" / "world_agent" / "base").mkdir(parents=True)
    loaded: list[Any] = []

    def loader(base_dir: Path, adapter_dir: Path | None):
        loaded.append((base_dir.name, adapter_dir))
        return tiny_hf

    params = Params.model_validate(
        {"evaluate": {"max_intents": 3, "max_new_tokens": 4, "models": ["base", "champion", "reference"]}}
    )
    run_evaluate(params, tmp_path, loader)
    assert loaded == [("base", None)]
    report = read_eval_report(tmp_path / world_agent_table.EVAL, tmp_path / world_agent_table.EVAL_INTENTS)
    assert list(report.models) == ["base", "reference"]
    assert report.models["reference"].metrics.mean_reward == 1.0
    assert report.models["base"].metrics.mean_reward == 0.0  # random weights emit no valid call
    assert any("first run" in note for note in report.notes)
    assert (tmp_path / world_agent_table.REPORTS / "metrics.png").is_file()

    missing = Params.model_validate({"evaluate": {"models": ["sft"]}})
    with pytest.raises(ValueError, match="sft adapter not found"):
        run_evaluate(missing, tmp_path, loader)


def test_champion_is_loaded_from_the_resolved_adapter(tmp_path: Path, tiny_hf) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data")
    (tmp_path / "models" / "world_agent" / "base").mkdir(parents=True)
    (tmp_path / "published" / "v1").mkdir(parents=True)
    (tmp_path / "published" / "v1" / "adapter_model.safetensors").write_bytes(b"champion weights")
    loaded: list[Any] = []

    def loader(base_dir: Path, adapter_dir: Path | None):
        loaded.append(adapter_dir)
        return tiny_hf

    params = Params.model_validate({"evaluate": {"max_intents": 2, "max_new_tokens": 2, "models": ["champion"]}})
    sha = directory_hash(tmp_path / "published" / "v1")
    champion = {"family": "world-agent", "version": 1, "artifact_hash": sha, "artifact_path": "published/v1"}
    run_evaluate(params, tmp_path, loader, champion)
    assert loaded == [tmp_path / "published" / "v1"]
    report = read_eval_report(tmp_path / world_agent_table.EVAL, tmp_path / world_agent_table.EVAL_INTENTS)
    assert list(report.models) == ["champion"] and any("world-agent v1" in note for note in report.notes)

    # weights that changed under the reference are never evaluated as the champion
    (tmp_path / "published" / "v1" / "adapter_model.safetensors").write_bytes(b"other weights")
    with pytest.raises(ValueError, match="not the recorded"):
        run_evaluate(params, tmp_path, loader, champion)
