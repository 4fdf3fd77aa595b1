"""What scoring only the labelled positions saves: one SFT row's forward and backward, trl's way and ours.

The sft stage's own trainer (``build_sft_trainer`` on models/world_agent/base and the first rows of
trajectories.jsonl, the profile's dtype and LoRA) computes the loss of the same rows twice, once as
trl 1.16 does on a CPU (every position projected through the LM head, the prompt's zeroed after)
and once as the stages do (``worldagent.lm.training.score_labelled_positions_only``: the answer's
positions alone). Runs alternate so that background load touches both alike; the medians are
compared, and the largest loss difference shows that only the time changed.

    python -m benchmarks.loss_positions [--rows 6] [--repeats 3] [--threads 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

BASE = Path("models/world_agent/base")
TRAJECTORIES = Path("data/generated/world_agent/trajectories.jsonl")


def score_every_position() -> None:
    """Put back trl's own scoring switch (every position on a CPU), which the stages replace."""
    from trl.kernels import chunked_logprob
    from trl.trainer import utils as trl_utils

    trl_utils._use_triton = chunked_logprob._use_triton  # the copy trl's kernels keep: False on a CPU


def timed_losses(trainer: Any, batches: list[dict[str, Any]]) -> tuple[float, list[float]]:
    """Seconds per row and each row's loss: forward and backward, as one training micro-batch."""
    losses = []
    started = time.perf_counter()
    for batch in batches:
        loss = trainer.compute_loss(trainer.model, batch)
        loss.backward()
        losses.append(loss.item())
    trainer.model.zero_grad()
    return (time.perf_counter() - started) / len(batches), losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=6, help="SFT rows timed per run (default 6)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each way, alternating (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    import torch

    from worldagent.config import load_params
    from worldagent.lm.sft import build_sft_trainer
    from worldagent.lm.training import LoraSetup, score_labelled_positions_only

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="loss-positions-") as scratch:
        params = load_params("params.yaml")
        setup = build_sft_trainer(
            params.sft,
            LoraSetup(params.seed, params.model, params.lora),
            BASE,
            TRAJECTORIES,
            Path(scratch),
            device="cpu",
        )
    trainer = setup.trainer
    rows = iter(trainer.get_train_dataloader())
    batches = [next(rows) for _ in range(args.rows)]
    trainer.model.train()
    labelled = [float((batch["labels"] != -100).float().mean()) for batch in batches]

    ways = {"every position (trl)": score_every_position, "labelled only (stages)": score_labelled_positions_only}
    timed_losses(trainer, batches[:1])  # the process's first step pays one-off warm-up costs
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    losses: dict[str, list[float]] = {}
    for repeat in range(args.repeats):
        for name in ways if repeat % 2 == 0 else reversed(list(ways)):
            ways[name]()
            per_row, losses[name] = timed_losses(trainer, batches)
            seconds[name].append(per_row)
    medians = {name: statistics.median(runs) for name, runs in seconds.items()}
    trl_way, ours = medians.values()
    summary = {
        "rows": args.rows,
        "tokens_per_row_mean": statistics.mean(int(b["input_ids"].numel()) for b in batches),
        "labelled_fraction_mean": statistics.mean(labelled),
        "seconds_per_row_median": medians,
        "seconds_per_row_runs": seconds,
        "speedup": trl_way / ours,
        "max_loss_difference": max(abs(a - b) for a, b in zip(*losses.values(), strict=True)),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"{args.rows} SFT rows, {summary['tokens_per_row_mean']:.0f} tokens each on average, "
        f"{summary['labelled_fraction_mean']:.0%} of them labelled"
    )
    for name, median in medians.items():
        print(f"{name:24s} {median:.2f} s per row (runs {', '.join(f'{s:.2f}' for s in seconds[name])})")
    print(f"speed-up {summary['speedup']:.2f}x; largest loss difference {summary['max_loss_difference']:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
