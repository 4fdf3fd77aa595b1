"""A base model directory on disk: its writer and its parameter count.

Its own module because both the base builder (``base``) and the packaged GGUF bases
(``pretrained``) write one, and ``base`` dispatches to ``pretrained``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from worldagent.io import atomic_directory, pretty_json, without_run_dependent

BASE_JSON = "base.json"


def parameter_count(model: torch.nn.Module) -> int:
    """Distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in model.parameters())


def save_base(
    model: Any,
    tokenizer: Any,
    metadata: dict[str, Any],
    out_dir: Path,
    extra_files: dict[str, str | bytes] | None = None,
) -> None:
    """Write model, tokenizer, ``base.json`` (and ``extra_files``: name -> content) to ``out_dir`` atomically.

    ``base.json`` leaves out the run's clock times and memory (the stage's report keeps them), so
    the same build writes the same bytes and the stages after it are not rerun for nothing.
    """
    with atomic_directory(Path(out_dir)) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / BASE_JSON).write_text(pretty_json(without_run_dependent(metadata)), encoding="utf-8")
        for name, content in (extra_files or {}).items():
            (tmp / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
