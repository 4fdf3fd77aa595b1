"""The decoders' lean linear layers (worldagent/lm/lean_linear.py): packed bfloat16 weights and
peft's LoRA path without its Python give torch's and peft's numbers bit for bit, in every case they
serve (``WORLDAGENT_PRODUCTS=bfloat16``); stacked products are one bfloat16 product an input,
within their roundings; float32 products give the float32 product of the folded weight, rounded
once; every other case keeps its own forward; the forwards are back after the block."""

from __future__ import annotations

import os
from typing import Any
from unittest import mock

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from peft import LoraConfig, get_peft_model

from worldagent.lm import lean_linear as lean

_packs_here = lean.packs(torch.zeros(1, 1, dtype=torch.bfloat16))
pack = pytest.mark.skipif(not _packs_here, reason="no oneDNN in this torch")


class _Two(torch.nn.Module):
    def __init__(self, width: int, hidden: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.up = torch.nn.Linear(width, hidden, bias=True, dtype=dtype)
        self.down = torch.nn.Linear(hidden, width, bias=False, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def _adapted(
    seed: int, dtype: torch.dtype, rank: int, lora_bias: bool, dropout: float = 0.0, alpha: int = 2, **extra: Any
) -> Any:
    torch.manual_seed(seed)
    config = LoraConfig(
        r=rank,
        lora_alpha=alpha * rank,  # scaling = alpha: 2, as the project trains, is a power of two
        target_modules=["up", "down"],
        lora_dropout=dropout,
        lora_bias=lora_bias,
        init_lora_weights=False,  # B is not zero: the update is part of every output
        **extra,
    )
    return get_peft_model(_Two(24, 40, dtype), config)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from([torch.float32, torch.bfloat16]),
    rank=st.integers(1, 8),
    lora_bias=st.booleans(),
    rows=st.sampled_from([1, 3, 6, lean.PACKED_ROWS_MAX + 5]),
    alpha=st.sampled_from([2, 3]),
)
def test_the_lean_forward_gives_peft_s_numbers_bit_for_bit(
    seed: int, dtype: torch.dtype, rank: int, lora_bias: bool, rows: int, alpha: int
) -> None:
    """A decode step's rows and a prefill's; a scaling that is a power of two (folded into B) and
    one that is not."""
    model = _adapted(seed, dtype, rank, lora_bias, alpha=alpha).eval()
    x = torch.randn(rows, 1, 24, generator=torch.Generator().manual_seed(seed)).to(dtype)
    with torch.inference_mode(), mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "bfloat16"}):
        expected = model(x)
        with lean.lean_linears(model) as changed:
            got = model(x)
    assert changed == lean.Lean(packed=2 if dtype == torch.bfloat16 else 0, adapters=2)
    assert got.dtype == expected.dtype and torch.equal(got, expected)


