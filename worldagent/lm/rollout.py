"""Batched generation with a KV cache, for evaluation and rollouts (experience sampling, GRPO checks).

One call turns many chat prompts into completions: prompts are encoded with the chat template,
sorted by length (fewer pad tokens), cut into batches, left-padded (so every prompt ends where
generation starts) and decoded by :func:`decode_batch` with a KV cache. Greedy decoding is
deterministic; sampling is seeded per prompt (:func:`sampling_seed`: the seed, the prompt's tokens,
which copy of that prompt it is and which completion of its group), each row drawing from its own
generator, so a prompt's samples do not depend on the prompts decoded beside it: a retry rule that
changes which prompts are answered again leaves every other prompt's retry as it was.
``num_return_sequences`` draws a group of completions per prompt (GRPO-style group sampling).

Why not ``model.generate``: it keeps decoding a row that has stopped (as padding) until the whole
batch ends, and grows every row's cache by one concatenation a step. A small model's answers are
mostly short with a few that run to the token budget, so each batch of 8 ran as long as its longest
answer and most of a step's work was spent on finished rows. :func:`decode_batch` drops a row from
the batch (and from its KV cache) the step it stops, so long batches cost what their live rows cost
(``benchmarks/generation.py`` measures both). The evaluation goes one step further: a finished row
is replaced by the next prompt or retry at once (:mod:`worldagent.lm.continuous`). :func:`generate_one_at_a_time` keeps plain
``model.generate`` as the baseline, and the tests check that both give the same greedy answers.

Every prompt is prefilled once per model (:class:`PromptCache`): a prompt is prefilled on its own,
without padding (a padded batch prefill computed every pad token: 34 held-out prompts of 634-957
tokens took 111 s, against 34 s row by row), on top of the longest prefix already prefilled (the
system prompt with the tools, 362 of the median 789 prompt tokens of SmolLM2's held-out prompts, once
a call), and its keys, values and last logits are kept: the samples of a group, the same prompt
asked twice and a later call with the same cache (the evaluation's self-check retries) take them
instead of prefilling again (:func:`prefill_rows`). :class:`GenerationStats` counts the tokens run
through the model against the least any engine must run (``spent_over_minimum``). And the KV cache is written into buffers allocated once for
the whole answer (:func:`preallocated_cache`) instead of being concatenated anew every step: at 34
rows of ~1,000 tokens each step's concatenations copied ~0.8 GB and a decode step took 0.25 s,
against 0.075 s preallocated (``benchmarks/generation.py``).

An optional ``logits_processor`` factory (e.g.
:func:`worldagent.lm.constrained.tool_call_processor`) is called once per batch with the padded
prompt width, so a stateful processor starts fresh for each batch. A processor that keeps per-row
state must offer ``select_rows(keep)`` so that it follows the rows :func:`decode_batch` keeps (one
without it is taken to be stateless).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from worldagent.lm.argmax import argmax
from worldagent.lm.decode_attention import decoding, shared_columns
from worldagent.lm.lean_linear import lean_linears
from worldagent.lm.lean_step import decode_step, supports
from worldagent.lm.stops import stop_token_ids

Prompt = Sequence[Mapping[str, Any]]
ProcessorFactory = Callable[[int], Any]  # prompt width -> a transformers LogitsProcessor


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingConfig:
    """How to decode. ``do_sample=False`` is greedy (``temperature``/``top_*`` ignored)."""

    max_new_tokens: int = 512
    do_sample: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    num_return_sequences: int = 1
    seed: int = 0
    # > 0: never repeat an n-gram of this length that the completion itself wrote (the prompt is
    # ignored; see worldagent.lm.ngram_guard). 0: off.
    no_repeat_ngram: int = 0
    # > 0: up to this many tokens a step drafted from the answer's own context and checked in the
    # same step (worldagent.lm.speculation; the continuous decoder's lean step only). 0: off.
    draft_tokens: int = 0

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")
        if self.num_return_sequences < 1:
            raise ValueError("num_return_sequences must be at least 1")
        if self.do_sample and self.temperature <= 0:
            raise ValueError("temperature must be positive when sampling")
        if self.no_repeat_ngram and self.no_repeat_ngram < 2:
            raise ValueError("no_repeat_ngram must be 0 (off) or at least 2")
        if self.draft_tokens < 0:
            raise ValueError("draft_tokens must be 0 (off) or more")
        if not self.do_sample and self.num_return_sequences > 1:
            raise ValueError("greedy decoding gives one completion per prompt; set do_sample for a group")


@dataclass
class Completion:
    text: str
    token_ids: list[int]  # the new tokens up to (not including) the first stop token
    stopped: bool  # ended with a stop token (not cut by max_new_tokens)
    steered: bool = False  # a processor with ``steered`` (the call grammar) changed a greedy choice


@dataclass
class GenerationStats:
    """What generation did, counted exactly: the work (tokens through the model) against the least
    any engine must do (:attr:`minimum_tokens`)."""

    prompts: int = 0
    completions: int = 0
    new_tokens: int = 0
    seconds: float = 0.0
    prefill_seconds: float = 0.0  # of ``seconds``, those spent prefilling prompts
    batches: int = 0
    per_batch_seconds: list[float] = field(default_factory=list)
    prompt_tokens: int = 0  # prompt tokens of every completion asked for (what naive decoding prefills)
    prefilled_tokens: int = 0  # tokens actually run through the model to prefill (pad columns included)
    reused_tokens: int = 0  # prompt tokens whose keys and values came from a :class:`PromptCache` instead
    decoded_tokens: int = 0  # tokens run through the model one a step, after the prefill
    attended: int = 0  # the sum, over every token run through the model, of the positions it attends to
    logit_rows: int = 0  # positions whose logits (the vocabulary projection) were computed
    drafted_tokens: int = 0  # of ``decoded_tokens``, those drafted (worldagent.lm.speculation)
    kept_drafts: int = 0  # drafted tokens that were the ones chosen (the rest is work spent, not an answer's)
    unique_prompts: set[tuple[int, ...]] = field(default_factory=set, repr=False)

    @property
    def tokens_per_second(self) -> float:
        return self.new_tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def prompt_tokens_per_second(self) -> float:
        """Prompt tokens answered a second: every prompt token of every completion asked for,
        whether it was prefilled, reused or shared (what an engine is asked to take in)."""
        return self.prompt_tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def unique_prompt_tokens(self) -> int:
        """The prompt tokens a perfect engine prefills: each distinct prefix once (the nodes of the
        prompts' token trie: a shared system prompt counts once, a retried prompt not again)."""
        return unique_prefix_tokens(self.unique_prompts)

    @property
    def minimum_tokens(self) -> int:
        """Every unique prompt token prefilled once, every new token decoded once: an answer's
        first token comes from its prompt's logits and its last is never run through the model, so
        an answer of n tokens is n - 1 tokens of work."""
        return self.unique_prompt_tokens + self.new_tokens - self.completions

    @property
    def spent_tokens(self) -> int:
        return self.prefilled_tokens + self.decoded_tokens

    @property
    def spent_over_minimum(self) -> float:
        return self.spent_tokens / self.minimum_tokens if self.minimum_tokens else 0.0

    def add(self, other: GenerationStats) -> None:
        """Add ``other``'s counts (one policy's retries into the total of an evaluation)."""
        for name in (
            "prompts", "completions", "new_tokens", "seconds", "prefill_seconds", "batches", "prompt_tokens",
            "prefilled_tokens", "reused_tokens", "decoded_tokens", "attended", "logit_rows", "drafted_tokens",
            "kept_drafts",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.per_batch_seconds += other.per_batch_seconds
        self.unique_prompts |= other.unique_prompts


def unique_prefix_tokens(prompts: Sequence[Sequence[int]] | set[tuple[int, ...]]) -> int:
    """How many nodes the token trie of ``prompts`` has: each prompt's tokens, less what it shares
    with its neighbour in sorted order (the longest prefix it shares with any other)."""
    total, previous = 0, ()
    for prompt in sorted({tuple(p) for p in prompts}):
        common = 0
        while common < min(len(prompt), len(previous)) and prompt[common] == previous[common]:
            common += 1
        total += len(prompt) - common
        previous = prompt
    return total


@dataclass(frozen=True)
class ModelShape:
    """What the arithmetic of one token costs in a decoder-only transformer."""

    body_parameters: int  # every weight a token's hidden state is multiplied by, the vocabulary projection aside
    head_parameters: int  # the vocabulary projection (computed only for the positions whose logits are kept)
    layers: int
    attention_width: int  # query heads × head dimension

    @classmethod
    def of(cls, model: Any) -> ModelShape:
        config = getattr(model.config, "text_config", model.config)
        embedding = model.get_input_embeddings().weight
        head = model.get_output_embeddings().weight
        total = sum(p.numel() for p in model.parameters())
        tied = head.data_ptr() == embedding.data_ptr()
        # the embedding lookup is no arithmetic; the head is counted where it is run
        body = total - embedding.numel() - (0 if tied else head.numel())
        heads = int(config.num_attention_heads)
        dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
        return cls(body, head.numel(), int(config.num_hidden_layers), heads * dim)

    def flops(self, tokens: int, attended: int, logit_rows: int) -> float:
        """≈ 2·parameters a token, plus attention's QKᵀ and AV (2 × 2·width a position attended to,
        each layer), plus the vocabulary projection where logits were computed."""
        return (
            2.0 * self.body_parameters * tokens
            + 4.0 * self.layers * self.attention_width * attended
            + (2.0 * self.head_parameters * logit_rows)
        )

    def spent_flops(self, stats: GenerationStats) -> float:
        return self.flops(stats.spent_tokens, stats.attended, stats.logit_rows)

    def minimum_flops(self, stats: GenerationStats) -> float:
        """The least arithmetic: each unique prompt token once (attending to its depth in the
        trie), each new token once (attending to its prompt and the answer so far), one vocabulary
        projection per distinct prompt and per decode step. Bounded below by taking every decode at
        the shortest prompt."""
        attended = _trie_attended(stats.unique_prompts)
        shortest = min((len(p) for p in stats.unique_prompts), default=0)
        per_answer = stats.new_tokens / max(stats.completions, 1)
        decoded = stats.new_tokens - stats.completions
        attended += int(decoded * (shortest + per_answer / 2))
        # logits: each distinct prompt's last token (shared by its samples), then each decode step
        return self.flops(stats.minimum_tokens, attended, len(stats.unique_prompts) + decoded)


def _trie_attended(prompts: set[tuple[int, ...]]) -> int:
    """Σ over the trie's nodes of their depth (the positions a prefilled token attends to)."""
    total, previous = 0, ()
    for prompt in sorted(prompts):
        common = 0
        while common < min(len(prompt), len(previous)) and prompt[common] == previous[common]:
            common += 1
        total += sum(range(common + 1, len(prompt) + 1))
        previous = prompt
    return total


# --------------------------------------------------------------------------- tokens


def pad_token_id(tokenizer: Any) -> int:
    pad = getattr(tokenizer, "pad_token_id", None)
    if pad is not None:
        return int(pad)
    stops = stop_token_ids(tokenizer)
    if not stops:
        raise ValueError("the tokenizer has neither a pad nor an eos token")
    return stops[0]


def encode_prompt(tokenizer: Any, prompt: Prompt) -> list[int]:
    text = tokenizer.apply_chat_template(list(prompt), add_generation_prompt=True, tokenize=False)
    # The template writes bos itself; adding special tokens again would double it.
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def left_pad(encoded: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)``, each row right-aligned so every prompt ends at the last column."""
    width = max(len(ids) for ids in encoded)
    input_ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(encoded), width), dtype=torch.long)
    for row, ids in enumerate(encoded):
        if ids:
            input_ids[row, width - len(ids) :] = torch.tensor(list(ids), dtype=torch.long)
            attention[row, width - len(ids) :] = 1
    return input_ids, attention


def shared_prefix_length(encoded: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every row has in common, leaving each row at least one of its own
    (its last token's logits start its answer)."""
    if not encoded:
        return 0
    limit = min(len(ids) for ids in encoded) - 1
    first = encoded[0]
    length = 0
    while length < limit and all(ids[length] == first[length] for ids in encoded):
        length += 1
    return length


@functools.cache
def preallocated_layer_class() -> type:
    """``PreallocatedLayer``: a full-attention KV cache layer whose keys and values are views of
    buffers allocated once for ``capacity`` positions, so a step copies only its new token where
    transformers' ``DynamicLayer`` concatenates the whole cache anew. Rows leave with
    ``batch_select_indices``; a row prefilled on its own is written in with ``place_row``. (Built on
    first use: transformers is imported lazily here.)"""
    from transformers.cache_utils import DynamicLayer

    class PreallocatedLayer(DynamicLayer):
        def __init__(self, capacity: int) -> None:
            super().__init__()
            self.capacity, self.length = capacity, 0
            self.key_buffer: torch.Tensor | None = None
            self.value_buffer: torch.Tensor | None = None

        def _views(self) -> None:
            assert self.key_buffer is not None and self.value_buffer is not None
            self.keys = self.key_buffer[:, :, : self.length]
            self.values = self.value_buffer[:, :, : self.length]

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            end = self.length + key_states.shape[-2]
            if self.key_buffer is None or self.value_buffer is None:
                batch, heads, _, dim = key_states.shape
                shape = (batch, heads, max(self.capacity, end), dim)
                self.key_buffer, self.value_buffer = key_states.new_empty(shape), value_states.new_empty(shape)
            elif end > self.key_buffer.shape[-2]:
                raise ValueError(f"the KV cache holds {self.key_buffer.shape[-2]} positions, {end} needed")
            self.key_buffer[:, :, self.length : end].copy_(key_states)
            self.value_buffer[:, :, self.length : end].copy_(value_states)
            self.length = end
            self._views()
            return self.keys, self.values

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            """Keep the rows ``indices`` (ascending, as :func:`decode_batch` passes them), moved down
            in place: only the rows that move are copied, and only their written positions (indexing
            copied every row's whole capacity, ~5% of a decode's time at 34 rows)."""
            if self.key_buffer is None or self.value_buffer is None:
                return
            rows = [int(row) for row in indices.tolist()]
            if rows != sorted(set(rows)):
                raise ValueError("batch_select_indices keeps rows in ascending order, each once")
            for buffer in (self.key_buffer, self.value_buffer):
                for new, old in enumerate(rows):
                    if new != old:
                        buffer[new, :, : self.length].copy_(buffer[old, :, : self.length])
            self.key_buffer, self.value_buffer = self.key_buffer[: len(rows)], self.value_buffer[: len(rows)]
            self._views()

        def place_row(self, row: int, rows: int, start: int, keys: torch.Tensor, values: torch.Tensor) -> None:
            """Write one row's keys and values (a batch of 1) into row ``row`` of ``rows``, from column
            ``start``; the columns before it (the row's padding) stay zero, which the attention mask hides."""
            if self.key_buffer is None or self.value_buffer is None:
                self.lazy_initialization(keys, values)
                shape = (rows, keys.shape[1], self.capacity, keys.shape[-1])
                self.key_buffer, self.value_buffer = keys.new_zeros(shape), values.new_zeros(shape)
            end = start + keys.shape[-2]
            if end > self.key_buffer.shape[-2]:
                raise ValueError(f"the KV cache holds {self.key_buffer.shape[-2]} positions, {end} needed")
            self.key_buffer[row, :, start:end].copy_(keys[0])
            self.value_buffer[row, :, start:end].copy_(values[0])
            self.length = max(self.length, end)
            self._views()

        def expand_rows(self, rows: torch.Tensor) -> None:
            """Row ``i`` becomes a copy of row ``rows[i]`` (rows may repeat; a new buffer)."""
            if self.key_buffer is None or self.value_buffer is None:
                return
            self.key_buffer, self.value_buffer = self.key_buffer[rows], self.value_buffer[rows]
            self._views()

        def crop(self, tokens_to_remove: int) -> None:
            raise NotImplementedError("a preallocated decode cache is never cropped")

    return PreallocatedLayer


def preallocated_cache(model: Any, capacity: int) -> Any:
    """The model's ``DynamicCache`` with every full-attention layer a ``PreallocatedLayer``
    (sliding-window layers, e.g. Gemma-3's local ones, stay as they are: they hold a window only)."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    layer_class = preallocated_layer_class()
    cache = DynamicCache(config=model.config)
    cache.layers = [layer_class(capacity) if type(layer) is DynamicLayer else layer for layer in cache.layers]
    return cache


_SERIALS = itertools.count()


@dataclass(eq=False)
class CachedPrompt:
    """The keys and values of ``tokens[start:]`` of a prompt (or of a prefix prompts share), each
    layer's ``(1, heads, len - start, dim)``, on top of ``parent`` (which holds ``tokens[:start]``)."""

    tokens: tuple[int, ...]
    start: int
    parent: CachedPrompt | None
    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    logits: torch.Tensor | None  # the last token's (None for a prefix, whose logits nothing reads)
    children: int = 0
    # unique in the process: rows placed from one entry hold the same keys and values (a prompt
    # prefilled again after eviction may round otherwise), and a serial, unlike the object, keeps no
    # memory alive
    serial: int = field(default_factory=lambda: next(_SERIALS))

    def segments(self) -> list[CachedPrompt]:
        """This entry and its ancestors, the first tokens first."""
        chain, entry = [], self
        while entry is not None:
            chain.append(entry)
            entry = entry.parent
        return chain[::-1]

    @property
    def nbytes(self) -> int:
        own = sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))
        return own + (self.logits.numel() * self.logits.element_size() if self.logits is not None else 0)


