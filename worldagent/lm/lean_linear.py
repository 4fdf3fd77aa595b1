"""The decoders' linear layers without the work that is not arithmetic, and in the precision the CPU is
fastest at.

A decode step of a small model is mostly linear layers on a few rows, and two costs there are not
the arithmetic:

- **The weight's layout.** torch's bfloat16 linear on the CPU (oneDNN) takes the weight in its plain
  row-major layout at every call. Packed once into oneDNN's own blocked layout
  (``torch.ops.mkldnn._reorder_linear_weight``, as torch's compiler does for frozen weights) and
  multiplied with ``torch.ops.mkldnn._linear_pointwise``, the same sums come out (checked bit for
  bit at every row count) in about half the time on a few rows.
- **peft's Python.** ``lora.Linear.forward`` serves every case (merged weights, batches mixing
  adapters, variants such as DoRA, several active adapters, dropout); walking through them and
  calling four submodules costs tens of microseconds a call, and a step of a 30-layer model with 7
  adapted modules a layer makes 210 calls.

:func:`lean_linears` removes both inside a decoder's block: every bfloat16 ``nn.Linear`` on the CPU
(the base layers under the adapters, the LM head) computes a decode step's few rows through its
packed weight (a prompt's prefill, hundreds of rows, keeps ``F.linear``), and every
LoRA layer in the one case a decoder needs (one plain adapter, unmerged, dropout off) runs peft's
operations in peft's order without the rest. Everything else keeps its own forward. The packed
copies are dropped after the block. With gradients on, every layer computes as before: a packed
weight is a copy, no gradient would reach the original. Float32 weights keep ``F.linear``: oneDNN's
float32 kernel is not the one torch calls (MKL's), and its sums differ.

**Float32 products on a CPU without AMX.** Such a CPU multiplies bfloat16 at about half float32's
rate: AVX-512 BF16 ran torch's bfloat16 products at 158-171 GFLOP/s against float32's 300-320 on two
cores of one host, every projection shape of SmolLM2 at 760 and 2,048 rows. There (``auto``), or
with ``WORLDAGENT_PRODUCTS=float32``, the decoders multiply a bfloat16 model in float32 products:

- a LoRA layer's adapter is folded into a float32 copy of its base weight, ``W + scaling·B·A``
  (made at the layer's first call in the block, dropped with it), and every row, a prefill's or a
  decode step's, takes one float32 product, rounded to bfloat16 once. Not a bfloat16 merge, which
  would lose every update smaller than half a unit of ``W``'s last place (:mod:`worldagent.lm.load`);
  and it replaces four products and three elementwise passes a layer: 210 base products, 420 adapter
  products and ~630 small conversions a SmolLM2 step (bfloat16 weights and float32 adapters, 30
  layers' projections, two threads: 21.8 → 16.2 ms a step's linears at 1 row, 77 → 49 at 34, 127 →
  78 at 68);
- a plain layer's prefill rows (more than ``PACKED_ROWS_MAX``) multiply as float32 (the weight's
  copy made at its first prefill) and are rounded once; its decode rows keep the packed bfloat16
  weight (the LM head: on a few rows a product reads its weight, and bfloat16 reads half the bytes).

The products are the same (bfloat16 inputs are exact in float32); their sums come in another order
and the update is rounded once with the base's output instead of after it, so answers move within
rounding, as another batch size moves them (docs/decisions.md has the paired evaluation).
``WORLDAGENT_PRODUCTS`` says ``auto`` (float32 unless :func:`cpu_has_amx`), ``float32``, or
``bfloat16``: torch's and peft's own numbers, as above.

``WORLDAGENT_LEAN_LINEARS=off`` leaves every layer its own forward (for comparisons; ``on``, the
default, is the same numbers as the model's own forward).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

Linear = Callable[[torch.Tensor], torch.Tensor]
PACKING_ROWS = 32  # the row count oneDNN's layout is chosen for; any other count computes the same
PACKED_ROWS_MAX = 128  # more rows (a prompt's prefill) keep F.linear: the same sums, and there the
# packed product measured no faster, a prompt's prefill slower (benchmarks.generation's prompt tokens/s)
ENV = "WORLDAGENT_LEAN_LINEARS"
SETTINGS = ("on", "off")
PRODUCTS_ENV = "WORLDAGENT_PRODUCTS"
PRODUCTS_SETTINGS = ("auto", "float32", "bfloat16")


def switched_on(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """The on/off variable ``name`` checked: ``on`` (the default) or ``off``; anything else is named."""
    value = (os.environ if environ is None else environ).get(name, "on")
    if value not in SETTINGS:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(SETTINGS)}")
    return value == "on"


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``WORLDAGENT_LEAN_LINEARS`` checked (:func:`switched_on`)."""
    return switched_on(ENV, environ)


