"""Generation speed: batched KV-cache generation vs plain one-prompt-at-a-time ``model.generate``,
and the cost of constrained decoding; optionally the zero-shot parse rate of a real base.

Prompts are the real world-agent prompts of the bundled stories (system prompt with the tools, the
intent, the component's existing modules and tokens), in story-id order. Models: a random-init tiny
Gemma-3 (``--tiny``, the default; today's built-in architecture) and/or a converted base directory
(``--base DIR``, e.g. the output of ``python -m benchmarks.pretrained_base --out DIR``).

    python -m benchmarks.generation [--prompts 8] [--new-tokens 64] [--batch-size 8] [--base DIR] [--dtype D] [--json]

Figures: new tokens per second for (1) one prompt at a time, (2) batched, (3) batched under the
tool-call constraint and (4) under the calls-only constraint; for each, how many greedy answers
parse with no error, how many hold at least one call and parse (the parse rate of a zero-shot
base), and how many calls name a known tool with its required arguments only. ``--skip-plain``
leaves out (1) when only the parse rates matter. ``--baseline-cache`` adds (5): the batched greedy
run again the way ``decode_batch`` ran before it preallocated its KV cache and prefilled each prompt
on its own (transformers' ``DynamicCache``, concatenated anew every step; the batch prefilled as one
padded block, every prompt whole), with the prefill and per-step decode times of both and whether
every answer is the same token for token. The decode step is the difference of a 1-token and an
``--new-tokens`` run divided by the steps, so it carries the prefill's run-to-run noise: use enough
new tokens.

    python -m benchmarks.generation --no-tiny --base models/world_agent/base --dtype bfloat16 \
        --prompts 34 --batch-size 34 --new-tokens 64 --threads 2 --skip-plain --baseline-cache
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path, PurePosixPath
from typing import Any

STORIES = Path("data/stories")


def story_prompts(count: int, offset: int = 0) -> list[list[dict[str, str]]]:
    """The single-turn prompts the generate stage would build for the first stories (by id)."""
    from worldagent.stories.discover import discover_stories
    from worldagent.tools.registry import tool_schemas
    from worldagent.world_agent.prompts import prompt_messages
    from worldagent.world_agent.solution import module_exports, reference_solution

    records = sorted(discover_stories([STORIES], root=STORIES).stories, key=lambda r: r.id)[offset : offset + count]
    prompts = []
    for record in records:
        solution = reference_solution(record, STORIES)
        existing = {path: module_exports(text, path) for path, text in solution.given.items()}
        tokens = {} if solution.given else {p: (STORIES / p).read_text(encoding="utf-8") for p in record.token_files}
        directory = str(PurePosixPath(record.file).parent)
        prompts.append(
            prompt_messages(
                tool_schemas(), record.intent, directory, tokens, record.export, solution.story_path, existing=existing
            )
        )
    return prompts


def tiny_model(prompts: list[list[dict[str, str]]]) -> tuple[Any, Any]:
    from worldagent.config import TinyModelParams
    from worldagent.lm.base import build_tiny_model
    from worldagent.lm.tokenizer import train_tokenizer

    texts = [m["content"] for prompt in prompts for m in prompt]
    tokenizer = train_tokenizer(texts, TinyModelParams().vocab_size)
    return build_tiny_model(TinyModelParams(), tokenizer, seed=0), tokenizer


def measure(
    model: Any, tokenizer: Any, prompts: list, new_tokens: int, batch_size: int, constrained: str = ""
) -> dict[str, Any]:
    """``constrained``: "" (free), "calls" (well-formed calls, free text around) or "calls-only"."""
    from worldagent.lm.constrained import tool_call_processor_factory
    from worldagent.lm.rollout import GenerationStats, SamplingConfig, generate_batched
    from worldagent.tools.callformat import parse_calls
    from worldagent.tools.registry import tool_schemas

    config = SamplingConfig(max_new_tokens=new_tokens)
    factory = None
    setup = 0.0
    if constrained:
        started = time.perf_counter()
        factory = tool_call_processor_factory(tokenizer, tool_schemas(), new_tokens, model, constrained == "calls-only")
        setup = time.perf_counter() - started
    stats = GenerationStats()
    started = time.perf_counter()
    groups = generate_batched(model, tokenizer, prompts, config, batch_size, factory, stats)
    wall = time.perf_counter() - started
    parsed = [parse_calls(group[0].text) for group in groups]
    return {
        "batch_size": batch_size,
        "constrained": constrained or "no",
        "new_tokens": stats.new_tokens,
        "seconds": round(wall, 3),
        "tokens_per_second": round(stats.new_tokens / wall, 2),
        "constraint_setup_seconds": round(setup, 3),
        "parse_ok": sum(not p.errors for p in parsed),
        "answers_with_calls": sum(bool(p.calls) and not p.errors for p in parsed),
        "calls": sum(len(p.calls) for p in parsed),
        "known_calls": sum(_known(call, tool_schemas()) for p in parsed for call in p.calls),
        "answers": len(parsed),
        "first_answer": groups[0][0].text[:300] if groups else "",
    }


def decode_timings(model: Any, tokenizer: Any, prompts: list, new_tokens: int, batch_size: int) -> dict[str, Any]:
    """Greedy batched generation of ``new_tokens`` and of 1 token: the prefill's seconds and a decode
    step's, and the answers (token ids)."""
    from worldagent.lm.rollout import GenerationStats, SamplingConfig, generate_batched

    seconds, answers = [], []
    for tokens in (1, new_tokens):
        stats = GenerationStats()
        groups = generate_batched(
            model, tokenizer, prompts, SamplingConfig(max_new_tokens=tokens), batch_size, None, stats
        )
        seconds.append(stats.seconds)
        answers = [group[0].token_ids for group in groups]
    return {
        "prefill_seconds": round(seconds[0], 2),
        "decode_step_seconds": round((seconds[1] - seconds[0]) / max(new_tokens - 1, 1), 4),
        "answers": answers,
    }