class PromptCache:
    """Prefilled prompts of one model (in one state of its weights), kept to be used again.

    Every prompt is prefilled at most once: the samples of a group, the same prompt asked twice,
    and a later call with the same prompts (a self-check retry) take its keys, values and
    last-token logits from here. A prompt is prefilled on top of the longest prefix already here
    (the system prompt every prompt starts with, prefilled once for the whole run), and stores only
    its own tokens' keys and values. Kept up to ``max_bytes``, least recently used prompts dropped
    first (prefixes others build on stay). Only for models whose layers all attend to the whole
    prompt (a sliding-window layer keeps a window, not a prompt: see :func:`prefill_rows`).

    Reusing a prompt's cache gives the answers prefilling it again gives: the same keys, values and
    logits (computed once, by the same kernels), so greedy answers and seeded samples are unchanged.
    Whoever holds one must drop it when the weights change (a training step, another adapter).
    """

    def __init__(self, max_bytes: int = 2 << 30) -> None:
        self.max_bytes = max_bytes
        self.entries: dict[tuple[int, ...], CachedPrompt] = {}
        self.nbytes = 0
        self.hits = 0

    def __len__(self) -> int:
        return len(self.entries)

    def longest(self, tokens: tuple[int, ...], logits: bool) -> CachedPrompt | None:
        """The entry for ``tokens`` itself (with logits when ``logits``), else the longest entry
        that is a proper prefix of it."""
        found = self.entries.get(tokens)
        if found is not None and (found.logits is not None or not logits):
            self.entries[tokens] = self.entries.pop(tokens)  # most recently used last
            return found
        best: CachedPrompt | None = None
        for key, entry in self.entries.items():
            if len(key) < len(tokens) and (best is None or len(key) > len(best.tokens)) and tokens[: len(key)] == key:
                best = entry
        return best

    def prompt(self, model: Any, tokens: Sequence[int], stats: GenerationStats, logits: bool = True) -> CachedPrompt:
        """The entry of ``tokens``, prefilled now (on the longest cached prefix) if it is not here."""
        key = tuple(int(t) for t in tokens)
        base = self.longest(key, logits)
        if base is not None and base.tokens == key:
            self.hits += 1
            if logits:  # a row's prompt; a prefix is only a step towards them
                stats.reused_tokens += len(key)
            return base
        start = len(base.tokens) if base is not None else 0
        work = preallocated_cache(model, len(key))
        if base is not None:
            for segment in base.segments():
                for layer, keys, values in zip(work.layers, segment.keys, segment.values, strict=True):
                    layer.update(keys, values)
        device = next(model.parameters()).device
        own = torch.arange(start, len(key), device=device)
        started = time.perf_counter()
        output = model(
            input_ids=torch.tensor(key[start:], device=device)[None],
            position_ids=own[None],
            cache_position=own,
            past_key_values=work,
            use_cache=True,
            logits_to_keep=1,
        )
        stats.prefill_seconds += time.perf_counter() - started
        stats.prefilled_tokens += len(key) - start
        stats.reused_tokens += start if logits else 0
        stats.attended += sum(range(start + 1, len(key) + 1))
        stats.logit_rows += 1
        # own copies of this prompt's tokens only: a view would keep the whole work buffer alive
        entry = CachedPrompt(
            key,
            start,
            base,
            [layer.keys[:, :, start:].clone() for layer in work.layers],
            [layer.values[:, :, start:].clone() for layer in work.layers],
            output.logits[0, -1].clone() if logits else None,
        )
        if base is not None:
            base.children += 1
        replaced = self.entries.pop(key, None)
        if replaced is not None:
            self.nbytes -= replaced.nbytes
        self.entries[key] = entry
        self.nbytes += entry.nbytes
        self._evict()
        return entry

    def _evict(self) -> None:
        """Drop the least recently used prompts nothing builds on until the budget holds."""
        for key in list(self.entries):
            if self.nbytes <= self.max_bytes:
                return
            entry = self.entries[key]
            if entry.children:
                continue
            del self.entries[key]
            self.nbytes -= entry.nbytes
            if entry.parent is not None:
                entry.parent.children -= 1


