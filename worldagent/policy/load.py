"""Load a trained policy: the base, then every adapter of the chain merged in order."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from worldagent.policy.training import adapter_chain, file_hash, read_stage

log = logging.getLogger(__name__)


def merge_adapters(model: Any, adapters: list[Path]) -> Any:
    """Merge each LoRA adapter into ``model`` in order (sft, then dpo on the merged sft model, ...)."""
    from peft import PeftModel

    for adapter in adapters:
        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=False).merge_and_unload()
    return model


def load_policy(base_dir: Path, adapter_dir: Path | None, device: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) in eval mode: the base with ``adapter_dir``'s chain merged, or the base alone.

    ``adapter_dir`` must be complete (its ``stage.json`` present); its recorded parents (copied
    into it at training time) are merged first. A base whose config differs from the one the
    adapter was trained on is reported as a warning.
    """
    from worldagent.policy.base import load_base
    from worldagent.policy.device import configure_threads, select_device

    configure_threads(device or select_device())
    base_dir = Path(base_dir)
    chain: list[Path] = []
    if adapter_dir is not None:
        adapter_dir = Path(adapter_dir)
        info = read_stage(adapter_dir)
        chain = adapter_chain(adapter_dir)
        recorded = info.get("base_config_sha256")
        if recorded and (base_dir / "config.json").is_file() and file_hash(base_dir / "config.json") != recorded:
            log.warning("%s was trained on a base with another config than %s", adapter_dir, base_dir)
    model, tokenizer = load_base(base_dir, device=device)
    model = merge_adapters(model, chain)
    model.eval()
    return model, tokenizer
