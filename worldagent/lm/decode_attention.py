"""Attention for one new token a row, on a CPU: the decode step's kernel.

At a decode step each row attends with one query token to its whole KV cache, so the step reads
every cached key and value once and does a few multiply-adds with each: it is bound by how fast the
cache is read. transformers sends it to torch's SDPA, whose CPU kernel (flash attention, built
for long queries) reads a bfloat16 cache at ~3-4 GB/s on one core of this project's 2-core host,
which reads memory at ~27 GB/s a core; at 34 rows of ~1,650 cached positions SDPA took ~72% of a
SmolLM2-135M decode step. ``decode_attention.c`` beside this module does the one-token case
directly: for each row and key/value head, the query heads that share the head (grouped-query
attention) read its columns once, scores, softmax and the weighted values accumulated in float32.
On the same case it is 3-4x faster than SDPA (``python -m benchmarks.decode_attention``: the
kernel alone; ``python -m benchmarks.generation --engines continuous,continuous-sdpa``: whole
decodes).

It is compiled for the machine it runs on (``-march=native``) with the system's C compiler
(``$CC``, else ``cc``), once a process, into a temporary folder removed after
loading; nothing is cached on disk. Where it cannot be built (no compiler) the decoders keep SDPA
and say so once. ``WORLDAGENT_DECODE_ATTENTION=sdpa`` keeps SDPA; ``=kernel`` makes a failed build
an error instead.

It is plugged in through transformers' own extension point: registered in ``AttentionInterface``
(and SDPA's mask function in ``AttentionMaskInterface``) as :data:`NAME`, switched on for a model
only inside :func:`decoding`. Every call it cannot serve exactly (more than one query token, a
gradient, a GPU, a float mask, a soft cap, attention sinks, a head size over 256) goes to
transformers' ``sdpa_attention_forward`` unchanged, so training never sees it.

**A prompt's columns read once for its samples.** The samples of one prompt hold its keys and
values at the same columns (placed from one :class:`~worldagent.lm.rollout.CachedPrompt`). The
decoders' own steps pass :func:`shared_columns`, and the kernel's shared variant reads a group's
shared columns once, from its first row, for every row of the group, then each row's own. Every
query sums the same columns in the same order, so the output is the row-by-row kernel's bit for bit.

**Scores on AMX tiles.** On a CPU with AMX (Intel since Sapphire Rapids; the kernel built with
gcc 11 or newer and Linux's permission for the tiles' state), a bfloat16 cache's scores are tile
products: 16 key columns a tile against up to 16 queries (a row's query heads, or those of 16 / G
rows: rows that share nothing are taken together too, so the softmax's vector work is spent on up
to 16 queries a column), and the weighted values are summed with the queries' sums held in
registers. The loops above it computed a dot product and a horizontal sum for each query and column
and ran at a fifth of a core's multiply rate; on tiles the kernel is bound by reading the cache.
Each query's score is its own tile element and its softmax and weighted values sum over its columns
in column order, so a row's output is the same bits alone, beside other rows, or in its prompt's
group. They are not the loops' bits (the scale is applied after the product, the tile sums in its
own order), so the choice holds for the process: ``WORLDAGENT_DECODE_ATTENTION=loops`` keeps the
loops, and a run's speed record says ``kernel-tiles`` (:func:`label`). A float32 cache, a head
size that is not a multiple of 32, or a CPU without AMX keeps the loops.

**A prompt's prefill in float32.** Where the decoders multiply in float32
(:func:`worldagent.lm.lean_linear.products`: a CPU without AMX, whose bfloat16 products run at half
float32's rate), a prefill's attention does too (:func:`prefill_attention`): one prompt's new tokens
against its cached prefix (no mask needed) and against themselves (causal), two calls of torch's
float32 flash attention merged by their log-sum-exp, rounded to the model's dtype once. SDPA's
bfloat16 kernel took 38% of a prefill here and, given transformers' mask, computes the masked half
of the square too: one layer of 362 cached and 720 new tokens took 12.0 ms against 6.9, whole
prefills of held-out prompts ran at 476-590 against 569-711 tokens a second (docs/decisions.md).
Any other mask (padding, a window, holes) keeps SDPA.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from worldagent.errors import WorldAgentError

log = logging.getLogger(__name__)

NAME = "worldagent_decode"
"""The attention implementation's name in transformers' registries."""
ENV = "WORLDAGENT_DECODE_ATTENTION"
SETTINGS = ("auto", "kernel", "loops", "sdpa")
SOURCE = Path(__file__).parent / "decode_attention.c"
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fPIC")
"""Compile flags. ``-ffast-math`` lets gcc vectorise the sums and ``expf``; it is given to the
compile only, never to the link: linked with it, gcc adds ``crtfastmath.o``, which switches the
whole process to flushing subnormal floats to zero the moment the library loads (every torch op
after it, and Hypothesis refuses to run)."""
BUILD_SECONDS = 120
REPLACES = "sdpa"  # the implementation the kernel stands in for; any other (eager, flash) is left alone

_DTYPES = {torch.bfloat16: "decode_attention_bf16", torch.float32: "decode_attention_f32"}
_SHARED_DTYPES = {torch.bfloat16: "decode_attention_shared_bf16", torch.float32: "decode_attention_shared_f32"}
_UNSERVED_KWARGS = ("softcap", "s_aux", "sinks", "position_bias")


class KernelBuildError(WorldAgentError):
    """The decode-attention kernel could not be compiled or loaded (and ``=kernel`` asked for it)."""


def setting(environ: dict[str, str] | None = None) -> str:
    """``WORLDAGENT_DECODE_ATTENTION`` checked: ``auto`` (the default), ``kernel``, ``loops`` (the
    kernel without AMX tiles) or ``sdpa``."""
    value = (os.environ if environ is None else environ).get(ENV, "auto")
    if value not in SETTINGS:
        raise ValueError(f"{ENV}={value!r}: expected one of {', '.join(SETTINGS)}")
    return value


def _compile(compiler: str, output: Path, openmp: bool) -> subprocess.CompletedProcess[str]:
    """Compile, then link without the math flags (see :data:`FLAGS`); the first failure is returned."""
    parallel = ["-fopenmp"] if openmp else []
    objects = output.with_suffix(".o")
    steps = (
        [compiler, *FLAGS, *parallel, "-c", str(SOURCE), "-o", str(objects)],
        [compiler, "-shared", *parallel, str(objects), "-o", str(output), "-lm"],
    )
    for command in steps:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_SECONDS, check=False)
        if done.returncode != 0:
            break
    return done


def build() -> ctypes.CDLL:
    """Compile ``decode_attention.c`` for this machine and load it (with OpenMP when the compiler
    has it, else one thread). Raises :class:`KernelBuildError` naming the compiler's complaint."""
    compiler = os.environ.get("CC") or "cc"
    if shutil.which(compiler) is None:
        raise KernelBuildError(f"no C compiler: {compiler!r} is not on PATH (set CC)")
    with tempfile.TemporaryDirectory(prefix="worldagent-kernel-") as folder:
        output = Path(folder) / "decode_attention.so"
        try:
            done = _compile(compiler, output, openmp=True)
            if done.returncode != 0:
                done = _compile(compiler, output, openmp=False)
        except subprocess.TimeoutExpired:
            raise KernelBuildError(f"{compiler} took over {BUILD_SECONDS} s to build {SOURCE.name}") from None
        if done.returncode != 0:
            raise KernelBuildError(f"{compiler} could not build {SOURCE.name}: {done.stderr.strip()[-2000:]}")
        try:
            library = ctypes.CDLL(str(output))  # mapped: the file may go with its folder
        except OSError as problem:
            raise KernelBuildError(f"{SOURCE.name} built but did not load: {problem}") from None
    pointer, index, integer = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    plain = [pointer] * 3 + [index] * 6 + [pointer, index] + [integer] * 4 + [index, ctypes.c_float, pointer, integer]
    for name in _DTYPES.values():
        getattr(library, name).argtypes = plain
    for name in _SHARED_DTYPES.values():  # then the groups: rows, starts, their count, shared columns, kv rows
        getattr(library, name).argtypes = [*plain, pointer, pointer, integer, pointer, pointer]
    for name in (*_DTYPES.values(), *_SHARED_DTYPES.values()):
        getattr(library, name).restype = integer
    library.decode_attention_amx.argtypes, library.decode_attention_amx.restype = [integer], integer
    group, head = ctypes.c_int(), ctypes.c_int()
    library.decode_attention_limits(ctypes.byref(group), ctypes.byref(head))
    library.max_group, library.max_head_dim = group.value, head.value
    return library


