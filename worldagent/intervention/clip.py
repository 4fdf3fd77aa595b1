"""The frozen open_clip visual tower and screenshot embedding.

The embedded default ``wa-tiny-vit`` is a small ViT registered from ``clip_configs/`` with random
weights (nothing is downloaded); ``model: ViT-B-32, pretrained: openai`` works where the Hub is
reachable. With ``offline`` the Hub is never contacted, so a missing download fails at once with
:class:`ClipError`. Screenshots are squashed to the tower's square input (no centre crop).
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

from worldagent.errors import InputError, RunError
from worldagent.guard import files

CONFIG_DIR = Path(__file__).parent / "clip_configs"
MAX_SCREENSHOT_BYTES = 32 * 1024 * 1024
MAX_SCREENSHOT_PIXELS = 40_000_000  # 8K by 5K; decoded as RGB that is 120 MB, within a bounded request
BUILTIN = {p.stem for p in CONFIG_DIR.glob("*.json")}
OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


class ClipError(RunError):
    """The visual tower cannot be built (unknown config, missing pretrained weights offline)."""


class ScreenshotError(InputError):
    """A screenshot is missing or not a readable image; the message names the file."""


@dataclass
class VisualTower:
    model: torch.nn.Module  # open_clip's ``.visual``, frozen and in eval mode
    image_size: int
    mean: tuple[float, ...]
    std: tuple[float, ...]
    dim: int
    name: str
    pretrained: str | None

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def spec(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "pretrained": self.pretrained,
            "image_size": self.image_size,
            "mean": list(self.mean),
            "std": list(self.std),
            "dim": self.dim,
        }


@contextmanager
def _hub_offline(enabled: bool) -> Iterator[None]:
    """HF_HUB_OFFLINE for this call, also when huggingface_hub was imported before the variable was
    set (it reads the variable once, at import, into ``huggingface_hub.constants``)."""
    if not enabled:
        yield
        return
    import huggingface_hub.constants as hub_constants

    before = hub_constants.HF_HUB_OFFLINE
    hub_constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        hub_constants.HF_HUB_OFFLINE = before


def _register_builtin() -> None:
    import open_clip

    if not all(open_clip.get_model_config(name) for name in BUILTIN):
        open_clip.add_model_config(CONFIG_DIR)


def build_visual(
    name: str, pretrained: str | None, offline: bool = True, seed: int = 0, device: str = "cpu"
) -> VisualTower:
    """Create the model with open_clip and keep only its visual tower, frozen (requires_grad False),
    on ``device``. The weights are always initialised on the CPU, so a seed gives the same tower on
    every device."""
    if offline and pretrained:  # only a pretrained tag can trigger a download
        for key in OFFLINE_ENV:
            os.environ[key] = "1"
    import open_clip

    _register_builtin()
    if open_clip.get_model_config(name) is None:
        raise ClipError(
            f"intervention.clip.model: unknown open_clip model {name!r} (built in here: {', '.join(sorted(BUILTIN))})"
        )
    torch.manual_seed(seed)
    try:
        with _hub_offline(offline and bool(pretrained)):
            model = open_clip.create_model(name, pretrained=pretrained or None, device="cpu")
        visual = model.visual.to(device)
    except Exception as error:  # noqa: BLE001 - hub/network/file errors of every kind
        hint = (
            " (offline: the weights are not cached; set intervention.clip.offline: false where the Hub is reachable)"
            if offline
            else ""
        )
        raise ClipError(
            f"cannot load open_clip {name!r} pretrained={pretrained!r}{hint}: {type(error).__name__}: {error}"
        ) from None
    visual.eval()
    for param in visual.parameters():
        param.requires_grad_(False)
    size = visual.image_size
    size = int(size[0] if isinstance(size, (tuple, list)) else size)
    mean = tuple(float(x) for x in getattr(visual, "image_mean", None) or open_clip.OPENAI_DATASET_MEAN)
    std = tuple(float(x) for x in getattr(visual, "image_std", None) or open_clip.OPENAI_DATASET_STD)
    with torch.no_grad():
        dim = int(visual(torch.zeros(1, 3, size, size, device=device)).shape[-1])
    return VisualTower(model=visual, image_size=size, mean=mean, std=std, dim=dim, name=name, pretrained=pretrained)


def save_visual(tower: VisualTower) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    return tower.spec(), {k: v.detach().cpu().clone() for k, v in tower.model.state_dict().items()}


def load_visual(spec: dict[str, Any], state: dict[str, torch.Tensor], device: str = "cpu") -> VisualTower:
    """Rebuild the tower from its spec and saved weights (no download: the weights are in ``state``)."""
    tower = build_visual(spec["model"], None, offline=True, device=device)
    tower.model.load_state_dict(state)
    tower.pretrained = spec.get("pretrained")
    return tower


def load_image(source: str | Path | bytes | Image.Image) -> Image.Image:
    """An RGB image from a path, bytes or an image. A path is read through the file guard (a regular
    file under :data:`MAX_SCREENSHOT_BYTES`: a FIFO or device named as a screenshot is refused, never
    waited on); an image over :data:`MAX_SCREENSHOT_PIXELS` is refused before it is decoded."""
    if isinstance(source, Image.Image):
        return source.convert("RGB")
    where = "<bytes>" if isinstance(source, bytes) else str(source)
    try:
        data = source if isinstance(source, bytes) else files.read_bytes(source, max_bytes=MAX_SCREENSHOT_BYTES)
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            if image.width * image.height > MAX_SCREENSHOT_PIXELS:
                raise ScreenshotError(
                    f"{where}: {image.width}x{image.height} pixels, more than the {MAX_SCREENSHOT_PIXELS} a "
                    "screenshot may have"
                )
            image.load()
    except files.MissingFileError:
        raise ScreenshotError(f"{where}: screenshot not found") from None
    except files.FileError as error:
        raise ScreenshotError(f"{where}: {error.reason}") from None
    except (
        UnidentifiedImageError,
        OSError,
        SyntaxError,
        ValueError,
        Image.DecompressionBombWarning,
        Image.DecompressionBombError,
    ) as error:
        if isinstance(error, ScreenshotError):
            raise
        raise ScreenshotError(f"{where}: not a readable image ({error})") from None
    return image.convert("RGB")


def to_tensor(image: Image.Image, tower: VisualTower) -> torch.Tensor:
    """Squash (resize both sides, keep everything in view; no centre crop) and normalise."""
    resized = image.resize((tower.image_size, tower.image_size), Image.Resampling.BICUBIC)
    array = np.asarray(resized, dtype=np.float32) / 255.0
    mean = np.asarray(tower.mean, dtype=np.float32)
    std = np.asarray(tower.std, dtype=np.float32)
    return torch.from_numpy(((array - mean) / std).transpose(2, 0, 1).copy())


@torch.no_grad()
def embed_tensors(tower: VisualTower, batch: torch.Tensor) -> np.ndarray:
    """Unit-length float32 embeddings on the CPU, whichever device the tower is on."""
    features = tower.model(batch.to(tower.device))
    features = torch.nn.functional.normalize(features.float(), dim=-1)
    return features.cpu().numpy().astype(np.float32)


def embed_sources(
    tower: VisualTower,
    sources: list[str | Path | bytes | Image.Image | None],
    batch_size: int = 64,
    on_bad: str = "mask",
) -> tuple[np.ndarray, np.ndarray, list[dict[str, str]]]:
    """Embed screenshots. Returns (N×dim embeddings, N mask with 1 = real screenshot, problems).

    A missing or unreadable screenshot is an error with ``on_bad='error'``; with ``'mask'`` its row
    is all zeros *and* its mask is 0, so the encoder uses its learned 'no screenshot' vector instead.
    """
    out = np.zeros((len(sources), tower.dim), dtype=np.float32)
    mask = np.zeros(len(sources), dtype=np.float32)
    problems: list[dict[str, str]] = []
    pending: list[tuple[int, torch.Tensor]] = []

    def flush() -> None:
        if pending:
            rows = [i for i, _ in pending]
            out[rows] = embed_tensors(tower, torch.stack([t for _, t in pending]))
            mask[rows] = 1.0
            pending.clear()

    for i, source in enumerate(sources):
        try:
            if source is None:
                raise ScreenshotError("no screenshot recorded for this step")
            pending.append((i, to_tensor(load_image(source), tower)))
        except ScreenshotError as error:
            if on_bad == "error":
                raise
            problems.append({"row": str(i), "error": str(error)})
        if len(pending) >= batch_size:
            flush()
    flush()
    return out, mask, problems
