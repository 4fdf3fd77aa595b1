"""Device, dtype and seeding helpers shared by every training stage.

``select_device`` picks CUDA, then Apple MPS, then CPU. ``resolve_dtype("auto", device)`` gives bfloat16
on a CUDA device that supports it and float32 everywhere else (fp16 is only used when asked for
explicitly); ``"prefer-bfloat16"`` also gives bfloat16 on a CPU that multiplies it natively
(:func:`cpu_multiplies_bfloat16`), where it is about twice float32's speed, and float32 on one that
would only emulate it, about 13 times slower. ``trainer_precision`` turns the pair into the flags ``transformers.TrainingArguments``
(and so trl's configs) expect, so the model's weights and the trainer's autocast never disagree.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def select_device() -> str:
    """ "cuda" when a CUDA device is visible, else "mps" (Apple silicon), else "cpu"."""
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


THREADS_ENV = "WORLDAGENT_TORCH_THREADS"


def configure_threads(device: str, environ: dict[str, str] | None = None) -> int:
    """Set torch's intra-op threads explicitly and return the number.

    ``WORLDAGENT_TORCH_THREADS`` wins; otherwise 1 on a CPU (on a small machine shared with other
    work, one thread is often faster than two, and the result does not depend on how busy the
    machine is) and torch's own default on an accelerator, where the CPU threads only feed it.
    """
    environ = os.environ if environ is None else environ
    value = environ.get(THREADS_ENV)
    if value is not None:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{THREADS_ENV}={value!r}: expected a positive whole number")
        threads = int(value)
    elif device == "cpu":
        threads = 1
    else:
        return torch.get_num_threads()
    torch.set_num_threads(threads)
    return threads


def cpu_multiplies_bfloat16() -> bool:
    """Whether torch sends this CPU's bfloat16 matrix products to oneDNN (AVX-512 BF16 or AMX)
    rather than its generic fallback loop (AVX2-only CPUs, e.g. many AMD EPYC hosts)."""
    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    return bool(check()) if check is not None else False


def resolve_dtype(setting: str, device: str) -> torch.dtype:
    """``model.dtype`` → a torch dtype. "auto": bfloat16 on CUDA with bf16 support, else float32.
    "prefer-bfloat16": as "auto", and bfloat16 on a CPU that multiplies it natively too.

    An explicit half precision on CPU is honoured (it is slow but valid); float16 on CPU is refused
    because CPU kernels for fp16 training are incomplete.
    """
    if setting == "auto":
        if device.startswith("cuda") and torch.cuda.is_available() and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    if setting == "prefer-bfloat16":
        if device == "cpu" and cpu_multiplies_bfloat16():
            return torch.bfloat16
        return resolve_dtype("auto", device)
    if setting not in DTYPES:
        raise ValueError(f"unknown dtype {setting!r}; expected one of auto, prefer-bfloat16, {', '.join(DTYPES)}")
    dtype = DTYPES[setting]
    if dtype is torch.float16 and device == "cpu":
        raise ValueError("model.dtype float16 is not supported on CPU; use float32 or bfloat16")
    return dtype


def precision_label(dtype: torch.dtype, device_type: str) -> str:
    """How metrics and reports name a precision: ``"bfloat16 on cpu"``."""
    return f"{str(dtype).removeprefix('torch.')} on {device_type}"


def trainer_precision(device: str, dtype: torch.dtype) -> dict[str, bool]:
    """``TrainingArguments`` flags for a device and the model's dtype: ``{bf16, fp16, use_cpu}``.

    Mixed precision (``bf16``/``fp16`` autocast) is only turned on for an accelerator; on CPU the
    trainer runs in the weights' own dtype with ``use_cpu=True`` so a visible GPU is never picked up
    behind our back.
    """
    on_cpu = device == "cpu"
    return {
        "bf16": (not on_cpu) and dtype is torch.bfloat16,
        "fp16": (not on_cpu) and dtype is torch.float16,
        "use_cpu": on_cpu,
    }


def seed_everything(seed: int, deterministic: bool | None = None) -> None:
    """Seed ``random``, numpy and torch (all devices).

    ``deterministic`` (default: on for CPU-only runs) turns on ``torch.use_deterministic_algorithms``
    with ``warn_only=True``: same seed → same numbers on CPU; on GPU, kernels without a deterministic
    variant only warn.
    """
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic is None:
        deterministic = select_device() == "cpu"
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
