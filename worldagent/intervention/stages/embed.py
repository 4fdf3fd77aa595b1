"""intervention_embed: every step's screenshot through the frozen visual tower, once (a DVC out)."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.intervention import clip as clipmod
from worldagent.intervention.serve import _torch_bytes
from worldagent.intervention.stages.common import read_steps, resolve
from worldagent.io import pretty_json, write_directory
from worldagent.lm.device import select_device

log = logging.getLogger("worldagent.intervention")


def embed_stage(
    params: Params, *, steps: Path, screenshots: Path, embeddings: Path, root: Path | None = None
) -> dict[str, Any]:
    """Embed the screenshots the rows of ``steps`` name (files under ``screenshots``; relative paths
    are relative to ``root``, default the working directory) → the ``embeddings`` directory:
    visual.npy, mask.npy (0: no usable screenshot), clip_visual.pt (the tower) and embeddings.json."""
    if not Path(screenshots).is_dir():
        raise InputError(
            f"{screenshots}: the screenshots directory is missing (run the intervention_simulate stage first)"
        )
    root = Path(".") if root is None else root
    clip_params = params.intervention.clip
    rows = read_steps(steps)
    device = select_device()
    tower = clipmod.build_visual(
        clip_params.model, clip_params.pretrained, clip_params.offline, seed=params.seed, device=device
    )
    torch.set_num_threads(params.intervention.train.threads)
    sources: list[Any] = [resolve(r.get("screenshot_path"), root) for r in rows]
    visual, mask, problems = clipmod.embed_sources(
        tower, sources, clip_params.batch_size, clip_params.on_bad_screenshot
    )
    spec, state = clipmod.save_visual(tower)
    info = {
        "clip": spec,
        "device": device,
        "rows": len(rows),
        "embedded": int(mask.sum()),
        "masked": len(problems),
        "problems": [{"id": rows[int(pr["row"])]["id"], "error": pr["error"]} for pr in problems[:50]],
    }
    write_directory(
        embeddings,
        {
            "visual.npy": _npy_bytes(visual),
            "mask.npy": _npy_bytes(mask),
            "clip_visual.pt": _torch_bytes(state),
            "embeddings.json": pretty_json(info).encode(),
        },
    )
    if problems:
        log.warning(
            "%d of %d screenshots were unusable and are masked (see %s)",
            len(problems),
            len(rows),
            embeddings / "embeddings.json",
        )
    log.info("embedded %d screenshots with %s (%d-d) on %s", int(mask.sum()), clip_params.model, spec["dim"], device)
    return info


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()
