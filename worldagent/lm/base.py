"""The base stage: build (or fetch) the model every later stage fine-tunes.

``model.base: builtin:tiny`` (the embedded default) builds a small Gemma-3 architecture with a
byte-level BPE tokenizer trained on the training split (:mod:`worldagent.lm.tokenizer`) and
pre-trains it briefly as a causal LM on the split's source text, so SFT starts from a model that
already knows the corpus's code and call syntax. Everything is deterministic for a seed on CPU.

Any other ``model.base`` is a local directory or a Hugging Face Hub id (e.g.
``google/functiongemma-270m-it``, pinned with ``model.revision``), loaded with ``from_pretrained``.
Offline (``HF_HUB_OFFLINE=1``, or the Hub unreachable) without a cached copy, it fails at once
with :class:`BaseModelUnavailable` naming the model, ``HF_HUB_OFFLINE`` and the cache directory.

Either way the result is written to one directory (``models/world_agent/base/``): the model
(``model.safetensors`` + config), the tokenizer (with its chat template) and ``base.json``. The
directory is written atomically: into a hidden sibling first, then renamed into place, so an
interrupted run never leaves a directory that looks complete and never damages the previous one.
"""

from __future__ import annotations

import logging
import math
import os
import re
import socket
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import torch

from worldagent.config import ModelParams, PretrainParams, TinyModelParams
from worldagent.errors import InputError, RunError
from worldagent.io import iter_jsonl
from worldagent.lm.base_dir import BASE_JSON, parameter_count, save_base
from worldagent.lm.device import configure_threads, resolve_dtype, seed_everything, select_device, trainer_precision
from worldagent.lm.tokenizer import BOS, EOS, token_id, train_tokenizer

log = logging.getLogger(__name__)

BUILTIN_TINY = "builtin:tiny"
# Probe for the before/after pre-training loss: the first blocks of the (unshuffled) training stream (not held out).
PROBE_BLOCKS = 16


class BaseModelUnavailable(RunError, OSError):
    """The configured base model cannot be loaded (offline without a cached copy, or not found)."""


# --------------------------------------------------------------------------- training texts


def _training_rows(trajectories_path: Path) -> list[dict[str, Any]]:
    """The rows of the training split. Refuses the eval split: a ``*.eval.jsonl`` file or rows marked
    ``split: eval`` raise, so held-out text can never leak into the base."""
    trajectories_path = Path(trajectories_path)
    if ".eval." in trajectories_path.name:
        raise ValueError(f"{trajectories_path}: the base is built from the training split only, not the eval file")
    rows = []
    for number, row in enumerate(iter_jsonl(trajectories_path, "the training split"), start=1):
        if row.get("split", "train") != "train":
            split = row.get("split")
            raise InputError(f"{trajectories_path}: row {number}: split {split!r}; expected the training split")
        rows.append(row)
    return rows


def training_texts(trajectories_path: Path) -> list[str]:
    """The source texts of the training split: every message content of ``trajectories.jsonl``.

    Unique texts in first-seen order (the system prompt, identical in every trajectory, appears
    once rather than 126 times).
    """
    texts: list[str] = []
    seen: set[str] = set()
    for row in _training_rows(trajectories_path):
        for message in row.get("messages", []):
            content = message.get("content")
            if isinstance(content, str) and content and content not in seen:
                seen.add(content)
                texts.append(content)
    if not texts:
        raise ValueError(f"{trajectories_path}: no message text to train on")
    return texts


def training_conversations(trajectories_path: Path) -> list[list[dict[str, str]]]:
    """The messages of the training split's single-turn trajectories (system, user, assistant), in file order."""
    return [list(row["messages"]) for row in _training_rows(trajectories_path) if row.get("turns") == "single"]


# --------------------------------------------------------------------------- tiny model


def layer_types(num_layers: int) -> list[str]:
    """Alternate sliding-window and full attention, ending with a full layer (Gemma 3 mixes both)."""
    kinds = ["sliding_attention" if (num_layers - 1 - i) % 2 else "full_attention" for i in range(num_layers)]
    return kinds


