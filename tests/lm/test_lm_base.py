"""The base stage: tiny Gemma-3 model, deterministic pre-training, atomic output, hub/local loading, offline fail-fast."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
import torch
import yaml

from worldagent.config import ModelParams, Params, PretrainParams, TinyModelParams
from worldagent.lm.base import (
    BaseModelUnavailable,
    build_base,
    build_tiny_model,
    load_base,
    parameter_count,
    pretraining_blocks,
    save_base,
    training_texts,
)
from worldagent.lm.device import resolve_dtype, select_device, trainer_precision
from worldagent.lm.tokenizer import train_tokenizer
from worldagent.lm.training import tree_hash
from worldagent.tools.callformat import ToolCall, render_call, render_response

ROOT = Path(__file__).resolve().parents[2]
STORIES = ROOT / "data" / "stories"
SMALL_TINY = TinyModelParams(
    vocab_size=600,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=16,
    max_position_embeddings=256,
    sliding_window=64,
)
# The size proposed for params.yaml (model.tiny); swap for load_params(ROOT / "params.yaml").model.tiny once it is there.
RECOMMENDED_TINY = TinyModelParams(
    hidden_size=192,
    intermediate_size=576,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=1,
    head_dim=48,
)
SMALL_PRETRAIN = PretrainParams(epochs=3, learning_rate=5e-3, batch_size=4, max_length=128)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Two CPU cores are shared with other suites; one thread is faster and keeps timings stable."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


def write_trajectories(path: Path, count: int = 4, split: str = "train") -> Path:
    rows = []
    for story in sorted(STORIES.glob("*/*.stories.tsx"))[:count]:
        component = story.parent.name
        source = story.read_text(encoding="utf-8")[:1500]
        messages = [
            {"role": "system", "content": "You are a UI agent. Answer with tool calls only."},
            {"role": "user", "content": f"Create a {component} story."},
            {
                "role": "assistant",
                "content": render_call(
                    ToolCall("writeStory", {"path": f"{component}/{story.name}", "content": source})
                ),
            },
            {
                "role": "tool",
                "content": render_response("writeStory", {"success": True, "data": {"bytes": len(source)}}),
            },
            {"role": "assistant", "content": render_call(ToolCall("runStory", {"path": f"{component}/{story.name}"}))},
        ]
        rows.append({"id": component, "messages": messages, "split": split})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def small_params(**model: object) -> Params:
    return Params(seed=7, model=ModelParams(**{"tiny": SMALL_TINY, "pretrain": SMALL_PRETRAIN, **model}))


def build_from(params: Params, trajectories: Path, out: Path) -> dict:
    """:func:`build_base` with what it reads of ``params``: ``model`` and ``seed``."""
    return build_base(params.model, params.seed, trajectories, out)


def tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Two full builtin:tiny builds with the same seed (the expensive part, shared by several tests)."""
    root = tmp_path_factory.mktemp("built")
    trajectories = write_trajectories(root / "trajectories.jsonl")
    first = build_from(small_params(), trajectories, root / "a" / "base")
    second = build_from(small_params(), trajectories, root / "b" / "base")
    return {
        "root": root,
        "trajectories": trajectories,
        "first": first,
        "second": second,
        "a": root / "a" / "base",
        "b": root / "b" / "base",
    }


# ----------------------------------------------------------------------------- device helpers


def test_device_and_precision_helpers() -> None:
    assert select_device() in {"cuda", "mps", "cpu"}
    assert resolve_dtype("auto", "cpu") is torch.float32
    assert resolve_dtype("bfloat16", "cpu") is torch.bfloat16
    with pytest.raises(ValueError, match="float16"):
        resolve_dtype("float16", "cpu")
    with pytest.raises(ValueError, match="unknown dtype"):
        resolve_dtype("int8", "cpu")
    assert trainer_precision("cpu", torch.float32) == {"bf16": False, "fp16": False, "use_cpu": True}
    assert trainer_precision("cuda", torch.bfloat16) == {"bf16": True, "fp16": False, "use_cpu": False}
    assert trainer_precision("cuda", torch.float16) == {"bf16": False, "fp16": True, "use_cpu": False}


# ----------------------------------------------------------------------------- training texts


