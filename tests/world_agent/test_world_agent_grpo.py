"""GRPO with signal: measure reward variance first, skip with a reason without it, train when it is there."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import torch
from transformers import TrainerCallback

from tests.lm.training_fixtures import (
    STORIES,
    build_tiny_base,
    dpo_rows,
    run_dpo,
    run_grpo,
    run_sft,
    sft_rows,
    tiny_params,
    write_jsonl,
)
from worldagent.io import without_run_dependent
from worldagent.live import read_curve
from worldagent.lm.load import load_policy
from worldagent.lm.training import read_stage
from worldagent.tools.callformat import parse_calls
from worldagent.world_agent.grpo import trained_prompt_rewards

torch.set_num_threads(1)
GRPO = {"max_steps": 3, "max_prompts": 4, "max_completion_length": 32, "probe_generations": 2}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("grpo-signal")
    build_tiny_base(root / "base")
    write_jsonl(root / "trajectories.jsonl", sft_rows())
    write_jsonl(root / "preferences.jsonl", dpo_rows())
    write_jsonl(root / "on-policy.jsonl", [])
    params = tiny_params(sft={"max_steps": 4}, dpo={"max_steps": 2})
    run_sft(params, root / "base", root / "trajectories.jsonl", root / "sft")
    metrics = run_dpo(
        params,
        root / "base",
        root / "sft",
        root / "preferences.jsonl",
        root / "dpo",
        experience_pairs=root / "on-policy.jsonl",
    )
    assert metrics["pairs"] == {"rule": len(dpo_rows()), "on_policy": 0}
    return root


class TextReward:
    """A trl reward function that records the texts it scored (decoded with the call markers kept)."""

    __name__ = "text_reward"

    def __init__(self, tokenizer, score) -> None:
        self.tokenizer, self.score, self.texts = tokenizer, score, []

    def __call__(self, prompts, completions, id, completion_ids=None, **columns):  # noqa: A002
        if completion_ids is not None:
            texts = [self.tokenizer.decode(list(ids), skip_special_tokens=False) for ids in completion_ids]
        else:
            texts = [str(c) for c in completions]
        self.texts.extend(texts)
        return [self.score(text) for text in texts]


class LoraSnapshot(TrainerCallback):
    """The trainable LoRA parameters at the start and at the end of training."""

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

    def on_train_end(self, args, state, control, model=None, **kwargs):
        self.after = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def _tokenizer(work: Path):
    return load_policy(work / "base", None, device="cpu")[1]


def test_no_variance_means_no_training_and_the_input_adapter_written_through(work: Path) -> None:
    reward = TextReward(_tokenizer(work), lambda text: 0.0)
    out, curves = work / "grpo-flat", work / "live" / "grpo-flat"
    metrics = run_grpo(
        tiny_params(grpo=GRPO),
        work / "base",
        work / "dpo",
        work / "trajectories.jsonl",
        STORIES,
        out,
        live_dir=curves,
        reward=reward,
    )
    assert metrics["skipped"] is True and "no prompt's reward varies" in metrics["reason"]
    assert metrics["probe"]["frac_reward_zero_std"] == 1.0 and metrics["probe"]["kept"] == 0
    assert len(reward.texts) == 4 * 2  # the probe only: nothing was trained
    info = read_stage(out)
    assert info["stage"] == "grpo" and info["skipped"] and info["passthrough_of"] == "dpo"
    assert without_run_dependent(info) == info  # no clock times in the out: the same skip, the same bytes
    assert (out / "adapter_model.safetensors").read_bytes() == (work / "dpo" / "adapter_model.safetensors").read_bytes()
    assert read_curve(curves, "trained") == [(0, 0.0)]  # the declared curves exist: one step, not trained
    model, tokenizer = load_policy(work / "base", out, device="cpu")
    dpo, _ = load_policy(work / "base", work / "dpo", device="cpu")
    ids = tokenizer("<start_function_call>call:runStory", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert torch.equal(model(ids).logits, dpo(ids).logits)


def test_varying_rewards_train_every_lora_parameter_and_log_the_signal(work: Path) -> None:
    reward = TextReward(_tokenizer(work), lambda text: int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32)
    snapshot = LoraSnapshot()
    out, curves = work / "grpo", work / "live" / "grpo"
    metrics = run_grpo(
        tiny_params(grpo=GRPO),
        work / "base",
        work / "dpo",
        work / "trajectories.jsonl",
        STORIES,
        out,
        live_dir=curves,
        reward=reward,
        callbacks=[snapshot],
    )
    assert metrics["skipped"] is False and metrics["global_step"] == 3 and metrics["train_tokens_per_second"] > 0
    assert metrics["probe"]["kept"] == metrics["prompts"] > 0
    # the trained prompts sampled again with the trained policy: each one's before is the probe's mean
    trained = metrics["trained_prompts"]
    probed = {item["id"]: item["mean"] for item in metrics["probe"]["per_prompt"]}
    assert trained["prompts"] == metrics["prompts"] and trained["generations"] == GRPO["probe_generations"]
    assert all(row["before"] == probed[row["id"]] and 0.0 <= row["after"] <= 1.0 for row in trained["per_prompt"])
    assert trained["rose"] + trained["fell"] <= trained["prompts"]
    assert metrics["constrained_generation"] is True and metrics["constrained_generate_calls"] >= 3
    # trl's generate went through the project's decoder: each prompt prefilled once for its whole group
    assert metrics["shared_prefill_generate_calls"] == metrics["constrained_generate_calls"]
    rollouts = metrics["generation"]
    assert rollouts["completions"] > 0 and rollouts["prefilled_tokens"] < rollouts["prompt_tokens"]
    assert metrics["probe"]["generation"]["prefilled_tokens"] < metrics["probe"]["generation"]["prompt_tokens"]
    steps = metrics["steps"]
    assert [row["step"] for row in steps] == [1, 2, 3]
    assert all({"reward", "reward_std", "frac_reward_zero_std", "loss"} <= set(row) for row in steps)
    assert read_curve(curves, "loss")
    # GRPO's own generation was constrained: every completion trl sampled is well-formed calls
    sampled = reward.texts[metrics["prompts_probed"] * 2 :]  # trl's samples, then the re-sampling
    assert len(sampled) > metrics["prompts"] * 2
    assert all(parse_calls(t).calls and not parse_calls(t).errors for t in sampled)
    assert snapshot.before and snapshot.before.keys() == snapshot.after.keys()
    unchanged = [n for n in snapshot.before if torch.equal(snapshot.before[n], snapshot.after[n])]
    assert unchanged == []
    info = read_stage(out)
    assert info["stage"] == "grpo" and [c["stage"] for c in info["chain"]] == ["sft", "dpo"]


def test_trained_prompt_rewards_pair_each_prompt_before_and_after() -> None:
    before = {"per_prompt": [{"id": "a", "mean": 0.2}, {"id": "b", "mean": 0.5}, {"id": "c", "mean": 0.0}]}
    after = {"generations": 4, "per_prompt": [{"id": "a", "mean": 0.6}, {"id": "c", "mean": 0.0}]}
    summary = trained_prompt_rewards(before, after)
    assert summary["per_prompt"] == [{"id": "a", "before": 0.2, "after": 0.6}, {"id": "c", "before": 0.0, "after": 0.0}]
    assert (summary["prompts"], summary["rose"], summary["fell"]) == (2, 1, 0)
    assert summary["mean_before"] == pytest.approx(0.1) and summary["mean_after"] == pytest.approx(0.3)
    assert trained_prompt_rewards(before, {"per_prompt": []})["mean_after"] == 0.0
