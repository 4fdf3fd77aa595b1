"""Continuous batching: every row of the batch busy while there is work to do.

:func:`worldagent.lm.rollout.decode_batch` decodes a static batch: a row that stops leaves, but no
other takes its place, so a batch runs as long as its longest answer and its late steps carry a few
rows. A decode step's cost is mostly fixed (the weights, the adapters' kernels, the Python of 30
layers: ~0.1 s for one row of SmolLM2-135M on two cores, ~0.3 s for 34), so those late steps cost
almost what full ones do. And the evaluation's self-check retries came in rounds: the retries of
round k waited for the slowest answer of round k - 1, each round its own short batch.

:func:`decode_stream` keeps ``slots`` rows going: the step a row stops, its answer goes to
``on_done`` (which may ask for more: a failing answer's retry), and the next request waiting takes
its row, prefilled through the model's :class:`~worldagent.lm.rollout.PromptCache` (a prompt seen
before costs nothing). Each request decodes as :func:`~worldagent.lm.rollout.decode_batch` would
decode it: its own processors (the call grammar, the loop guard), its own seeded generator
(:func:`~worldagent.lm.rollout.sampling_seed`), so an answer does not depend on which requests share
its steps (up to the rounding of the batch's kernels, as in a static batch).

The batch's KV cache (:class:`SlotLayer`) holds each row in its own row of one buffer, from column 0:
its prompt, then its tokens, each written at the row's own end. A step's keys span the columns up
to the longest row's end; a row's mask keeps its own columns (the kernel skips the rest). The
buffer holds the longest prompt and token budget, and grows when a longer request joins; a row that
leaves is replaced by the last row (one row's columns copied). Rows of one prompt hold its keys at
the same columns however late they join, so the kernel reads them once for all of them.

A row may draft (``SamplingConfig.draft_tokens``, :mod:`worldagent.lm.speculation`; on the lean
step, :mod:`worldagent.lm.lean_step`, else one token a row a step): its last
token and its drafted tokens are query rows of their own over the row's cache, written from its end,
each seeing the row's columns and the step's up to its own. The row's end then moves past the ones
it keeps; the next step writes over the others.

:func:`answer_with_retries` runs a :class:`~worldagent.lm.rollout.BatchedPolicy` and its retry
policies (:class:`worldagent.world_agent.self_check.SelfCheckingPolicy`) as one stream, starting a
long first answer's retries before it ends (``ahead``: a stream's length is its longest chain of
answer and retries, and a step's fixed cost is paid however few rows it carries).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from worldagent.lm.argmax import argmax
from worldagent.lm.decode_attention import decoding, shared_columns
from worldagent.lm.lean_linear import lean_linears
from worldagent.lm.lean_step import decode_step, supports
from worldagent.lm.rollout import (
    BatchedPolicy,
    Completion,
    GenerationStats,
    ProcessorFactory,
    Prompt,
    PromptCache,
    SamplingConfig,
    completion_of,
    decoding_processors,
    draw,
    dropped_tokens,
    encode_prompt,
    full_attention_only,
    generate_batched,
    prompt_occurrences,
    sampling_seed,
    sampling_warpers,
    shared_prefix_length,
)
from worldagent.lm.speculation import PromptLookup
from worldagent.lm.stops import stop_token_ids

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """One answer to decode: the prompt's token ids, how to decode it, the seed of its draws (when
    sampling) and where its counts go. ``key`` is the caller's (which prompt, which attempt)."""

    ids: tuple[int, ...]
    config: SamplingConfig
    seed: int = 0
    key: Any = None
    stats: GenerationStats | None = None
    processor: ProcessorFactory | None = None  # prompt length -> a processor for this answer alone


PROGRESS_EVERY = 16  # answers between progress lines
# the share of its budget a first answer writes before its retries start beside it (answer_with_retries);
# earlier, more rows go to retries of answers that pass (docs/decisions.md: "half its budget")
AHEAD_AFTER = 0.5
Done = Callable[[Request, Completion], Sequence[Request]]  # an answer -> the requests it asks for next
# (request, tokens written) of each live row -> requests to start before an answer asks for them
Ahead = Callable[[Sequence[tuple[Request, int]]], Sequence[Request]]