def build_tiny_model(params: TinyModelParams, tokenizer: Any, seed: int):
    """A randomly initialised ``Gemma3ForCausalLM`` sized by ``params``; same seed → same weights.

    Tied input/output embeddings; vocabulary = ``len(tokenizer)``; pad/bos/eos from the tokenizer
    (eos = ``<end_of_turn>``; the generation config also stops on ``<eos>``). SDPA attention (the
    model has no attention soft-capping, so SDPA is exact and works on CPU and CUDA alike).
    """
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    if params.num_attention_heads % params.num_key_value_heads:
        raise ValueError("model.tiny.num_attention_heads must be a multiple of num_key_value_heads")
    config = Gemma3TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=params.hidden_size,
        intermediate_size=params.intermediate_size,
        num_hidden_layers=params.num_hidden_layers,
        num_attention_heads=params.num_attention_heads,
        num_key_value_heads=params.num_key_value_heads,
        head_dim=params.head_dim,
        query_pre_attn_scalar=params.head_dim,
        max_position_embeddings=params.max_position_embeddings,
        sliding_window=params.sliding_window,
        layer_types=layer_types(params.num_hidden_layers),
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        attention_dropout=0.0,
        use_cache=True,
        dtype=torch.float32,
    )
    config._attn_implementation = "sdpa"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Gemma3ForCausalLM(config)
    model.to(torch.float32)
    generation = model.generation_config
    generation.bos_token_id = tokenizer.bos_token_id
    generation.pad_token_id = tokenizer.pad_token_id
    generation.eos_token_id = [tokenizer.eos_token_id, token_id(tokenizer, EOS)]
    return model


# --------------------------------------------------------------------------- pre-training


def pretraining_blocks(tokenizer: Any, texts: Iterable[str], max_length: int) -> list[list[int]]:
    """Tokenize the texts into one stream (``<eos>`` between texts) cut into ``<bos>``-led blocks.

    Every block but the last has exactly ``max_length`` tokens; nothing is padded or dropped.
    """
    if max_length < 2:
        raise ValueError("model.pretrain.max_length must be at least 2")
    bos, eos = token_id(tokenizer, BOS), token_id(tokenizer, EOS)
    stream: list[int] = []
    for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
        stream.extend(ids)
        stream.append(eos)
    body = max_length - 1
    return [[bos, *stream[start : start + body]] for start in range(0, len(stream), body)]


@torch.no_grad()
def _mean_loss(model: Any, blocks: Sequence[Sequence[int]], pad_id: int) -> float:
    """Token-weighted mean causal-LM loss of ``model`` on ``blocks`` (eval mode, no grad)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    for start in range(0, len(blocks), 4):
        batch = blocks[start : start + 4]
        width = max(len(b) for b in batch)
        ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, block in enumerate(batch):
            ids[row, : len(block)] = torch.tensor(block)
            mask[row, : len(block)] = 1
        labels = ids.masked_fill(mask == 0, -100)
        out = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=labels.to(device))
        tokens = int((labels[:, 1:] != -100).sum())
        total += float(out.loss) * tokens
        count += tokens
    model.train(was_training)
    return total / max(count, 1)


def pretrain(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    params: PretrainParams,
    seed: int,
    output_dir: Path,
    device: str | None = None,
    dtype: str = "auto",
) -> dict[str, Any]:
    """Brief causal-LM pre-training with trl's ``SFTTrainer`` on the texts cut into blocks.

    Returns ``{train_loss, initial_loss, final_loss, steps, tokens, blocks, seconds, device}``:
    ``train_loss`` is the trainer's mean over all steps; ``initial_loss``/``final_loss`` are the
    loss on the same probe blocks before and after training. Deterministic on CPU for a seed.
    ``params.epochs == 0`` skips training (the model stays at its random init).
    """
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    device = device or select_device()
    configure_threads(device)
    precision = trainer_precision(device, resolve_dtype(dtype, device))
    seed_everything(seed)
    blocks = pretraining_blocks(tokenizer, texts, params.max_length)
    probe = blocks[:PROBE_BLOCKS]
    tokens_per_epoch = sum(len(b) for b in blocks)
    model.to(device)
    initial_loss = _mean_loss(model, probe, tokenizer.pad_token_id)
    started = time.perf_counter()
    metrics: dict[str, Any] = {
        "blocks": len(blocks),
        "tokens_per_epoch": tokens_per_epoch,
        "device": device,
        **precision,
    }
    if params.epochs <= 0:
        metrics.update(
            train_loss=initial_loss, initial_loss=initial_loss, final_loss=initial_loss, steps=0, tokens=0, seconds=0.0
        )
        return metrics
    steps_per_epoch = math.ceil(len(blocks) / params.batch_size)
    total_steps = max(1, math.ceil(steps_per_epoch * params.epochs))
    config = SFTConfig(
        output_dir=str(output_dir),
        num_train_epochs=params.epochs,
        per_device_train_batch_size=params.batch_size,
        gradient_accumulation_steps=1,
        learning_rate=params.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, round(0.1 * total_steps)),
        weight_decay=0.0,
        max_grad_norm=1.0,
        optim="adamw_torch",
        max_length=params.max_length,
        packing=False,
        logging_steps=max(1, total_steps // 10),
        save_strategy="no",
        eval_strategy="no",
        report_to=[],
        disable_tqdm=False,
        seed=seed,
        data_seed=seed,
        dataloader_num_workers=0,
        dataset_num_proc=None,
        remove_unused_columns=True,
        **precision,
    )
    dataset = Dataset.from_dict({"input_ids": blocks})
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    result = trainer.train()
    final_loss = _mean_loss(model, probe, tokenizer.pad_token_id)
    steps = int(result.global_step)
    metrics.update(
        train_loss=float(result.training_loss),
        initial_loss=initial_loss,
        final_loss=final_loss,
        steps=steps,
        tokens=int(sum(len(b) for b in blocks) * params.epochs),
        seconds=round(time.perf_counter() - started, 3),
        losses=[round(float(entry["loss"]), 6) for entry in trainer.state.log_history if "loss" in entry],
    )
    model.to("cpu")
    return metrics


# --------------------------------------------------------------------------- hub / local models


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) as the environment says *now*."""
    return _env_flag("HF_HUB_OFFLINE") or _env_flag("TRANSFORMERS_OFFLINE")