def cache_comparison(model: Any, tokenizer: Any, prompts: list, new_tokens: int, batch_size: int) -> dict[str, Any]:
    """(5) of the module doc: the preallocated cache, prompts prefilled row by row with the shared prefix
    once, against transformers' ``DynamicCache`` (which ``prefill_rows`` prefills as one padded batch)
    with every prompt prefilled whole (the two patched in for the second run)."""
    from unittest import mock

    from transformers import DynamicCache

    from worldagent.lm import rollout

    current = decode_timings(model, tokenizer, prompts, new_tokens, batch_size)
    with (
        mock.patch.object(rollout, "preallocated_cache", lambda model, capacity: DynamicCache(config=model.config)),
        mock.patch.object(rollout, "shared_prefix_length", lambda encoded: 0),
    ):
        before = decode_timings(model, tokenizer, prompts, new_tokens, batch_size)
    same = current.pop("answers") == before.pop("answers")
    return {
        "batch_size": batch_size,
        "preallocated_shared_prefix": current,
        "dynamic_cache": before,
        "same_answers": same,
    }


def _known(call: Any, schemas: list[dict[str, Any]]) -> bool:
    """The call names a registry tool, with known argument names and every required one."""
    for schema in schemas:
        function = schema["function"]
        if function["name"] == call.name:
            parameters = function["parameters"]
            names = set(call.arguments)
            return names <= set(parameters["properties"]) and set(parameters.get("required", [])) <= names
    return False


def run(name: str, model: Any, tokenizer: Any, prompts: list, args: argparse.Namespace) -> dict[str, Any]:
    model.eval()
    plain = [] if args.skip_plain else [measure(model, tokenizer, prompts, args.new_tokens, 1)]
    rows = [
        *plain,
        measure(model, tokenizer, prompts, args.new_tokens, args.batch_size),
        measure(model, tokenizer, prompts, args.new_tokens, args.batch_size, "calls"),
        measure(model, tokenizer, prompts, args.new_tokens, args.batch_size, "calls-only"),
    ]
    speedup = round(rows[1]["tokens_per_second"] / rows[0]["tokens_per_second"], 2) if plain else None
    result = {"model": name, "prompts": len(prompts), "rows": rows, "speedup_batched": speedup}
    if args.baseline_cache:
        result["cache"] = cache_comparison(model, tokenizer, prompts, args.new_tokens, args.batch_size)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--offset", type=int, default=0, help="skip this many stories (by id) first")
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--base", type=Path, default=None, help="a converted base directory (e.g. SmolLM2) to measure too"
    )
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", "float32", "bfloat16"],
        help="the --base model's dtype (model.dtype; auto: bfloat16 on CUDA, else float32)",
    )
    parser.add_argument("--no-tiny", action="store_true")
    parser.add_argument("--skip-plain", action="store_true", help="leave out the one-prompt-at-a-time run")
    parser.add_argument(
        "--baseline-cache",
        action="store_true",
        help="also time prefill and decode steps against transformers' DynamicCache and one padded prefill",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    prompts = story_prompts(args.prompts, args.offset)
    results = []
    if not args.no_tiny:
        model, tokenizer = tiny_model(prompts)
        results.append(run("tiny (random init)", model, tokenizer, prompts, args))
    if args.base is not None:
        from worldagent.lm.base import load_base

        model, tokenizer = load_base(args.base, device="cpu", dtype=args.dtype)
        results.append(run(str(args.base), model, tokenizer, prompts, args))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for result in results:
        print(f"{result['model']}: {result['prompts']} prompts, batched speed-up {result['speedup_batched']}x")
        for row in result["rows"]:
            print(
                f"  batch {row['batch_size']}, constrained {row['constrained']}: {row['tokens_per_second']} tokens/s"
                f" ({row['new_tokens']} tokens in {row['seconds']} s),"
                f" calls parse in {row['parse_ok']}/{row['answers']} answers,"
                f" {row['answers_with_calls']} answers with calls, {row['calls']} calls ({row['known_calls']} known)"
            )
        if "cache" in result:
            cache, now, before = (
                result["cache"],
                result["cache"]["preallocated_shared_prefix"],
                result["cache"]["dynamic_cache"],
            )
            print(
                f"  batch {cache['batch_size']}, greedy: prefill {now['prefill_seconds']} s and a decode step"
                f" {now['decode_step_seconds']} s (preallocated cache, row-by-row prefill) against"
                f" {before['prefill_seconds']} s and {before['decode_step_seconds']} s (DynamicCache, one padded prefill); same answers: {cache['same_answers']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