@dataclass
class SlotState:
    """Shared by every :class:`SlotLayer` of a cache: ``rows`` live rows (the first of the buffer),
    each step's keys and values read over its first ``columns`` columns; ``writes`` the (row, column)
    each of a step's query rows writes its key and value at."""

    slots: int
    capacity: int
    rows: int = 0
    columns: int = 0
    writes: tuple[torch.Tensor, torch.Tensor] | None = None


def slot_layer_class() -> type:
    """``SlotLayer``: a full-attention KV cache layer over a buffer of ``slots`` rows × ``capacity``
    columns, laid out by its :class:`SlotState` (see the module doc). Built on first use:
    transformers is imported lazily here."""
    from transformers.cache_utils import DynamicLayer

    class SlotLayer(DynamicLayer):
        def __init__(self, state: SlotState) -> None:
            super().__init__()
            self.state = state
            self.key_buffer: torch.Tensor | None = None
            self.value_buffer: torch.Tensor | None = None

        def view(self) -> None:
            """Point ``keys``/``values`` at the live rows' columns before a one-token step's own (the
            cache's length, as transformers' forward reads it to build its mask)."""
            if self.key_buffer is None or self.value_buffer is None:
                return
            state = self.state
            self.keys = self.key_buffer[: state.rows, :, : state.columns - 1]
            self.values = self.value_buffer[: state.rows, :, : state.columns - 1]

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            assert self.key_buffer is not None and self.value_buffer is not None, "a row is placed before a step"
            assert self.state.writes is not None, "a step says where its query rows write"
            rows, columns = self.state.writes
            self.key_buffer[rows, :, columns] = key_states[:, :, 0]
            self.value_buffer[rows, :, columns] = value_states[:, :, 0]
            self.keys = self.key_buffer[: self.state.rows, :, : self.state.columns]
            self.values = self.value_buffer[: self.state.rows, :, : self.state.columns]
            return self.keys, self.values

        def place(self, row: int, start: int, keys: torch.Tensor, values: torch.Tensor) -> None:
            """Write a prompt's keys and values (a batch of 1) into ``row`` from column ``start``."""
            if self.key_buffer is None or self.value_buffer is None:
                self.lazy_initialization(keys, values)
                shape = (self.state.slots, keys.shape[1], self.state.capacity, keys.shape[-1])
                self.key_buffer, self.value_buffer = keys.new_zeros(shape), values.new_zeros(shape)
            end = start + keys.shape[-2]
            self.key_buffer[row, :, start:end].copy_(keys[0])
            self.value_buffer[row, :, start:end].copy_(values[0])

        def move_row(self, source: int, target: int, columns: int) -> None:
            """Row ``target`` becomes a copy of row ``source``'s first ``columns`` columns."""
            if self.key_buffer is None or self.value_buffer is None:
                return
            self.key_buffer[target, :, :columns].copy_(self.key_buffer[source, :, :columns])
            self.value_buffer[target, :, :columns].copy_(self.value_buffer[source, :, :columns])

        def grow(self, capacity: int) -> None:
            """A buffer of ``capacity`` columns, the live rows' columns kept."""
            if self.key_buffer is None or self.value_buffer is None:
                return
            state = self.state
            for name in ("key_buffer", "value_buffer"):
                buffer = getattr(self, name)
                grown = buffer.new_zeros((buffer.shape[0], buffer.shape[1], capacity, buffer.shape[3]))
                grown[: state.rows, :, : buffer.shape[2]].copy_(buffer[: state.rows])
                setattr(self, name, grown)

        def crop(self, tokens_to_remove: int) -> None:
            raise NotImplementedError("a slot cache is never cropped")

    return SlotLayer


def slot_cache(model: Any, state: SlotState) -> Any:
    """The model's ``DynamicCache`` with every layer a ``SlotLayer`` (full-attention models only:
    :func:`~worldagent.lm.rollout.full_attention_only`)."""
    from transformers import DynamicCache

    layer_class = slot_layer_class()
    cache = DynamicCache(config=model.config)
    cache.layers = [layer_class(state) for _ in cache.layers]
    return cache


