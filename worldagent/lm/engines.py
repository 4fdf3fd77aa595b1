"""Which engine generates, and vLLM's side of it (docs/architecture.md, "Generation").

One function decides (:func:`select_engine`): with CUDA and vLLM installed, evaluations decode through vLLM and trl's GRPO generates with
``use_vllm`` colocated on the training GPU; everywhere else (a CPU, no vLLM) through the project's
decoder (:mod:`worldagent.lm.rollout`), which measured fastest on a CPU here
(``python -m benchmarks.generation``). ``WORLDAGENT_ENGINE=decoder`` forces the decoder,
``WORLDAGENT_ENGINE=vllm`` insists on vLLM (an error where it cannot run).

vLLM is imported only inside the functions that run it, so the project installs and runs without
it. It is not pinned: no vLLM release installs beside the project's pins yet (vLLM 0.31.0, the newest
trl 1.16 supports, needs torch 2.13.0 and transformers < 5.18; 0.33.0 needs torch 2.14.0 and
transformers < 5.21; 0.34.0 torch 2.14.0 and transformers < 5.23; the project pins torch 2.14.1 and
transformers 5.23.0), so a GPU environment
that wants it installs it with its own torch (docs/architecture.md). What it is asked for is built by plain functions (:func:`vllm_sampling_kwargs`,
:func:`vllm_engine_kwargs`, :func:`grpo_vllm_kwargs`) that a test checks without CUDA:

- the call grammar as vLLM structured outputs (``StructuredOutputsParams(grammar=...)``, the GBNF
  of :func:`worldagent.lm.constrained.call_grammar_gbnf`, run natively by xgrammar or llguidance),
  with special tokens kept in the text (the call markers are special tokens);
- prefix caching on (every prompt's KV blocks shared by its samples, its retries and the system
  prompt every prompt starts with: vLLM's form of :class:`worldagent.lm.rollout.PromptCache`);
- one seed per request, the decoder's (:func:`worldagent.lm.rollout.sampling_seed`), so a prompt's
  samples do not depend on the prompts beside it;
- the model as one merged directory (the adapter chain merged into the base, the call-marker rows
  included): vLLM's LoRA cannot add vocabulary rows, and an evaluated model is a chain of adapters.

Not under vLLM: the loop guard (``no_repeat_ngram``; vLLM has no per-request logits processor since
its V1 engine), so the guard is off there and the speed file names the engine that answered.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worldagent.errors import RunError
from worldagent.lm.rollout import (
    Completion,
    GenerationStats,
    Prompt,
    SamplingConfig,
    encode_prompt,
    prompt_occurrences,
    sampling_seed,
    stop_token_ids,
)

log = logging.getLogger(__name__)

ENGINE_ENV = "WORLDAGENT_ENGINE"
ENGINES = ("auto", "decoder", "vllm")


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def vllm_installed() -> bool:
    return importlib.util.find_spec("vllm") is not None


def select_engine(
    device: str | None = None,
    *,
    requested: str | None = None,
    cuda: bool | None = None,
    vllm: bool | None = None,
) -> str:
    """``"vllm"`` or ``"decoder"``: vLLM where CUDA and vLLM are both present and the model is not
    on a CPU, unless ``requested`` (default: ``$WORLDAGENT_ENGINE``, else ``auto``) says otherwise."""
    requested = (requested or os.environ.get(ENGINE_ENV) or "auto").strip().lower()
    if requested not in ENGINES:
        raise RunError(f"{ENGINE_ENV}={requested!r}: expected one of {', '.join(ENGINES)}")
    if requested == "decoder":
        return "decoder"
    cuda = cuda_available() if cuda is None else cuda
    vllm = vllm_installed() if vllm is None else vllm
    possible = cuda and vllm and (device is None or not str(device).startswith("cpu"))
    if requested == "vllm" and not possible:
        missing = "CUDA" if not cuda else "vLLM (not installed)" if not vllm else "a model on the GPU"
        raise RunError(f"{ENGINE_ENV}=vllm, but {missing} is missing")
    return "vllm" if possible else "decoder"


# --------------------------------------------------------------------------- requests


def vllm_sampling_kwargs(
    config: SamplingConfig, stops: Sequence[int], seed: int | None = None, grammar: str | None = None
) -> dict[str, Any]:
    """``SamplingParams`` keyword arguments for ``config`` (``structured_outputs`` as the keyword
    arguments of ``StructuredOutputsParams``: :func:`sampling_params` builds the objects)."""
    sampled = config.do_sample
    kwargs: dict[str, Any] = {
        "n": config.num_return_sequences,
        "max_tokens": config.max_new_tokens,
        "temperature": config.temperature if sampled else 0.0,  # 0: greedy
        "top_p": config.top_p if sampled else 1.0,
        "top_k": config.top_k if sampled and config.top_k else 0,  # 0: every token
        "stop_token_ids": [int(t) for t in stops],
        "skip_special_tokens": False,  # the call markers are special tokens
        "spaces_between_special_tokens": False,
    }
    if sampled and seed is not None:
        kwargs["seed"] = int(seed)
    if grammar is not None:
        kwargs["structured_outputs"] = {"grammar": grammar}
    return kwargs


def vllm_requests(
    tokenizer: Any, prompts: Sequence[Prompt], config: SamplingConfig, grammar: str | None = None, model: Any = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(one ``{"prompt_token_ids": ...}`` per prompt, one sampling-kwargs dict per prompt): the
    prompts encoded as the decoder encodes them, each seeded as the decoder seeds its first sample."""
    encoded = [encode_prompt(tokenizer, prompt) for prompt in prompts]
    stops = stop_token_ids(tokenizer, model)
    occurrence = prompt_occurrences(encoded)
    inputs = [{"prompt_token_ids": ids} for ids in encoded]
    sampling = [
        vllm_sampling_kwargs(config, stops, sampling_seed(config.seed, ids, occurrence[i], 0), grammar)
        for i, ids in enumerate(encoded)
    ]
    return inputs, sampling