def full_attention_only(model: Any) -> bool:
    """Every layer of ``model``'s cache is a full-attention one (prompts can be prefilled row by row
    and their keys and values kept in a :class:`PromptCache`)."""
    return all(hasattr(layer, "place_row") for layer in preallocated_cache(model, 1).layers)


def cut_at_stop(new_ids: Sequence[int], stops: set[int]) -> tuple[list[int], bool]:
    kept: list[int] = []
    for token in new_ids:
        if int(token) in stops:
            return kept, True
        kept.append(int(token))
    return kept, False


def decode_completion(tokenizer: Any, ids: Sequence[int], drop: set[int]) -> str:
    """Decode keeping FunctionGemma's call markers (special tokens) but not pad/bos."""
    return tokenizer.decode([t for t in ids if t not in drop], skip_special_tokens=False)


# --------------------------------------------------------------------------- generation


def decoding_processors(config: SamplingConfig, width: int, factory: ProcessorFactory | None) -> list[Any]:
    """The processors of a decoding whose prompts are ``width`` tokens: the loop guard before the
    grammar (the scores that come out are the same either way: one subtracts, the other masks; and
    the grammar then sees what an unconstrained decoding would choose from, so its ``steered`` says
    where the two would part)."""
    from worldagent.lm.ngram_guard import GeneratedNgramGuard

    processors: list[Any] = []
    if config.no_repeat_ngram:
        processors.append(GeneratedNgramGuard(width, config.no_repeat_ngram))
    if factory is not None:
        processors.append(factory(width))
    return processors