@dataclass(eq=False)
class _Row:
    request: Request
    end: int  # the buffer column its next token's key and value go to (its prompt and tokens before it)
    tokens: torch.Tensor  # (1, prompt + max_new_tokens): the prompt, then what it wrote
    length: int  # tokens written into ``tokens``
    processors: list[Any]
    warpers: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None  # None: greedy
    generator: torch.Generator | None
    counts: GenerationStats  # where its tokens are counted
    logits: torch.Tensor  # (1 + len(draft), vocabulary): the scores of its next token, then after each drafted one
    new: list[int] = field(default_factory=list)
    prompt: int = -1  # the serial of the cache entry its prompt's columns were placed from (admit)
    lookup: PromptLookup | None = None  # the row's drafts (request.config.draft_tokens > 0)
    draft: list[int] = field(default_factory=list)  # the tokens drafted for the step its logits came from
    stepped: bool = False  # its logits came from a step (else from its prompt's prefill)


class _Batch:
    """The live rows and their cache: admit, step, retire (see :func:`decode_stream`)."""

    def __init__(self, model: Any, slots: int, capacity: int, spare: int) -> None:
        self.model, self.spare = model, spare
        self.device = next(model.parameters()).device
        self.state = SlotState(slots=slots, capacity=capacity)
        self.cache = slot_cache(model, self.state)
        self.rows: list[_Row] = []
        self.lean = supports(model)  # the step without transformers' per-call machinery, same logits

    def admit(self, row: _Row, entry: Any) -> None:
        """Place ``row``'s prompt (its :class:`~worldagent.lm.rollout.CachedPrompt`) from column 0 of
        the next free row, the buffer grown first when the row's prompt and budget do not fit it."""
        state, config = self.state, row.request.config
        need = len(row.request.ids) + config.max_new_tokens + config.draft_tokens
        if need > state.capacity:
            capacity = need + self.spare
            for layer in self.cache.layers:
                layer.grow(capacity)
            state.capacity = capacity
        row.end = len(row.request.ids)
        row.prompt = entry.serial
        for segment in entry.segments():
            for layer, keys, values in zip(self.cache.layers, segment.keys, segment.values, strict=True):
                layer.place(len(self.rows), segment.start, keys, values)
        self.rows.append(row)
        state.rows = len(self.rows)

    def retire(self, index: int) -> None:
        """Drop row ``index``; the last row takes its place."""
        last = len(self.rows) - 1
        if index != last:
            for layer in self.cache.layers:
                layer.move_row(last, index, self.rows[last].end)
            self.rows[index] = self.rows[last]
        self.rows.pop()
        self.state.rows = len(self.rows)

    def step(self) -> None:
        """Run each live row's newest token, and the tokens drafted after it (its ``draft``), through
        the model: its ``logits`` for the token after each."""
        state = self.state
        queries = [1 + len(row.draft) for row in self.rows]
        kv = [index for index, count in enumerate(queries) for _ in range(count)]
        ahead = torch.tensor([j for count in queries for j in range(count)], device=self.device)
        cache_rows = torch.tensor(kv, device=self.device)
        ends = torch.tensor([row.end for row in self.rows], device=self.device)[cache_rows]
        state.columns = max(row.end + count for row, count in zip(self.rows, queries, strict=True))
        # query j of a row: the row's columns, then this step's up to its own
        visible = torch.arange(state.columns, device=self.device)[None, :] <= (ends + ahead)[:, None]
        tokens = torch.cat(
            [torch.tensor([int(row.tokens[0, row.length - 1]), *row.draft], device=self.device) for row in self.rows]
        )[:, None]
        lengths = torch.tensor([row.length for row in self.rows], device=self.device)[cache_rows]
        positions = (lengths - 1 + ahead)[:, None]
        state.writes = (cache_rows, ends + ahead)
        for layer in self.cache.layers:
            layer.view()
        try:
            if self.lean:
                # rows placed from one prompt entry (a prompt's samples or retries) hold the same
                # columns up to the prompt's end: the kernel reads them once; a row's drafted tokens
                # share all its columns before this step's
                keys = [row.prompt for row in self.rows]
                together = {key: keys.count(key) for key in keys}
                shared = [
                    len(row.request.ids) if together[key] > 1 or count == 1 else row.end
                    for row, key, count in zip(self.rows, keys, queries, strict=True)
                ]
                layout = shared_columns(
                    [keys[index] for index in kv],
                    [shared[index] for index in kv],
                    kv if len(kv) > len(self.rows) else None,
                )
                logits = decode_step(
                    self.model, tokens, positions, self.cache.layers, visible[:, None, None, :], layout
                )
            else:
                assert len(kv) == len(self.rows), "drafts need the lean step"
                logits = self.model(
                    input_ids=tokens,
                    attention_mask=visible.long(),
                    position_ids=positions,
                    past_key_values=self.cache,
                    cache_position=torch.tensor([state.columns - 1], device=self.device),
                    use_cache=True,
                ).logits
        finally:
            state.writes = None
        logits = logits[:, -1, :]
        for row, scores in zip(self.rows, logits.split(queries), strict=True):
            row.logits, row.stepped = scores, True