def _exact(layer: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A LoRA layer's output for ``x`` in float64, and how far a stacked product may be from it:
    each of its roundings at its worst (``A`` and ``x·Aᵀ``, ``scaling·B``, the output), and float32
    sums of the base product."""
    lora_a, lora_b, scaling = layer.lora_A["default"], layer.lora_B["default"], layer.scaling["default"]
    base = layer.base_layer
    weight = base.weight.double()
    bias = torch.zeros(weight.shape[0], dtype=torch.float64) if base.bias is None else base.bias.double()
    down, up, wide = lora_a.weight.double(), lora_b.weight.double() * scaling, x.double()
    exact = F.linear(wide, weight, bias) + F.linear(F.linear(wide, down), up)
    bound = (
        2**-8 * exact.abs()
        + 2**-7 * F.linear(F.linear(wide.abs(), down.abs()), up.abs())
        + 2**-16 * (F.linear(wide.abs(), weight.abs()) + bias.abs())
    )
    return exact, bound


def _within(got: torch.Tensor, layer: Any, x: torch.Tensor) -> bool:
    exact, bound = _exact(layer, x)
    return got.dtype == x.dtype and bool(((got.double() - exact).abs() <= bound).all())


@pack
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    rank=st.integers(1, 8),
    alpha=st.sampled_from([2, 3]),
    rows=st.one_of(st.integers(1, lean.STACK_PACKED_ROWS_MAX), st.integers(lean.STACK_PACKED_ROWS_MAX + 1, 700)),
)
def test_stacked_products_are_one_bfloat16_product_within_their_roundings(
    seed: int, rank: int, alpha: int, rows: int
) -> None:
    """``[x, x·Aᵀ] · [W, scaling·B]ᵀ`` for a decode step's rows (packed) and a prefill's: within
    its roundings of the exact float64 output (:func:`_exact`), within bfloat16 rounding of peft's
    own forward; with gradients on, peft's path."""
    model = _adapted(seed, torch.bfloat16, rank, False, alpha=alpha).eval()
    layer = model.base_model.model.up
    x = torch.randn(rows, 1, 24, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)
    with torch.inference_mode(), mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "stacked"}):
        peft_s = layer(x)
        with lean.lean_linears(model) as changed:
            got = layer(x)
    assert changed == lean.Lean(packed=2, adapters=2, stacked=2)
    assert _within(got, layer, x)
    torch.testing.assert_close(got, peft_s, atol=0.05, rtol=2**-6)
    with mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "stacked"}), lean.lean_linears(model):
        trained = layer(x)  # gradients on: peft's numbers, and a gradient to the adapter
    assert trained.requires_grad and torch.equal(trained.detach(), peft_s)


class _Siblings(torch.nn.Module):
    """Llama's names for projections of one input, and a layer alone."""

    def __init__(self) -> None:
        super().__init__()
        make = lambda outputs, inputs=24: torch.nn.Linear(inputs, outputs, bias=False, dtype=torch.bfloat16)  # noqa: E731
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = make(24), make(8), make(8), make(24)
        self.gate_proj, self.up_proj = make(40), make(40)


@pack
@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**16), rows=st.sampled_from([1, 5, lean.PACKED_ROWS_MAX + 3, lean.STACK_PACKED_ROWS_MAX + 3])
)
def test_siblings_of_one_input_share_one_product_and_another_input_gets_its_own(seed: int, rows: int) -> None:
    """q/k/v and gate/up: the first called makes every sibling's output (one product), the others
    take theirs, in any order; a sibling called with another tensor computes it; each output within
    its roundings of its own layer's exact output."""
    torch.manual_seed(seed)
    names = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj"]
    model = get_peft_model(_Siblings(), LoraConfig(r=4, target_modules=names, init_lora_weights=False)).eval()
    inner = model.base_model.model
    generator = torch.Generator().manual_seed(seed)
    x, y = (torch.randn(rows, 1, 24, generator=generator).to(torch.bfloat16) for _ in range(2))
    products: list[int] = []
    original = lean._Stack.product

    def counted(self: Any, tensor: torch.Tensor) -> torch.Tensor:
        products.append(id(self))
        return original(self, tensor)

    with (
        torch.inference_mode(),
        mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "stacked"}),
        mock.patch.object(lean._Stack, "product", counted),
        lean.lean_linears(model) as changed,
    ):
        assert changed.stacked == 6
        first = {name: getattr(inner, name)(x) for name in ("v_proj", "q_proj", "k_proj")}
        assert len(products) == 1
        other = inner.k_proj(y)  # another tensor: a product of its own
        assert len(products) == 2 and _within(other, inner.k_proj, y)
        again = {name: getattr(inner, name)(x) for name in ("q_proj", "k_proj", "v_proj")}
        assert len(products) == 3 and products[0] == products[1] == products[2]
        gate, up, out = inner.gate_proj(x), inner.up_proj(x), inner.o_proj(x)
        assert len(products) == 5 and products[3] != products[4] != products[0]
    assert all(torch.equal(first[name], again[name]) for name in first)
    for name, got in {**first, "gate_proj": gate, "up_proj": up, "o_proj": out}.items():
        assert _within(got, getattr(inner, name), x), name


