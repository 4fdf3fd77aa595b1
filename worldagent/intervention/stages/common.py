"""What several intervention stages read: the exported steps, the embeddings, the encoder, the splits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from worldagent.errors import InputError
from worldagent.intervention.dataset import featurize
from worldagent.intervention.model import EncoderConfig, ExperienceEncoder
from worldagent.intervention.serve import _load_state
from worldagent.intervention.train import Inputs, make_inputs
from worldagent.io import read_json, read_jsonl


def resolve(path: str | None, root: Path) -> Path | None:
    """A path recorded in the data (relative to the project root), or None."""
    if not path:
        return None
    return Path(path) if Path(path).is_absolute() else root / path


def read_steps(steps: Path) -> list[dict[str, Any]]:
    return read_jsonl(steps, "the exported steps", hint="run the intervention_export stage first")


def load_embeddings(embeddings: Path) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    info = read_json(
        embeddings / "embeddings.json", "the embedding manifest", hint="run the intervention_embed stage first"
    )
    try:
        return np.load(embeddings / "visual.npy"), np.load(embeddings / "mask.npy"), info
    except FileNotFoundError as error:
        raise InputError(f"{error.filename}: not found (run the intervention_embed stage first)") from None


def split_index(rows: list[dict[str, Any]], split: str) -> np.ndarray:
    return np.asarray([i for i, r in enumerate(rows) if r["split"] == split], dtype=np.int64)


def load_encoder(encoder_dir: Path) -> tuple[ExperienceEncoder, dict[str, Any]]:
    meta = read_json(encoder_dir / "encoder.json", "the encoder", hint="run the intervention_train_encoder stage first")
    encoder = ExperienceEncoder(EncoderConfig(**meta["encoder"]))
    encoder.load_state_dict(_load_state(encoder_dir / "encoder.pt"))
    encoder.eval()
    return encoder, meta


def inputs_for(
    rows: list[dict[str, Any]], split: str, meta: dict[str, Any], visual: np.ndarray, mask: np.ndarray
) -> tuple[Inputs, Any]:
    """The model inputs of one split, and the featurized arrays they came from."""
    idx = split_index(rows, split)
    vocab = {t: i for i, t in enumerate(meta["vocab"])}
    arrays = featurize([rows[i] for i in idx], vocab, int(meta["history"]), int(meta["url_buckets"]))
    return make_inputs(arrays, visual[idx], mask[idx]), arrays


def test_states(rows: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """The test split's steps as predictor states (raw screenshots: a champion uses its own tower)."""
    return [
        {
            "actions": r["actions"],
            "page_state": r["page_state"],
            "step": r["step"],
            "max_steps": r.get("max_steps"),
            "screenshot": resolve(r.get("screenshot_path"), root),
            "id": r["id"],
        }
        for r in rows
        if r["split"] == "test"
    ]


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


test_states.__test__ = False  # type: ignore[attr-defined]  # not a pytest test, despite the name
