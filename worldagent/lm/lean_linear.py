"""The decoders' linear layers without the work that is not arithmetic, and in the precision the CPU is
fastest at.

A decode step of a small model is mostly linear layers on a few rows, and two costs there are not
the arithmetic:

- **The weight's layout.** torch's bfloat16 linear on the CPU (oneDNN) takes the weight in its plain
  row-major layout at every call. Packed once into oneDNN's own blocked layout
  (``torch.ops.mkldnn._reorder_linear_weight``, as torch's compiler does for frozen weights) and
  multiplied with ``torch.ops.mkldnn._linear_pointwise``, the same sums come out (checked bit for
  bit up to ``PACKED_ROWS_MAX`` rows; at 576 × 576 and some 340 rows or more they did not; the LM
  head's, up to ``HEAD_PACKED_ROWS_MAX``: a drafted step's query rows) in about half the time on a
  few rows.
- **peft's Python.** ``lora.Linear.forward`` serves every case (merged weights, batches mixing
  adapters, variants such as DoRA, several active adapters, dropout); walking through them and
  calling four submodules costs tens of microseconds a call, and a step of a 30-layer model with 7
  adapted modules a layer makes 210 calls.

:func:`lean_linears` removes both inside a decoder's block: every bfloat16 ``nn.Linear`` on the CPU
(the base layers under the adapters, the LM head) computes a decode step's few rows through its
packed weight (a prompt's prefill, hundreds of rows, keeps ``F.linear``), and every
LoRA layer in the one case a decoder needs (one plain adapter, unmerged, dropout off) runs peft's
operations in peft's order without the rest. Everything else keeps its own forward. The packed
copies are dropped after the block. With gradients on, every layer computes as before: a
packed weight is a copy, no gradient would reach the original. Float32 weights keep ``F.linear``:
oneDNN's float32 kernel is not the one torch calls (MKL's), and its sums differ.

**Stacked products on a CPU with AMX.** peft's path costs an adapted layer three products (the base,
``A``, ``B``) and three passes over its float32 update (two conversions and the sum): a SmolLM2 step
makes 630 products and as many small conversions, and on a prompt's rows the adapters cost twice the
base product. There (``auto``), or with ``WORLDAGENT_PRODUCTS=stacked``, an adapted layer without an
adapter bias is one bfloat16 product of its input with its down-projection appended,
``[x, x·Aᵀ] · [W, scaling·B]ᵀ``, summed in float32 and rounded once; and layers that multiply one
input (Llama's q/k/v and gate/up, :data:`SIBLINGS`) are one product together: the weight stacks
their rows, each member's ``scaling·B`` in its own rank's columns and zeros in the others'. The first
member called computes every member's output; the others, called with that very tensor, take
theirs. A layer then costs 4 small products and 4 large ones instead of 21 products (30 layers'
projections, two threads: 31.6 → 16.9 ms at 68 rows, 44.4 → 22.4 at 120, the base products alone
13.8 and 17.7; a prompt's prefill 2,085 → 2,837 tokens a second). ``A``, ``x·Aᵀ`` and ``scaling·B``
are rounded to bfloat16 (2⁻⁹ of each), so answers move within rounding (docs/decisions.md has the
paired evaluation). The stacked weights (packed up to ``STACK_PACKED_ROWS_MAX`` rows, plain for a
longer prefill) are made at their first use and kept on the first member while the tensors they
come from keep their storage and version (an optimizer's step or a loaded state makes them again).

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
``WORLDAGENT_PRODUCTS`` says ``auto`` (``stacked`` where :func:`cpu_has_amx`, else ``float32``),
``stacked``, ``float32``, or ``bfloat16``: torch's and peft's own numbers, as above.

``WORLDAGENT_LEAN_LINEARS=off`` leaves every layer its own forward (for comparisons: torch's and
peft's numbers for every row).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

Linear = Callable[[torch.Tensor], torch.Tensor]
PACKING_ROWS = 32  # the row count oneDNN's layout is chosen for; any other count computes the same
PACKED_ROWS_MAX = 128  # more rows (a prompt's prefill) keep F.linear: the same sums, and there the
# packed product measured no faster, a prompt's prefill slower (benchmarks.generation's prompt tokens/s)
STACK_PACKED_ROWS_MAX = 512  # a stacked product is packed up to here: a drafted step's 130-340 query
# rows, where the packed product measured 10-25% faster (its numbers are its own either way)
HEAD_PACKED_ROWS_MAX = 512  # the LM head too (bfloat16 products): its packed product gave F.linear's bits
# at every row count checked up to here (49,157 x 576), 8.7 against 13.0 ms at 300 rows
ENV = "WORLDAGENT_LEAN_LINEARS"
SETTINGS = ("on", "off")
PRODUCTS_ENV = "WORLDAGENT_PRODUCTS"
PRODUCTS_SETTINGS = ("auto", "float32", "bfloat16", "stacked")


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
    """``WORLDAGENT_PRODUCTS`` checked and resolved: ``"float32"``, ``"bfloat16"`` or ``"stacked"``,
    how the decoders multiply a bfloat16 weight (see the module doc)."""
    value = (os.environ if environ is None else environ).get(PRODUCTS_ENV, "auto")
    if value not in PRODUCTS_SETTINGS:
        raise ValueError(f"{PRODUCTS_ENV}={value!r}: expected one of {', '.join(PRODUCTS_SETTINGS)}")
    if value == "auto":
        return "stacked" if cpu_has_amx() else "float32"
    return value


def multiplies_in(model: Any) -> str:
    """How the decoders multiply ``model``'s weights: ``"float32"`` for a bfloat16 model on a CPU
    inside :func:`lean_linears` where :func:`products` says so, ``"stacked"`` where it says so and
    the model has a layer to stack, else the weights' own dtype."""
    weight = next(model.parameters())
    if enabled() and packs(weight):
        chosen = products()
        if chosen == "float32" or (chosen == "stacked" and any(_stackable(m) for m in model.modules())):
            return chosen
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