def _choose(row: _Row, query: int = 0) -> int:
    """The row's next token from its logits (those of its ``query``-th query): its processors, then
    greedy or its own draw."""
    scores = row.logits[query : query + 1].float()
    ids = row.tokens[:, : row.length]
    for processor in row.processors:
        scores = processor(ids, scores)
    if row.warpers is None:
        return int(argmax(scores))
    probabilities = torch.softmax(row.warpers(ids, scores), dim=-1)
    return int(draw(probabilities, None if row.generator is None else [row.generator])[0])


def _advance(row: _Row, stops: set[int]) -> bool:
    """Choose the row's tokens from its last step's logits: one, and one more for each drafted token
    chosen in turn (:mod:`worldagent.lm.speculation`); the row's end moves past the step's query
    columns that now hold its tokens (its last token's and the drafts it kept). Whether the answer ended."""
    budget = row.request.config.max_new_tokens
    ended = False
    for query in range(len(row.logits)):
        token = _choose(row, query)
        row.new.append(token)
        row.tokens[0, row.length] = token
        row.length += 1
        if token in stops or len(row.new) == budget:
            ended = True
            break
        if query == len(row.draft) or token != row.draft[query]:
            break
    if row.stepped:  # a step wrote its queries' columns (a prompt's prefill logits wrote none)
        row.end += query + 1
        row.counts.kept_drafts += query
    if row.lookup is not None and not ended:
        row.lookup.extend(row.new[len(row.new) - query - 1 :])
        row.draft = row.lookup.draft(min(row.request.config.draft_tokens, budget - len(row.new) - 1))
    return ended


def _start(
    model: Any, request: Request, store: PromptCache, stats: GenerationStats, device: Any, drafts: bool
) -> tuple[_Row, Any]:
    """A new row for ``request`` and its prompt's cache entry (prefilled now unless ``store`` has it);
    ``drafts``: whether the batch's steps take drafted tokens (the lean step's)."""
    counts = request.stats if request.stats is not None else stats
    counts.prompt_tokens += len(request.ids)
    counts.unique_prompts.add(request.ids)
    entry = store.prompt(model, list(request.ids), counts)
    assert entry.logits is not None
    config = request.config
    tokens = torch.zeros((1, len(request.ids) + config.max_new_tokens), dtype=torch.long)
    tokens[0, : len(request.ids)] = torch.tensor(request.ids)
    row = _Row(
        request,
        0,
        tokens.to(device),
        len(request.ids),
        decoding_processors(config, len(request.ids), request.processor),
        sampling_warpers(config) if config.do_sample else None,
        torch.Generator(device=device).manual_seed(request.seed) if config.do_sample else None,
        counts,
        entry.logits[None],
    )
    if config.draft_tokens and drafts:  # drafts from its first chosen token on (_advance)
        row.lookup = PromptLookup(list(request.ids))
    return row, entry


