"""Trainer service benchmark: trigger → completed for a 100-row dataset (target p50 ≤ 30 s on CPU).

Starts `worldagent trainer serve` on a free loopback port with a temporary data directory and the
project's params.yaml (``specialists.sft``/``lora``; the base is ``specialists.base_model``, or the
builtin tiny base built once into the temporary data directory when that is missing). Writes a
100-row raw feedback export (JSON-encoded input/output, as another platform writes it), runs one
warm-up (it builds the base when needed; discarded), then times ``POST /train`` → ``GET /status``
showing ``completed`` for each measured run: worker start, data loading, the LoRA SFT and the
atomic adapter write are all inside the figure.

    python -m benchmarks.specialists_trainer [--rows 100] [--repeats 5] [--json]
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import arguments, free_port, print_json

ROOT = Path(__file__).resolve().parents[1]


def dataset_rows(count: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(count):
        action = ("click", "fill", "navigate")[i % 3]
        page = f'- heading "Shop" [level=1]\n- button "Item {i}" [ref=e{i}]\n- textbox "Search" [ref=s{i}]\n- link "Cart" [ref=c{i}]'
        output = {
            "action": action,
            "selectorOrRef": f"[ref=e{i}]",
            "value": None if action == "click" else f"value {i}",
        }
        rows.append(
            {
                "targetType": "agent",
                "targetId": "bench-agent",
                "executionId": f"exec-{i // 5}",
                "input": json.dumps({"pageSnapshot": page, "task": f"{action} item {i}"}),
                "output": json.dumps(output),
                "label": "good",
                "notes": None,
                "createdAt": "2026-01-01T00:00:00Z",
            }
        )
    return rows


def wait_for(url: str, run_id: str, timeout: float) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    while True:
        status = httpx.get(f"{url}/status/{run_id}", timeout=5).json()
        if status["status"] in ("completed", "failed"):
            return status, time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"run {run_id} still {status['status']} after {timeout}s")
        time.sleep(0.1)


def wait_warm(url: str, timeout: float) -> None:
    """An idle service keeps one pre-imported worker: trigger when it is ready, as a later trigger would find it."""
    deadline = time.monotonic() + timeout
    while httpx.get(f"{url}/health", timeout=5).json().get("warm_workers", 0) < 1:
        if time.monotonic() > deadline:
            raise TimeoutError("no warm worker became ready")
        time.sleep(0.2)


def run(rows: int, repeats: int, params: Path, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-specialists-") as scratch:
        data = Path(scratch) / "data"
        data.mkdir()
        dataset = data / "feedback.jsonl"
        dataset.write_text("".join(json.dumps(r) + "\n" for r in dataset_rows(rows)), encoding="utf-8")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = (Path(scratch) / "trainer.log").open("wb")
        command = [
            sys.executable,
            "-m",
            "worldagent.cli",
            "trainer",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(data),
            "--params",
            str(params),
        ]
        server = subprocess.Popen(
            command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)}
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the trainer did not start; see its log")
                time.sleep(0.2)
            times, metrics = [], []
            for index in range(repeats + 1):
                run_id = f"bench-{index}"
                wait_warm(url, timeout)
                started = time.perf_counter()
                response = httpx.post(
                    f"{url}/train", json={"jobId": "bench", "datasetRef": str(dataset), "runId": run_id}, timeout=30
                )
                response.raise_for_status()
                status, _ = wait_for(url, run_id, timeout)
                elapsed = time.perf_counter() - started
                if status["status"] != "completed":
                    raise RuntimeError(f"run {run_id} failed: {status['error']}")
                if index == 0:
                    print(f"warm-up (discarded): {elapsed:.2f} s", file=sys.stderr)
                    continue
                times.append(elapsed)
                metrics.append(status["metrics"])
                print(
                    f"run {index}: {elapsed:.2f} s (train loop {status['metrics'].get('train_runtime_s')} s, {status['rows']} rows)",
                    file=sys.stderr,
                )
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
            log.close()
    return {
        "rows": rows,
        "repeats": repeats,
        "p50_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "runs_s": [round(t, 3) for t in times],
        "train_loop_s_p50": round(statistics.median(m.get("train_runtime_s", 0.0) for m in metrics), 3),
        "steps": metrics[0].get("global_step"),
        "target_s": 30.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--params", default=str(ROOT / "params.yaml"))
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    result = run(args.rows, args.repeats, Path(args.params).resolve(), args.timeout)
    if args.json:
        print_json(result)
    else:
        print(
            f"trainer trigger → completed, {result['rows']} rows: p50 {result['p50_s']} s over {result['repeats']} runs "
            f"(min {result['min_s']}, max {result['max_s']}; train loop p50 {result['train_loop_s_p50']} s, {result['steps']} steps; target ≤ {result['target_s']} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
