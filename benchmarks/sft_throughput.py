"""SFT training throughput: the sft stage (`train_sft`) vs a plain trl script, side by side.

Both train the same base (models/world_agent/base) on the same rows of trajectories.jsonl with
the same LoRA and trainer settings; the plain script builds its SFTConfig, LoraConfig and
SFTTrainer inline, as a trl user would. Throughput is samples per second of the training loop
(trl's ``train_samples_per_second``: model loading, tokenisation and saving excluded), and the
end-to-end wall time is shown too. Runs alternate (stage, plain, stage, plain, ...) so that
background load affects both alike; the medians are compared (target: stage ≥ 0.95 × plain). The
plain script keeps trl's scoring of every position on a CPU, the stage scores the labelled ones only
(docs/decisions.md: 4.94 → 2.97 s per SFT row, the same gradients).

    python -m benchmarks.sft_throughput [--rows 32] [--steps 8] [--repeats 3] [--json]
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import arguments, print_json
from worldagent.pipeline import world_agent as stage_paths

BASE = Path(stage_paths.BASE)
TRAJECTORIES = Path(stage_paths.TRAJECTORIES)


def score_every_position() -> None:
    """Put back trl's own scoring switch (every position on a CPU), which the stages replace."""
    from trl.kernels import chunked_logprob
    from trl.trainer import utils as trl_utils

    trl_utils._use_triton = chunked_logprob._use_triton  # the copy trl's kernels keep: False on a CPU


def bench_params(steps: int) -> Any:
    from worldagent.config import load_params

    params = load_params("params.yaml")
    sft = params.sft.model_copy(update={"max_steps": steps, "save_steps": 10_000, "logging_steps": max(1, steps // 2)})
    return params.model_copy(update={"sft": sft})


def run_stage(params: Any, data: Path, work: Path) -> dict[str, float]:
    from worldagent.lm.sft import train_sft
    from worldagent.lm.training import LoraSetup

    started = time.perf_counter()
    metrics = train_sft(params.sft, LoraSetup(params.seed, params.model, params.lora), BASE, data, work / "sft")
    return {"samples_per_second": metrics["train_samples_per_second"], "wall_s": time.perf_counter() - started}


def run_plain(params: Any, data: Path, work: Path) -> dict[str, float]:
    """What a trl user writes by hand: same model, data, LoRA and arguments."""
    import torch
    from datasets import load_dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    score_every_position()  # as a trl user runs it: the stage's run in this process had switched it
    started = time.perf_counter()
    torch.manual_seed(params.seed)
    tokenizer = AutoTokenizer.from_pretrained(BASE)
    model = AutoModelForCausalLM.from_pretrained(BASE, dtype=torch.float32)
    dataset = load_dataset("json", data_files=str(data), split="train").select_columns(["messages"])
    p = params.sft
    args = SFTConfig(
        output_dir=str(work / "plain"),
        max_steps=p.max_steps,
        num_train_epochs=p.epochs,
        learning_rate=p.learning_rate,
        per_device_train_batch_size=p.batch_size,
        gradient_accumulation_steps=p.gradient_accumulation_steps,
        max_length=p.max_length,
        assistant_only_loss=p.assistant_only_loss,
        logging_steps=p.logging_steps,
        save_strategy="no",
        seed=params.seed,
        report_to=[],
        bf16=False,
        use_cpu=True,
        activation_checkpointing=False,
    )
    lora = LoraConfig(
        task_type="CAUSAL_LM",
        r=params.lora.r,
        lora_alpha=params.lora.alpha,
        lora_dropout=params.lora.dropout,
        target_modules=list(params.lora.target_modules),
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer, peft_config=lora)
    output = trainer.train()
    trainer.save_model(str(work / "plain-out"))
    return {"samples_per_second": output.metrics["train_samples_per_second"], "wall_s": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--rows", type=int, default=32, help="trajectories used (the first N rows)")
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, alternating")
    args = parser.parse_args(argv)
    params = bench_params(args.steps)
    work = Path(tempfile.mkdtemp(prefix="sft-bench-"))
    try:
        data = work / "trajectories.jsonl"
        lines = TRAJECTORIES.read_text(encoding="utf-8").splitlines(keepends=True)[: args.rows]
        data.write_text("".join(lines), encoding="utf-8")
        runs: dict[str, list[dict[str, float]]] = {"stage": [], "plain": []}
        # One discarded run first: the process's first training pays one-off warm-up costs.
        run_plain(params, data, work / "warm-up")
        shutil.rmtree(work / "warm-up", ignore_errors=True)
        for repeat in range(args.repeats):
            for name, fn in (
                (("stage", run_stage), ("plain", run_plain))
                if repeat % 2 == 0
                else (("plain", run_plain), ("stage", run_stage))
            ):
                scratch = work / f"{name}-{repeat}"
                runs[name].append(fn(params, data, scratch))
                shutil.rmtree(scratch, ignore_errors=True)
        summary = {
            name: {
                "samples_per_second_median": statistics.median(r["samples_per_second"] for r in results),
                "samples_per_second_runs": [round(r["samples_per_second"], 3) for r in results],
                "wall_s_median": statistics.median(r["wall_s"] for r in results),
            }
            for name, results in runs.items()
        }
        summary["ratio_stage_over_plain"] = (
            summary["stage"]["samples_per_second_median"] / summary["plain"]["samples_per_second_median"]
        )
        summary["setup"] = {
            "rows": args.rows,
            "steps": args.steps,
            "batch_size": params.sft.batch_size,
            "max_length": params.sft.max_length,
            "repeats": args.repeats,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print_json(summary)
    else:
        for name in ("stage", "plain"):
            s = summary[name]
            print(
                f"{name:6s} {s['samples_per_second_median']:.3f} samples/s (runs {s['samples_per_second_runs']}), wall {s['wall_s_median']:.1f} s"
            )
        print(f"ratio stage/plain: {summary['ratio_stage_over_plain']:.3f} (target ≥ 0.95)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