def decode_stream(
    model: Any,
    tokenizer: Any,
    requests: Sequence[Request],
    on_done: Done,
    slots: int,
    store: PromptCache | None = None,
    stats: GenerationStats | None = None,
    spare: int | None = None,
    cancelled: Callable[[Request], bool] | None = None,
    ahead: Ahead | None = None,
) -> None:
    """Decode ``requests`` (and those ``on_done`` asks for) in up to ``slots`` rows at once; each
    answer goes to ``on_done`` the step it ends (see the module doc).

    Requests are admitted in order, ``on_done``'s before those waiting; each request's
    ``processor`` factory is called once, on its prompt's length (a fresh grammar state per answer).
    ``store``: the model's prefilled prompts (a fresh :class:`PromptCache` when None). ``stats``: the
    call's time and steps; each request's own tokens go to its ``stats`` (else to ``stats``).
    ``spare``: free columns added when a longer request makes the cache grow (default: a quarter of
    the largest token budget; fewer copies, more memory). ``cancelled``: a request it
    says yes to is not started, or leaves the batch unfinished (its answer no longer wanted).
    ``ahead``: asked each step, given each live row's request and the tokens it has written, for
    requests to start before any answer asks for them; they go ahead of those waiting, as
    ``on_done``'s do.
    """
    from worldagent.lm.rollout import pad_token_id

    if slots < 1:
        raise ValueError("slots must be at least 1")
    if not full_attention_only(model):
        raise ValueError("continuous batching needs a model whose layers all attend to the whole prompt")
    stats = stats if stats is not None else GenerationStats()
    store = store if store is not None else PromptCache()
    queue = deque(requests)
    if not queue:
        return
    stops = stop_token_ids(tokenizer, model)
    stop_set = set(stops)
    drop = dropped_tokens(tokenizer, stop_set, pad_token_id(tokenizer))
    spare = max(request.config.max_new_tokens for request in queue) // 4 if spare is None else spare
    # every row from column 0: its prompt, its tokens, a step's drafted tokens after them
    capacity = max(len(r.ids) + r.config.max_new_tokens + r.config.draft_tokens for r in queue)
    device = next(model.parameters()).device
    started = time.perf_counter()
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), decoding(model), lean_linears(model):
            prefix = shared_prefix_length([request.ids for request in queue]) if len(queue) > 1 else 0
            if prefix:  # the system prompt with the tools: once for the call
                store.prompt(model, list(queue[0].ids[:prefix]), stats, logits=False)
            batch = _Batch(model, slots, capacity, spare)
            steps = answered = 0
            while queue or batch.rows:
                if cancelled is not None:  # answers no longer wanted leave before they cost more
                    for index in reversed(range(len(batch.rows))):
                        if cancelled(batch.rows[index].request):
                            batch.retire(index)
                if ahead is not None:
                    queue.extendleft(reversed(ahead([(row.request, len(row.new)) for row in batch.rows])))
                while queue and len(batch.rows) < slots:
                    request = queue.popleft()
                    if cancelled is None or not cancelled(request):
                        batch.admit(*_start(model, request, store, stats, device, batch.lean))
                ended: list[int] = []
                for index, row in enumerate(batch.rows):
                    if _advance(row, stop_set):
                        ended.append(index)
                for index in reversed(ended):  # the last row moves into a retired one's place
                    row = batch.rows[index]
                    steered = next((bool(p.steered[0]) for p in row.processors if getattr(p, "steered", None)), False)
                    completion = completion_of(tokenizer, row.new, stop_set, drop, steered)
                    row.counts.new_tokens += len(completion.token_ids) + (1 if completion.stopped else 0)
                    row.counts.prompts += 1
                    row.counts.completions += 1
                    batch.retire(index)
                    # ahead of the requests waiting: a prompt's retries are a chain, the longest
                    # chain sets how long the call takes, so it is started as early as it can be
                    queue.extendleft(reversed(on_done(row.request, completion)))
                    answered += 1
                    if answered % PROGRESS_EVERY == 0:
                        log.info(
                            "answered %d (%d waiting, %d decoding) in %.0f s",
                            *(answered, len(queue), len(batch.rows), time.perf_counter() - started),
                        )
                if not batch.rows:
                    continue
                for row in batch.rows:  # query j attends the row's columns and the step's up to its own
                    queries = 1 + len(row.draft)
                    row.counts.decoded_tokens += queries
                    row.counts.drafted_tokens += queries - 1
                    row.counts.attended += queries * (row.end + 1) + queries * (queries - 1) // 2
                    row.counts.logit_rows += queries
                batch.step()
                steps += 1
    finally:
        model.train(was_training)
    elapsed = time.perf_counter() - started
    stats.seconds += elapsed
    stats.batches += 1
    stats.per_batch_seconds.append(round(elapsed, 4))
    log.info("continuous batching: %d answers, %d steps of up to %d rows in %.1f s", answered, steps, slots, elapsed)


