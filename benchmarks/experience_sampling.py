"""Experience-loop sampling speed and signal: N training intents x K constrained samples, scored.

What the ``experience`` stage (and GRPO's probe) spends before any training: group sampling with
the calls-only tool-call constraint through :func:`worldagent.world_agent.experience_loop.sample_groups`
(batched KV-cache generation, ``num_return_sequences`` = K), then the story-test reward through the
b-thread constraints. Prompts: the first single-turn rows of the training trajectories (the stage's
own choice). Model: a converted base directory (``--base``, e.g. /tmp/bases/smollm2), optionally
with an adapter (``--adapter``); the default is a random-init tiny Gemma-3.

    OMP_NUM_THREADS=1 python -m benchmarks.experience_sampling --base DIR [--adapter DIR] [--prompts 4]
        [--samples 4] [--new-tokens 64] [--batch-size 4] [--engines continuous,static] [--json]

Engines: ``continuous`` (what the stage runs: one stream, a row that ends taken by the next sample
at once) and ``static`` (batches of ``--batch-size`` prompts, each as long as its longest sample),
the same seeded samples. Figures per engine: prompt tokens, new tokens per second, samples a minute,
generation and scoring seconds, pass rate, and the share of prompts whose reward varies (what GRPO
needs).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.common import arguments, print_json
from worldagent.pipeline import world_agent as stage_paths

TRAJECTORIES = Path(stage_paths.TRAJECTORIES)
STORIES = Path("data/stories")


def measure(
    base: Path | None,
    adapter: Path | None,
    prompts: int,
    samples: int,
    new_tokens: int,
    batch_size: int,
    continuous: bool = True,
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

        model, tokenizer = load_policy(base, adapter, device="cpu")
    lengths = [
        len(tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False))
        for r in rows
    ]
    stats = GenerationStats()
    started = time.perf_counter()
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
        seed=1234,
        stats=stats,
        continuous=continuous,
    )
    generated = time.perf_counter()
    rewards = score_groups(StoryTestReward(STORIES, tokenizer=tokenizer), rows, groups)
    scored = time.perf_counter()
    flat = [r for group in rewards for r in group]
    summary = variance_summary(rows, rewards, 1e-6)
    return {
        "engine": "continuous" if continuous else "static",
        "model": str(base) if base is not None else "tiny (random init)",
        "prompts": len(rows),
        "samples_per_prompt": samples,
        "prompt_tokens": lengths,
        "max_new_tokens": new_tokens,
        "new_tokens": stats.new_tokens,
        "generate_s": round(generated - started, 2),
        "tokens_per_second": round(stats.tokens_per_second, 2),
        "samples_per_minute": round(60 * stats.completions / (generated - started), 2),
        "decode_steps_rows": stats.decoded_tokens,
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
    parser.add_argument("--engines", default="continuous,static", help="continuous and/or static, comma-separated")
    args = parser.parse_args(argv)
    engines = args.engines.split(",")
    unknown = sorted(set(engines) - {"continuous", "static"})
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}: expected continuous and/or static")
    results = [
        measure(
            args.base, args.adapter, args.prompts, args.samples, args.new_tokens, args.batch_size, e == "continuous"
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
