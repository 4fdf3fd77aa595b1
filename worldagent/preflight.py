"""Checks a run makes before its first stage, so a setting that cannot work here fails in seconds.

bfloat16 on a CPU is fast only where the CPU multiplies bfloat16 natively (AVX-512 with BF16, or
AMX): torch then hands the matrix products to oneDNN. Elsewhere (an AVX2-only CPU, e.g. many AMD
EPYC hosts) every bfloat16 matrix product takes torch's generic fallback: the smollm2 profile's
first SFT step took 375 s there against 29 s in float32 (docs/profiles.md, "bfloat16 needs a CPU
that has it"), so SFT alone would run for about 15 hours. ``make pipeline`` and the flows stop at
once with the fix instead.

This module is read by the flows and the command line only, never by a DVC stage, so a check can
change without changing what any stage computed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from worldagent.config import Params
from worldagent.errors import InputError

ALLOW_SLOW_BFLOAT16 = "WORLDAGENT_ALLOW_SLOW_BFLOAT16"


class PrecisionError(InputError):
    """params.yaml asks for a precision this machine can only emulate, many times slower."""


def check_precision(
    params: Params,
    params_path: Path,
    device: str | None = None,
    native_bfloat16: Callable[[], bool] | None = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Refuse ``model.dtype`` or ``evaluate.dtype`` ``bfloat16`` on a CPU without native bfloat16
    (unless the environment says to go ahead); every other setting and device passes. ``device`` defaults to the one the
    stages would pick, ``native_bfloat16`` to :func:`worldagent.policy.device.cpu_multiplies_bfloat16`."""
    from worldagent.policy import device as devices

    environ = os.environ if environ is None else environ
    asked = [
        name
        for name, dtype in (("model.dtype", params.model.dtype), ("evaluate.dtype", params.evaluate.dtype))
        if dtype == "bfloat16"
    ]
    if not asked or environ.get(ALLOW_SLOW_BFLOAT16) == "1":
        return
    if (device or devices.select_device()) != "cpu" or (native_bfloat16 or devices.cpu_multiplies_bfloat16)():
        return
    import torch

    setting = f"{' and '.join(asked)} {'is' if len(asked) == 1 else 'are'} bfloat16"
    capability = torch.backends.cpu.get_cpu_capability()
    raise PrecisionError(
        f"{params_path}: {setting}, but this CPU ({capability}) has no native bfloat16 matrix products, so every "
        "training and decoding step would take torch's generic fallback, about 13 times slower than float32 (the "
        "smollm2 profile's SFT: ~15 h instead of ~1 h on two cores). Set "
        f"{' and '.join(f'`{name}: prefer-bfloat16`' for name in asked)} in params.yaml (float32 on this CPU, "
        f"bfloat16 where the hardware multiplies it natively), or run anyway with {ALLOW_SLOW_BFLOAT16}=1. Results "
        "in float32 differ from a bfloat16 run's, as results from another machine do."
    )