@pack
def test_stacked_weights_are_kept_while_the_weights_they_are_made_from_stay_the_same() -> None:
    """The next block takes the stack the last one made; an optimizer's step on the adapter, or a
    new base weight, makes a new one, and the outputs follow the new weights."""
    model = _adapted(5, torch.bfloat16, 4, False).eval()
    layer = model.base_model.model.up
    x = torch.randn(6, 1, 24, generator=torch.Generator().manual_seed(5)).to(torch.bfloat16)

    def run() -> tuple[torch.Tensor, Any]:
        with (
            torch.inference_mode(),
            mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "stacked"}),
            lean.lean_linears(model),
        ):
            return layer(x), vars(layer)[lean.KEPT]

    first, kept = run()
    again, kept_again = run()
    assert kept_again is kept and torch.equal(first, again)
    optimizer = torch.optim.SGD([layer.lora_B["default"].weight], lr=1.0)
    layer.lora_B["default"].weight.grad = torch.ones_like(layer.lora_B["default"].weight)
    optimizer.step()
    stepped, kept_stepped = run()
    assert kept_stepped is not kept and _within(stepped, layer, x) and not torch.equal(stepped, first)
    layer.base_layer.weight = torch.nn.Parameter(torch.zeros_like(layer.base_layer.weight))
    replaced, kept_replaced = run()
    assert kept_replaced is not kept_stepped and _within(replaced, layer, x)
    with torch.inference_mode():  # weights made there keep no version: stacked all the same
        made_there = _adapted(5, torch.bfloat16, 4, False).eval()
        with mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "stacked"}), lean.lean_linears(made_there):
            assert _within(made_there.base_model.model.up(x), made_there.base_model.model.up, x)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    rank=st.integers(1, 8),
    lora_bias=st.booleans(),
    rows=st.sampled_from([1, 3, 34, lean.PACKED_ROWS_MAX + 5]),
)
def test_float32_products_fold_the_adapter_into_a_float32_weight(
    seed: int, rank: int, lora_bias: bool, rows: int
) -> None:
    """Every row count: the float32 product with ``W + scaling·B·A`` (and the bias the adapter adds),
    rounded to bfloat16 once; within bfloat16 rounding of peft's own forward. With gradients on,
    peft's path."""
    model = _adapted(seed, torch.bfloat16, rank, lora_bias).eval()
    layer = model.base_model.model.up
    x = torch.randn(rows, 1, 24, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)
    lora_a, lora_b, scaling = layer.lora_A["default"], layer.lora_B["default"], layer.scaling["default"]
    weight = layer.base_layer.weight.float() + (lora_b.weight.float() @ lora_a.weight.float()) * scaling
    bias = layer.base_layer.bias.float() + (lora_b.bias.float() * scaling if lora_bias else 0.0)
    with torch.inference_mode(), mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "float32"}):
        expected = F.linear(x.float(), weight, bias).bfloat16()
        peft_s = layer(x)
        with lean.lean_linears(model) as changed:
            got = layer(x)
    assert changed == lean.Lean(packed=0, adapters=2, folded=2)
    assert got.dtype == torch.bfloat16 and torch.equal(got, expected)
    torch.testing.assert_close(got, peft_s, atol=0.05, rtol=2**-6)
    with mock.patch.dict(os.environ, {lean.PRODUCTS_ENV: "float32"}), lean.lean_linears(model):
        trained = layer(x)  # gradients on: peft's numbers, and a gradient to the adapter
    assert trained.requires_grad and torch.equal(trained.detach(), peft_s)


def test_peft_s_forward_is_back_after_the_block_even_when_it_raises() -> None:
    model = _adapted(0, torch.float32, 4, False).eval()
    layers = [m for m in model.modules() if lean._plain_adapter(m) is not None]
    assert len(layers) == 2
    with pytest.raises(RuntimeError, match="boom"), lean.lean_linears(model):
        assert all("forward" in vars(m) for m in layers)
        raise RuntimeError("boom")
    assert not any("forward" in vars(m) for m in layers)


def _count(model: Any) -> int:
    with lean.lean_linears(model) as changed:
        return changed.adapters


