"""Experience-loop sampling speed and signal: N training intents x K constrained samples, scored.

What the ``experience`` stage (and GRPO's probe) spends before any training: group sampling with
the calls-only tool-call constraint through :func:`worldagent.world_agent.experience_loop.sample_groups`
(batched KV-cache generation, ``num_return_sequences`` = K), then the story-test reward through the
b-thread constraints. Prompts: the first single-turn rows of the training trajectories (the stage's
own choice). Model: a converted base directory (``--base``, e.g. /tmp/bases/smollm2), optionally
with an adapter (``--adapter``); the default is a random-init tiny Gemma-3.

    OMP_NUM_THREADS=1 python -m benchmarks.experience_sampling --base DIR [--adapter DIR] [--prompts 4]
        [--samples 4] [--new-tokens 64] [--batch-size 4] [--engines continuous,static,grpo]
        [--dtype auto|bfloat16|float32] [--seed 1234] [--json]

Engines: ``continuous`` (a stream of ``--batch-size`` prompts' rows, a row that ends taken by the
next sample at once; one static batch when every prompt fits it, as the stage's 16 intents do) and
``static`` (batches of ``--batch-size`` prompts, each as long as its longest sample), the same
seeded samples; ``grpo``: GRPO's rollouts, trl's ``generate`` call through the stage's hook,
``--batch-size`` prompts a call (trl's generation batch over the group size). ``--dtype``: the
model's precision (the stages sample in the one SFT trained in: bfloat16 where the CPU has it).
Figures per engine: prompt tokens, new tokens per second, samples a minute, generation and scoring
seconds, pass rate, and the share of prompts whose reward varies (what GRPO needs).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.common import arguments, print_json
from worldagent.pipeline import world_agent as stage_paths

TRAJECTORIES = Path(stage_paths.TRAJECTORIES)
STORIES = Path("data/stories")


def grpo_rollouts(
    model: Any,
    tokenizer: Any,
    rows: list[dict[str, Any]],
    samples: int,
    new_tokens: int,
    batch_size: int,
    seed: int = 1234,
) -> tuple[list[list[str]], int]:
    """GRPO's own generation as trl 1.16's GRPOTrainer asks for it: ``batch_size`` prompts a
    ``generate`` call, each repeated ``samples`` times (its group), left-padded, the policy in
    training mode under ``no_grad``, sampled at temperature 0.9 with trl's defaults (top-p 1, top-k
    0), through the stage's hook (:func:`worldagent.world_agent.grpo.constrained_generate`) with
    the call grammar. Returns the groups' texts and the new tokens written."""
    import torch
    from transformers import GenerationConfig

    from worldagent.lm.rollout import cut_at_stop, decode_completion, dropped_tokens, encode_prompt, left_pad
    from worldagent.lm.stops import stop_token_ids
    from worldagent.world_agent.experience_loop import tool_processor
    from worldagent.world_agent.grpo import constrained_generate

    stops = stop_token_ids(tokenizer, model)
    pad = tokenizer.pad_token_id
    config = GenerationConfig(
        max_new_tokens=new_tokens,
        do_sample=True,
        pad_token_id=pad,
        eos_token_id=stops,
        temperature=0.9,
        top_p=1.0,
        top_k=0,
        disable_compile=True,
    )
    drop = dropped_tokens(tokenizer, set(stops), pad)
    factory = tool_processor(tokenizer, model, new_tokens)
    torch.manual_seed(seed)
    model.train()  # trl generates inside its training step
    groups: list[list[str]] = []
    written = 0
    for start in range(0, len(rows), batch_size):
        chunk = [encode_prompt(tokenizer, row["prompt"]) for row in rows[start : start + batch_size]]
        input_ids, mask = left_pad([ids for ids in chunk for _ in range(samples)], pad)
        with torch.no_grad(), constrained_generate(model, factory):
            output = model.generate(input_ids=input_ids, attention_mask=mask, generation_config=config)
        answers = [cut_at_stop(new, set(stops)) for new in output[:, input_ids.shape[1] :].tolist()]
        written += sum(len(ids) + stopped for ids, stopped in answers)
        texts = [decode_completion(tokenizer, ids, drop) for ids, _ in answers]
        groups += [texts[i : i + samples] for i in range(0, len(texts), samples)]
    model.eval()
    return groups, written


