"""Serving: ``InterventionPredictor.load(ref).predict(state)``, and the model bundle it loads.

A bundle (``models/intervention/predictor/`` or a published copy) holds everything needed, so
nothing is downloaded: ``predictor.json`` (encoder config, action vocabulary, features, threshold,
the clip tower's spec), ``encoder.pt``, ``head.pt`` and ``clip_visual.pt``.

A state is ``{"actions": [{action, target, success}, ...] (this step's last), "page_state": {url,
title, state: {...}}, "screenshot": path | bytes | PIL image | None, "step": int, "max_steps":
int | None}``. Documented fallbacks, each reported in the result's ``warnings``: a missing or
unreadable screenshot uses the learned 'no screenshot' vector; an unknown action is the unknown
token; a missing page-state field takes its default (``dataset.PAGE_DEFAULTS``). An empty action
list is an error.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from worldagent.errors import InputError
from worldagent.intervention.clip import ScreenshotError, VisualTower, embed_tensors, load_image, load_visual, to_tensor
from worldagent.intervention.dataset import DatasetError, action_token, featurize, page_vector
from worldagent.intervention.model import EncoderConfig, ExperienceEncoder, PredictorHead
from worldagent.io import pretty_json, read_json, write_directory

BUNDLE_FILES = ("predictor.json", "encoder.pt", "head.pt", "clip_visual.pt")
FORMAT = 1


class BundleError(InputError):
    """A model bundle is missing, incomplete or from another format; the message names the path."""


def _torch_bytes(obj: Any) -> bytes:
    import io

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def write_bundle(
    out_dir: Path,
    meta: dict[str, Any],
    encoder: ExperienceEncoder,
    head: PredictorHead,
    clip_state: dict[str, torch.Tensor],
) -> None:
    """Write the bundle into a temp directory and rename it over ``out_dir`` (complete or absent)."""
    write_directory(
        out_dir,
        {
            "encoder.pt": _torch_bytes(encoder.state_dict()),
            "head.pt": _torch_bytes(head.state_dict()),
            "clip_visual.pt": _torch_bytes(clip_state),
            "predictor.json": pretty_json({"format": FORMAT, **meta}).encode(),
        },
    )


def _load_state(path: Path) -> dict[str, torch.Tensor]:
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise BundleError(f"{path}: missing from the model bundle") from None
    except Exception as error:  # noqa: BLE001 - torch raises many kinds for a corrupt file
        raise BundleError(f"{path}: not a readable torch state ({type(error).__name__}: {error})") from None


MAX_STEP = 1_000_000  # far beyond any episode; bounds the features an absurd step would make


def _whole(value: Any, where: str, *, minimum: int) -> int:
    """A whole number from a state field (``3`` or ``3.0``); NaN, infinities, text and booleans refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DatasetError(f"{where}: expected a whole number, got {type(value).__name__}")
    if not math.isfinite(value) or value != int(value):
        raise DatasetError(f"{where}: expected a whole number, got {value!r}")
    if not minimum <= int(value) <= MAX_STEP:
        raise DatasetError(f"{where}: {int(value)} is outside {minimum}..{MAX_STEP}")
    return int(value)


def state_row(index: int, state: Any) -> dict[str, Any]:
    """One state to predict on, checked field by field: every wrong shape is a ``DatasetError`` naming
    ``state <index>`` and the field, never a traceback from deep in the featurizer."""
    where = f"state {index}"
    if not isinstance(state, dict):
        raise DatasetError(f"{where}: expected an object, got {type(state).__name__}")
    actions = state.get("actions")
    if not actions:
        raise DatasetError(f"{where}: 'actions' is missing or empty (at least the step's own action is needed)")
    if not isinstance(actions, list):
        raise DatasetError(f"{where}: 'actions' must be a list of action objects, got {type(actions).__name__}")
    for number, action in enumerate(actions):
        if not isinstance(action, dict):
            raise DatasetError(f"{where}: actions[{number}]: expected an object, got {type(action).__name__}")
        for key in ("action", "target"):
            if action.get(key) is not None and not isinstance(action[key], str):
                raise DatasetError(f"{where}: actions[{number}].{key}: expected text, got {type(action[key]).__name__}")
        if "success" in action and not isinstance(action["success"], bool):
            raise DatasetError(f"{where}: actions[{number}].success: expected true or false")
    page_state = state.get("page_state")
    if page_state is not None and not isinstance(page_state, dict):
        raise DatasetError(f"{where}: 'page_state' must be an object, got {type(page_state).__name__}")
    step = _whole(state.get("step", len(actions) - 1), f"{where}: step", minimum=0)
    max_steps = state.get("max_steps")
    if max_steps is not None:
        max_steps = _whole(max_steps, f"{where}: max_steps", minimum=1)
    return {
        "id": str(index),
        "actions": actions,
        "page_state": page_state or {},
        "step": step,
        "max_steps": max_steps,
        "label": 0,
    }