def cpu_has_amx() -> bool:
    """Whether this CPU multiplies bfloat16 in AMX tiles (torch's own check), where oneDNN's bfloat16
    products outrun float32's."""
    check = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(check()) if check is not None else False


def products(environ: Mapping[str, str] | None = None) -> str:
    """``WORLDAGENT_PRODUCTS`` checked and resolved: ``"float32"`` or ``"bfloat16"``, the precision
    the decoders multiply a bfloat16 weight in (see the module doc)."""
    value = (os.environ if environ is None else environ).get(PRODUCTS_ENV, "auto")
    if value not in PRODUCTS_SETTINGS:
        raise ValueError(f"{PRODUCTS_ENV}={value!r}: expected one of {', '.join(PRODUCTS_SETTINGS)}")
    if value == "auto":
        return "bfloat16" if cpu_has_amx() else "float32"
    return value


def multiplies_in(model: Any) -> str:
    """The precision the decoders multiply ``model``'s weights in: ``"float32"`` for a bfloat16
    model on a CPU inside :func:`lean_linears` where :func:`products` says so, else the weights'
    own dtype."""
    weight = next(model.parameters())
    if enabled() and packs(weight) and products() == "float32":
        return "float32"
    return str(weight.dtype).removeprefix("torch.")


def packs(weight: torch.Tensor) -> bool:
    """Whether ``weight`` is computed through a packed copy inside :func:`lean_linears`."""
    return (
        weight.device.type == "cpu"
        and weight.dtype == torch.bfloat16
        and weight.dim() == 2
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
    )


def _float32_product(make: Callable[[], tuple[torch.Tensor, torch.Tensor | None]]) -> Linear:
    """``x ->`` the float32 product with the weight and bias ``make`` returns (called at the first
    product, kept for the block), rounded to ``x``'s dtype once."""
    copies: list[torch.Tensor | None] = []

    def product(x: torch.Tensor) -> torch.Tensor:
        if not copies:
            copies.extend(make())
        return F.linear(x.float(), copies[0], copies[1]).to(x.dtype)

    return product


def _linear(weight: torch.Tensor, bias: torch.Tensor | None, wide: bool = False) -> Linear:
    """``x -> F.linear(x, weight, bias)``, through a packed copy of ``weight`` where :func:`packs`
    (a decode step's rows); a prefill's rows in float32 products when ``wide``."""
    if not packs(weight):
        return lambda x: F.linear(x, weight, bias)
    packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACKING_ROWS)
    wide_product = _float32_product(lambda: (weight.detach().float(), None if bias is None else bias.detach().float()))

    def linear(x: torch.Tensor) -> torch.Tensor:
        if (
            torch.is_grad_enabled()
            or x.dtype != weight.dtype
            or x.device != weight.device
            or not x.is_contiguous()  # strided: torch adds a bias after rounding, not before
        ):
            return F.linear(x, weight, bias)
        if x.numel() > PACKED_ROWS_MAX * x.shape[-1]:
            return wide_product(x) if wide else F.linear(x, weight, bias)
        return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")

    return linear


def _plain_adapter(module: Any) -> str | None:
    """The adapter's name when ``module`` is a peft LoRA ``Linear`` in the one case served (see the
    module doc), else None."""
    try:
        from peft.tuners.lora.layer import Linear as LoraLinear
    except ImportError:
        return None
    if not isinstance(module, LoraLinear) or module.merged or module.disable_adapters:
        return None
    if type(module.get_base_layer()) is not torch.nn.Linear or getattr(module, "fan_in_fan_out", False):
        return None
    if not getattr(module, "cast_input_dtype_enabled", True):
        return None
    active = list(module.active_adapters)
    if len(active) != 1 or active[0] not in module.lora_A or active[0] in getattr(module, "lora_variant", {}):
        return None
    if module.training and not isinstance(module.lora_dropout[active[0]], torch.nn.Identity):
        return None
    return active[0]