def _takes(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Whether a product of ``x`` with ``weight`` may take a packed or stacked weight: no gradients,
    ``x`` contiguous (strided, torch adds a bias after rounding, not before) in ``weight``'s dtype
    and on its device."""
    return not torch.is_grad_enabled() and x.dtype == weight.dtype and x.device == weight.device and x.is_contiguous()


def _linear(
    weight: torch.Tensor, bias: torch.Tensor | None, wide: bool = False, rows_max: int = PACKED_ROWS_MAX
) -> Linear:
    """``x -> F.linear(x, weight, bias)``, through a packed copy of ``weight`` where :func:`packs`
    (a decode step's rows, up to ``rows_max``); a prefill's rows in float32 products when ``wide``."""
    if not packs(weight):
        return lambda x: F.linear(x, weight, bias)
    packed: list[torch.Tensor] = []  # made at the first packed product: a stacked layer never needs it
    wide_product = _float32_product(lambda: (weight.detach().float(), None if bias is None else bias.detach().float()))

    def linear(x: torch.Tensor) -> torch.Tensor:
        if not _takes(x, weight):
            return F.linear(x, weight, bias)
        if x.numel() > rows_max * x.shape[-1]:
            return wide_product(x) if wide else F.linear(x, weight, bias)
        if not packed:
            packed.append(torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACKING_ROWS))
        return torch.ops.mkldnn._linear_pointwise(x, packed[0], bias, "none", [], "")

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


def _stackable(module: Any) -> str | None:
    """The adapter's name when ``module`` is served (:func:`_plain_adapter`) and its layer can join a
    :class:`_Stack`: a packed base weight and no adapter bias; else None."""
    name = _plain_adapter(module)
    if name is None or not packs(module.get_base_layer().weight):
        return None
    return name if module.lora_A[name].bias is None and module.lora_B[name].bias is None else None


def _version(tensor: torch.Tensor) -> int | None:
    """The tensor's version counter; None for an inference tensor, which keeps none."""
    return None if tensor.is_inference() else tensor._version


class _Stack:
    """Adapted layers that multiply one input (one layer alone, or Llama's q/k/v and gate/up) as one
    bfloat16 product (the module doc): ``[x, x·Aᵀ] · [W, scaling·B]ᵀ``, where ``A`` stacks the
    members' ``A`` and the weight stacks their rows, each member's ``scaling·B`` in its own rank's
    columns and zeros in the others'. The first member called with an input computes every member's
    output; the others called with that same tensor take theirs. The weights (plain, and packed up
    to ``STACK_PACKED_ROWS_MAX`` rows) are made at their first use and kept with the first member while
    :meth:`key` stays the same (:func:`_kept`): a stream's first step does not make them again."""

    def __init__(self, members: Sequence[tuple[Any, str]]) -> None:
        self.members = list(members)
        self.key = self.key_of(self.members)
        self.widths = [module.get_base_layer().out_features for module, _ in self.members]
        self._plain: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None] | None = None
        self._packed: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None] | None = None
        self._pending: tuple[torch.Tensor, dict[int, torch.Tensor]] | None = None

    @staticmethod
    def key_of(members: Sequence[tuple[Any, str]]) -> tuple[Any, ...]:
        """What the weights are made from: each member, its adapter's name and scaling, and each
        tensor's storage and version (an optimizer's step or a loaded state bumps it)."""
        key: list[Any] = []
        for module, name in members:
            base = module.get_base_layer()
            tensors = (base.weight, base.bias, module.lora_A[name].weight, module.lora_B[name].weight)
            key += [id(module), name, module.scaling[name]]
            key += [None if t is None else (t.data_ptr(), _version(t), t.dtype, tuple(t.shape)) for t in tensors]
        return tuple(key)

    def _weights(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        if self._plain is None:
            bases = [module.get_base_layer() for module, _ in self.members]
            dtype = bases[0].weight.dtype
            downs = [module.lora_A[name].weight.detach().to(dtype) for module, name in self.members]
            rows = []
            for index, ((module, name), base) in enumerate(zip(self.members, bases, strict=True)):
                up = (module.lora_B[name].weight.detach() * module.scaling[name]).to(dtype)
                blocks = [
                    up if other == index else up.new_zeros(up.shape[0], down.shape[0])
                    for other, down in enumerate(downs)
                ]
                rows.append(torch.cat([base.weight.detach(), *blocks], dim=1))
            biases = [base.bias for base in bases]
            bias = None
            if any(b is not None for b in biases):
                bias = torch.cat(
                    [
                        b.detach() if b is not None else base.weight.new_zeros(base.out_features)
                        for b, base in zip(biases, bases, strict=True)
                    ]
                )
            self._plain = (torch.cat(downs), torch.cat(rows).contiguous(), bias)
        return self._plain

    def product(self, x: torch.Tensor) -> torch.Tensor:
        """Every member's output side by side, for a contiguous ``x`` in the weights' dtype."""
        if x.numel() > STACK_PACKED_ROWS_MAX * x.shape[-1]:  # a long prefill's rows: torch's own product
            down, weight, bias = self._weights()
            return F.linear(torch.cat([x, F.linear(x, down)], dim=-1), weight, bias)
        if self._packed is None:
            down, weight, bias = self._weights()
            pack = torch.ops.mkldnn._reorder_linear_weight
            self._packed = (pack(down, PACKING_ROWS), pack(weight, PACKING_ROWS), bias)
        down, weight, bias = self._packed
        multiply = torch.ops.mkldnn._linear_pointwise
        wide = torch.cat([x, multiply(x, down, None, "none", [], "")], dim=-1)
        return multiply(wide, weight, bias, "none", [], "")

    def output(self, index: int, x: torch.Tensor) -> torch.Tensor:
        """Member ``index``'s output for ``x``: kept from the product a sibling made for this very
        tensor object (Llama's forward hands its siblings one tensor and does not change it between
        their calls), else a new product (whose siblings' outputs are kept for them)."""
        pending = self._pending
        if pending is not None and pending[0] is x and index in pending[1]:
            output = pending[1].pop(index)
            if not pending[1]:
                self._pending = None
            return output
        outputs = [out.contiguous() for out in self.product(x).split(self.widths, dim=-1)]
        rest = {other: out for other, out in enumerate(outputs) if other != index}
        self._pending = (x, rest) if rest else None
        return outputs[index]


SIBLINGS = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))  # Llama's projections of one input


