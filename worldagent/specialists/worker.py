"""One training run in its own process: ``python -m worldagent.specialists.worker --run-id ... --db-url ...``.

Started by the trainer's supervisor after it moved the run to ``running``, or ahead of time as a
*warm spare* (no ``--run-id``): it does the heavy imports and resolves the base, touches
``--ready-file``, then reads the run id from stdin, so a trigger on an idle service does not wait
for Python to import torch, transformers and trl. Trains on the run's
``train.jsonl`` (written when the run was accepted), writes the adapter atomically to ``--out-dir``
and records ``completed`` with ``output_model_ref`` (or ``failed`` with the error). It exits when
its parent (the trainer service) goes away, so an orphaned worker never trains on unseen.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from worldagent.config import Params, load_params
from worldagent.io import read_jsonl


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(3)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one specialists training run (started by the trainer service).")
    parser.add_argument("--db-url", required=True)
    parser.add_argument(
        "--run-id", default=None, help="the run to train; without it: warm up, then read the run id from stdin"
    )
    parser.add_argument("--runs-dir", required=True)
    parser.add_argument("--adapters-dir", required=True)
    parser.add_argument(
        "--ready-file", default=None, help="(warm spare) touched once the heavy imports and the base are ready"
    )
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--params", default=None)
    parser.add_argument("--base-model", default=None)
    args = parser.parse_args(argv)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()

    from worldagent.specialists.trainer import TRAIN_FILE, RunState

    run_id = args.run_id
    state: RunState | None = None
    try:
        params = load_params(args.params) if args.params and Path(args.params).is_file() else Params()
        threads = params.specialists.trainer.worker_threads
        if threads:
            import torch

            torch.set_num_threads(threads)
        from worldagent.specialists.modeling import resolve_base, train_specialist

        base_dir = resolve_base(
            args.base_model or params.specialists.base_model, params.model.tiny, params.seed, Path(args.cache_dir)
        )
        if run_id is None:
            import peft  # noqa: F401  (warm spare: pay for the heavy imports before a run arrives)
            import trl  # noqa: F401

            import worldagent.lm.sft  # noqa: F401

            if args.ready_file:
                Path(args.ready_file).touch()
            run_id = sys.stdin.readline().strip()
            if not run_id:
                return 0  # the service stopped before it needed this spare
        state = RunState(args.db_url)
        work = Path(args.runs_dir) / run_id
        rows = read_jsonl(work / TRAIN_FILE, "the run's training conversations")
        out_dir = (Path(args.adapters_dir) / run_id).resolve()
        metrics = train_specialist(params.specialists, params.seed, params.model, base_dir, rows, out_dir, work)
        metrics = {k: v for k, v in metrics.items() if isinstance(v, (int, float, str, bool)) or v is None}
        metrics["base_dir"] = str(Path(base_dir).resolve())
        state.finish(run_id, "completed", output_model_ref=str(out_dir), metrics=metrics)
        return 0
    except Exception as error:  # recorded on the run; the traceback goes to the worker log
        traceback.print_exc()
        if run_id:
            state = state or RunState(args.db_url)
            state.finish(run_id, "failed", error=f"{type(error).__name__}: {error}")
        return 1
    finally:
        if state is not None:
            state.close()


if __name__ == "__main__":
    raise SystemExit(main())
