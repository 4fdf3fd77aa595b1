"""What a batch of held-out prompts costs to prefill, and what a decode step then costs.

The evaluation prefills every prompt it answers (the first answers and each self-check retry), and
its prompts are long: the system prompt with the tools, the intent, an example story and the
component's files (~630-960 SmolLM2 tokens). This times, on the eval split's prompts and a trained
adapter (the way the evaluation loads it):

- **padded**: the batch as one left-padded block through the model (every pad token computed,
  attention through a padding mask), the way ``decode_batch`` prefilled before and still prefills a
  cache it cannot write row by row (here transformers' ``DynamicCache``);
- **row by row**: :func:`worldagent.lm.rollout.prefill_rows`, each prompt on its own without
  padding, the prefix all of them share (the system prompt) prefilled once;

and the largest difference between the two's last-token logits, then a greedy decode step at the
full batch (the mean of ``--steps`` steps after the prefill).

    python -m benchmarks.prefill [--adapter models/world_agent/grpo] [--prompts 34] [--threads 2] [--json]

Needs the generate stage's and the adapter's outputs (``dvc repro evaluate_grpo``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.paths import EVAL_TRAJECTORIES, MODELS


def held_out_prompts(path: Path, count: int) -> list[list[dict[str, Any]]]:
    """The first ``count`` prompts of the eval split, as the evaluation asks them."""
    from worldagent.world_agent.evaluate import load_eval_rows, prompts_of

    return prompts_of(load_eval_rows(path, count))


def decode_step_seconds(model: Any, logits: Any, attention_mask: Any, cache: Any, steps: int) -> float:
    """Mean seconds of ``steps`` greedy steps of the whole batch after a prefill into ``cache``."""
    import torch

    width = attention_mask.shape[1]
    positions = attention_mask.sum(-1, keepdim=True) - 1
    chosen = logits.argmax(-1, keepdim=True)
    started = 0.0
    for step in range(steps + 1):  # the first step is a warm-up
        if step == 1:
            started = time.perf_counter()
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones((attention_mask.shape[0], 1))], dim=1)
        positions = positions + 1
        output = model(
            input_ids=chosen,
            attention_mask=attention_mask,
            position_ids=positions,
            past_key_values=cache,
            cache_position=torch.tensor([width + step]),
            use_cache=True,
        )
        chosen = output.logits[:, -1, :].argmax(-1, keepdim=True)
    return (time.perf_counter() - started) / max(steps, 1)


def measure(model: Any, tokenizer: Any, prompts: list[list[dict[str, Any]]], steps: int) -> dict[str, Any]:
    import torch
    from transformers import DynamicCache

    from worldagent.lm.rollout import (
        encode_prompt,
        left_pad,
        pad_token_id,
        preallocated_cache,
        prefill_rows,
        shared_prefix_length,
    )

    encoded = [encode_prompt(tokenizer, prompt) for prompt in prompts]
    input_ids, attention_mask = left_pad(encoded, pad_token_id(tokenizer))
    width, prefix = input_ids.shape[1], shared_prefix_length(encoded)
    lengths = sorted(len(ids) for ids in encoded)
    with torch.inference_mode():
        # a warm-up, so neither timing pays for the first call's kernel setup
        prefill_rows(model, input_ids[:2], attention_mask[:2], prefix, preallocated_cache(model, width))
        started = time.perf_counter()
        padded = prefill_rows(model, input_ids, attention_mask, prefix, DynamicCache(config=model.config))
        padded_seconds = time.perf_counter() - started
        cache = preallocated_cache(model, width + steps + 1)
        started = time.perf_counter()
        rows = prefill_rows(model, input_ids, attention_mask, prefix, cache)
        rows_seconds = time.perf_counter() - started
        step = decode_step_seconds(model, rows, attention_mask, cache, steps)
    return {
        "prompts": len(encoded),
        "prompt_tokens": {"min": lengths[0], "median": lengths[len(lengths) // 2], "max": lengths[-1]},
        "tokens": sum(lengths),
        "padded_tokens": len(encoded) * width,
        "shared_prefix": prefix,
        "padded_seconds": round(padded_seconds, 2),
        "row_by_row_seconds": round(rows_seconds, 2),
        "max_logit_difference": round(float((padded.float() - rows.float()).abs().max()), 4),
        "decode_step_seconds": round(step, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, default=MODELS / "base", help="the converted base (the base stage's out)")
    parser.add_argument("--adapter", type=Path, default=MODELS / "grpo", help="a trained adapter; 'none': the base")
    parser.add_argument("--eval-trajectories", type=Path, default=EVAL_TRAJECTORIES)
    parser.add_argument("--prompts", type=int, default=34, help="the batch (evaluate.batch_size: 34)")
    parser.add_argument("--steps", type=int, default=8, help="decode steps timed after the prefill")
    parser.add_argument("--dtype", default="bfloat16", choices=["auto", "float32", "bfloat16"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import torch

    from worldagent.lm.load import load_policy

    torch.set_num_threads(args.threads)
    adapter = None if str(args.adapter) == "none" else args.adapter
    model, tokenizer = load_policy(args.base, adapter, device="cpu", dtype=args.dtype)
    result = measure(model, tokenizer, held_out_prompts(args.eval_trajectories, args.prompts), args.steps)
    result["model"] = str(adapter or args.base)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    tokens = result["prompt_tokens"]
    print(
        f"{result['model']}: {result['prompts']} held-out prompts of {tokens['min']}-{tokens['max']} tokens"
        f" (median {tokens['median']}; {result['tokens']} in all, {result['padded_tokens']} padded),"
        f" {result['shared_prefix']} shared"
    )
    print(
        f"  prefill: one padded batch {result['padded_seconds']} s, row by row {result['row_by_row_seconds']} s;"
        f" largest logit difference {result['max_logit_difference']}"
    )
    print(f"  a greedy decode step at {result['prompts']} rows: {result['decode_step_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
