"""The decode-step attention kernel (worldagent/lm/decode_attention.py): what SDPA computes, for
every shape, mask and stride the decoders give it; SDPA itself for every call it cannot serve; and
switched on for a model only inside ``decoding``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from worldagent.lm import decode_attention as da
from worldagent.lm import lean_step

pytestmark = pytest.mark.skipif(da.kernel() is None, reason="no C compiler to build the kernel")


class _Module(torch.nn.Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.num_key_value_groups = groups


def _reference(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None, causal: bool = False
) -> torch.Tensor:
    """SDPA in float64 on the expanded heads: (rows, query tokens, heads, head_dim)."""
    groups = query.shape[1] // key.shape[1]
    out = F.scaled_dot_product_attention(
        query.double(),
        key.double().repeat_interleave(groups, 1),
        value.double().repeat_interleave(groups, 1),
        attn_mask=mask,
        is_causal=causal,
    )
    return out.transpose(1, 2)


@st.composite
def cases(draw: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None, torch.dtype]:
    rows = draw(st.integers(1, 4))
    kv_heads = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 5))
    head_dim = draw(st.sampled_from([8, 16, 24, 64, 72]))
    columns = draw(st.integers(1, 200))  # past 64: a row's loops start at its first kept column
    spare = draw(st.integers(0, 7))  # the cache's buffer is wider than the columns read
    dtype = draw(st.sampled_from([torch.float32, torch.bfloat16]))
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    query = torch.randn(rows, kv_heads * groups, 1, head_dim, generator=generator).to(dtype)
    buffers = [torch.randn(rows, kv_heads, columns + spare, head_dim, generator=generator).to(dtype) for _ in range(2)]
    key, value = (buffer[:, :, :columns] for buffer in buffers)
    kind = draw(st.sampled_from(["none", "prefix", "random", "shared"]))
    if kind == "none":
        return query, key, value, None, dtype
    if kind == "prefix":  # a continuous batch: each row's columns start where its prompt does
        starts = torch.tensor([draw(st.integers(0, columns - 1)) for _ in range(rows)])
        mask = torch.arange(columns)[None, :] >= starts[:, None]
    else:
        mask = torch.rand(1 if kind == "shared" else rows, columns, generator=generator) < 0.7
        mask[:, -1] = True  # the token being decoded always sees itself
    return query, key, value, mask[:, None, None, :], dtype


def _tiles_possible() -> bool:
    """A CPU with AMX, a compiler that targets it, and Linux's permission for the tiles' state: where
    all three hold, the kernel must use the tiles (a silent fallback to the loops would fail here)."""
    import ctypes
    import os
    import shutil
    import subprocess

    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists() or " amx_bf16" not in cpuinfo.read_text():
        return False
    compiler = os.environ.get("CC") or "cc"
    if shutil.which(compiler) is None:
        return False
    macros = subprocess.run(
        [compiler, "-march=native", "-dM", "-E", "-"], input="", capture_output=True, text=True, check=False
    ).stdout
    arch_prctl, request_permission, tile_data = 158, 0x1023, 18  # x86-64 Linux
    return "__AMX_BF16__" in macros and ctypes.CDLL(None).syscall(arch_prctl, request_permission, tile_data) == 0


@contextmanager
def _loops() -> Iterator[None]:
    """The kernel's loops for bfloat16 scores where it would use AMX tiles (the process's switch,
    put back after)."""
    library = da.kernel()
    assert library is not None
    was = library.decode_attention_amx(-1)
    library.decode_attention_amx(0)
    try:
        yield
    finally:
        library.decode_attention_amx(was)


@settings(max_examples=120, deadline=None)
@given(cases(), st.booleans())
def test_the_kernel_computes_what_sdpa_computes(case: Any, loops: bool) -> None:
    """Both of the kernel's paths (on a CPU with AMX, bfloat16 scores on tiles or in loops)."""
    query, key, value, mask, dtype = case
    module = _Module(query.shape[1] // key.shape[1])
    assert da.served(query, key, value, 0.0, {})
    with _loops() if loops else nullcontext():
        got, _ = da.decode_attention(module, query, key, value, mask)
    assert got.shape == (query.shape[0], 1, query.shape[1], query.shape[3]) and got.dtype == dtype
    expected = _reference(query, key, value, mask)
    # float32 sums in another order; bfloat16 output rounded once (SDPA's own error is as large)
    tolerance = 2e-5 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(got.double(), expected, atol=tolerance, rtol=tolerance)


def test_a_row_with_no_column_kept_gets_zeros() -> None:
    query, key, value = torch.randn(2, 2, 1, 8), torch.randn(2, 1, 5, 8), torch.randn(2, 1, 5, 8)
    mask = torch.ones(2, 1, 1, 5, dtype=torch.bool)
    mask[1] = False
    got, _ = da.decode_attention(_Module(2), query, key, value, mask)
    assert torch.equal(got[1], torch.zeros_like(got[1]))
    torch.testing.assert_close(got[0], _reference(query, key, value, mask)[0].float())  # float32's tolerance


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_columns_a_row_masks_are_never_read(dtype: torch.dtype) -> None:
    """NaN in every masked column (the prefix a row's loops now skip, and holes after it) changes
    nothing: the same bits as zeros there."""
    generator = torch.Generator().manual_seed(3)
    query = torch.randn(3, 6, 1, 64, generator=generator).to(dtype)
    key, value = (torch.randn(3, 2, 300, 64, generator=generator).to(dtype) for _ in range(2))
    mask = torch.arange(300)[None, :] >= torch.tensor([[0], [130], [257]])
    mask[1, 200:210] = False
    poisoned = [tensor.clone() for tensor in (key, value)]
    zeroed = [tensor.clone() for tensor in (key, value)]
    for tensor in poisoned:
        tensor.masked_fill_(~mask[:, None, :, None], float("nan"))
    for tensor in zeroed:
        tensor.masked_fill_(~mask[:, None, :, None], 0.0)
    module = _Module(3)
    got, _ = da.decode_attention(module, query, *poisoned, mask[:, None, None, :])
    expected, _ = da.decode_attention(module, query, *zeroed, mask[:, None, None, :])
    assert torch.equal(got, expected)
    torch.testing.assert_close(got.double(), _reference(query, *zeroed, mask[:, None, None, :]), atol=1e-2, rtol=1e-2)


class _Causal(_Module):
    is_causal = True


def _prefill_case(
    cached: int, new: int, kv_heads: int, groups: int, head_dim: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """One prompt of ``new`` tokens on ``cached`` cached ones, bfloat16, with transformers' mask (None
    when nothing is cached: the square is causal)."""
    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(1, kv_heads * groups, new, head_dim, generator=generator).bfloat16()
    key, value = (torch.randn(1, kv_heads, cached + new, head_dim, generator=generator).bfloat16() for _ in range(2))
    columns = torch.arange(cached + new)[None, :] <= torch.arange(new)[:, None] + cached
    return query, key, value, None if cached == 0 else columns[None, None]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 90),
    st.integers(2, 60),
    st.integers(1, 3),
    st.integers(1, 4),
    st.sampled_from([16, 64]),
    st.integers(0, 99),
)
def test_a_prefill_in_float32_products_rounds_float32_attention_once(
    cached: int, new: int, kv_heads: int, groups: int, head_dim: int, seed: int
) -> None:
    """Where the decoders multiply in float32, a prompt's prefill attention does too (no SDPA call):
    its output is the exact attention rounded to bfloat16 but for a handful of ties (SDPA's bfloat16
    kernel, rounding its probabilities, misses about a third of them)."""
    from unittest import mock

    query, key, value, mask = _prefill_case(cached, new, kv_heads, groups, head_dim, seed)
    with (
        mock.patch.dict("os.environ", {"WORLDAGENT_PRODUCTS": "float32"}),
        mock.patch("transformers.integrations.sdpa_attention.sdpa_attention_forward", side_effect=AssertionError),
    ):
        got, _ = da.decode_attention(_Causal(groups), query, key, value, mask)
    expected = _reference(query, key, value, mask, causal=mask is None).bfloat16()  # rounded once
    assert got.shape == expected.shape and got.dtype == torch.bfloat16 and got.is_contiguous()
    assert int((got != expected).sum()) <= 2 + expected.numel() // 100
    torch.testing.assert_close(got.double(), expected.double(), atol=2e-2, rtol=2e-2)


