"""SFT as a full fine-tune instead of LoRA, measured: every weight trained, then the held-out evaluation.

The sft stage trains a LoRA adapter (rank 16 on every projection: 4.9M weights, 3.6% of SmolLM2-135M's
weights). This trains all the base's weights on the same rows, steps, batches and seed with trl's
``SFTTrainer`` (float32 weights, with bfloat16 autocast where the profile trains in bfloat16: a 1e-4
step is below bfloat16's resolution for most weights, so pure bfloat16 weights would not move),
writes a full model directory (atomically), evaluates it as ``tasks.evaluate_sft`` does (the same
decoding, own check and retries) and pairs it with the committed SFT evaluation.

    python -m benchmarks.full_finetune --out tmp/full-ft          # ~1 h 13 min training, 8 min evaluation here
    python -m benchmarks.full_finetune --out tmp/full-ft-5e-5 --learning-rate 5e-5
"""

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.intent_last import paired
from benchmarks.paths import EVAL_DIR, EVAL_TRAJECTORIES, MODELS, STORIES, STORIES_DIR, TRAJECTORIES
from worldagent.config import Params, load_params
from worldagent.errors import clean_errors
from worldagent.io import atomic_directory, atomic_write_text, pretty_json

TRAINING_FILE = "full_finetune.json"  # in the model directory: how it was trained


def full_finetune(
    params: Params, base: Path, trajectories: Path, out_dir: Path, learning_rate: float, device: str | None = None
) -> dict[str, Any]:
    """Every weight of ``base`` trained on ``trajectories`` with the sft section's steps and batches
    at ``learning_rate``; the model (with the base's tokenizer and ``base.json``) written to
    ``out_dir`` atomically. Returns the run's loss, token accuracy and wall time."""
    import torch
    from datasets import Dataset
    from trl import SFTTrainer

    from worldagent.lm.base import BASE_JSON
    from worldagent.lm.device import resolve_dtype, select_device
    from worldagent.lm.training import load_training_model
    from worldagent.world_agent.sft import sft_config, sft_rows

    device = device or select_device()
    autocast = resolve_dtype(params.model.dtype, device) is torch.bfloat16
    # the sft stage's loading (threads, loss on the answer only, seed), with float32 weights
    float32 = params.model_copy(update={"model": params.model.model_copy(update={"dtype": "float32"})})
    model, tokenizer, device, _, _ = load_training_model(float32, base, None, device)
    rows = sft_rows(trajectories)
    with atomic_directory(out_dir) as tmp:
        section = params.sft.model_copy(update={"learning_rate": learning_rate})
        args = sft_config(params, section, tmp / "checkpoints", device, torch.float32, model)
        args.bf16, args.save_strategy = autocast, "no"
        trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
        started = time.monotonic()
        trainer.train()
        logged = [entry for entry in trainer.state.log_history if "loss" in entry]
        summary = {
            "learning_rate": learning_rate,
            "steps": trainer.state.global_step,
            "rows": len(rows),
            "autocast_bfloat16": autocast,
            "loss_first": logged[0]["loss"],
            "loss_last": logged[-1]["loss"],
            "token_accuracy_last": logged[-1].get("mean_token_accuracy"),
            "wall_s": round(time.monotonic() - started, 1),
        }
        shutil.rmtree(tmp / "checkpoints", ignore_errors=True)
        trainer.save_model(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        shutil.copyfile(base / BASE_JSON, tmp / BASE_JSON)
        atomic_write_text(tmp / TRAINING_FILE, pretty_json(summary))
    return summary


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="the parameters file")
    parser.add_argument("--out", type=Path, required=True, help="a scratch directory for the model and results")
    parser.add_argument(
        "--learning-rate", type=float, default=1e-4, help="for every weight (LoRA's: sft.learning_rate)"
    )
    parser.add_argument("--base", type=Path, default=MODELS / "base", help="the base model directory")
    parser.add_argument("--trajectories", type=Path, default=TRAJECTORIES, help="the SFT rows")
    parser.add_argument(
        "--baseline", type=Path, default=EVAL_DIR / "sft.json", help="the SFT evaluation to pair with (the committed)"
    )
    args = parser.parse_args(argv)
    params = load_params(args.params)
    model_dir, evaluation = args.out / "model", args.out / "sft-eval.json"
    if (model_dir / TRAINING_FILE).is_file():
        print(f"{model_dir}: trained already; evaluating it")
    else:
        print(pretty_json(full_finetune(params, args.base, args.trajectories, model_dir, args.learning_rate)), end="")
    from worldagent.evaluation.model_eval import write_model_eval
    from worldagent.world_agent.evaluate import load_eval_rows
    from worldagent.world_agent.stages.evaluate_model import default_loader, evaluate_model, make_scorer

    # decoded as the sft stage's model is (its budget, own check and retries): a full model, no adapter
    dtype = params.evaluate.decode_dtype(params.model.dtype)
    evaluated, _ = evaluate_model(
        params,
        "sft",
        load_eval_rows(EVAL_TRAJECTORIES, params.evaluate.max_intents),
        make_scorer(params, STORIES, STORIES_DIR),
        base=model_dir,
        adapter=model_dir,
        loader=lambda base, adapter: default_loader(base, None, dtype=dtype),
    )
    write_model_eval(evaluation, evaluated)
    result = paired(args.baseline, evaluation, "full_finetune")
    atomic_write_text(args.out / "result.json", pretty_json(result))
    print(pretty_json(result), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
