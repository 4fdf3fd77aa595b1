"""Intervention predictor latency: p50/p95 per single state (screenshot decode + tower + encoder +
head) and batch throughput, on this CPU.

    python -m benchmarks.intervention_latency                       # models/intervention/predictor
    python -m benchmarks.intervention_latency --model champion --runs 500 --threads 2

States come from the test split of data/generated/intervention/steps.jsonl (run
`dvc repro intervention_train_predictor` first).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import torch

from benchmarks.common import arguments, print_json
from worldagent.intervention.serve import InterventionPredictor
from worldagent.intervention.stages.common import read_steps, test_states
from worldagent.pipeline.intervention import PREDICTOR as PREDICTOR_DIR
from worldagent.pipeline.intervention import STEPS as INTERVENTION_STEPS


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument(
        "--model",
        default=str(PREDICTOR_DIR),
        help="bundle directory or registry reference (default: models/intervention/predictor)",
    )
    parser.add_argument("--root", default=".", help="project root")
    parser.add_argument("--runs", type=int, default=300, help="single-state predictions to time")
    parser.add_argument("--batch", type=int, default=64, help="batch size for the throughput figure")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: one state is too small to share, and extra threads only contend on a busy CPU)",
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    root = Path(args.root)
    predictor = InterventionPredictor.load(args.model, root=root)
    states = test_states(read_steps(root / INTERVENTION_STEPS), root)
    if not states:
        raise SystemExit("no test states: run `dvc repro intervention_export` first")
    for state in states[:10]:  # warm-up
        predictor.predict(state)
    single = []
    for i in range(args.runs):
        state = states[i % len(states)]
        start = time.perf_counter()
        predictor.predict(state)
        single.append((time.perf_counter() - start) * 1000)
    batch = [states[i % len(states)] for i in range(args.batch)]
    predictor.predict_batch(batch)
    rounds, start = 5, time.perf_counter()
    for _ in range(rounds):
        predictor.predict_batch(batch)
    throughput = rounds * args.batch / (time.perf_counter() - start)
    result = {
        "single_state_ms": {
            "p50": percentile(single, 50),
            "p95": percentile(single, 95),
            "mean": statistics.fmean(single),
            "runs": args.runs,
        },
        "batch": {"size": args.batch, "states_per_second": throughput},
        "threads": torch.get_num_threads(),
        "clip": predictor.meta["clip"]["model"],
    }
    if args.json:
        print_json(result)
    else:
        print(f"intervention predictor ({result['clip']}, {result['threads']} threads)")
        print(
            f"  single state: p50 {result['single_state_ms']['p50']:.2f} ms, p95 {result['single_state_ms']['p95']:.2f} ms over {args.runs} runs"
        )
        print(f"  batch of {args.batch}: {throughput:.0f} states/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