def dropped_tokens(tokenizer: Any, stops: set[int], pad: int) -> set[int]:
    """The tokens an answer's text leaves out: stops, the pad and the bos token."""
    bos = getattr(tokenizer, "bos_token_id", None)
    return stops | {pad} | ({int(bos)} if bos is not None else set())


def completion_of(tokenizer: Any, new_ids: Sequence[int], stops: set[int], drop: set[int], steered: bool) -> Completion:
    """The :class:`Completion` of a row's new tokens (cut at its first stop token)."""
    kept, stopped = cut_at_stop(new_ids, stops)
    return Completion(decode_completion(tokenizer, kept, drop), kept, stopped, steered)


def _generate_kwargs(config: SamplingConfig, stops: list[int], pad: int) -> dict[str, Any]:
    """``model.generate`` arguments for :func:`generate_one_at_a_time` (the plain baseline)."""
    kwargs: dict[str, Any] = {
        "max_new_tokens": config.max_new_tokens,
        "do_sample": config.do_sample,
        "num_return_sequences": config.num_return_sequences,
        "eos_token_id": stops or None,
        "pad_token_id": pad,
        "use_cache": True,
    }
    if config.do_sample:
        kwargs.update(temperature=config.temperature, top_p=config.top_p, top_k=config.top_k)
    else:  # no sampling knobs, so transformers does not warn that they are ignored
        kwargs.update(temperature=None, top_p=None, top_k=None)
    return kwargs


