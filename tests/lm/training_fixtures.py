"""Tiny inputs for the training-stage tests: a 2-layer Gemma-3 base, small datasets, fast params."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worldagent.config import DpoParams, GrpoParams, LoraParams, Params, SftParams, TinyModelParams
from worldagent.tools.callformat import ToolCall, render_calls

ROOT = Path(__file__).resolve().parents[2]
STORIES = ROOT / "data" / "stories"
TRAJECTORIES = ROOT / "data" / "generated" / "world_agent" / "trajectories.jsonl"

TINY = TinyModelParams(
    vocab_size=1024,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=32,
    max_position_embeddings=4096,
    sliding_window=512,
)
SYSTEM = "You are a UI agent. Answer with tool calls only."
COMPONENTS = ["button", "badge", "card", "alert", "switch", "tabs", "avatar", "toggle"]


def _answer(name: str, good: bool = True) -> str:
    element = "button" if good else "div"
    return render_calls(
        [
            ToolCall(
                "writeStory",
                {"path": f"{name}/{name}.stories.tsx", "content": f"<{element}>{name.title()}</{element}>"},
            ),
            ToolCall("runStory", {"path": f"{name}/{name}.stories.tsx"}),
        ]
    )


def sft_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": f"{name}/{name}.stories.tsx#main",
            "turns": "single",
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Create a {name}."},
                {"role": "assistant", "content": _answer(name)},
            ],
        }
        for name in COMPONENTS
    ]


def dpo_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": f"{name}/{name}.stories.tsx#main",
            "prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Create a {name}."}],
            "chosen": [{"role": "assistant", "content": _answer(name)}],
            "rejected": [{"role": "assistant", "content": _answer(name, good=False)}],
            "degradation": "div-soup",
            "rejected_rules": ["div-soup"],
        }
        for name in COMPONENTS
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def real_single_turn_rows(count: int) -> list[dict[str, Any]]:
    """The first ``count`` single-turn training rows of real stories (relabelled copies have no story
    file of their own for a reward to score against)."""
    from worldagent.world_agent.relabel import is_original_single_turn

    rows = [json.loads(line) for line in TRAJECTORIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if is_original_single_turn(row)][:count]


def build_tiny_base(out_dir: Path) -> Path:
    """A random-init 2-layer base with a tokenizer trained on the synthetic rows and a few real prompts."""
    from worldagent.lm.base import build_tiny_model, save_base
    from worldagent.lm.tokenizer import train_tokenizer

    texts = [m["content"] for row in sft_rows() for m in row["messages"]]
    texts += [m["content"] for row in dpo_rows() for m in row["rejected"]]
    texts += [m["content"] for row in real_single_turn_rows(4) for m in row["messages"]]
    tokenizer = train_tokenizer(texts, TINY.vocab_size)
    model = build_tiny_model(TINY, tokenizer, seed=7)
    save_base(model, tokenizer, {"kind": "test:tiny"}, out_dir)
    return out_dir


def tiny_params(**stages: Any) -> Params:
    """Params for seconds-long runs: LoRA r 4, a handful of steps, every step logged."""
    common = {"learning_rate": 5e-3, "batch_size": 2, "logging_steps": 1, "save_steps": 2, "max_length": 256}
    return Params(
        seed=11,
        lora=LoraParams(r=4, alpha=8, dropout=0.0),
        sft=SftParams(**{**common, "max_steps": 8, **stages.get("sft", {})}),
        dpo=DpoParams(**{**common, "max_steps": 4, **stages.get("dpo", {})}),
        grpo=GrpoParams(
            **{
                **common,
                "max_length": 4096,
                "max_steps": 1,
                "num_generations": 2,
                "max_completion_length": 8,
                "max_prompts": 2,
                **stages.get("grpo", {}),
            }
        ),
    )


# The library takes the sections it uses; these pass a whole Params down the way the stage modules do.


def run_sft(params: Params, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from worldagent.lm.sft import train_sft
    from worldagent.lm.training import LoraSetup

    return train_sft(params.sft, LoraSetup(params.seed, params.model, params.lora), *args, **kwargs)


def run_dpo(params: Params, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from worldagent.lm.training import LoraSetup
    from worldagent.world_agent.dpo import train_dpo

    return train_dpo(params.dpo, LoraSetup(params.seed, params.model, params.lora), *args, **kwargs)


def run_grpo(params: Params, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from worldagent.lm.training import LoraSetup
    from worldagent.world_agent.grpo import train_grpo
    from worldagent.world_agent.rewards import RewardSetup

    return train_grpo(
        params.grpo,
        LoraSetup(params.seed, params.model, params.lora),
        RewardSetup(params.reward, params.storytest),
        *args,
        **kwargs,
    )


def run_experience_loop(params: Params, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from worldagent.lm.training import LoraSetup
    from worldagent.world_agent.experience_loop import run_experience
    from worldagent.world_agent.rewards import RewardSetup

    return run_experience(
        params.experience,
        LoraSetup(params.seed, params.model, params.lora),
        RewardSetup(params.reward, params.storytest),
        *args,
        assistant_only_loss=params.sft.assistant_only_loss,
        **kwargs,
    )