def hub_cache_dir() -> Path:
    """The Hub cache as the environment says *now* (huggingface_hub reads its constants at import)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_reachable(timeout: float = 2.0) -> bool:
    """A TCP connection to the Hub endpoint opens within ``timeout`` seconds."""
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    url = urlparse(endpoint)
    host = url.hostname or "huggingface.co"
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _unavailable(model_id: str, revision: str | None, cache: Path, why: str) -> BaseModelUnavailable:
    pin = f" --revision {revision}" if revision else ""
    return BaseModelUnavailable(
        f"base model {model_id!r}{f' (revision {revision})' if revision else ''} is not in the local Hugging Face cache "
        f"{cache} and {why} (HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE', '')!r}). Fix: download it once where the Hub "
        f"is reachable with the same HF_HOME/HF_HUB_CACHE (`hf download {model_id}{pin}`), or set `model.base: {BUILTIN_TINY}` in params.yaml."
    )


def cached_snapshot(model_id: str, revision: str | None, cache: Path) -> Path | None:
    """The cached snapshot directory of a Hub model, or None; never touches the network."""
    from huggingface_hub import snapshot_download, try_to_load_from_cache

    if not isinstance(try_to_load_from_cache(model_id, "config.json", cache_dir=str(cache), revision=revision), str):
        return None
    try:
        return Path(snapshot_download(model_id, revision=revision, cache_dir=str(cache), local_files_only=True))
    except Exception:  # LocalEntryNotFoundError and friends: treat as not cached
        return None


def resolve_pretrained(base: str, revision: str | None = None) -> tuple[str, dict[str, Any]]:
    """Where ``from_pretrained`` should load ``base`` from, and with which keyword arguments.

    A local directory is used as is. A Hub id: online, it is handed to ``from_pretrained`` (which
    downloads or revalidates it); offline (``HF_HUB_OFFLINE``) or with the Hub unreachable, its cached
    snapshot directory is used, so nothing downstream tries the network (transformers and
    huggingface_hub read ``HF_HUB_OFFLINE`` only at import time, so a flag set later would not stop
    their requests and retries). Not cached → :class:`BaseModelUnavailable` at once.
    """
    local = Path(base).expanduser()
    if local.is_dir():
        return str(local), {}
    if base.startswith(("/", "./", "../", "~")) or base.count("/") > 1:
        raise BaseModelUnavailable(f"model.base {base!r} looks like a local path but no such directory exists")
    cache = hub_cache_dir()
    if hub_offline():
        why = "HF_HUB_OFFLINE is set, so nothing may be downloaded"
    elif not hub_reachable():
        why = "the Hub is unreachable from this machine"
    else:
        kwargs: dict[str, Any] = {"cache_dir": str(cache)}
        if revision:
            kwargs["revision"] = revision
        return base, kwargs
    snapshot = cached_snapshot(base, revision, cache)
    if snapshot is None:
        raise _unavailable(base, revision, cache, why)
    log.info("loading %s from the local cache %s (%s)", base, snapshot, why)
    return str(snapshot), {}


def load_pretrained(base: str, revision: str | None = None, dtype: torch.dtype | str | None = "auto"):
    """``(model, tokenizer)`` from a local directory or a Hub id (see :func:`resolve_pretrained`)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, kwargs = resolve_pretrained(base, revision)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs)
    except OSError as error:
        if isinstance(error, BaseModelUnavailable):
            raise
        raise BaseModelUnavailable(f"cannot load base model {base!r}: {error}") from error
    return model, tokenizer