def test_training_texts_are_the_unique_train_messages(tmp_path: Path) -> None:
    path = write_trajectories(tmp_path / "trajectories.jsonl", count=3)
    texts = training_texts(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert set(texts) == {m["content"] for row in rows for m in row["messages"]}
    assert len(texts) == len(set(texts))  # the shared system prompt appears once
    with pytest.raises(ValueError, match="training split"):
        training_texts(write_trajectories(tmp_path / "trajectories.eval.jsonl"))
    with pytest.raises(ValueError, match="split 'eval'"):
        training_texts(write_trajectories(tmp_path / "mixed.jsonl", split="eval"))


# ----------------------------------------------------------------------------- tiny model


def test_default_tiny_model_has_a_few_million_parameters_and_runs(tmp_path: Path) -> None:
    texts = training_texts(write_trajectories(tmp_path / "t.jsonl"))
    tokenizer = train_tokenizer(texts, 4096)
    model = build_tiny_model(RECOMMENDED_TINY, tokenizer, seed=1)
    count = parameter_count(model)
    assert 1_000_000 <= count <= 10_000_000, count
    assert model.get_input_embeddings().weight.data_ptr() == model.get_output_embeddings().weight.data_ptr()  # tied
    assert model.config.vocab_size == len(tokenizer)
    assert (model.config.pad_token_id, model.config.bos_token_id, model.config.eos_token_id) == (
        tokenizer.pad_token_id,
        tokenizer.bos_token_id,
        tokenizer.eos_token_id,
    )
    assert "full_attention" in model.config.layer_types
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, return_tensors="pt", return_dict=True
    )["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape == (1, ids.shape[1], len(tokenizer)) and torch.isfinite(logits).all()
    again = build_tiny_model(RECOMMENDED_TINY, tokenizer, seed=1)
    other = build_tiny_model(RECOMMENDED_TINY, tokenizer, seed=2)
    first = model.state_dict()
    assert all(torch.equal(first[k], v) for k, v in again.state_dict().items())
    assert not all(torch.equal(first[k], v) for k, v in other.state_dict().items())


def test_pretraining_blocks_cover_the_stream_exactly(tmp_path: Path) -> None:
    texts = training_texts(write_trajectories(tmp_path / "t.jsonl", count=2))
    tokenizer = train_tokenizer(texts, 600)
    blocks = pretraining_blocks(tokenizer, texts, 64)
    assert all(block[0] == tokenizer.bos_token_id for block in blocks)
    assert all(len(block) == 64 for block in blocks[:-1]) and 2 <= len(blocks[-1]) <= 64
    stream = [t for block in blocks for t in block[1:]]
    eos = tokenizer.convert_tokens_to_ids("<eos>")
    assert stream.count(eos) == len(texts) and stream[-1] == eos


# ----------------------------------------------------------------------------- build_base (builtin:tiny)


def test_build_base_is_deterministic_and_learns(built: dict) -> None:
    first, second = built["first"], built["second"]
    assert digest(built["a"] / "model.safetensors") == digest(built["b"] / "model.safetensors")
    assert digest(built["a"] / "tokenizer.json") == digest(built["b"] / "tokenizer.json")
    # base.json too: the build's clock time is in the returned record (the stage's report), not the out
    assert tree_hash(built["a"]) == tree_hash(built["b"])
    assert first["seconds"] > 0 and "seconds" not in json.loads((built["a"] / "base.json").read_text())
    assert first["pretrain"]["train_loss"] == second["pretrain"]["train_loss"]
    assert first["pretrain"]["final_loss"] == second["pretrain"]["final_loss"]
    pretrain = first["pretrain"]
    assert pretrain["steps"] > 0 and pretrain["tokens"] > 0
    assert pretrain["final_loss"] < pretrain["initial_loss"] - 0.5, pretrain
    assert pretrain["losses"][-1] < pretrain["losses"][0]


def test_build_base_writes_a_loadable_complete_directory(built: dict) -> None:
    out = built["a"]
    names = {p.name for p in out.iterdir()}
    assert {
        "model.safetensors",
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "base.json",
    } <= names
    meta = json.loads((out / "base.json").read_text())
    assert meta["kind"] == "builtin:tiny" and meta["seed"] == 7
    assert meta["params"]["tiny"]["hidden_size"] == SMALL_TINY.hidden_size
    assert meta["parameters"] == built["first"]["parameters"] and meta["has_generation_markers"] is True
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temp dirs left behind
    model, tokenizer = load_base(out, device="cpu")
    saved = tensors(out)
    assert all(torch.equal(saved[k], v) for k, v in model.state_dict().items() if k in saved)
    assert tokenizer.eos_token == "<end_of_turn>" and tokenizer.pad_token == "<pad>"
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Create a button story."}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    generated = model.generate(**prompt, max_new_tokens=5, do_sample=False)
    assert generated.shape[1] <= prompt["input_ids"].shape[1] + 5


def test_a_crash_mid_save_leaves_no_directory_and_keeps_the_old_one(
    built: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = small_params(base=str(built["a"]))

    def crash(value):
        raise RuntimeError("simulated crash while writing base.json")

    monkeypatch.setattr("worldagent.lm.base_dir.pretty_json", crash)  # save_base's writer
    fresh = tmp_path / "fresh" / "base"
    with pytest.raises(RuntimeError, match="simulated crash"):
        build_from(params, built["trajectories"], fresh)
    assert not fresh.exists()
    assert list(fresh.parent.iterdir()) == []

    old = tmp_path / "old" / "base"
    old.mkdir(parents=True)
    (old / "base.json").write_text('{"kind": "old"}')
    with pytest.raises(RuntimeError, match="simulated crash"):
        build_from(params, built["trajectories"], old)
    assert [p.name for p in old.parent.iterdir()] == ["base"]
    assert json.loads((old / "base.json").read_text()) == {"kind": "old"}


def test_a_crash_writing_the_model_leaves_the_old_directory(tmp_path: Path) -> None:
    class Half:
        def save_pretrained(self, path, **kwargs):
            Path(path, "model.safetensors").write_bytes(b"partial")
            raise KeyboardInterrupt

    old = tmp_path / "base"
    old.mkdir()
    (old / "keep").write_text("x")
    with pytest.raises(KeyboardInterrupt):
        save_base(Half(), None, {}, old)
    assert [p.name for p in tmp_path.iterdir()] == ["base"] and [p.name for p in old.iterdir()] == ["keep"]


# ----------------------------------------------------------------------------- local path / hub cache / offline


def test_local_path_base_is_loaded_and_saved(built: dict, tmp_path: Path) -> None:
    out = tmp_path / "base"
    meta = build_from(small_params(base=str(built["a"])), built["trajectories"], out)
    assert meta["kind"] == "local" and meta["parameters"] == built["first"]["parameters"]
    assert tensors(out).keys() == tensors(built["a"]).keys()
    assert all(torch.equal(tensors(out)[k], v) for k, v in tensors(built["a"]).items())
    assert digest(out / "tokenizer.json") == digest(built["a"] / "tokenizer.json")


def test_missing_local_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BaseModelUnavailable, match="no such directory"):
        build_from(small_params(base=str(tmp_path / "nope")), tmp_path / "t.jsonl", tmp_path / "out")


def test_offline_without_cache_fails_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "hf-home"
    home.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    started = time.perf_counter()
    with pytest.raises(BaseModelUnavailable) as caught:
        build_from(small_params(base="google/functiongemma-270m-it"), tmp_path / "t.jsonl", tmp_path / "out")
    assert time.perf_counter() - started < 2.0
    message = str(caught.value)
    for needle in (
        "google/functiongemma-270m-it",
        "HF_HUB_OFFLINE",
        str(home / "hub"),
        "hf download google/functiongemma-270m-it",
        "builtin:tiny",
    ):
        assert needle in message, needle
    assert not (tmp_path / "out").exists()


def test_unreachable_hub_without_cache_fails_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    started = time.perf_counter()
    with pytest.raises(BaseModelUnavailable, match="unreachable"):
        build_from(
            small_params(base="google/functiongemma-270m-it", revision="abc123"), tmp_path / "t.jsonl", tmp_path / "out"
        )
    assert time.perf_counter() - started < 4.0


def test_offline_with_a_cached_copy_loads_it(built: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "models--acme--tiny-agent"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for item in built["a"].iterdir():
        (snapshot / item.name).write_bytes(item.read_bytes())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    out = tmp_path / "base"
    meta = build_from(small_params(base="acme/tiny-agent"), built["trajectories"], out)
    assert meta["kind"] == "hub" and meta["base"] == "acme/tiny-agent"
    assert all(torch.equal(tensors(out)[k], v) for k, v in tensors(built["a"]).items())


# ----------------------------------------------------------------------------- accelerate configs


@pytest.mark.parametrize("name", ["single_gpu", "multi_gpu", "deepspeed_zero2"])
def test_accelerate_configs_parse(name: str) -> None:
    config = yaml.safe_load((ROOT / "configs" / "accelerate" / f"{name}.yaml").read_text())
    for key in (
        "compute_environment",
        "distributed_type",
        "num_processes",
        "mixed_precision",
        "num_machines",
        "machine_rank",
    ):
        assert key in config, key
    assert config["compute_environment"] == "LOCAL_MACHINE"
    assert config["mixed_precision"] in {"no", "bf16", "fp16"}
    expected = {"single_gpu": ("NO", 1), "multi_gpu": ("MULTI_GPU", 8), "deepspeed_zero2": ("DEEPSPEED", 8)}[name]
    assert (config["distributed_type"], config["num_processes"]) == expected
    if name == "deepspeed_zero2":
        assert config["deepspeed_config"]["zero_stage"] == 2 and config["mixed_precision"] == "bf16"


def test_accelerate_configs_load_with_accelerate() -> None:
    from accelerate.commands.config.config_args import ClusterConfig

    for name in ("single_gpu", "multi_gpu", "deepspeed_zero2"):
        config = ClusterConfig.from_yaml_file(str(ROOT / "configs" / "accelerate" / f"{name}.yaml"))
        assert config.num_processes >= 1


def test_training_conversations_are_the_single_turn_train_rows(tmp_path: Path) -> None:
    from worldagent.lm.base import training_conversations

    path = write_trajectories(tmp_path / "trajectories.jsonl", count=3)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    single = {**rows[0], "turns": "single", "messages": rows[0]["messages"][:3]}
    path.write_text("".join(json.dumps(row) + "\n" for row in [*rows, single]))
    assert training_conversations(path) == [single["messages"]]
    with pytest.raises(ValueError, match="split 'eval'"):
        training_conversations(write_trajectories(tmp_path / "mixed.jsonl", split="eval"))