def sampling_warpers(config: SamplingConfig) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """transformers' temperature, top-k and top-p warpers, in ``model.generate``'s order, as one
    ``(input ids, scores) -> scores`` function. It calls them in turn rather than through
    ``LogitsProcessorList``, whose every call inspects each warper's signature: ~70 µs a row and
    step, more than the warpers' own arithmetic."""
    from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    warpers: list[Any] = []
    if config.temperature != 1.0:
        warpers.append(TemperatureLogitsWarper(config.temperature))
    if config.top_k:
        warpers.append(TopKLogitsWarper(config.top_k))
    if config.top_p < 1.0:
        warpers.append(TopPLogitsWarper(config.top_p))

    def warp(input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        for warper in warpers:
            scores = warper(input_ids, scores)
        return scores

    return warp


def draw(probabilities: torch.Tensor, generators: Sequence[torch.Generator] | None = None) -> torch.Tensor:
    """One token a row of ``probabilities`` (rows, vocabulary), by inverse transform sampling: a
    float64 uniform number a row against the row's cumulative sum; ``generators``: one a row, else
    torch's global generator.

    The tokens come from the same distribution as ``torch.multinomial(probabilities, 1)``'s, from
    another random stream: ``multinomial`` takes ``argmax(p / q)`` over an exponential number drawn
    for every token (49,152 of them a row and step on SmolLM2's vocabulary, ~1 ms on a CPU, serially),
    this one random number a row. A token of probability 0 is never drawn. Raises ``ValueError`` for
    a row whose probabilities do not sum to a positive, finite number.
    """
    cumulative = probabilities.double().cumsum(dim=-1)
    totals = cumulative[:, -1]
    if not bool(((totals > 0) & totals.isfinite()).all()):  # NaN fails both
        raise ValueError("a row to sample from has no positive, finite probability mass")
    if generators is None:
        uniforms = torch.rand(len(totals), dtype=torch.float64, device=totals.device)
    else:
        if len(generators) != len(totals):
            raise ValueError(f"{len(generators)} generators for {len(totals)} rows")
        uniforms = torch.cat(
            [torch.rand(1, dtype=torch.float64, device=totals.device, generator=g) for g in generators]
        )
    # the first token whose cumulative sum passes u * total: its own probability is positive (the
    # sum rose there), and there is one: with u < 1, u * total < total in float64 too
    return torch.searchsorted(cumulative, (uniforms * totals)[:, None], right=True)[:, 0]


def prefill_rows(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    prefix: int,
    cache: Any,
    store: PromptCache | None = None,
    stats: GenerationStats | None = None,
    placed: list[int] | None = None,
) -> torch.Tensor:
    """Prefill a left-padded batch into ``cache``; return each row's last-token logits.

    Row by row, without padding, each distinct prompt once, through ``store`` (a
    :class:`PromptCache`; a fresh one when None): a prompt already there (a retry, the next sample
    of a group, the same prompt asked twice) is not prefilled at all, and a new one is prefilled on
    top of the longest prefix there (the first ``prefix`` tokens, the same in every row, are put
    there first). Each row's keys and values are then written into ``cache`` at the row's own
    columns. A model with other than full-attention layers (Gemma-3's sliding-window ones) is
    prefilled as one padded batch instead, each distinct row once, and its cache rows repeated for
    the copies. ``stats`` counts the tokens prefilled and reused. ``placed``, when given, gets each
    row's :class:`CachedPrompt` serial (rows with one serial hold the same columns up to ``width``);
    it stays empty for the padded batch.
    """
    stats = stats if stats is not None else GenerationStats()
    width = input_ids.shape[1]
    if not all(hasattr(layer, "place_row") for layer in cache.layers):
        return _prefill_padded(model, input_ids, attention_mask, cache, stats)
    store = store if store is not None else PromptCache()
    lengths = [int(length) for length in attention_mask.sum(-1).tolist()]
    if prefix:
        store.prompt(model, input_ids[0, width - lengths[0] :][:prefix].tolist(), stats, logits=False)
    logits: list[torch.Tensor] = []
    for row, length in enumerate(lengths):
        entry = store.prompt(model, input_ids[row, width - length :].tolist(), stats)
        if placed is not None:
            placed.append(entry.serial)
        for segment in entry.segments():
            for layer, keys, values in zip(cache.layers, segment.keys, segment.values, strict=True):
                layer.place_row(row, len(lengths), width - length + segment.start, keys, values)
        assert entry.logits is not None
        logits.append(entry.logits)
    return torch.stack(logits)


def _prefill_padded(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, cache: Any, stats: GenerationStats
) -> torch.Tensor:
    """:func:`prefill_rows` for a model with sliding-window layers: the distinct rows as one padded
    batch, then each row's cache repeated for its copies (the samples of a group)."""
    width = input_ids.shape[1]
    first: dict[tuple[int, ...], int] = {}
    index = [first.setdefault(tuple(row), len(first)) for row in input_ids.tolist()]  # row -> its distinct row
    if len(first) < len(index):
        rows = [index.index(position) for position in range(len(first))]
        input_ids, attention_mask = input_ids[rows], attention_mask[rows]
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    started = time.perf_counter()
    logits = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=positions,
        past_key_values=cache,
        cache_position=torch.arange(width, device=input_ids.device),
        use_cache=True,
        logits_to_keep=1,
    ).logits[:, -1, :]
    stats.prefill_seconds += time.perf_counter() - started
    stats.prefilled_tokens += len(first) * width
    stats.reused_tokens += (len(index) - len(first)) * width
    stats.attended += len(first) * width * (width + 1) // 2
    stats.logit_rows += len(first)
    if len(first) == len(index):
        return logits
    expand = torch.tensor(index, device=input_ids.device)
    repeat_cache_rows(cache, expand)
    return logits[expand]