def streamable(first: Any, retries: Sequence[Any]) -> bool:
    """Whether ``first`` and its ``retries`` can run as one stream: project decoders
    (:class:`~worldagent.lm.rollout.BatchedPolicy`) of one full-attention model, with the same
    tokenizer, batch size and prompt cache, one answer a prompt."""
    policies = [first, *retries]
    if not all(type(policy) is BatchedPolicy for policy in policies):
        return False
    same = all(
        policy.model is first.model
        and policy.tokenizer is first.tokenizer
        and policy.batch_size == first.batch_size
        and policy.prompt_cache is first.prompt_cache
        and policy.config.num_return_sequences == 1
        for policy in policies
    )
    return same and full_attention_only(first.model)


def answer_with_retries(
    first: BatchedPolicy,
    retries: Sequence[BatchedPolicy],
    prompts: Sequence[Prompt],
    answered: Callable[[int, int, str], bool],
    ahead_after: float | None = AHEAD_AFTER,
) -> None:
    """Answer every prompt with ``first``, then, while ``answered(prompt, attempt, answer)`` says to
    ask again, with ``retries[attempt]`` (attempt 0 is the first answer), all in one stream of
    ``first.batch_size`` rows. A prompt whose first answer is to be asked again gets all its retries
    at once (the retries are independent draws, so nothing waits for the one before), ``answered``
    sees them in attempt order, and those after the one it accepts are cancelled, decoded or not
    (their tokens count as work spent, not as new tokens). Each answer is seeded as its policy's own
    call would seed it (:func:`~worldagent.lm.rollout.sampling_seed`) and counted in its policy's
    ``stats``; ``first.last`` holds the first answers' completions.

    Retries ahead: a retry does not depend on the answer before it, so a first answer still being
    written after ``ahead_after`` of its token budget has its retries started then, as if it had
    failed, instead of after it ends: a long first answer is the likeliest to fail, and it with its
    retries is the call's longest path. If it passes, they are cancelled (work spent, never read).
    The answers are the same either way; only their schedule moves (and with it, which rows share
    a step's rounding). ``None``: retries only once asked for.
    """
    policies = [first, *retries]
    encoded = [tuple(encode_prompt(first.tokenizer, prompt)) for prompt in prompts]
    occurrence = prompt_occurrences(encoded)
    last: list[Completion | None] = [None] * len(prompts)

    def request(index: int, attempt: int) -> Request:
        policy = policies[attempt]
        seed = sampling_seed(policy.config.seed, encoded[index], occurrence[index], 0)
        return Request(encoded[index], policy.config, seed, (index, attempt), policy.stats, policy.logits_processor)

    finished: set[int] = set()  # prompts answered for good: their other retries are cancelled
    early: list[dict[int, Completion]] = [{} for _ in prompts]  # retries ended before an earlier one
    expected = [0] * len(prompts)  # per prompt: the attempt ``answered`` is to see next
    requested = [1] * len(prompts)  # per prompt: the attempts asked for so far

    def more(index: int, upto: int) -> list[Request]:
        """Prompt ``index``'s attempts not asked for yet, up to ``upto`` (excluded)."""
        start = requested[index]
        requested[index] = max(start, upto)
        return [request(index, attempt) for attempt in range(start, upto)]

    def unread(attempt: int, completion: Completion) -> None:
        """An answer ``answered`` never sees: work spent, not an answer (take back its counts)."""
        stats = policies[attempt].stats
        stats.new_tokens -= len(completion.token_ids) + (1 if completion.stopped else 0)
        stats.prompts -= 1
        stats.completions -= 1

    def on_done(done: Request, completion: Completion) -> list[Request]:
        index, attempt = done.key
        if index in finished:
            unread(attempt, completion)
            return []
        if attempt == 0:
            last[index] = completion
        early[index][attempt] = completion
        asked: list[Request] = []
        while expected[index] in early[index]:  # ``answered`` sees a prompt's answers in attempt order
            attempt = expected[index]
            again = answered(index, attempt, early[index].pop(attempt).text)
            if not again or attempt + 1 >= len(policies):
                finished.add(index)
                for later, unseen in early[index].items():
                    unread(later, unseen)
                early[index].clear()
                return []
            expected[index] += 1
            if attempt == 0:  # every retry at once: the chain of retries is the call's longest path
                asked = more(index, len(policies))
        return asked

    after = None if ahead_after is None else int(ahead_after * first.config.max_new_tokens)

    def ahead(running: Sequence[tuple[Request, int]]) -> list[Request]:
        asked: list[Request] = []
        for live, written in running:
            index, attempt = live.key
            if after is not None and attempt == 0 and written >= after and index not in finished:
                asked += more(index, len(policies))
        return asked

    # the longest prompts first: the rows then never move right to make room for a prompt
    order = sorted(range(len(prompts)), key=lambda i: (-len(encoded[i]), i))
    if first.prompt_cache is None:
        first.prompt_cache = PromptCache()
        for policy in retries:
            policy.prompt_cache = first.prompt_cache
    decode_stream(
        first.model,
        first.tokenizer,
        [request(i, 0) for i in order],
        on_done,
        first.batch_size,
        first.prompt_cache,
        first.stats,
        cancelled=lambda request: request.key[0] in finished,
        ahead=ahead,
    )
    first.last = [completion for completion in last if completion is not None]