# --------------------------------------------------------------------------- atomic output


# --------------------------------------------------------------------------- the stage


def build_base(model_params: ModelParams, seed: int, trajectories_path: Path, out_dir: Path) -> dict[str, Any]:
    """Build (``builtin:tiny``) or fetch the base ``model_params`` (``model``) names, seeded by ``seed``,
    and write it to ``out_dir``; returns ``base.json``'s content."""
    started = time.perf_counter()
    from worldagent.lm.pretrained import PACKAGED_BASES, build_packaged_base

    if model_params.base in PACKAGED_BASES:  # a GGUF shipped in PyPI packages (smollm2-135m, gemma3-270m)
        conversations = training_conversations(trajectories_path)
        return build_packaged_base(
            model_params.base, Path(out_dir), seed=seed, fit=(conversations, model_params.marker_rows)
        )
    if model_params.base == BUILTIN_TINY:
        texts = training_texts(trajectories_path)
        tokenizer = train_tokenizer(texts, model_params.tiny.vocab_size)
        seed_everything(seed)
        model = build_tiny_model(model_params.tiny, tokenizer, seed)
        with tempfile.TemporaryDirectory(prefix="worldagent-pretrain-") as scratch:
            metrics = pretrain(
                model, tokenizer, texts, model_params.pretrain, seed, Path(scratch), dtype=model_params.dtype
            )
        metadata: dict[str, Any] = {
            "kind": "builtin:tiny",
            "base": model_params.base,
            "seed": seed,
            "params": {"tiny": model_params.tiny.model_dump(), "pretrain": model_params.pretrain.model_dump()},
            "parameters": parameter_count(model),
            "vocab_size": len(tokenizer),
            "texts": len(texts),
            "pretrain": metrics,
        }
    else:
        model, tokenizer = load_pretrained(model_params.base, model_params.revision)
        local = Path(model_params.base).expanduser().is_dir()
        metadata = {
            "kind": "local" if local else "hub",
            "base": model_params.base,
            "revision": model_params.revision,
            "seed": seed,
            "parameters": parameter_count(model),
            "vocab_size": len(tokenizer),
        }
    metadata["eos_token"] = tokenizer.eos_token
    metadata["has_generation_markers"] = (
        re.search(r"{%-?\s*generation\s*-?%}", tokenizer.chat_template or "") is not None
    )
    metadata["seconds"] = round(time.perf_counter() - started, 3)
    save_base(model, tokenizer, metadata, Path(out_dir))
    return metadata


def load_base(base_dir: Path, device: str | None = None, dtype: torch.dtype | str | None = None):
    """``(model, tokenizer)`` from a directory written by :func:`build_base`, on ``device``.

    ``dtype`` None/"auto": bfloat16 on CUDA with bf16 support, else float32.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base_dir = Path(base_dir)
    if not (base_dir / BASE_JSON).is_file():
        raise FileNotFoundError(f"{base_dir}: not a base model directory (no {BASE_JSON}); run the base stage first")
    device = device or select_device()
    if dtype is None or isinstance(dtype, str):
        dtype = resolve_dtype(dtype or "auto", device)
    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=dtype)
    model.to(device)
    return model, tokenizer