def test_a_prefill_in_bfloat16_products_is_sdpas_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    monkeypatch.setenv("WORLDAGENT_PRODUCTS", "bfloat16")
    query, key, value, mask = _prefill_case(40, 30, 3, 3, 64, 1)
    got, _ = da.decode_attention(_Causal(3), query, key, value, mask)
    assert torch.equal(got, sdpa_attention_forward(_Causal(3), query, key, value, mask)[0])


@pytest.mark.parametrize("change", ["hole", "two prompts", "keys past the tokens", "not causal", "gradient", "float32"])
def test_a_prefill_it_cannot_serve_goes_to_sdpa(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only one prompt's causal prefill on its cached prefix, in a half-precision model, without a
    gradient: a padded or windowed mask, a batch, a mask-less call with keys past the new tokens (a
    static cache's unwritten columns), a module that is not causal, and float32 inputs keep SDPA."""
    from transformers.integrations import sdpa_attention

    monkeypatch.setenv("WORLDAGENT_PRODUCTS", "float32")
    query, key, value, mask = _prefill_case(20, 12, 2, 2, 16, 2)
    module: torch.nn.Module = _Causal(2)
    if change == "hole":
        assert mask is not None
        mask = mask.clone()
        mask[..., 3] = False
    elif change == "two prompts":
        query, key, value = (torch.cat([tensor, tensor]) for tensor in (query, key, value))
        mask = None if mask is None else mask.expand(2, -1, -1, -1)
    elif change == "keys past the tokens":
        mask = None
    elif change == "not causal":
        query, key, value, mask = _prefill_case(0, 12, 2, 2, 16, 2)
        module = _Module(2)
        module.is_causal = False
    elif change == "gradient":
        query = query.clone().requires_grad_(True)
    else:
        query, key, value = (tensor.float() for tensor in (query, key, value))
    calls: list[int] = []
    original = sdpa_attention.sdpa_attention_forward

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(sdpa_attention, "sdpa_attention_forward", counted)
    with torch.no_grad() if change != "gradient" else torch.enable_grad():
        da.decode_attention(module, query, key, value, mask)
    assert calls == [1]


def test_a_wider_mask_is_cut_to_the_columns_read() -> None:
    query, key, value = torch.randn(1, 2, 1, 16), torch.randn(1, 2, 6, 16), torch.randn(1, 2, 6, 16)
    mask = torch.tensor([[[[False, True, True, True, True, True, False, False]]]])
    got, _ = da.decode_attention(_Module(1), query, key, value, mask)
    torch.testing.assert_close(got, _reference(query, key, value, mask[..., :6]).float())  # float32's tolerance


@pytest.mark.parametrize(
    "change",
    ["two query tokens", "gradient", "float mask", "softcap", "dropout", "float16", "head too large"],
)
def test_calls_it_cannot_serve_go_to_sdpa(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers.integrations import sdpa_attention

    query, key, value = torch.randn(2, 4, 1, 16), torch.randn(2, 2, 7, 16), torch.randn(2, 2, 7, 16)
    mask: torch.Tensor | None = torch.ones(2, 1, 1, 7, dtype=torch.bool)
    kwargs: dict[str, Any] = {}
    dropout = 0.0
    if change == "two query tokens":
        query = torch.randn(2, 4, 2, 16)
        mask = torch.ones(2, 1, 2, 7, dtype=torch.bool)
    elif change == "gradient":
        query.requires_grad_(True)
    elif change == "float mask":
        mask = torch.zeros(2, 1, 1, 7)
    elif change == "softcap":
        kwargs["softcap"] = 30.0
    elif change == "dropout":
        dropout = 0.1
    elif change == "float16":
        query, key, value = query.half(), key.half(), value.half()
    elif change == "head too large":
        query, key, value = torch.randn(1, 2, 1, 512), torch.randn(1, 1, 3, 512), torch.randn(1, 1, 3, 512)
        mask = None
    seen: list[str] = []

    def sdpa(*args: Any, **inner: Any) -> tuple[str, None]:
        seen.append(change)
        return "sdpa", None

    monkeypatch.setattr(sdpa_attention, "sdpa_attention_forward", sdpa)
    assert da.decode_attention(_Module(2), query, key, value, mask, dropout, None, **kwargs) == ("sdpa", None)
    assert seen == [change]


def test_the_setting_is_checked_and_sdpa_turns_the_kernel_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert da.setting({}) == "auto"
    with pytest.raises(ValueError, match="WORLDAGENT_DECODE_ATTENTION='fast'"):
        da.setting({da.ENV: "fast"})
    monkeypatch.setenv(da.ENV, "sdpa")
    da.kernel.cache_clear()
    try:
        assert da.kernel() is None
    finally:
        monkeypatch.delenv(da.ENV)
        da.kernel.cache_clear()


def test_a_missing_compiler_keeps_sdpa_or_fails_when_the_kernel_is_required(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CC", "no-such-compiler")
    with pytest.raises(da.KernelBuildError, match="no-such-compiler"):
        da.build()
    da.kernel.cache_clear()
    try:
        assert da.kernel() is None
        assert "keeps torch's SDPA" in caplog.text
        monkeypatch.setenv(da.ENV, "kernel")
        da.kernel.cache_clear()
        with pytest.raises(da.KernelBuildError):
            da.kernel()
    finally:
        monkeypatch.delenv(da.ENV, raising=False)
        monkeypatch.delenv("CC")
        da.kernel.cache_clear()


def test_a_compiler_error_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    broken = tmp_path / "broken.c"
    broken.write_text("this is not C\n")
    monkeypatch.setattr(da, "SOURCE", broken)
    with pytest.raises(da.KernelBuildError, match="could not build broken.c"):
        da.build()


def test_decoding_switches_the_attention_only_inside_the_block() -> None:
    from tests.lm.model_fixtures import tiny_llama_model

    model = tiny_llama_model()
    assert model.config._attn_implementation == "sdpa"
    with da.decoding(model):
        assert model.config._attn_implementation == da.NAME
        with da.decoding(model):  # nested: left as it is
            assert model.config._attn_implementation == da.NAME
        assert model.config._attn_implementation == da.NAME
    assert model.config._attn_implementation == "sdpa"
    with pytest.raises(RuntimeError), da.decoding(model):
        raise RuntimeError("a decoder failed")
    assert model.config._attn_implementation == "sdpa"


def test_a_model_on_eager_attention_is_left_alone() -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, attn_implementation="eager",
    )  # fmt: skip
    model = LlamaForCausalLM(config)
    with da.decoding(model):
        assert model.config._attn_implementation == "eager"


def test_the_decoders_step_through_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Greedy answers through the kernel are the answers SDPA gives (float32), and the kernel ran."""
    from tests.lm.model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer
    from worldagent.lm.rollout import SamplingConfig, generate_batched

    model = tiny_llama_model()
    _, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=12)
    library = da.kernel()
    calls: list[int] = []

    class Counting:
        max_group, max_head_dim = library.max_group, library.max_head_dim

        def __getattr__(self, name: str) -> Any:
            function = getattr(library, name)

            def counted(*args: Any) -> Any:
                calls.append(args[11])  # the rows of the step
                return function(*args)

            return counted

    monkeypatch.setattr(da, "kernel", lambda: Counting())
    through_kernel = generate_batched(model, tokenizer, PROMPTS, config, batch_size=5)
    assert calls and max(calls) == len(PROMPTS)
    monkeypatch.setattr(da, "kernel", lambda: None)
    through_sdpa = generate_batched(model, tokenizer, PROMPTS, config, batch_size=5)
    assert [[c.token_ids for c in group] for group in through_kernel] == [
        [c.token_ids for c in group] for group in through_sdpa
    ]


def test_the_benchmark_reports_both_kernels_against_float64(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from benchmarks.decode_attention import main

    for groups in ([], ["--samples", "2", "--shared", "25"]):  # rows alone; pairs sharing a prompt's columns
        arguments = ["--rows", "4", "--columns", "40", "--threads", "1", "--repeats", "2", "--layers", "2", *groups]
        assert main([*arguments, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert [(r["dtype"], r["threads"]) for r in report["results"]] == [("bfloat16", 1), ("float32", 1)]
        for row in report["results"]:
            loops = ["kernel-loops"] if row["dtype"] == "bfloat16" and da.tiles() else []
            assert [name for name in ("sdpa", "kernel", "kernel-loops") if name in row] == ["sdpa", "kernel", *loops]
            for name in ("sdpa", "kernel", *loops):
                assert row[name]["ms"] > 0 and row[name]["share_of_memory_bandwidth"] > 0
                assert row[name]["max_error"] < (1e-2 if row["dtype"] == "bfloat16" else 1e-5)


def test_loading_the_kernel_leaves_the_processes_floating_point_alone() -> None:
    """Linked with -ffast-math, the library would switch the whole process to flushing subnormal
    floats to zero as it loads (gcc's crtfastmath.o): every torch op after it would change."""
    assert da.kernel() is not None
    subnormal = torch.tensor([1e-40], dtype=torch.float32)
    assert (subnormal * 1.0).item() != 0.0


@st.composite
def shared_cases(draw: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, list[int], int]:
    """A batch whose rows fall into groups (the samples of a prompt): a group's rows hold the same
    keys, values and mask bytes in the first ``shared`` columns, and their own after them."""
    keys = draw(st.lists(st.integers(0, 3), min_size=1, max_size=26))  # past 21 rows: chunks of 64 queries
    rows = len(keys)
    kv_heads = draw(st.integers(1, 2))
    groups = draw(st.sampled_from([1, 3, 16]))
    head_dim = draw(st.sampled_from([8, 64, 72]))
    columns = draw(st.integers(1, 150))
    shared = draw(st.integers(0, columns))
    dtype = draw(st.sampled_from([torch.float32, torch.bfloat16]))
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    query = torch.randn(rows, kv_heads * groups, 1, head_dim, generator=generator).to(dtype)
    key, value = (torch.randn(rows, kv_heads, columns, head_dim, generator=generator).to(dtype) for _ in range(2))
    mask = torch.rand(rows, columns, generator=generator) < 0.8
    if draw(st.booleans()):  # left padding, as a batch of prompts of several lengths has
        for row in range(rows):
            mask[row, : draw(st.integers(0, columns))] = False
    for row, group in enumerate(keys):
        first = keys.index(group)
        for tensor in (key, value):
            tensor[row, :, :shared] = tensor[first, :, :shared]
        mask[row, :shared] = mask[first, :shared]
    return query, key, value, mask[:, None, None, :], keys, shared


@settings(max_examples=80, deadline=None)
@given(shared_cases(), st.booleans())
def test_rows_that_share_columns_read_them_once_with_the_same_sums(case: Any, loops: bool) -> None:
    """A group's shared columns come from its first row alone (the others' are poisoned), and every
    row's output is the plain kernel's bit for bit (on tiles too, where the plain kernel takes rows
    that share nothing 16 queries at a time), and each row's alone."""
    query, key, value, mask, keys, shared = case
    module = _Module(query.shape[1] // key.shape[1])
    with _loops() if loops else nullcontext():
        _the_shared_sums(module, query, key, value, mask, keys, shared)


def _the_shared_sums(
    module: _Module, query: Any, key: Any, value: Any, mask: Any, keys: list[int], shared: int
) -> None:
    plain, _ = da.decode_attention(module, query, key, value, mask)
    for row in {0, len(keys) - 1}:  # a row's output is its own, whatever rows it is decoded beside
        alone, _ = da.decode_attention(module, *(t[row : row + 1] for t in (query, key, value, mask)))
        assert torch.equal(alone, plain[row : row + 1])
    layout = da.shared_columns(keys, shared)
    if layout is None:
        assert len(set(keys)) == len(keys) or shared == 0
        return
    poisoned_key, poisoned_value = key.clone(), value.clone()
    for row, group in enumerate(keys):
        if keys.index(group) != row:  # not its group's first row: never read in the shared columns
            poisoned_key[row, :, :shared] = float("nan")
            poisoned_value[row, :, :shared] = float("nan")
    got, _ = da.decode_attention(module, query, poisoned_key, poisoned_value, mask, shared=layout)
    assert torch.equal(got, plain)


@pytest.mark.skipif(not _tiles_possible(), reason="no AMX here (the CPU, the compiler or the kernel)")
def test_bfloat16_scores_run_on_tiles_where_the_cpu_has_amx(monkeypatch: pytest.MonkeyPatch) -> None:
    assert da.tiles()
    bfloat16, float32 = (torch.nn.Linear(2, 2, dtype=dtype) for dtype in (torch.bfloat16, torch.float32))
    monkeypatch.setattr(da, "implementation", lambda model: "kernel")
    assert (da.label(bfloat16), da.label(float32)) == ("kernel-tiles", "kernel")
    monkeypatch.setenv(da.ENV, "loops")
    da.kernel.cache_clear()
    try:
        assert not da.tiles() and da.label(bfloat16) == "kernel"
    finally:
        monkeypatch.undo()
        da.kernel.cache_clear()
    assert da.tiles()


@pytest.mark.skipif(not _tiles_possible(), reason="no AMX here (the CPU, the compiler or the kernel)")
@settings(max_examples=60, deadline=None)
@given(cases())
def test_the_tiles_and_the_loops_agree_to_a_bfloat16_step(case: Any) -> None:
    """The two paths' float32 results differ in their last bits, so their bfloat16 outputs are the
    same or one step apart."""
    query, key, value, mask, _ = case
    query, key, value = (tensor.bfloat16() for tensor in (query, key, value))
    module = _Module(query.shape[1] // key.shape[1])
    tiles, _ = da.decode_attention(module, query, key, value, mask)
    with _loops():
        loops, _ = da.decode_attention(module, query, key, value, mask)
    torch.testing.assert_close(tiles.float(), loops.float(), rtol=2**-7, atol=1e-6)


def test_shared_columns_groups_rows_by_key_and_is_none_when_nothing_is_shared() -> None:
    layout = da.shared_columns(["a", "b", "a", "c", "b"], 7)
    assert layout is not None
    assert layout.rows.tolist() == [0, 2, 1, 4, 3]
    assert layout.starts.tolist() == [0, 2, 4, 5]
    assert layout.shared.tolist() == [7, 7, 7]
    assert da.shared_columns(["a", "b", "c"], 7) is None
    assert da.shared_columns(["a", "a"], 0) is None


def test_a_static_batch_reads_a_prompts_columns_once_for_its_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sampled groups through the static decoder: each step's kernel call is told which rows are one
    prompt's samples, and the answers are those of the row-by-row kernel."""
    from tests.lm.model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer
    from worldagent.lm import rollout
    from worldagent.lm.rollout import SamplingConfig, generate_batched

    model = tiny_llama_model()
    _, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=12, do_sample=True, temperature=0.9, num_return_sequences=3, seed=5)
    original = da.decode_attention
    layouts: list[da.SharedColumns | None] = []

    def recorded(*args: Any, shared: da.SharedColumns | None = None, **kwargs: Any) -> Any:
        layouts.append(shared)
        return original(*args, shared=shared, **kwargs)

    monkeypatch.setattr(lean_step, "decode_attention", recorded)
    grouped = generate_batched(model, tokenizer, PROMPTS, config, batch_size=len(PROMPTS))
    assert layouts and all(layout is not None for layout in layouts[:2])
    first = layouts[0]
    assert first is not None and first.groups == len(PROMPTS) and len(first.rows) == 3 * len(PROMPTS)
    monkeypatch.setattr(rollout, "shared_columns", lambda *args: None)
    row_by_row = generate_batched(model, tokenizer, PROMPTS, config, batch_size=len(PROMPTS))
    assert [[c.token_ids for c in group] for group in grouped] == [[c.token_ids for c in group] for group in row_by_row]


@st.composite
def drafted_cases(draw: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, list[int], int]:
    """A speculative step: each cache row's last token and drafted tokens are query rows of their own
    over that one cache row (``kv``); they see the row's columns before the step, each its own and
    the earlier of the step's columns after them (so they share the first ``columns - width``)."""
    queries = draw(st.lists(st.integers(1, 7), min_size=1, max_size=5))  # a cache row's query rows
    kv = [row for row, count in enumerate(queries) for _ in range(count)]
    width = max(queries)
    kv_heads = draw(st.integers(1, 2))
    groups = draw(st.sampled_from([1, 3, 5]))
    head_dim = draw(st.sampled_from([8, 64]))
    before = draw(st.integers(1, 120))
    columns = before + width
    dtype = draw(st.sampled_from([torch.float32, torch.bfloat16]))
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    query = torch.randn(len(kv), kv_heads * groups, 1, head_dim, generator=generator).to(dtype)
    key, value = (torch.randn(len(queries), kv_heads, columns, head_dim, generator=generator).to(dtype) for _ in "kv")
    kept = torch.rand(len(queries), before, generator=generator) < 0.8  # holes: drafts an earlier step dropped
    mask = torch.zeros(len(kv), columns, dtype=torch.bool)
    for at, row in enumerate(kv):
        mask[at, :before] = kept[row]
        mask[at, before : before + at - kv.index(row) + 1] = True
    return query, key, value, mask[:, None, None, :], kv, before


@settings(max_examples=80, deadline=None)
@given(drafted_cases(), st.booleans())
def test_query_rows_over_one_cache_row_are_the_plain_kernels_on_its_copies(case: Any, loops: bool) -> None:
    """``kv`` maps query rows to cache rows: every query's output is the plain kernel's over its own
    copy of its cache row, bit for bit (both paths), with a cache row's shared columns read once."""
    query, key, value, mask, kv, before = case
    module = _Module(query.shape[1] // key.shape[1])
    copies = [tensor[torch.tensor(kv)] for tensor in (key, value)]
    with _loops() if loops else nullcontext():
        plain, _ = da.decode_attention(module, query, *copies, mask)
        tolerance = 2e-5 if query.dtype == torch.float32 else 1e-2  # columns after a row's last: skipped
        torch.testing.assert_close(plain.double(), _reference(query, *copies, mask), atol=tolerance, rtol=tolerance)
        for shared in (0, before):
            layout = da.shared_columns(kv, shared, kv)
            assert layout is not None and layout.kv is not None
            got, _ = da.decode_attention(module, query, key, value, mask, shared=layout)
            assert torch.equal(got, plain)