def generate_groups(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Prompt],
    config: SamplingConfig,
    batch_size: int,
    logits_processor: ProcessorFactory | None,
    stats: GenerationStats | None = None,
    prompt_cache: PromptCache | None = None,
    continuous: bool = True,
) -> list[list[Completion]]:
    """:func:`~worldagent.lm.rollout.generate_batched`'s groups (``num_return_sequences``
    completions a prompt, in prompt order), every completion asked for as one request of a stream
    (:func:`decode_stream`) of ``batch_size`` prompts' rows: a row that ends is taken by the next
    request at once, where a static batch waits for its longest answer. Each answer keeps its
    static-batch seed (prompt, occurrence, completion index), its own processors, and its prompt
    prefilled once through ``prompt_cache`` (a cache of this call's own when None).
    Static batches (:func:`~worldagent.lm.rollout.generate_batched`) where a stream cannot gain:
    ``continuous=False``, a model with sliding-window layers, or prompts that fit one batch (every
    row starts at once either way, and no waiting answer can take a finished row's place; the
    static batch chooses its rows' tokens in one call, where the stream chooses them row by row).
    The same answers either way, up to the rounding of the rows that share a step."""
    if not continuous or len(prompts) <= batch_size or not full_attention_only(model):
        return generate_batched(model, tokenizer, prompts, config, batch_size, logits_processor, stats, prompt_cache)
    store = prompt_cache if prompt_cache is not None else PromptCache()
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    encoded = [encode_prompt(tokenizer, prompt) for prompt in prompts]
    occurrence = prompt_occurrences(encoded)
    samples = config.num_return_sequences
    one = replace(config, num_return_sequences=1)
    call = GenerationStats()  # the stream counts each answer as a prompt: a group is one here
    # the longest prompts first: the rows then never move right to make room for a prompt
    longest_first = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i]), i))
    requests = [
        Request(
            tuple(encoded[i]),
            one,
            sampling_seed(config.seed, encoded[i], occurrence[i], k),
            (i, k),
            call,
            logits_processor,
        )
        for i in longest_first
        for k in range(samples)
    ]
    answers: dict[tuple[int, int], Completion] = {}

    def done(request: Request, completion: Completion) -> list[Request]:
        answers[request.key] = completion
        return []

    decode_stream(model, tokenizer, requests, done, batch_size * samples, store, call)
    call.prompts = len(encoded)
    if stats is not None:
        stats.add(call)
    return [[answers[(i, k)] for k in range(samples)] for i in range(len(encoded))]