KEPT = "_worldagent_stack"  # the attribute a stack is kept in, on its first member


def _kept(members: list[tuple[Any, str]]) -> _Stack:
    """The stack kept on the first member (its weights already made) if it was made from these very
    weights, else a new one kept there."""
    first = members[0][0]
    stack = vars(first).get(KEPT)
    if not isinstance(stack, _Stack) or stack.key != _Stack.key_of(members):
        stack = _Stack(members)
        vars(first)[KEPT] = stack
    stack._pending = None
    return stack


def _stacks(modules: Sequence[Any]) -> dict[int, Linear]:
    """Each stackable adapted layer's product (:class:`_Stack`), by the layer's id: siblings that
    multiply one input (:data:`SIBLINGS`, all stackable and alike) share one stack; every other
    layer has its own."""
    products: dict[int, Linear] = {}

    def join(members: list[tuple[Any, str]]) -> None:
        stack = _kept(members)
        for index, (module, _) in enumerate(members):
            products[id(module)] = lambda x, stack=stack, index=index: stack.output(index, x)

    for parent in modules:
        for names in SIBLINGS:
            children = [getattr(parent, name, None) for name in names]
            named = [(child, _stackable(child)) for child in children if child is not None]
            members = [(child, name) for child, name in named if name is not None]
            if len(members) < 2 or len(members) < len(named):
                continue
            weights = [child.get_base_layer().weight for child, _ in members]
            if len({(w.shape[1], w.dtype, w.device) for w in weights}) == 1:
                join(members)
    for module in modules:
        name = _stackable(module) if id(module) not in products else None
        if name is not None:
            join([(module, name)])
    return products