def test_every_case_it_does_not_serve_keeps_peft_s_forward() -> None:
    """Merged weights, adapters switched off, dropout while training, two active adapters, and a
    model without adapters."""
    merged = _adapted(1, torch.float32, 4, False).eval()
    merged.merge_adapter()
    assert _count(merged) == 0

    off = _adapted(2, torch.float32, 4, False).eval()
    with off.disable_adapter():
        assert _count(off) == 0

    training = _adapted(3, torch.float32, 4, False, dropout=0.1).train()
    assert _count(training) == 0
    assert _count(training.eval()) == 2  # dropout is off in eval mode

    two = _adapted(4, torch.float32, 4, False).eval()
    two.add_adapter("other", LoraConfig(r=2, target_modules=["up", "down"], init_lora_weights=False))
    two.base_model.set_adapter(["default", "other"])
    assert _count(two) == 0

    assert _count(_Two(8, 8, torch.float32)) == 0


def test_the_decoders_answer_through_it_as_through_peft(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny Llama with LoRA on every projection (bfloat16 base, float32 adapter, as trained): the
    static and the continuous decoder run the lean forward, and answer what peft's forward answers
    (bfloat16 products: the same numbers)."""
    from tests.lm.model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer
    from worldagent.lm.continuous import Request, decode_stream
    from worldagent.lm.rollout import SamplingConfig, encode_prompt, generate_batched

    torch.manual_seed(0)
    modules = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    model = get_peft_model(
        tiny_llama_model().to(torch.bfloat16), LoraConfig(r=4, target_modules=modules, init_lora_weights=False)
    ).eval()
    _, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=10)
    encoded = [tuple(encode_prompt(tokenizer, p)) for p in PROMPTS]

    def answers() -> tuple[list[list[int]], list[list[int]]]:
        static = [group[0].token_ids for group in generate_batched(model, tokenizer, PROMPTS, config, batch_size=3)]
        streamed: dict[int, list[int]] = {}
        requests = [Request(ids, config, key=i) for i, ids in enumerate(encoded)]
        decode_stream(model, tokenizer, requests, lambda r, c: streamed.setdefault(r.key, c.token_ids) and [], 3)
        return static, [streamed[i] for i in range(len(PROMPTS))]

    calls: list[str] = []
    original = lean._adapted

    def counted(module: Any, name: str, base: Any, stacked: Any = None) -> Any:
        calls.append(name)
        return original(module, name, base, stacked)

    monkeypatch.setattr(lean, "_adapted", counted)
    monkeypatch.setenv(lean.PRODUCTS_ENV, "bfloat16")
    lean_answers = answers()
    adapted = 7 * model.config.num_hidden_layers
    assert len(calls) % adapted == 0 and len(calls) >= 2 * adapted  # each decoder call, every adapted module
    monkeypatch.setattr(lean, "_plain_adapter", lambda module: None)  # peft's forward throughout
    monkeypatch.setattr(lean, "packs", lambda weight: False)  # torch's plain linear throughout
    assert answers() == lean_answers


@pack
@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(1, 80),
    inputs=st.integers(1, 96),
    outputs=st.integers(1, 130),
    bias=st.booleans(),
    extra=st.sampled_from([(), (1,), (3,)]),
    seed=st.integers(0, 2**16),
)
def test_a_packed_bfloat16_weight_gives_torch_s_linear_bit_for_bit(
    rows: int, inputs: int, outputs: int, bias: bool, extra: tuple[int, ...], seed: int
) -> None:
    """Any row count (the layout is chosen for PACKING_ROWS), with or without a bias, 2-D and 3-D
    inputs, contiguous or strided (torch's own linear rounds before its bias there: left to it);
    a prefill's rows too where they multiply in bfloat16."""
    generator = torch.Generator().manual_seed(seed)
    weight = torch.randn(outputs, inputs, generator=generator).to(torch.bfloat16)
    offset = torch.randn(outputs, generator=generator).to(torch.bfloat16) if bias else None
    x = torch.randn(rows, *extra, 2 * inputs, generator=generator).to(torch.bfloat16)
    linear = lean._linear(weight, offset)
    with torch.inference_mode():
        for given in (x[..., :inputs].contiguous(), x[..., ::2]):
            assert torch.equal(linear(given), F.linear(given, weight, offset))


@pack
@pytest.mark.parametrize("products", ["bfloat16", "float32"])
def test_a_decode_step_s_rows_go_through_the_packed_weight_and_a_prefill_s_through_torch(
    products: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to PACKED_ROWS_MAX rows the packed product; more (a prompt's prefill) torch's own linear,
    in the precision the setting names."""
    through_torch: list[tuple[tuple[int, ...], torch.dtype, torch.dtype]] = []

    class Spy:
        @staticmethod
        def linear(x: torch.Tensor, weight: torch.Tensor, *args: object) -> torch.Tensor:
            through_torch.append((tuple(x.shape), x.dtype, weight.dtype))
            return F.linear(x, weight, *args)

    weight = torch.randn(8, 4).to(torch.bfloat16)
    monkeypatch.setattr(lean, "F", Spy)
    linear = lean._linear(weight, None, wide=products == "float32")
    with torch.inference_mode():
        for rows in (1, lean.PACKED_ROWS_MAX, lean.PACKED_ROWS_MAX + 1, lean.PACKED_ROWS_MAX + 2):
            x = torch.randn(rows, 4).to(torch.bfloat16)
            expected = F.linear(x.float(), weight.float()).bfloat16() if products == "float32" else F.linear(x, weight)
            got = linear(x)
            assert got.dtype == torch.bfloat16 and torch.equal(got, expected)
    wide = getattr(torch, products)
    assert through_torch == [((rows, 4), wide, wide) for rows in (lean.PACKED_ROWS_MAX + 1, lean.PACKED_ROWS_MAX + 2)]


class _Headed(torch.nn.Module):
    """A body layer and an output head, found as transformers' models name theirs."""

    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Linear(16, 16, bias=False, dtype=torch.bfloat16)
        self.head = torch.nn.Linear(16, 50, bias=False, dtype=torch.bfloat16)

    def get_output_embeddings(self) -> torch.nn.Module:
        return self.head


@pack
@pytest.mark.parametrize("products", ["bfloat16", "float32"])
def test_the_lm_head_takes_its_packed_product_up_to_its_own_bound(
    products: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drafted step's query rows (past PACKED_ROWS_MAX) reach the LM head's packed product in
    bfloat16 products; other plain layers, and the head under float32 products, keep torch's."""
    monkeypatch.setenv(lean.PRODUCTS_ENV, products)
    model = _Headed()
    through_torch: list[int] = []

    class Spy:
        @staticmethod
        def linear(x: torch.Tensor, weight: torch.Tensor, *args: object) -> torch.Tensor:
            through_torch.append(weight.shape[0])
            return F.linear(x, weight, *args)

    monkeypatch.setattr(lean, "F", Spy)
    x = torch.randn(lean.PACKED_ROWS_MAX + 50, 16).to(torch.bfloat16)
    with torch.inference_mode(), lean.lean_linears(model):
        assert torch.equal(model.head(x), F.linear(x, model.head.weight)) or products == "float32"
        model.body(x)
        model.head(torch.randn(lean.HEAD_PACKED_ROWS_MAX + 1, 16).to(torch.bfloat16))
    assert through_torch == ([16, 50] if products == "bfloat16" else [50, 16, 50])


@pack
@pytest.mark.parametrize("rows", [lean.PACKED_ROWS_MAX + 1, 333, lean.HEAD_PACKED_ROWS_MAX])
def test_the_lm_head_s_packed_product_gives_torch_s_bits_past_the_plain_bound(rows: int) -> None:
    """SmolLM2's head (49,157 x 576): the packed product's sums are torch's up to its bound."""
    generator = torch.Generator().manual_seed(rows)
    weight = (0.05 * torch.randn(49_157, 576, generator=generator)).to(torch.bfloat16)
    x = torch.randn(rows, 576, generator=generator).to(torch.bfloat16)
    linear = lean._linear(weight, None, rows_max=lean.HEAD_PACKED_ROWS_MAX)
    with torch.inference_mode():
        assert torch.equal(linear(x), F.linear(x, weight))


@pack
@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(lean.PACKED_ROWS_MAX + 1, 400),
    inputs=st.integers(1, 96),
    outputs=st.integers(1, 130),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_prefill_in_float32_products_is_the_float32_product_rounded_once(
    rows: int, inputs: int, outputs: int, bias: bool, seed: int
) -> None:
    """The same products as torch's bfloat16 linear (bfloat16 inputs are exact in float32), summed
    in float32 and rounded to bfloat16 once: bit for bit the float32 linear rounded, and within a
    bfloat16 rounding of torch's bfloat16 linear."""
    generator = torch.Generator().manual_seed(seed)
    weight = torch.randn(outputs, inputs, generator=generator).to(torch.bfloat16)
    offset = torch.randn(outputs, generator=generator).to(torch.bfloat16) if bias else None
    x = torch.randn(rows, inputs, generator=generator).to(torch.bfloat16)
    linear = lean._linear(weight, offset, wide=True)
    with torch.inference_mode():
        got = linear(x)
        wide = F.linear(x.float(), weight.float(), None if offset is None else offset.float())
        assert got.dtype == torch.bfloat16 and torch.equal(got, wide.bfloat16())
        torch.testing.assert_close(got, F.linear(x, weight, offset), atol=0.1, rtol=2**-7)


@pack
def test_the_precision_a_model_multiplies_in_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _adapted(6, torch.bfloat16, 2, False).eval()
    monkeypatch.setenv(lean.PRODUCTS_ENV, "float32")
    assert lean.multiplies_in(model) == "float32"
    assert lean.multiplies_in(_adapted(6, torch.float32, 2, False)) == "float32"
    monkeypatch.setenv(lean.PRODUCTS_ENV, "bfloat16")
    assert lean.multiplies_in(model) == "bfloat16"
    monkeypatch.setenv(lean.PRODUCTS_ENV, "stacked")
    assert lean.multiplies_in(model) == "stacked"
    assert lean.multiplies_in(_Two(4, 4, torch.bfloat16)) == "bfloat16"  # nothing to stack
    monkeypatch.setenv(lean.PRODUCTS_ENV, "float32")
    monkeypatch.setenv(lean.ENV, "off")
    assert lean.multiplies_in(model) == "bfloat16"


def test_the_products_setting_follows_the_cpu_and_a_wrong_value_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for amx, expected in ((True, "stacked"), (False, "float32")):
        monkeypatch.setattr(lean, "cpu_has_amx", lambda amx=amx: amx)
        assert lean.products({}) == expected
        assert lean.products({lean.PRODUCTS_ENV: "auto"}) == expected
    assert lean.products({lean.PRODUCTS_ENV: "bfloat16"}) == "bfloat16"
    with pytest.raises(ValueError, match=f"{lean.PRODUCTS_ENV}='fp8'.*auto, float32, bfloat16, stacked"):
        lean.products({lean.PRODUCTS_ENV: "fp8"})


@pack
def test_plain_linears_are_packed_and_gradients_still_reach_every_weight() -> None:
    """A model without adapters: its bfloat16 linears are packed, its float32 ones are not; with
    gradients on, every layer computes through its own weight."""
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 5, dtype=torch.bfloat16), torch.nn.Linear(5, 4, dtype=torch.bfloat16)
    ).eval()
    mixed = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Linear(5, 4, dtype=torch.bfloat16))
    x = torch.randn(3, 6, dtype=torch.bfloat16)
    with lean.lean_linears(mixed) as changed:
        assert changed == lean.Lean(packed=1, adapters=0)
    with torch.no_grad():
        expected = model(x)
    with lean.lean_linears(model) as changed:
        assert changed == lean.Lean(packed=2, adapters=0)
        with torch.no_grad():
            assert torch.equal(model(x), expected)
        model(x).float().sum().backward()
    assert all(layer.weight.grad is not None and layer.weight.grad.abs().sum() > 0 for layer in model)
    assert not any("forward" in vars(layer) for layer in model)


def test_the_switch_turns_it_off_and_a_wrong_value_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _adapted(5, torch.bfloat16, 2, False).eval()
    monkeypatch.setenv(lean.ENV, "off")
    assert _count(model) == 0
    monkeypatch.setenv(lean.ENV, "fast")
    with pytest.raises(ValueError, match="WORLDAGENT_LEAN_LINEARS='fast'.*on, off"):
        _count(model)
