"""sft → dpo → grpo on a tiny base: learning, adapters, resume after interruption, atomic outputs."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import torch
from training_fixtures import (
    STORIES,
    TRAJECTORIES,
    build_tiny_base,
    dpo_rows,
    run_dpo,
    run_grpo,
    run_sft,
    sft_rows,
    tiny_params,
    write_jsonl,
)
from transformers import TrainerCallback

from worldagent.live import read_curve
from worldagent.lm import training
from worldagent.lm.device import THREADS_ENV, precision_label, resolve_dtype, select_device
from worldagent.lm.load import load_policy
from worldagent.lm.training import TrainingError, adapter_chain, read_stage
from worldagent.world_agent.grpo import grpo_config
from worldagent.world_agent.rewards import StoryTestReward

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("policy-training")
    build_tiny_base(root / "base")
    write_jsonl(root / "trajectories.jsonl", sft_rows())
    write_jsonl(root / "preferences.jsonl", dpo_rows())
    return root


@pytest.fixture(scope="module")
def sft_run(work: Path) -> dict:
    """The reference uninterrupted SFT run (8 steps), shared by the tests below."""
    metrics = run_sft(
        tiny_params(),
        work / "base",
        work / "trajectories.jsonl",
        work / "models" / "sft",
        live_dir=work / "live" / "sft",
    )
    return metrics


def _adapter_tensors(adapter_dir: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(adapter_dir / "adapter_model.safetensors"))


class InterruptAfter(TrainerCallback):
    """Simulates Ctrl-C after ``step`` optimizer steps."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.step:
            raise KeyboardInterrupt


class RecordStart(TrainerCallback):
    def __init__(self) -> None:
        self.start_step: int | None = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.start_step = state.global_step

    def on_step_begin(self, args, state, control, **kwargs):
        if self.start_step is None:
            self.start_step = state.global_step


def test_sft_learns_and_writes_a_loadable_adapter(work: Path, sft_run: dict) -> None:
    from peft import PeftModel

    from worldagent.lm.base import load_base

    out = work / "models" / "sft"
    assert sft_run["global_step"] == 8
    # the tiny profile's auto where it ran: float32 on a CPU, bfloat16 on a CUDA GPU (the suite runs on both)
    device = select_device()
    assert sft_run["precision"] == precision_label(resolve_dtype(tiny_params().model.dtype, device), device)
    assert sft_run["train_tokens_per_second"] > 0  # every training stage reports its token rate
    assert sft_run["loss_last"] < sft_run["loss_first"] - 0.2, sft_run  # a tiny overfit: the loss drops
    for name in ("adapter_model.safetensors", "adapter_config.json", "stage.json", "tokenizer.json"):
        assert (out / name).is_file(), name
    info = read_stage(out)
    assert info["stage"] == "sft" and info["chain"] == []
    assert info["params"]["lora"]["r"] == 4 and info["params"]["sft"]["max_steps"] == 8
    assert info["data_hash"] == training.file_hash(work / "trajectories.jsonl")
    config = json.loads((out / "adapter_config.json").read_text())
    assert config["r"] == 4 and config["lora_alpha"] == 8 and config["task_type"] == "CAUSAL_LM"
    # sorted: peft writes its set in hash order, which changed the adapter's bytes run to run
    assert config["target_modules"] == ["down_proj", "gate_proj", "k_proj", "o_proj", "q_proj", "up_proj", "v_proj"]
    # peft loads it on the base; the trained LoRA B matrices are not zero (they start at zero)
    base, _ = load_base(work / "base", device="cpu")
    peft_model = PeftModel.from_pretrained(base, str(out))
    assert any(("lora_B" in n) and p.abs().sum() > 0 for n, p in peft_model.named_parameters())
    # the curve went through DVCLive: one row per logged step, and the latest values as metrics
    assert [step for step, _ in read_curve(work / "live" / "sft", "loss")] == list(range(1, 9))
    assert json.loads((work / "live" / "sft" / "metrics.json").read_text())["step"] >= 8
    # checkpoints are cleaned up after success, and no temporary directory is left behind
    assert not (work / "models" / "checkpoints" / "sft").exists()
    assert not list((work / "models").glob(".sft.*"))