def _adapted(module: Any, name: str, base: Linear) -> Linear:
    """peft's unmerged single-adapter path: ``base(x) + B(A(x in A's dtype)) * scaling``, in the
    base output's dtype. Without gradients, and where ``scaling`` is a power of two (LoRA's alpha
    twice its rank, the project's default), ``B`` and its bias are scaled once (exactly: every
    product and sum scales by the same power of two) and the base's output is added into the update
    in place: the same numbers without two passes over the update, which on a prompt's hundreds of
    rows run from memory."""
    lora_a, lora_b, scaling = module.lora_A[name], module.lora_B[name], module.scaling[name]
    exact_scale = math.frexp(scaling)[0] == 0.5
    scaled: list[torch.Tensor | None] = []

    def forward(x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        result = base(x)
        down = F.linear(x.to(lora_a.weight.dtype), lora_a.weight, lora_a.bias)
        if torch.is_grad_enabled() or not exact_scale:
            return (result + F.linear(down, lora_b.weight, lora_b.bias) * scaling).to(result.dtype)
        if not scaled:
            scaled.extend(None if t is None else t.detach() * scaling for t in (lora_b.weight, lora_b.bias))
        return F.linear(down, scaled[0], scaled[1]).add_(result).to(result.dtype)

    return forward


def _folded(module: Any, name: str, exact: Linear) -> Linear:
    """The adapter folded into a float32 copy of the base weight (see the module doc): one float32
    product, rounded to the input's dtype once; ``exact`` (peft's path) with gradients on or for an
    input in another dtype or on another device."""
    base = module.get_base_layer()
    lora_a, lora_b, scaling = module.lora_A[name], module.lora_B[name], module.scaling[name]

    def fold() -> tuple[torch.Tensor, torch.Tensor | None]:
        down, up = lora_a.weight.detach().float(), lora_b.weight.detach().float()
        weight = base.weight.detach().float() + (up @ down) * scaling
        bias = None if base.bias is None else base.bias.detach().float()
        if lora_a.bias is not None or lora_b.bias is not None:
            shift = torch.zeros(up.shape[0]) if lora_a.bias is None else up @ lora_a.bias.detach().float()
            shift = shift if lora_b.bias is None else shift + lora_b.bias.detach().float()
            bias = shift * scaling if bias is None else bias + shift * scaling
        return weight, bias

    product = _float32_product(fold)

    def forward(x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        if torch.is_grad_enabled() or x.dtype != base.weight.dtype or x.device != base.weight.device:
            return exact(x, *args, **kwargs)
        return product(x)

    return forward


@dataclass(frozen=True)
class Lean:
    """What :func:`lean_linears` changed: weights packed, adapters run without peft's Python, and of
    those the adapters folded into float32 weights (whose base weights are not packed)."""

    packed: int
    adapters: int
    folded: int = 0


@contextmanager
def lean_linears(model: Any) -> Iterator[Lean]:
    """Inside the block, ``model``'s linear layers compute as the module doc says; their own forward
    is back after it, also when it raises."""
    swapped: list[torch.nn.Module] = []
    packed = adapters = folded = 0
    modules = list(model.modules()) if hasattr(model, "modules") and enabled() else []
    wide = bool(modules) and products() == "float32"
    under_adapter = {id(m.get_base_layer()) for m in modules if _plain_adapter(m) is not None}
    try:
        for module in modules:
            if "forward" in vars(module):  # someone else's forward: left alone
                continue
            name = _plain_adapter(module)
            if name is not None:
                base = module.get_base_layer()
                if wide and packs(base.weight):  # peft's path only with gradients on: torch's linear
                    exact = _adapted(module, name, lambda x, base=base: F.linear(x, base.weight, base.bias))
                    module.forward = _folded(module, name, exact)
                    folded += 1
                else:
                    packed += packs(base.weight)
                    module.forward = _adapted(module, name, _linear(base.weight, base.bias))
                adapters += 1
            elif type(module) is torch.nn.Linear and id(module) not in under_adapter and packs(module.weight):
                forward = _linear(module.weight, module.bias, wide)
                module.forward = lambda x, *args, _forward=forward, **kwargs: _forward(x)
                packed += 1
            else:
                continue
            swapped.append(module)
        yield Lean(packed, adapters, folded)
    finally:
        for module in swapped:
            del module.forward
