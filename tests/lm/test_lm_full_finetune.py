"""benchmarks.full_finetune: every weight of the base trained, written as a loadable model directory."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from training_fixtures import build_tiny_base, sft_rows, tiny_params, write_jsonl

from benchmarks.full_finetune import TRAINING_FILE, full_finetune
from worldagent.lm.base import load_base

torch.set_num_threads(1)


def test_every_weight_moves_and_the_model_directory_loads(tmp_path: Path) -> None:
    base = build_tiny_base(tmp_path / "base")
    write_jsonl(tmp_path / "trajectories.jsonl", sft_rows())
    summary = full_finetune(
        tiny_params(sft={"max_steps": 2}), base, tmp_path / "trajectories.jsonl", tmp_path / "model", 1e-3, "cpu"
    )
    assert summary["steps"] == 2 and summary["rows"] == len(sft_rows()) and summary["learning_rate"] == 1e-3
    assert json.loads((tmp_path / "model" / TRAINING_FILE).read_text())["steps"] == 2
    assert not (tmp_path / "model" / "checkpoints").exists()  # no trainer state left in the model
    before, _ = load_base(base, device="cpu", dtype=torch.float32)
    after, _ = load_base(tmp_path / "model", device="cpu", dtype=torch.float32)
    trained = dict(after.named_parameters())
    unchanged = [name for name, weight in before.named_parameters() if torch.equal(weight, trained[name])]
    assert unchanged == []  # every weight, not an adapter's
