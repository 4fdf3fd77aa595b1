"""Load a trained policy as it was trained: the base in the training dtype, the adapter's parents merged
in order (as each training stage merged them), the adapter itself kept live.

Why not merge the last adapter too: in bfloat16 a merged weight is ``W + ΔW`` rounded to 8 bits of
mantissa, and a LoRA update smaller than half a unit of ``W``'s last place vanishes. Training ran the
adapter beside the frozen weights (peft keeps its own weights in float32), so evaluation does too.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from worldagent.lm.training import adapter_chain, file_hash, merge_adapters, read_stage

log = logging.getLogger(__name__)


def load_policy(
    base_dir: Path, adapter_dir: Path | None, device: str | None = None, dtype: str = "auto", cpu_threads: int = 1
) -> tuple[Any, Any]:
    """(model, tokenizer) in eval mode: the base with ``adapter_dir``'s chain applied, or the base alone.

    ``adapter_dir`` must be complete (its ``stage.json`` present); its recorded parents (copied
    into it at training time) are merged first, then the adapter itself is applied unmerged (see
    the module doc). ``dtype`` is ``model.dtype`` (``auto``: bfloat16 on CUDA, else float32); pass
    the one the adapter was trained in. A base whose config differs from the one the adapter was
    trained on is reported as a warning. ``cpu_threads``: torch threads on a CPU, unless
    ``WORLDAGENT_TORCH_THREADS`` says otherwise (:func:`~worldagent.lm.device.configure_threads`).
    """
    from peft import PeftModel

    from worldagent.lm.base import load_base
    from worldagent.lm.device import THREADS_ENV, configure_threads, resolve_dtype, select_device

    device = device or select_device()
    # cpu_threads as the environment's default: WORLDAGENT_TORCH_THREADS, when set, still wins
    configure_threads(device, {THREADS_ENV: str(cpu_threads), **os.environ})
    base_dir = Path(base_dir)
    chain: list[Path] = []
    if adapter_dir is not None:
        adapter_dir = Path(adapter_dir)
        info = read_stage(adapter_dir)
        chain = adapter_chain(adapter_dir)
        recorded = info.get("base_config_sha256")
        if recorded and (base_dir / "config.json").is_file() and file_hash(base_dir / "config.json") != recorded:
            log.warning("%s was trained on a base with another config than %s", adapter_dir, base_dir)
    model, tokenizer = load_base(base_dir, device=device, dtype=resolve_dtype(dtype, device))
    model = merge_adapters(model, chain[:-1])
    if chain:
        model = PeftModel.from_pretrained(model, str(chain[-1]), is_trainable=False)
    model.eval()
    return model, tokenizer