@dataclass
class InterventionPredictor:
    meta: dict[str, Any]
    encoder: ExperienceEncoder
    head: PredictorHead
    tower: VisualTower
    vocab: dict[str, int]
    threshold: float
    source: str = ""
    on_bad_screenshot: str = "mask"  # or "error": a missing or unreadable screenshot raises ScreenshotError

    # -- loading ------------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        ref: str | Path,
        registry_url: str = "sqlite:///models/registry.db",
        family: str = "intervention-predictor",
        root: str | Path = ".",
    ) -> InterventionPredictor:
        """``ref``: a bundle directory, or a registry reference: ``champion``, ``v3``, ``FAMILY@champion``, ``FAMILY@v3``."""
        path = Path(ref)
        if not path.is_dir():
            path = resolve_registry_ref(str(ref), registry_url, family, Path(root))
        return cls.from_dir(path)

    @classmethod
    def from_dir(cls, path: Path) -> InterventionPredictor:
        meta_path = path / "predictor.json"
        if not meta_path.is_file():
            raise BundleError(f"{meta_path}: not a model bundle (no predictor.json; is the training stage finished?)")
        meta = read_json(meta_path, "the bundle's metadata", expect=dict, error=BundleError)
        if meta.get("format") != FORMAT:
            raise BundleError(f"{meta_path}: bundle format {meta.get('format')!r}, this code reads {FORMAT}")
        encoder = ExperienceEncoder(EncoderConfig(**meta["encoder"]))
        encoder.load_state_dict(_load_state(path / "encoder.pt"))
        head = PredictorHead(encoder.cfg.dim)
        head.load_state_dict(_load_state(path / "head.pt"))
        encoder.eval()
        head.eval()
        tower = load_visual(meta["clip"], _load_state(path / "clip_visual.pt"))
        vocab = {token: i for i, token in enumerate(meta["vocab"])}
        return cls(
            meta=meta,
            encoder=encoder,
            head=head,
            tower=tower,
            vocab=vocab,
            threshold=float(meta["threshold"]),
            source=str(path),
        )

    # -- prediction ---------------------------------------------------------------------------

    def _rows(self, states: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [state_row(i, state) for i, state in enumerate(states)]

    @torch.inference_mode()
    def probabilities(self, states: Sequence[dict[str, Any]]) -> tuple[np.ndarray, list[list[str]]]:
        rows = self._rows(states)
        history = int(self.meta["history"])
        arrays = featurize(rows, self.vocab, history, int(self.meta["url_buckets"]))
        warnings: list[list[str]] = [[] for _ in rows]
        images, mask = [], np.zeros(len(rows), dtype=np.float32)
        for i, state in enumerate(states):
            source = state.get("screenshot", state.get("screenshot_path"))
            try:
                if source is None:
                    raise ScreenshotError("no screenshot given")
                images.append((i, to_tensor(load_image(source), self.tower)))
                mask[i] = 1.0
            except ScreenshotError as error:
                if self.on_bad_screenshot == "error":
                    raise
                warnings[i].append(f"screenshot unusable ({error}); the learned no-screenshot vector was used")
        visual = np.zeros((len(rows), self.tower.dim), dtype=np.float32)
        if images:
            visual[[i for i, _ in images]] = embed_tensors(self.tower, torch.stack([t for _, t in images]))
        for i, row in enumerate(rows):
            unknown = [action_token(a) for a in row["actions"][-history:] if action_token(a) not in self.vocab]
            if unknown:
                warnings[i].append(f"unknown action(s) {', '.join(sorted(set(unknown)))}: the unknown token was used")
            missing = page_vector(
                row["page_state"], row["step"], row["max_steps"], int(self.meta["url_buckets"])
            ).missing
            if missing:
                warnings[i].append(f"page state is missing {', '.join(missing)} under 'state': defaults were used")
        z = self.encoder(
            torch.from_numpy(visual),
            torch.from_numpy(mask),
            torch.from_numpy(arrays.actions),
            torch.from_numpy(arrays.success),
            torch.from_numpy(arrays.page),
            torch.from_numpy(arrays.url),
        )
        return torch.sigmoid(self.head(z)).numpy().astype(np.float64), warnings

    def predict_batch(self, states: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        if not states:
            return []
        start = time.perf_counter()
        probabilities, warnings = self.probabilities(states)
        elapsed = (time.perf_counter() - start) * 1000 / len(states)
        return [
            {
                "probability": float(p),
                "needs_human": bool(p >= self.threshold),
                "threshold": self.threshold,
                "warnings": w,
                "latency_ms": elapsed,
            }
            for p, w in zip(probabilities, warnings, strict=True)
        ]

    def predict(self, state: dict[str, Any]) -> dict[str, Any]:
        """Whether the agent is about to need a human at this step: {probability, needs_human, threshold, warnings}."""
        return self.predict_batch([state])[0]


_REF = re.compile(r"^(?:(?P<family>[A-Za-z0-9][A-Za-z0-9._-]*)@)?(?P<which>v\d+|[A-Za-z0-9][A-Za-z0-9._-]*)$")


def resolve_registry_ref(ref: str, registry_url: str, family: str, root: Path) -> Path:
    from worldagent.registry.api import open_registry
    from worldagent.registry.db import database_url

    match = _REF.match(ref)
    if match is None:
        raise BundleError(
            f"{ref!r}: neither a bundle directory nor a registry reference (champion, v3, FAMILY@champion)"
        )
    fam = match.group("family") or family
    which = match.group("which")
    with open_registry(database_url(registry_url, root)) as registry:
        try:
            version = (
                registry.get_version(fam, int(which[1:]))
                if re.fullmatch(r"v\d+", which)
                else registry.get_alias(fam, which)
            )
        except Exception as error:  # noqa: BLE001 - NotFoundError and friends
            raise BundleError(f"{ref!r}: {error}") from None
    if version is None:
        raise BundleError(
            f"{ref!r}: {fam} has no {which!r} in the registry {registry_url} (no bundle directory of that name either)"
        )
    path = Path(version.artifact_path)
    return path if path.is_absolute() else root / path