def measure(
    base: Path | None,
    adapter: Path | None,
    prompts: int,
    samples: int,
    new_tokens: int,
    batch_size: int,
    engine: str = "continuous",
    dtype: str = "auto",
    seed: int = 1234,
) -> dict[str, Any]:
    import torch

    from worldagent.lm.rollout import GenerationStats
    from worldagent.world_agent.experience_loop import prompt_rows, sample_groups, score_groups, variance_summary
    from worldagent.world_agent.rewards import StoryTestReward

    torch.set_num_threads(1)
    rows = prompt_rows(TRAJECTORIES, prompts)
    if base is None:
        from benchmarks.generation import tiny_model

        model, tokenizer = tiny_model([row["prompt"] for row in rows])
        model.eval()
    else:
        from worldagent.lm.load import load_policy

        model, tokenizer = load_policy(base, adapter, device="cpu", dtype=dtype)
    lengths = [
        len(tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False))
        for r in rows
    ]
    started = time.perf_counter()
    stats = GenerationStats()
    if engine == "grpo":
        groups, new = grpo_rollouts(model, tokenizer, rows, samples, new_tokens, batch_size, seed)
    else:
        groups = sample_groups(
            model,
            tokenizer,
            rows,
            samples=samples,
            temperature=0.9,
            top_p=1.0,
            max_new_tokens=new_tokens,
            batch_size=batch_size,
            constrained=True,
            seed=seed,
            stats=stats,
            continuous=engine == "continuous",
        )
        new = stats.new_tokens
    generated = time.perf_counter()
    rewards = score_groups(StoryTestReward(STORIES, tokenizer=tokenizer), rows, groups)
    scored = time.perf_counter()
    flat = [r for group in rewards for r in group]
    summary = variance_summary(rows, rewards, 1e-6)
    return {
        "engine": engine,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "seed": seed,
        "model": str(base) if base is not None else "tiny (random init)",
        "prompts": len(rows),
        "samples_per_prompt": samples,
        "prompt_tokens": lengths,
        "max_new_tokens": new_tokens,
        "new_tokens": new,
        "generate_s": round(generated - started, 2),
        "tokens_per_second": round(new / (generated - started), 2),
        "samples_per_minute": round(60 * len(flat) / (generated - started), 2),
        "score_s": round(scored - generated, 2),
        "mean_reward": sum(flat) / len(flat),
        "pass_rate": sum(r >= 0.99 for r in flat) / len(flat),
        "frac_prompts_with_variance": summary["frac_prompts_with_variance"],
        "example": groups[0][0][:400],
    }


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--base", type=Path, default=None, help="a converted base directory (default: tiny)")
    parser.add_argument("--adapter", type=Path, default=None, help="an adapter directory on that base")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=4, help="prompts decoded together (their samples' rows)")
    parser.add_argument(
        "--dtype", default="auto", help="the model's precision (model.dtype's values; auto: float32 on a CPU)"
    )
    parser.add_argument("--seed", type=int, default=1234, help="the samples' seed")
    parser.add_argument(
        "--engines", default="continuous,static", help="continuous, static and/or grpo (trl's call), comma-separated"
    )
    args = parser.parse_args(argv)
    engines = args.engines.split(",")
    unknown = sorted(set(engines) - {"continuous", "static", "grpo"})
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}: expected continuous, static and/or grpo")
    results = [
        measure(
            args.base,
            args.adapter,
            args.prompts,
            args.samples,
            args.new_tokens,
            args.batch_size,
            e,
            args.dtype,
            args.seed,
        )
        for e in engines
    ]
    if args.json:
        print_json(results)
    else:
        for result in results:
            print(f"== {result['engine']}")
            for key, value in result.items():
                print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