def sampling_params(kwargs: dict[str, Any]) -> Any:
    """vLLM's ``SamplingParams`` from :func:`vllm_sampling_kwargs`' dict (needs vLLM)."""
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    kwargs = dict(kwargs)
    structured = kwargs.pop("structured_outputs", None)
    if structured is not None:
        kwargs["structured_outputs"] = StructuredOutputsParams(**structured)
    return SamplingParams(**kwargs)


def vllm_engine_kwargs(
    model_dir: Path, *, max_model_len: int, seed: int = 0, gpu_memory_utilization: float = 0.5
) -> dict[str, Any]:
    """``vllm.LLM`` keyword arguments for a merged model directory: prefix caching on, bfloat16."""
    return {
        "model": str(model_dir),
        "tokenizer": str(model_dir),
        "dtype": "bfloat16",
        "enable_prefix_caching": True,
        "max_model_len": int(max_model_len),
        "gpu_memory_utilization": float(gpu_memory_utilization),
        "seed": int(seed),
    }


def grpo_vllm_kwargs(grammar: str | None, max_model_len: int, gpu_memory_utilization: float = 0.3) -> dict[str, Any]:
    """``GRPOConfig`` keyword arguments for trl's colocated vLLM generation (trl 1.16: vLLM runs in
    the trainer's process on the same GPU and takes the policy's weights before each generation;
    ``generation_kwargs`` reach its ``SamplingParams``, where a ``structured_outputs`` dict becomes
    ``StructuredOutputsParams``)."""
    generation: dict[str, Any] = {"skip_special_tokens": False}
    if grammar is not None:
        generation["structured_outputs"] = {"grammar": grammar}
    return {
        "use_vllm": True,
        "vllm_mode": "colocate",
        "vllm_gpu_memory_utilization": gpu_memory_utilization,
        "vllm_max_model_length": int(max_model_len),
        "generation_kwargs": generation,
    }


# --------------------------------------------------------------------------- running (needs vLLM)


def merged_model_dir(model: Any, tokenizer: Any, work: Path) -> Path:
    """``model`` (a PEFT model's adapters merged in, or a plain model) saved for vLLM under ``work``."""
    merged = model.merge_and_unload() if hasattr(model, "merge_and_unload") else model
    target = Path(work) / "merged"
    merged.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def load_vllm(model_dir: Path, *, max_model_len: int, seed: int = 0) -> Any:
    from vllm import LLM

    return LLM(**vllm_engine_kwargs(model_dir, max_model_len=max_model_len, seed=seed))


class VllmPolicy:
    """A :class:`worldagent.world_agent.policies.Policy` decoding through a ``vllm.LLM``, with the
    counts of :class:`worldagent.lm.rollout.BatchedPolicy` (``stats``, ``last``)."""

    def __init__(
        self,
        llm: Any,
        tokenizer: Any,
        config: SamplingConfig = SamplingConfig(),
        grammar: str | None = None,
        make_params: Any = None,
    ) -> None:
        if config.no_repeat_ngram:
            log.warning("vLLM decodes without the loop guard (no_repeat_ngram=%d)", config.no_repeat_ngram)
        self.llm, self.tokenizer, self.config, self.grammar = llm, tokenizer, config, grammar
        self.make_params = make_params or sampling_params  # kwargs -> SamplingParams (tests: the dict itself)
        self.stats = GenerationStats()
        self.last: list[Completion] = []

    def complete(self, prompts: list[list[dict[str, Any]]]) -> list[str]:
        inputs, kwargs = vllm_requests(self.tokenizer, prompts, self.config, self.grammar)
        started = time.perf_counter()
        outputs = self.llm.generate(inputs, [self.make_params(k) for k in kwargs], use_tqdm=False)
        self.stats.seconds += time.perf_counter() - started
        stops = set(kwargs[0]["stop_token_ids"]) if kwargs else set()
        self.last = []
        for request, output in zip(inputs, outputs, strict=True):
            first = output.outputs[0]
            ids = [int(t) for t in first.token_ids if int(t) not in stops]
            stopped = first.finish_reason == "stop"
            self.last.append(Completion(first.text, ids, stopped))
            self.stats.new_tokens += len(first.token_ids)
            self.stats.prompt_tokens += len(request["prompt_token_ids"])
            self.stats.unique_prompts.add(tuple(request["prompt_token_ids"]))
        self.stats.prompts += len(prompts)
        self.stats.completions += len(prompts)
        self.stats.batches += 1
        return [completion.text for completion in self.last]


def grpo_generation_kwargs(device: str, constrained: bool, max_model_len: int, schemas: Any = None) -> dict[str, Any]:
    """The ``GRPOConfig`` keyword arguments of trl's generation on ``device``: vLLM colocated
    (:func:`grpo_vllm_kwargs`, the call grammar when ``constrained``) where :func:`select_engine`
    picks it, else none (trl calls ``generate``, which :mod:`worldagent.world_agent.grpo` routes
    through the project's decoder)."""
    if select_engine(device) != "vllm":
        return {}
    from worldagent.lm.constrained import call_grammar_gbnf
    from worldagent.tools.registry import tool_schemas

    grammar = call_grammar_gbnf(schemas if schemas is not None else tool_schemas()) if constrained else None
    return grpo_vllm_kwargs(grammar, max_model_len)