@dataclass(frozen=True)
class SharedColumns:
    """Rows of a decode step's batch that share their first columns: the samples of one prompt, whose
    caches hold that prompt's keys and values at the same columns (and the same mask there). The
    kernel reads such columns once for a group's rows instead of once a row (a group's own tokens,
    after them, once a row). ``rows`` lists the batch's rows group by group, ``starts`` where each
    group begins (then the row count), ``shared`` how many leading columns each group shares.
    ``kv``: the cache row each query row reads (None: its own), where a row's drafted tokens are
    query rows of their own over the row's one cache (:mod:`worldagent.lm.speculation`)."""

    rows: torch.Tensor
    starts: torch.Tensor
    shared: torch.Tensor
    kv: torch.Tensor | None = None

    @property
    def groups(self) -> int:
        return len(self.shared)


def shared_columns(
    keys: Sequence[Hashable], columns: int | Sequence[int], kv: Sequence[int] | None = None
) -> SharedColumns | None:
    """The groups of a batch whose row ``i`` has the key ``keys[i]``: rows with equal keys share
    their first ``columns`` columns (one count for every group, or a row's own, the same for each
    row of a group). None when no two rows share a column (the kernel then reads row by row) and
    every row reads its own cache row (``kv`` None: see :class:`SharedColumns`)."""
    members: dict[Hashable, list[int]] = {}
    for row, key in enumerate(keys):
        members.setdefault(key, []).append(row)
    counts = [columns if isinstance(columns, int) else columns[rows[0]] for rows in members.values()]
    alone = not any(count > 0 and len(rows) > 1 for count, rows in zip(counts, members.values(), strict=True))
    if alone and kv is None:
        return None
    order = [row for rows in members.values() for row in rows]
    starts = [0]
    for rows in members.values():
        starts.append(starts[-1] + len(rows))
    return SharedColumns(
        torch.tensor(order, dtype=torch.int32),
        torch.tensor(starts, dtype=torch.int32),
        torch.tensor([max(count, 0) for count in counts], dtype=torch.int64),
        None if kv is None else torch.tensor(list(kv), dtype=torch.int32),
    )