def test_a_policy_loads_in_its_training_dtype_with_its_own_adapter_live(work: Path, sft_run: dict) -> None:
    from worldagent.lm.load import load_policy

    model, tokenizer = load_policy(work / "base", work / "models" / "sft", device="cpu", dtype="bfloat16")
    # unmerged: a merged bfloat16 weight would round away LoRA updates below half its last place
    assert not model.training and list(model.peft_config) == ["default"]
    weights = dict(model.named_parameters())
    assert {p.dtype for n, p in weights.items() if "lora_" not in n} == {torch.bfloat16}
    assert any("lora_B" in n and p.abs().sum() > 0 for n, p in weights.items())
    base, _ = load_policy(work / "base", None, device="cpu", dtype="bfloat16")
    assert base.dtype == torch.bfloat16 and not hasattr(base, "peft_config")
    ids = tokenizer("<start_function_call>call:runStory", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert not torch.equal(model(ids).logits, base(ids).logits)


def test_assistant_only_loss_masks_everything_but_the_assistant_turn(work: Path) -> None:
    from datasets import Dataset
    from trl import SFTTrainer

    from worldagent.lm.base import load_base
    from worldagent.lm.sft import sft_config

    model, tokenizer = load_base(work / "base", device="cpu")
    params = tiny_params()
    from worldagent.lm.training import trainer_kwargs

    common = trainer_kwargs(
        params.sft, output_dir=work / "scratch", seed=params.seed, device="cpu", dtype=torch.float32, model=model
    )
    args = sft_config(common, params.sft, params.sft.assistant_only_loss)
    trainer = SFTTrainer(
        model=model, args=args, train_dataset=Dataset.from_list(sft_rows()[:1]), processing_class=tokenizer
    )
    batch = trainer.data_collator([trainer.train_dataset[0]])
    labels, ids = batch["labels"][0], batch["input_ids"][0]
    trained = tokenizer.decode(ids[labels != -100])
    assert trained == sft_rows()[0]["messages"][-1]["content"] + tokenizer.eos_token
    assert SYSTEM_TEXT not in trained


SYSTEM_TEXT = "You are a UI agent"


def test_stage_json_is_written_without_clock_times(tmp_path: Path) -> None:
    training.write_stage(tmp_path, {"stage": "sft", "metrics": {"train_loss": 1.0, "wall_s": 3.0, "peak_rss_mib": 9}})
    assert read_stage(tmp_path) == {"stage": "sft", "metrics": {"train_loss": 1.0}}


def test_sft_is_deterministic_on_cpu(work: Path, sft_run: dict, tmp_path: Path) -> None:
    again = run_sft(tiny_params(), work / "base", work / "trajectories.jsonl", tmp_path / "sft")
    assert again["loss_first"] == sft_run["loss_first"] and again["loss_last"] == sft_run["loss_last"]
    first, second = _adapter_tensors(work / "models" / "sft"), _adapter_tensors(tmp_path / "sft")
    assert first.keys() == second.keys()
    assert all(torch.equal(first[k], second[k]) for k in first)
    # the whole directory, stage.json included, is the same bytes: DVC sees an unchanged out and
    # does not evaluate it again; the run's clock time stays in the returned metrics (the metrics file)
    assert training.tree_hash(work / "models" / "sft") == training.tree_hash(tmp_path / "sft")
    assert again["wall_s"] > 0 and "wall_s" not in read_stage(tmp_path / "sft")["metrics"]


def test_trimming_freed_memory_changes_nothing_sft_learns(work: Path, sft_run: dict, tmp_path: Path) -> None:
    params = tiny_params()
    params = params.model_copy(update={"sft": params.sft.model_copy(update={"freed_memory": "trim"})})
    again = run_sft(params, work / "base", work / "trajectories.jsonl", tmp_path / "sft")
    assert again["loss_last"] == sft_run["loss_last"]
    first, second = _adapter_tensors(work / "models" / "sft"), _adapter_tensors(tmp_path / "sft")
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_interrupted_sft_resumes_from_its_last_checkpoint(work: Path, sft_run: dict, tmp_path: Path) -> None:
    out = tmp_path / "models" / "sft"
    checkpoints = tmp_path / "models" / "checkpoints" / "sft"
    with pytest.raises(KeyboardInterrupt):
        run_sft(tiny_params(), work / "base", work / "trajectories.jsonl", out, callbacks=[InterruptAfter(5)])
    assert not out.exists()  # complete or absent
    assert sorted(p.name for p in checkpoints.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]

    start = RecordStart()
    metrics = run_sft(tiny_params(), work / "base", work / "trajectories.jsonl", out, callbacks=[start])
    assert metrics["resumed_from_step"] == 4
    assert start.start_step == 4  # the trainer continued from step 4, it did not restart
    assert metrics["global_step"] == 8
    assert (out / "stage.json").is_file() and not checkpoints.exists()
    resumed, reference = _adapter_tensors(out), _adapter_tensors(work / "models" / "sft")
    assert all(torch.allclose(resumed[k], reference[k], atol=1e-6) for k in reference)
    assert metrics["loss_last"] == pytest.approx(sft_run["loss_last"], abs=1e-5)


def test_checkpoints_of_other_inputs_are_discarded(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "models" / "sft"
    with pytest.raises(KeyboardInterrupt):
        run_sft(tiny_params(), work / "base", work / "trajectories.jsonl", out, callbacks=[InterruptAfter(3)])
    changed = tiny_params(sft={"learning_rate": 1e-3})
    start = RecordStart()
    metrics = run_sft(changed, work / "base", work / "trajectories.jsonl", out, callbacks=[start])
    assert start.start_step == 0 and metrics["resumed_from_step"] == 0


def test_a_failed_save_leaves_the_previous_adapter_intact(
    work: Path, sft_run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    out = tmp_path / "sft"
    shutil.copytree(work / "models" / "sft", out)
    before = (out / "stage.json").read_text()

    class Broken:
        def save_pretrained(self, path: str) -> None:
            (Path(path) / "adapter_model.safetensors").write_bytes(b"half")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        training.save_adapter(
            Broken(), None, out, stage="sft", base_dir=work / "base", parents=[], params={}, metrics={}, data_hash="x"
        )
    assert (out / "stage.json").read_text() == before
    assert _adapter_tensors(out).keys() == _adapter_tensors(work / "models" / "sft").keys()
    assert [p.name for p in tmp_path.iterdir()] == ["sft"]  # no temporary directory left


def test_dpo_logs_reward_margins_and_records_its_chain(work: Path, sft_run: dict) -> None:
    out = work / "models" / "dpo"
    metrics = run_dpo(
        tiny_params(),
        work / "base",
        work / "models" / "sft",
        work / "preferences.jsonl",
        out,
        live_dir=work / "live" / "dpo",
    )
    # The first logged step is on the starting policy: it equals the reference (the merged SFT model)
    assert metrics["loss_first"] == pytest.approx(0.6931, abs=1e-3)
    assert metrics["rewards_margins_first"] == pytest.approx(0.0, abs=1e-4)
    assert metrics["rewards_margins_last"] > 0 and metrics["rewards_accuracies_last"] > 0.5
    assert metrics["train_tokens_per_second"] > 0
    assert read_curve(work / "live" / "dpo", "rewards/margins") and read_curve(
        work / "live" / "dpo", "rewards/accuracies"
    )
    info = read_stage(out)
    assert info["stage"] == "dpo" and [c["stage"] for c in info["chain"]] == ["sft"]
    assert info["params"]["dpo"]["beta"] == 0.1
    assert adapter_chain(out) == [out / "parents" / "0-sft", out]


def test_dpo_with_a_chosen_nll_weight_adds_the_chosen_answers_loss(work: Path, sft_run: dict, tmp_path: Path) -> None:
    """RPO: at the first step the policy is the reference, so the preference term is ln 2 and the rest
    of the loss is the weighted NLL of the chosen answers (positive, and doubling with the weight)."""
    losses = {}
    for weight in (1.0, 2.0):
        metrics = run_dpo(
            tiny_params(dpo={"chosen_nll_weight": weight, "max_steps": 1, "logging_steps": 1}),
            work / "base",
            work / "models" / "sft",
            work / "preferences.jsonl",
            tmp_path / f"dpo-{weight}",
        )
        losses[weight] = metrics["loss_first"] - 0.6931
        assert read_stage(tmp_path / f"dpo-{weight}")["params"]["dpo"]["chosen_nll_weight"] == weight
    assert losses[1.0] > 0.05
    assert losses[2.0] == pytest.approx(2 * losses[1.0], rel=1e-3)


class RecordCheckpointing(TrainerCallback):
    def __init__(self) -> None:
        self.used: bool | None = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.used = bool(model.is_activation_checkpointing)


def test_activation_checkpointing_on_a_cpu_buys_memory_without_changing_what_dpo_learns(
    work: Path, sft_run: dict, tmp_path: Path
) -> None:
    adapters = {}
    for setting in ("auto", True):
        recorded = RecordCheckpointing()
        out = tmp_path / f"dpo-{setting}"
        params = tiny_params(dpo={"activation_checkpointing": setting})
        run_dpo(params, work / "base", work / "models" / "sft", work / "preferences.jsonl", out, callbacks=[recorded])
        assert recorded.used is (setting is True)  # auto: never on a CPU
        adapters[setting] = _adapter_tensors(out)
    assert adapters["auto"].keys() == adapters[True].keys()
    for name, tensor in adapters["auto"].items():
        torch.testing.assert_close(adapters[True][name], tensor, msg=name)


def test_dpo_refuses_an_incomplete_sft_adapter(work: Path, tmp_path: Path) -> None:
    (tmp_path / "sft").mkdir()
    with pytest.raises(TrainingError, match="not a complete adapter"):
        run_dpo(tiny_params(), work / "base", tmp_path / "sft", work / "preferences.jsonl", tmp_path / "dpo")


def test_grpo_runs_a_step_and_the_policy_loads_with_its_chain(work: Path, sft_run: dict) -> None:
    if not (work / "models" / "dpo" / "stage.json").is_file():
        run_dpo(
            tiny_params(), work / "base", work / "models" / "sft", work / "preferences.jsonl", work / "models" / "dpo"
        )
    out = work / "models" / "grpo"
    story_test = StoryTestReward(STORIES)

    def story_test_with_jitter(prompts, completions, id, **columns):  # noqa: A002
        """The story-test reward (0 for this untrained policy) plus a per-text jitter, so that groups vary
        and GRPO trains (without variance it skips: tests/world_agent/test_world_agent_grpo.py)."""
        scores = story_test(prompts, completions, id, **columns)
        jitter = [int(hashlib.sha256(str(c).encode()).hexdigest()[:6], 16) / 2**30 for c in completions]
        return [score + delta for score, delta in zip(scores, jitter, strict=True)]

    story_test_with_jitter.__name__ = "story_test"
    metrics = run_grpo(
        # 8 tokens of constrained calls leave no room to differ: every sample is the forced shortest call
        tiny_params(grpo={"max_completion_length": 32}),
        work / "base",
        work / "models" / "dpo",
        TRAJECTORIES,
        STORIES,
        out,
        live_dir=work / "live" / "grpo",
        reward=story_test_with_jitter,
    )
    assert metrics["global_step"] == 1 and metrics["prompts"] == 2 and not metrics["skipped"]
    assert metrics["completions_mean_length_last"] <= 32
    assert 0.0 <= metrics["reward_last"] <= 1.0
    assert read_curve(work / "live" / "grpo", "rewards/story_test/mean")
    info = read_stage(out)
    assert [c["stage"] for c in info["chain"]] == ["sft", "dpo"]
    model, tokenizer = load_policy(work / "base", out, device="cpu")
    # the parents merged, the grpo adapter itself live (worldagent.lm.load)
    assert not model.training and list(model.peft_config) == ["default"]
    # the policy differs from the base: the adapters were applied
    before = torch.get_num_threads()
    try:  # evaluate.threads: the loader's threads on a CPU, unless the environment names its own
        base, _ = load_policy(work / "base", None, device="cpu", cpu_threads=2)
        assert torch.get_num_threads() == (int(os.environ.get(THREADS_ENV, 2)))
    finally:
        torch.set_num_threads(before)
    ids = tokenizer("<start_function_call>call:runStory", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert not torch.allclose(model(ids).logits, base(ids).logits)


def test_grpo_needs_whole_groups_per_step() -> None:
    params = tiny_params(grpo={"batch_size": 3, "num_generations": 2})
    with pytest.raises(TrainingError, match="multiple of grpo.num_generations"):
        grpo_config({}, params.grpo, "cpu")


def test_grpo_generates_several_steps_groups_in_one_call_when_asked(tmp_path: Path) -> None:
    """``grpo.steps_per_generation`` reaches trl: one ``generate`` call samples that many
    micro-batches' groups side by side; a round of partial groups is refused by name."""
    # what trainer_kwargs gives trl from grpo.batch_size and grpo.gradient_accumulation_steps
    common = {"output_dir": str(tmp_path), "report_to": [], "use_cpu": True}
    common |= {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 2}
    asked = tiny_params(grpo={"batch_size": 2, "gradient_accumulation_steps": 2, "num_generations": 4})
    assert grpo_config(common, asked.grpo, "cpu").generation_batch_size == 4  # trl's default: one step
    wide = tiny_params(
        grpo={"batch_size": 2, "gradient_accumulation_steps": 2, "num_generations": 4, "steps_per_generation": 8}
    )
    config = grpo_config(common, wide.grpo, "cpu")
    assert config.steps_per_generation == 8 and config.generation_batch_size == 16
    partial = tiny_params(
        grpo={"batch_size": 2, "gradient_accumulation_steps": 2, "num_generations": 4, "steps_per_generation": 3}
    )
    with pytest.raises(TrainingError, match="grpo.steps_per_generation"):
        grpo_config(common, partial.grpo, "cpu")


def test_trainer_kwargs_carry_every_knob(tmp_path: Path) -> None:
    from worldagent.config import SftParams

    p = SftParams(
        epochs=2.5,
        max_steps=-1,
        learning_rate=3e-4,
        batch_size=3,
        gradient_accumulation_steps=5,
        logging_steps=7,
        save_steps=9,
        warmup_ratio=0.1,
    )
    model = torch.nn.Linear(2, 2)
    kwargs = training.trainer_kwargs(p, output_dir=tmp_path, seed=5, device="cpu", dtype=torch.float32, model=model)
    assert kwargs["num_train_epochs"] == 2.5 and kwargs["max_steps"] == -1 and kwargs["learning_rate"] == 3e-4
    assert kwargs["per_device_train_batch_size"] == 3 and kwargs["gradient_accumulation_steps"] == 5
    assert kwargs["logging_steps"] == 7 and kwargs["save_steps"] == 9 and kwargs["warmup_steps"] == 0.1
    assert kwargs["seed"] == 5 and kwargs["report_to"] == [] and kwargs["disable_tqdm"] is False
    assert kwargs["bf16"] is False and kwargs["use_cpu"] is True and kwargs["activation_checkpointing"] is False
    on_gpu = training.trainer_kwargs(p, output_dir=tmp_path, seed=5, device="cuda", dtype=torch.bfloat16, model=model)
    assert on_gpu["bf16"] is True
    # The section's setting reaches the trainer, resolved against the device and the model's size
    forced = p.model_copy(update={"activation_checkpointing": True})
    kwargs = training.trainer_kwargs(
        forced, output_dir=tmp_path, seed=5, device="cpu", dtype=torch.float32, model=model
    )
    assert kwargs["activation_checkpointing"] is True


def test_activation_checkpointing_is_for_big_models_on_an_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training, "GRADIENT_CHECKPOINTING_MIN_PARAMS", 100)
    assert training.wants_activation_checkpointing("auto", "cuda", 110)
    assert not training.wants_activation_checkpointing("auto", "cpu", 110)  # host memory is not what runs out
    assert not training.wants_activation_checkpointing("auto", "cuda", 99)
    # An explicit setting wins over the size and the device
    assert training.wants_activation_checkpointing(True, "cpu", 1)
    assert not training.wants_activation_checkpointing(False, "cuda", 10**9)


def test_trl_scores_only_the_labelled_positions_on_a_cpu_with_the_same_loss_and_gradients(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.kernels import chunked_logprob
    from trl.trainer import utils as trl_utils

    # trl's own switch (the one its kernels keep), whatever an earlier training test set; restored after
    monkeypatch.setattr(trl_utils, "_use_triton", chunked_logprob._use_triton)
    torch.manual_seed(3)
    config = LlamaConfig(
        vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2
    )
    model = LlamaForCausalLM(config)
    trl_utils.add_fused_lm_head(model)
    ids = torch.randint(0, 97, (1, 12))
    labels = ids.clone()
    labels[:, :8] = -100  # an 8-token prompt, a 4-token answer
    scored: list[int] = []
    chunked = trl_utils._ChunkedLogProbFunction

    class CountScoredPositions:
        @staticmethod
        def apply(hidden: torch.Tensor, *args: object) -> object:
            scored.append(hidden.shape[0])
            return chunked.apply(hidden, *args)

    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", CountScoredPositions)

    def loss_and_gradients() -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad()
        loss = model(input_ids=ids, labels=labels, fused_lm_head=True).loss
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    every_position = loss_and_gradients()
    assert training.score_labelled_positions_only()
    assert training.score_labelled_positions_only()  # a second call changes nothing
    labelled_only = loss_and_gradients()

    assert scored == [11, 4]  # the 11 shifted positions, then the answer's 4 alone
    torch.testing.assert_close(labelled_only, every_position)
    torch.testing.assert_close(labelled_only[0], model(input_ids=ids, labels=labels).loss.detach())
