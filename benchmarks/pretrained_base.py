"""Packaged pretrained base: conversion cost and plain generation speed on CPU.

Converts a packaged GGUF base (``smollm2-135m`` by default) into a transformers directory with
:func:`worldagent.lm.pretrained.build_packaged_base` (wall time and peak resident memory of the
converting process), then loads the directory and measures plain ``model.generate`` (greedy, one
prompt, KV cache on) in new tokens per second with 1 and with 2 torch threads.

    python -m benchmarks.pretrained_base [--base smollm2-135m] [--out DIR [--reuse]] [--new-tokens 64] [--json]
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import arguments, print_json

PROMPT = [
    {"role": "system", "content": "You are a UI agent. Answer with tool calls only."},
    {"role": "user", "content": "Create an accessible toggle button story in `toggle/`."},
]


def tokens_per_second(model: Any, tokenizer: Any, threads: int, new_tokens: int) -> dict[str, float]:
    import torch

    torch.set_num_threads(threads)
    text = tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True, tokenize=False)
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        model.generate(**ids, max_new_tokens=4, do_sample=False)  # warm-up
        started = time.perf_counter()
        out = model.generate(**ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
    seconds = time.perf_counter() - started
    generated = out.shape[1] - ids["input_ids"].shape[1]
    return {
        "threads": threads,
        "new_tokens": generated,
        "seconds": round(seconds, 3),
        "tokens_per_second": round(generated / seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--base", default="smollm2-135m")
    parser.add_argument(
        "--out", type=Path, default=None, help="where to write the converted base (default: a temp dir)"
    )
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument(
        "--reuse", action="store_true", help="measure generation only, on an --out directory converted earlier"
    )
    args = parser.parse_args(argv)

    import torch

    from worldagent.lm.base import load_base
    from worldagent.lm.pretrained import build_packaged_base

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="bench-base-") as scratch:
        out = args.out or Path(scratch) / "base"
        started = time.perf_counter()
        reused = args.reuse and args.out is not None and (out / "base.json").is_file()
        if reused:  # base.json keeps no timings (a model directory's bytes do not depend on the run)
            metadata = json.loads((out / "base.json").read_text(encoding="utf-8"))
        else:
            metadata = build_packaged_base(args.base, out)
        convert_s = None if reused else round(time.perf_counter() - started, 2)
        size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
        model, tokenizer = load_base(out, device="cpu")
        model.eval()
        results = {
            "base": args.base,
            "parameters": metadata["parameters"],
            "vocab_size": metadata["vocab_size"],
            "added_tokens": metadata["added_tokens"],
            "convert_seconds": convert_s,
            "convert_peak_rss_mib": None if reused else metadata["peak_rss_mib"],
            "directory_mib": round(size / 2**20, 1),
            "generate": [tokens_per_second(model, tokenizer, t, args.new_tokens) for t in (1, 2)],
        }
    if args.json:
        print_json(results)
    else:
        converted = (
            "reused"
            if reused
            else f"converted in {results['convert_seconds']} s, peak RSS {results['convert_peak_rss_mib']} MiB"
        )
        print(f"{args.base}: {results['parameters']:,} parameters, {converted}, {results['directory_mib']} MiB on disk")
        for row in results["generate"]:
            print(f"  plain generate, {row['threads']} thread(s): {row['tokens_per_second']} tokens/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