def repeat_cache_rows(cache: Any, rows: torch.Tensor) -> None:
    """Make row ``i`` of every layer of ``cache`` a copy of its row ``rows[i]`` (rows may repeat):
    a prompt prefilled once becomes the start of each of its samples."""
    for layer in cache.layers:
        if hasattr(layer, "expand_rows"):
            layer.expand_rows(rows)
        elif getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys, layer.values = layer.keys[rows], layer.values[rows]


def sampling_seed(seed: int, prompt_ids: Sequence[int], occurrence: int, completion: int) -> int:
    """The seed of one sampled completion: of ``seed``, the prompt's token ids, which occurrence of
    that same prompt in the call it is (0 for the first) and which completion of its group.

    A stable digest, not Python's ``hash``: the same on every run, process and machine.
    """
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{seed}:{occurrence}:{completion}:".encode())
    digest.update(",".join(map(str, prompt_ids)).encode())
    return int.from_bytes(digest.digest(), "big") & (2**63 - 1)


def prompt_occurrences(encoded: Sequence[Sequence[int]]) -> list[int]:
    """Per prompt: how many identical prompts come before it in ``encoded`` (0 for the first), so
    that a prompt asked twice in one call draws two samples, not one twice."""
    seen: dict[tuple[int, ...], int] = {}
    occurrences: list[int] = []
    for ids in encoded:
        key = tuple(ids)
        occurrences.append(seen.get(key, 0))
        seen[key] = occurrences[-1] + 1
    return occurrences


def row_generators(seeds: Sequence[int], device: torch.device) -> list[torch.Generator]:
    """One random generator per row, seeded with ``seeds`` (:func:`sampling_seed`)."""
    return [torch.Generator(device=device).manual_seed(seed) for seed in seeds]


def decode_batch(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    config: SamplingConfig,
    stops: Sequence[int],
    processors: Sequence[Any] = (),
    prefix: int = 0,
    generators: Sequence[torch.Generator] | None = None,
    store: PromptCache | None = None,
    stats: GenerationStats | None = None,
) -> list[list[int]]:
    """The new tokens of each row of a left-padded batch (``num_return_sequences`` rows per prompt,
    prompt by prompt), each up to and including its stop token or ``max_new_tokens`` long.

    ``generators``: when sampling, one per row (after the ``num_return_sequences`` copies), so that
    each row's draws are its own (:func:`row_generators`); None draws every row from torch's global
    generator.

    ``prefix``: how many leading tokens every prompt shares (:func:`shared_prefix_length`); they are
    prefilled once (:func:`prefill_rows`, through ``store`` when given: the prompts already there
    are not prefilled again). Then one token a step for the rows still going: a row leaves the
    batch, its KV cache and every processor's state (``select_rows``) the step it writes a stop
    token. ``stats`` counts the tokens run through the model (not the new tokens: the caller's).
    """
    stats = stats if stats is not None else GenerationStats()
    if config.num_return_sequences > 1:
        input_ids = input_ids.repeat_interleave(config.num_return_sequences, dim=0)
        attention_mask = attention_mask.repeat_interleave(config.num_return_sequences, dim=0)
    device = input_ids.device
    width = input_ids.shape[1]
    stop_set = {int(token) for token in stops}
    warpers = sampling_warpers(config) if config.do_sample else None
    if generators is not None and len(generators) != input_ids.shape[0]:
        raise ValueError(f"{len(generators)} generators for {input_ids.shape[0]} rows")
    if not 0 <= prefix < int(attention_mask.sum(-1).min()):
        raise ValueError(f"the shared prefix ({prefix} tokens) must leave every row a token of its own")
    cache = preallocated_cache(model, width + config.max_new_tokens)
    placed: list[int] = []  # the cache entry each row's prompt came from: a prompt's samples share one
    logits = prefill_rows(model, input_ids, attention_mask, prefix, cache, store, stats, placed)
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    sequences, last_position = input_ids, positions[:, -1:]
    live = list(range(input_ids.shape[0]))  # the original row of each row still in the batch
    generated: list[list[int]] = [[] for _ in live]
    # rows placed from one entry (a prompt's samples, trl's copies of it) hold the same columns up to
    # ``width``, which the kernel reads once for them
    prompt_of = placed if len(placed) == len(live) else list(range(len(live)))
    shared = shared_columns(prompt_of, width)
    with decoding(model), lean_linears(model):  # the one-token attention kernel; lean linear layers
        lean = supports(model)  # the step without transformers' per-call machinery, the same logits
        for step in range(config.max_new_tokens):
            scores = logits.float()
            for processor in processors:
                scores = processor(sequences, scores)
            if warpers is not None:
                probabilities = torch.softmax(warpers(sequences, scores), dim=-1)
                rows_generators = None if generators is None else [generators[row] for row in live]
                chosen = draw(probabilities, rows_generators)[:, None]
            else:
                chosen = argmax(scores, keepdim=True)
            keep: list[int] = []
            for index, token in enumerate(chosen.view(-1).tolist()):
                generated[live[index]].append(token)
                if token not in stop_set:
                    keep.append(index)
            if not keep or step + 1 == config.max_new_tokens:
                break
            sequences = torch.cat([sequences, chosen], dim=1)
            attention_mask = torch.cat([attention_mask, attention_mask.new_ones((len(live), 1))], dim=1)
            last_position = last_position + 1
            if len(keep) < len(live):
                rows = torch.tensor(keep, device=device)
                cache.batch_select_indices(rows)
                sequences, attention_mask = sequences[rows], attention_mask[rows]
                last_position, chosen = last_position[rows], chosen[rows]
                for processor in processors:
                    if hasattr(processor, "select_rows"):  # stateless processors have nothing to follow
                        processor.select_rows(keep)
                live = [live[index] for index in keep]
                shared = shared_columns([prompt_of[row] for row in live], width)
            stats.decoded_tokens += len(live)
            stats.attended += len(live) * (width + step + 1)  # the padded cache: pad columns are computed too
            stats.logit_rows += len(live)
            if lean:
                mask = attention_mask.bool()[:, None, None, :]
                logits = decode_step(model, chosen, last_position, cache.layers, mask, shared)[:, -1, :]
                continue
            logits = model(
                input_ids=chosen,
                attention_mask=attention_mask,
                position_ids=last_position,
                past_key_values=cache,
                cache_position=torch.tensor([width + step], device=device),
                use_cache=True,
            ).logits[:, -1, :]
    return generated