def _adapted(module: Any, name: str, base: Linear, stacked: Linear | None = None) -> Linear:
    """peft's unmerged single-adapter path: ``base(x) + B(A(x in A's dtype)) * scaling``, in the
    base output's dtype. Without gradients, and where ``scaling`` is a power of two (LoRA's alpha
    twice its rank, the project's default), ``B`` and its bias are scaled once (exactly: every
    product and sum scales by the same power of two) and the base's output is added into the update
    in place: the same numbers without two passes over the update, which on a prompt's hundreds of
    rows run from memory. Without gradients, ``stacked`` computes the rows where given
    (:class:`_Stack`)."""
    lora_a, lora_b, scaling = module.lora_A[name], module.lora_B[name], module.scaling[name]
    exact_scale = math.frexp(scaling)[0] == 0.5
    scaled: list[torch.Tensor | None] = []
    weight = module.get_base_layer().weight

    def forward(x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        if stacked is not None and _takes(x, weight):
            return stacked(x)
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
    those the adapters folded into float32 weights (whose base weights are not packed) and the
    adapted layers multiplied in stacked products."""

    packed: int
    adapters: int
    folded: int = 0
    stacked: int = 0


@contextmanager
def lean_linears(model: Any) -> Iterator[Lean]:
    """Inside the block, ``model``'s linear layers compute as the module doc says; their own forward
    is back after it, also when it raises."""
    swapped: list[torch.nn.Module] = []
    packed = adapters = folded = stacked = 0
    modules = list(model.modules()) if hasattr(model, "modules") and enabled() else []
    wide = bool(modules) and products() == "float32"
    stacks = _stacks(modules) if modules and products() == "stacked" else {}
    under_adapter = {id(m.get_base_layer()) for m in modules if _plain_adapter(m) is not None}
    output = getattr(model, "get_output_embeddings", None) if modules else None
    head_module = output() if callable(output) else None
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
                    stacked += id(module) in stacks
                    module.forward = _adapted(module, name, _linear(base.weight, base.bias), stacks.get(id(module)))
                adapters += 1
            elif type(module) is torch.nn.Linear and id(module) not in under_adapter and packs(module.weight):
                head = module is head_module and not wide  # float32 products: its long rows stay float32
                forward = _linear(module.weight, module.bias, wide, HEAD_PACKED_ROWS_MAX if head else PACKED_ROWS_MAX)
                module.forward = lambda x, *args, _forward=forward, **kwargs: _forward(x)
                packed += 1
            else:
                continue
            swapped.append(module)
        yield Lean(packed, adapters, folded, stacked)
    finally:
        for module in swapped:
            del module.forward