@functools.cache
def kernel() -> ctypes.CDLL | None:
    """The kernel, built once a process; ``None`` where it is turned off or cannot be built."""
    wanted = setting()
    if wanted == "sdpa":
        return None
    try:
        library = build()
    except KernelBuildError as problem:
        if wanted in ("kernel", "loops"):
            raise
        log.warning("decoding keeps torch's SDPA attention: %s", problem)
        return None
    library.decode_attention_amx(0 if wanted == "loops" else 1)
    return library


def tiles() -> bool:
    """Whether the kernel computes a bfloat16 cache's scores on AMX tiles (a CPU with AMX, a kernel
    built for it and Linux's permission; ``WORLDAGENT_DECODE_ATTENTION=loops`` turns them off)."""
    library = kernel()
    return library is not None and library.decode_attention_amx(-1) == 1


def _mask_rows(mask: torch.Tensor | None, rows: int, columns: int) -> tuple[torch.Tensor | None, int] | None:
    """A bool mask (rows or 1, 1, 1, ≥ columns) as (rows, columns) bytes and its row stride; None for
    a mask the kernel does not take."""
    if mask is None:
        return None, 0
    if mask.dtype != torch.bool or mask.dim() != 4 or mask.shape[1] != 1 or mask.shape[2] != 1:
        return None
    if mask.shape[0] not in (1, rows) or mask.shape[3] < columns:
        return None
    flat = mask[:, 0, 0, :columns]
    if flat.stride(-1) != 1:
        flat = flat.contiguous()
    return flat, (flat.stride(0) if flat.shape[0] == rows else 0)