def generate_batched(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Prompt],
    config: SamplingConfig = SamplingConfig(),
    batch_size: int = 8,
    logits_processor: ProcessorFactory | None = None,
    stats: GenerationStats | None = None,
    prompt_cache: PromptCache | None = None,
) -> list[list[Completion]]:
    """``num_return_sequences`` completions for each prompt, in prompt order (see the module doc).

    ``prompt_cache``: prefilled prompts kept from an earlier call on the same model (a
    :class:`PromptCache`), used and added to; None: a cache for this call alone, so that even then
    every distinct prompt, and the prefix all the call's prompts share, is prefilled once."""
    return _generate(model, tokenizer, prompts, config, batch_size, logits_processor, stats, False, prompt_cache)


def _generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Prompt],
    config: SamplingConfig,
    batch_size: int,
    logits_processor: ProcessorFactory | None,
    stats: GenerationStats | None,
    plain: bool,
    prompt_cache: PromptCache | None = None,
) -> list[list[Completion]]:
    """Batches of prompts through :func:`decode_batch`, or through ``model.generate`` when ``plain``."""
    from transformers import LogitsProcessorList

    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    device = next(model.parameters()).device
    stops = stop_token_ids(tokenizer, model)
    stop_set = set(stops)
    pad = pad_token_id(tokenizer)
    drop = dropped_tokens(tokenizer, stop_set, pad)
    encoded = [encode_prompt(tokenizer, prompt) for prompt in prompts]
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))
    occurrence = prompt_occurrences(encoded)
    results: list[list[Completion]] = [[] for _ in encoded]
    stats = stats if stats is not None else GenerationStats()
    stats.prompt_tokens += sum(len(ids) for ids in encoded) * config.num_return_sequences
    stats.unique_prompts.update(tuple(ids) for ids in encoded)
    was_training = model.training
    model.eval()
    try:
        store = None
        if not plain and encoded and full_attention_only(model):
            # the tokens every prompt of the call starts with (the system prompt with the tools)
            # are prefilled once for the call, not once a batch
            store = prompt_cache if prompt_cache is not None else PromptCache()
            started = time.perf_counter()
            with torch.inference_mode():
                call_prefix = shared_prefix_length(encoded)
                if call_prefix:
                    store.prompt(model, encoded[0][:call_prefix], stats, logits=False)
            stats.seconds += time.perf_counter() - started
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            rows_encoded = [encoded[i] for i in batch]
            input_ids, attention = left_pad(rows_encoded, pad)
            width = input_ids.shape[1]
            processors = LogitsProcessorList(decoding_processors(config, width, logits_processor))
            started = time.perf_counter()
            cuda = [device.index or 0] if device.type == "cuda" else []
            with torch.inference_mode(), torch.random.fork_rng(devices=cuda):
                # plain decodes one prompt a batch: the global generator, seeded as its first row's
                torch.manual_seed(sampling_seed(config.seed, encoded[batch[0]], occurrence[batch[0]], 0))
                if plain:
                    output = model.generate(
                        input_ids=input_ids.to(device),
                        attention_mask=attention.to(device),
                        logits_processor=processors,
                        **_generate_kwargs(config, stops, pad),
                    )
                    rows = output[:, width:].tolist()
                    steps = output.shape[1] - width
                    stats.prefilled_tokens += len(rows) * width
                    stats.decoded_tokens += len(rows) * max(steps - 1, 0)
                    stats.attended += len(rows) * (sum(range(1, width + 1)) + sum(range(width + 1, width + steps)))
                    stats.logit_rows += len(rows) * steps
                else:
                    prefix = shared_prefix_length(rows_encoded)
                    generators = None
                    if config.do_sample:
                        seeds = [
                            sampling_seed(config.seed, encoded[i], occurrence[i], completion)
                            for i in batch
                            for completion in range(config.num_return_sequences)
                        ]
                        generators = row_generators(seeds, device)
                    rows = decode_batch(
                        model,
                        input_ids.to(device),
                        attention.to(device),
                        config,
                        stops,
                        processors,
                        prefix,
                        generators,
                        store,
                        stats,
                    )
            elapsed = time.perf_counter() - started
            log.info(
                "generated batch %d of %d: %d prompts, %d tokens in %.1f s",
                start // batch_size + 1,
                -(-len(order) // batch_size),
                len(batch),
                sum(len(row) for row in rows),
                elapsed,
            )
            steered = next((list(p.steered) for p in processors if getattr(p, "steered", None)), [])
            for row_number, new_ids in enumerate(rows):
                index = batch[row_number // config.num_return_sequences]
                changed = bool(steered[row_number]) if steered else False
                completion = completion_of(tokenizer, new_ids, stop_set, drop, changed)
                results[index].append(completion)
                stats.new_tokens += len(completion.token_ids) + (1 if completion.stopped else 0)
            stats.seconds += elapsed
            stats.batches += 1
            stats.per_batch_seconds.append(round(elapsed, 4))
    finally:
        model.train(was_training)
    stats.prompts += len(encoded)
    stats.completions += len(encoded) * config.num_return_sequences
    return results


def generate_one_at_a_time(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Prompt],
    config: SamplingConfig = SamplingConfig(),
    stats: GenerationStats | None = None,
    logits_processor: ProcessorFactory | None = None,
) -> list[list[Completion]]:
    """The plain baseline: one ``model.generate`` per prompt, no padding (benchmarks compare against it)."""
    return _generate(model, tokenizer, prompts, config, 1, logits_processor, stats, plain=True)


class BatchedPolicy:
    """A :class:`worldagent.world_agent.policies.Policy`: the first completion of :func:`generate_batched`."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        config: SamplingConfig = SamplingConfig(),
        batch_size: int = 8,
        logits_processor: ProcessorFactory | None = None,
        prompt_cache: PromptCache | None = None,
    ) -> None:
        self.model, self.tokenizer, self.config = model, tokenizer, config
        self.batch_size, self.logits_processor = batch_size, logits_processor
        # shared with the policies that answer the same prompts again (self-check retries)
        self.prompt_cache = prompt_cache
        self.stats = GenerationStats()
        self.last: list[Completion] = []  # the completions of the last ``complete``, in prompt order

    def complete(self, prompts: list[list[dict[str, Any]]]) -> list[str]:
        groups = generate_batched(
            self.model,
            self.tokenizer,
            prompts,
            self.config,
            self.batch_size,
            self.logits_processor,
            self.stats,
            self.prompt_cache,
        )
        self.last = [group[0] for group in groups]
        return [completion.text for completion in self.last]


def constrained_policy(
    model: Any,
    tokenizer: Any,
    schemas: Sequence[Mapping[str, Any]],
    config: SamplingConfig = SamplingConfig(),
    batch_size: int = 8,
    calls_only: bool = True,
    prompt_cache: PromptCache | None = None,
) -> BatchedPolicy:
    """A :class:`BatchedPolicy` whose tool calls are well formed by construction (see
    :mod:`worldagent.lm.constrained`); ``calls_only``: the answer is calls and nothing else."""
    from worldagent.lm.constrained import tool_call_processor_factory

    factory = tool_call_processor_factory(tokenizer, schemas, config.max_new_tokens, model, calls_only)
    return BatchedPolicy(model, tokenizer, config, batch_size, factory, prompt_cache)


# the generation settings :func:`generate_tensor` honours, and the values of the others it accepts (off)
_IGNORED_WHEN = {
    "min_p": (None, 0.0),
    "repetition_penalty": (None, 1.0),
    "num_beams": (None, 1),
    "num_return_sequences": (None, 1),
    "suppress_tokens": (None, []),
    "no_repeat_ngram_size": (None, 0),
}


def generate_tensor(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    generation_config: Any,
    processors: Sequence[Any] = (),
    stats: GenerationStats | None = None,
    prompt_cache: PromptCache | None = None,
) -> torch.Tensor | None:
    """``model.generate``'s answer (the prompt then the new tokens, pad after a row's stop) by
    :func:`decode_batch`, for a caller that calls ``generate`` itself (trl's GRPO): each distinct
    prompt is prefilled once however many group members repeat it. None when ``generation_config``
    asks for something :func:`decode_batch` does not do (the caller then generates as before).
    Sampling draws from torch's global generator, as ``generate`` does. The model decodes in eval
    mode (dropout off), whatever mode the caller holds it in; its modules' modes are restored."""
    for name, off in _IGNORED_WHEN.items():
        if getattr(generation_config, name, None) not in off:
            return None
    eos = generation_config.eos_token_id
    stops = [int(t) for t in (eos if isinstance(eos, (list, tuple)) else [eos]) if t is not None]
    pad = generation_config.pad_token_id if generation_config.pad_token_id is not None else (stops or [0])[0]
    sampled = bool(generation_config.do_sample)
    config = SamplingConfig(
        max_new_tokens=int(generation_config.max_new_tokens),
        do_sample=sampled,
        temperature=float(generation_config.temperature or 1.0) if sampled else 1.0,
        top_p=float(generation_config.top_p if generation_config.top_p is not None else 1.0) if sampled else 1.0,
        top_k=int(generation_config.top_k or 0) if sampled else 0,
    )
    lengths = attention_mask.sum(-1).tolist()
    width = input_ids.shape[1]
    encoded = [input_ids[row, width - int(length) :].tolist() for row, length in enumerate(lengths)]
    stats = stats if stats is not None else GenerationStats()
    started = time.perf_counter()
    store = prompt_cache if prompt_cache is not None else PromptCache()
    # trl generates with the policy in training mode; sample it as it is (no dropout), which also lets
    # the decoder take its lean step and its shared-column kernel. Each module's mode is put back.
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        rows = decode_batch(
            model,
            input_ids,
            attention_mask,
            config,
            stops,
            processors,
            shared_prefix_length(encoded),
            None,
            store if full_attention_only(model) else None,
            stats,
        )
    finally:
        for module, training in modes:
            module.training = training
    longest = max(len(row) for row in rows)
    new = torch.full((len(rows), longest), int(pad), dtype=input_ids.dtype, device=input_ids.device)
    for index, row in enumerate(rows):
        new[index, : len(row)] = torch.tensor(row, dtype=input_ids.dtype)
    stats.seconds += time.perf_counter() - started
    stats.prompts += len(set(map(tuple, encoded)))
    stats.completions += len(rows)
    stats.new_tokens += sum(len(row) for row in rows)
    stats.prompt_tokens += sum(len(ids) for ids in encoded)
    stats.unique_prompts.update(tuple(ids) for ids in encoded)
    stats.batches += 1
    return torch.cat([input_ids, new], dim=1)