def _plain(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dropout: float, kwargs: dict[str, Any]) -> bool:
    """Whether a call is plain attention: no dropout, no gradient to carry, no soft cap, sinks, bias
    or attention weights asked for (what both :func:`served` and :func:`prefill_attention` need)."""
    if dropout or (torch.is_grad_enabled() and (query.requires_grad or key.requires_grad or value.requires_grad)):
        return False
    return not any(kwargs.get(name) is not None for name in _UNSERVED_KWARGS) and not kwargs.get("output_attentions")


def served(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dropout: float, kwargs: dict[str, Any]) -> bool:
    """Whether the kernel computes this call exactly as SDPA would (up to float rounding)."""
    library = kernel()
    if library is None or query.device.type != "cpu" or query.shape[2] != 1:
        return False
    if query.dtype not in _DTYPES or key.dtype != query.dtype or value.dtype != query.dtype:
        return False
    if not _plain(query, key, value, dropout, kwargs):
        return False
    heads, kv_heads, head_dim = query.shape[1], key.shape[1], query.shape[3]
    if kv_heads == 0 or heads % kv_heads or heads // kv_heads > library.max_group or head_dim > library.max_head_dim:
        return False
    return key.stride(-1) == 1 and value.stride(-1) == 1 and key.shape[-1] == value.shape[-1] == head_dim


def _causal_after_cache(mask: torch.Tensor | None, length: int, columns: int) -> bool:
    """Whether ``mask`` lets each of a prompt's ``length`` new tokens see every cached column and its
    own tokens up to itself (None: no cache, ``length == columns``), and nothing else."""
    cached = columns - length
    if mask is None:
        return cached == 0
    if mask.dtype != torch.bool or mask.shape != (1, 1, length, columns):
        return False
    expected = (
        torch.arange(columns, device=mask.device)[None, :] <= torch.arange(length, device=mask.device)[:, None] + cached
    )
    return bool(torch.equal(mask[0, 0], expected))


def prefill_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None,
    scaling: float | None,
    causal: bool = True,
) -> torch.Tensor | None:
    """One prompt's prefill attention in float32 (module doc): ``query`` (1, heads, new tokens,
    head_dim) against ``key`` and ``value`` (1, kv_heads, cached + new, head_dim) → (1, new tokens,
    heads, head_dim) in ``query``'s dtype; None where it does not apply (the caller keeps SDPA). The
    caller has checked the call is plain (:func:`_plain`: no gradient, no dropout, nothing extra).
    ``causal``: the module's own (a module that is not causal and gives no mask is not served)."""
    from worldagent.lm.lean_linear import products

    flash = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    rows, heads, length, _ = query.shape
    columns = key.shape[2]
    if flash is None or rows != 1 or length < 2 or query.device.type != "cpu":
        return None
    if query.dtype not in (torch.bfloat16, torch.float16) or key.dtype != query.dtype or value.dtype != query.dtype:
        return None
    if key.shape[1] == 0 or heads % key.shape[1] or (mask is None and not causal) or products() != "float32":
        return None
    if not _causal_after_cache(mask, length, columns):
        return None
    groups = heads // key.shape[1]
    queries = query.float()
    keys, values = (tensor.float().repeat_interleave(groups, dim=1) for tensor in (key, value))
    cached = columns - length
    own, own_lse = flash(queries, keys[:, :, cached:], values[:, :, cached:], is_causal=True, scale=scaling)[:2]
    if cached:
        before, before_lse = flash(queries, keys[:, :, :cached], values[:, :, :cached], scale=scaling)[:2]
        top = torch.maximum(before_lse, own_lse)
        weight_before, weight_own = ((lse - top).exp().unsqueeze(-1) for lse in (before_lse, own_lse))
        own = (before * weight_before + own * weight_own) / (weight_before + weight_own)
    return own.transpose(1, 2).to(query.dtype).contiguous()


def decode_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    shared: SharedColumns | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """transformers' attention-function contract: ``query`` (batch, heads, 1, head_dim), ``key`` and
    ``value`` (batch, kv_heads, columns, head_dim) → (batch, 1, heads, head_dim). ``shared``
    (:func:`shared_columns`; the decoders' own steps pass it, transformers never does): rows whose
    leading columns are the same read them once for the group."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    rows, heads, _, head_dim = query.shape
    columns = key.shape[2]
    mask = _mask_rows(attention_mask, rows, columns) if served(query, key, value, dropout, kwargs) else None
    if mask is None:
        if shared is not None and shared.kv is not None:  # SDPA takes a cache row for each query row
            rows_of = shared.kv.to(device=key.device, dtype=torch.long)
            key, value = key[rows_of], value[rows_of]
        if _plain(query, key, value, dropout, kwargs):
            causal = kwargs.get("is_causal", getattr(module, "is_causal", True)) is not False
            prefilled = prefill_attention(query, key, value, attention_mask, scaling, causal)
            if prefilled is not None:
                return prefilled, None
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling, **kwargs)
    flat, mask_stride = mask
    library = kernel()
    assert library is not None
    queries = query.reshape(rows, heads, head_dim).contiguous()
    output = torch.empty_like(queries)
    kv_heads = key.shape[1]
    arguments = (
        queries.data_ptr(),
        key.data_ptr(),
        value.data_ptr(),
        *key.stride()[:3],
        *value.stride()[:3],
        None if flat is None else flat.data_ptr(),
        mask_stride,
        rows,
        kv_heads,
        heads // kv_heads,
        head_dim,
        columns,
        head_dim**-0.5 if scaling is None else scaling,
        output.data_ptr(),
        torch.get_num_threads(),
    )
    if shared is not None and len(shared.rows) == rows:
        kv = None if shared.kv is None else shared.kv.data_ptr()
        groups = (shared.rows.data_ptr(), shared.starts.data_ptr(), shared.groups, shared.shared.data_ptr(), kv)
        status = getattr(library, _SHARED_DTYPES[query.dtype])(*arguments, *groups)
    else:
        status = getattr(library, _DTYPES[query.dtype])(*arguments)
    if status == -2:
        raise ValueError(f"decode attention: {shared.groups if shared else 0} groups do not hold the {rows} rows")
    if status != 0:
        raise MemoryError(f"decode attention: no scratch memory for {columns} columns")
    return output.view(rows, 1, heads, head_dim), None


@functools.cache
def register() -> str:
    """Add :data:`NAME` to transformers' attention and mask registries (once)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, decode_attention)
    AttentionMaskInterface.register(NAME, sdpa_mask)
    return NAME


def _inner(model: Any) -> Any:
    """The transformers model under a peft wrapper (the one whose config chooses the attention)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def implementation(model: Any) -> str:
    """The attention ``model`` decodes with inside :func:`decoding`: ``"kernel"``, or its own
    (``"sdpa"`` where the kernel is off or cannot be built; a model on a GPU or on another
    attention keeps that)."""
    inner = _inner(model)
    own = str(getattr(getattr(inner, "config", None), "_attn_implementation", None))
    if own == NAME:
        return "kernel"
    parameter = next(inner.parameters(), None) if hasattr(inner, "parameters") else None
    if own != REPLACES or parameter is None or parameter.device.type != "cpu" or kernel() is None:
        return own
    return "kernel"


def label(model: Any) -> str:
    """:func:`implementation`, as a run's speed record names it: ``"kernel-tiles"`` where the kernel
    computes this model's (bfloat16) scores on AMX tiles."""
    name = implementation(model)
    parameter = next(_inner(model).parameters(), None)
    if name == "kernel" and parameter is not None and parameter.dtype == torch.bfloat16 and tiles():
        return "kernel-tiles"
    return name


@contextmanager
def decoding(model: Any) -> Iterator[None]:
    """Inside the block, ``model`` attends with the kernel where it applies (see the module doc):
    only a model on the CPU whose attention is SDPA, and only when the kernel builds. Its own
    attention is back after the block, also when the block raises."""
    inner = _inner(model)
    if implementation(model) != "kernel" or inner.config._attn_implementation == NAME:
        yield
        return
    inner.set_attn_implementation(register())
    try:
        yield
    finally:
        inner.set_attn_implementation(REPLACES)
