"""GRPO stage: a new LoRA on base+sft+experience+dpo (merged), rewarded by the story tests.

GRPO learns only from groups whose rewards differ (the advantage is the reward minus its group mean,
divided by the group std): a prompt whose completions all score the same gives no gradient. So the
stage measures first: it samples ``grpo.probe_generations`` completions per prompt with the current
policy (the same constrained decoding as training), scores them with the same reward, and trains
only on the prompts whose reward varies. After training it samples those prompts again the same way
with the trained policy: ``trained_prompts`` in the metrics says whether their reward rose. When
no prompt varies, it does not train: the input adapter is written through unchanged with
``{"skipped": true, "reason": ...}`` in its record and the metrics, so the report can say so.

trl's GRPOTrainer generates the completions itself, through the model's ``generate`` (the one hook
trl 1.16's transformers path leaves: ``generation_kwargs`` only reach a ``GenerationConfig``, which
cannot carry a processor). That call is routed through the project's decoder
(:func:`worldagent.lm.rollout.generate_tensor`): trl repeats each prompt for every member of its
group, and the decoder prefills it once for all of them; ``grpo.constrained`` adds the tool-call
processor to it. The per-step log (reward, reward_std, frac_reward_zero_std, loss, kl when beta > 0,
entropy) goes into the DVCLive curves and the metrics.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from worldagent.config import GrpoParams
from worldagent.io import sha256_bytes
from worldagent.lm.training import (
    LoraSetup,
    StageRun,
    TrainerSpec,
    TrainingError,
    canonical_json,
    curve_rows,
    is_off,
    load_model,
    off_reason,
    require_complete_adapter,
    skip_stage,
    train_loaded,
)
from worldagent.world_agent.rewards import RewardSetup

log = logging.getLogger(__name__)
STAGE = "grpo"


def _fit_prompts(rows: list[dict[str, Any]], tokenizer: Any, max_length: int) -> list[dict[str, Any]]:
    """Drop prompts longer than ``grpo.max_length`` tokens (trl 1.16's GRPO does not truncate prompts)."""
    kept = []
    for row in rows:
        ids = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False)
        if len(ids) <= max_length:
            kept.append(row)
    if len(kept) < len(rows):
        log.warning(
            "grpo: %d of %d prompts are longer than grpo.max_length=%d tokens and were left out",
            len(rows) - len(kept),
            len(rows),
            max_length,
        )
    if not kept:
        raise TrainingError(f"params.yaml: grpo.max_length={max_length} is shorter than every prompt")
    return kept


def grpo_config(common: dict[str, Any], grpo: GrpoParams, device: str) -> Any:
    """trl's GRPOConfig: ``common`` (:func:`worldagent.lm.training.trainer_kwargs`) and ``grpo``'s own knobs."""
    from trl import GRPOConfig

    generations_per_step = grpo.batch_size * grpo.gradient_accumulation_steps
    if generations_per_step % grpo.num_generations:
        raise TrainingError(
            f"params.yaml: grpo.batch_size × grpo.gradient_accumulation_steps ({generations_per_step}) must be a multiple"
            f" of grpo.num_generations ({grpo.num_generations}): each step trains on whole groups of completions"
        )
    # a round of steps_per_generation micro-batches (unset: one step's, checked above) holds whole groups
    per_round = grpo.batch_size * (grpo.steps_per_generation or grpo.gradient_accumulation_steps)
    if grpo.steps_per_generation is not None and per_round % grpo.num_generations:
        raise TrainingError(
            f"params.yaml: grpo.batch_size × grpo.steps_per_generation ({per_round}) must be a multiple of"
            f" grpo.num_generations ({grpo.num_generations}): a generation round samples whole groups"
        )
    from worldagent.lm.engines import grpo_generation_kwargs

    return GRPOConfig(
        **common,
        # vLLM colocated where CUDA and vLLM are present; else trl's generate, through the decoder
        **grpo_generation_kwargs(device, grpo.constrained, grpo.max_length + grpo.max_completion_length),
        num_generations=grpo.num_generations,
        steps_per_generation=grpo.steps_per_generation,
        temperature=grpo.temperature,
        max_completion_length=grpo.max_completion_length,
        remove_unused_columns=False,  # the reward function reads the `id` column
    )


GRPO_METRIC_KEYS = (
    "loss",
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "rewards/story_test/mean",
    "completions/mean_length",
)


def grpo_spec(
    rows: list[dict[str, Any]], grpo: GrpoParams, reward: Callable[..., Sequence[float]], factory: Any
) -> TrainerSpec:
    """trl's GRPOTrainer (generating through the project's decoder, constrained by ``factory``) over ``rows``."""
    return TrainerSpec(
        trainer_class=grpo_trainer_class(factory),
        config=lambda common, loaded: grpo_config(common, grpo, loaded.device),
        rows=rows,
        metric_keys=GRPO_METRIC_KEYS,
        extra={"reward_funcs": [reward]},
    )


STEP_KEYS = (
    "loss",
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "kl",
    "entropy",
    "rewards/story_test/mean",
    "rewards/story_test/std",
    "completions/mean_length",
    "completions/clipped_ratio",
    "grad_norm",
    "learning_rate",
)


def step_rows(log_history: Sequence[Any]) -> list[dict[str, Any]]:
    """trl's per-step log, reduced to what says whether GRPO had signal and moved."""
    rows = []
    for row in curve_rows(log_history):
        kept = {key: row[key] for key in STEP_KEYS if key in row}
        if kept:
            rows.append({"step": row["step"], **kept})
    return rows


@contextlib.contextmanager
def constrained_generate(model: Any, factory: Callable[[int], Any] | None) -> Iterator[dict[str, int]]:
    """While active, ``model.generate`` decodes through the project's decoder
    (:func:`worldagent.lm.rollout.generate_tensor`: each prompt prefilled once for all the group
    members trl repeats it for), applying ``factory(prompt width)`` as a logits processor when given.

    trl's GRPOTrainer calls ``generate`` on the unwrapped policy (the same object when training on
    one device); the yielded counter says how many generate calls were constrained and how many
    went through the decoder (a setting it does not do, e.g. a repetition penalty, falls back to
    ``generate``). ``tokens`` adds up the decoder's counts (prefilled, decoded)."""
    from transformers import LogitsProcessorList

    from worldagent.lm.rollout import GenerationStats, generate_tensor

    calls: dict[str, Any] = {"constrained": 0, "shared_prefill": 0, "stats": GenerationStats()}
    original = model.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        input_ids = kwargs.get("input_ids", args[0] if args else None)
        processors = LogitsProcessorList(kwargs.pop("logits_processor", None) or [])
        if factory is not None:
            processors.append(factory(int(input_ids.shape[1])))
            calls["constrained"] += 1
        config = kwargs.get("generation_config")
        mask = kwargs.get("attention_mask")
        extra = set(kwargs) - {"input_ids", "attention_mask", "generation_config"}
        if config is not None and mask is not None and not args and not extra:
            output = generate_tensor(model, input_ids, mask, config, processors, calls["stats"])
            if output is not None:
                calls["shared_prefill"] += 1
                return output
        return original(*args, logits_processor=processors, **kwargs)

    model.generate = generate
    try:
        yield calls
    finally:
        del model.generate  # the instance attribute; the class's method is back


def grpo_trainer_class(factory: Callable[[int], Any] | None) -> Any:
    """GRPOTrainer whose own generation goes through the project's decoder (:func:`constrained_generate`),
    constrained by ``factory`` (None: unconstrained)."""
    from trl import GRPOTrainer

    from worldagent.lm.rollout import GenerationStats

    class ConstrainedGRPOTrainer(GRPOTrainer):  # type: ignore[misc]
        constrained_calls = 0
        shared_prefill_calls = 0  # generate calls that went through the project's decoder

        def _generate_single_turn(self, *args: Any, **kwargs: Any) -> Any:
            with constrained_generate(self.model, factory) as calls:
                result = super()._generate_single_turn(*args, **kwargs)
            self.constrained_calls += calls["constrained"]
            self.shared_prefill_calls += calls["shared_prefill"]
            if not hasattr(self, "generation"):
                self.generation = GenerationStats()  # the decoder's counts over the whole training
            self.generation.add(calls["stats"])
            return result

    return ConstrainedGRPOTrainer


def generation_counts(stats: Any) -> dict[str, Any]:
    """What trl's rollouts cost through the decoder: tokens prefilled and decoded against the
    least any engine must do (each distinct prompt once however many group members it has)."""
    if stats is None or not stats.completions:
        return {}
    return {
        "completions": stats.completions,
        "new_tokens": stats.new_tokens,
        "prompt_tokens": stats.prompt_tokens,
        "prefilled_tokens": stats.prefilled_tokens,
        "decoded_tokens": stats.decoded_tokens,
        "minimum_tokens": stats.minimum_tokens,
        "spent_over_minimum": round(stats.spent_over_minimum, 3),
        "seconds": round(stats.seconds, 3),
    }


def probe_signal(
    grpo: GrpoParams,
    seed: int,
    model: Any,
    tokenizer: Any,
    rows: list[dict[str, Any]],
    reward: Callable[..., Sequence[float]],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the rows whose reward varies under ``model``, the measurement) before any training."""
    from worldagent.lm.rollout import GenerationStats
    from worldagent.world_agent.experience_loop import sample_groups, score_groups, variance_summary

    p = grpo
    stats = GenerationStats()
    groups = sample_groups(
        model,
        tokenizer,
        rows,
        samples=p.probe_generations,
        temperature=p.temperature,
        top_p=1.0,
        max_new_tokens=p.max_completion_length,
        batch_size=len(rows),  # every group side by side: a prompt's columns read once for its samples
        constrained=p.constrained,
        seed=seed,
        stats=stats,
    )
    rewards = score_groups(reward, rows, groups)
    summary = variance_summary(rows, rewards, p.min_reward_std)
    varying = {item["id"] for item in summary["per_prompt"] if item["std"] > p.min_reward_std}
    summary["generations"] = p.probe_generations
    summary["tokens_per_second"] = round(stats.tokens_per_second, 3)
    summary["generation"] = generation_counts(stats)
    return [row for row in rows if row["id"] in varying], summary


def trained_prompt_rewards(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """Each trained prompt's mean reward under the policy GRPO started from (``before``, the probe)
    and under the policy it trained (``after``, the same prompts sampled again the same way).

    trl's per-step reward is of the step's own prompts (here one or two a step), so the steps alone
    cannot say whether the reward rose; the same prompts before and after can."""
    started = {item["id"]: item["mean"] for item in before["per_prompt"]}
    rows = [{"id": item["id"], "before": started[item["id"]], "after": item["mean"]} for item in after["per_prompt"]]
    mean = lambda key: sum(row[key] for row in rows) / len(rows) if rows else 0.0  # noqa: E731
    return {
        "prompts": len(rows),
        "generations": after.get("generations"),
        "mean_before": mean("before"),
        "mean_after": mean("after"),
        "rose": sum(row["after"] > row["before"] for row in rows),
        "fell": sum(row["after"] < row["before"] for row in rows),
        "per_prompt": rows,
    }


def train_grpo(
    grpo: GrpoParams,
    setup: LoraSetup,
    reward_setup: RewardSetup,
    base_dir: Path,
    dpo_dir: Path,
    dataset_path: Path,
    stories_root: Path,
    out_dir: Path,
    *,
    live_dir: Path | None = None,
    checkpoints: Path | None = None,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
    runner: Any = None,
    reward: Callable[..., Sequence[float]] | None = None,
) -> dict[str, Any]:
    """Measure the reward variance, then train the GRPO adapter on base+sft(+experience)+dpo on the
    prompts that vary, into ``out_dir``; or write the input adapter through when none does, or when
    ``grpo.max_steps`` is 0 (the stage is off: nothing is loaded or sampled).
    Returns the metrics. ``reward`` replaces the story-test reward (tests)."""
    from worldagent.world_agent.experience_loop import prompt_rows, tool_processor

    base_dir, dpo_dir, dataset_path, out_dir = Path(base_dir), Path(dpo_dir), Path(dataset_path), Path(out_dir)
    require_complete_adapter(dpo_dir, "dpo")
    if is_off(grpo):
        return skip_stage(STAGE, dpo_dir, out_dir, live_dir, off_reason(STAGE))
    rows = prompt_rows(dataset_path, grpo.max_prompts)
    loaded = load_model(grpo, setup, base_dir, dpo_dir, device)
    model, tokenizer = loaded.model, loaded.tokenizer
    rows = _fit_prompts(rows, tokenizer, grpo.max_length)
    if reward is None:
        reward = reward_setup.story_test_reward(Path(stories_root), tokenizer, runner)
    kept, probe = probe_signal(grpo, setup.seed, model, tokenizer, rows, reward)
    log.info(
        "grpo: %d of %d prompts have reward variance (mean reward %.3f, frac_reward_zero_std %.3f)",
        len(kept),
        len(rows),
        probe["mean_reward"],
        probe["frac_reward_zero_std"],
    )
    if not kept:
        reason = (
            f"no prompt's reward varies under the current policy: {len(rows)} prompts x {grpo.probe_generations}"
            f" samples, mean reward {probe['mean_reward']:.3f}, every group's std <= {grpo.min_reward_std}"
        )
        return skip_stage(STAGE, dpo_dir, out_dir, live_dir, reason, prompts=len(rows), probe=probe)

    model.train()
    run = StageRun(
        stage=STAGE,
        section=grpo,
        setup=setup,
        base_dir=base_dir,
        out_dir=out_dir,
        data_hash=sha256_bytes(canonical_json(kept).encode("utf-8")),
        checkpoints=checkpoints,
        live_dir=live_dir,
        callbacks=tuple(callbacks),
        record_extra={"reward": reward_setup.weights.model_dump()},
        fingerprint_extra={
            "reward": {"weights": reward_setup.weights.model_dump(), "storytest": reward_setup.storytest.model_dump()}
        },
    )
    factory = tool_processor(tokenizer, model, grpo.max_completion_length) if grpo.constrained else None
    metrics, trainer = train_loaded(run, loaded, grpo_spec(kept, grpo, reward, factory))
    trainer.model.eval()
    _, after = probe_signal(grpo, setup.seed, trainer.model, tokenizer, kept, reward)
    metrics.update(
        skipped=False,
        trained_prompts=trained_prompt_rewards(probe, after),
        prompts=len(kept),
        prompts_probed=len(rows),
        probe=probe,
        steps=step_rows(trainer.state.log_history),
        # under vLLM the grammar is its structured outputs (grpo_vllm_kwargs), not a processor
        constrained_generation=bool(factory is not None and (trainer.constrained_calls > 0 or trainer.args.use_vllm)),
        constrained_generate_calls=trainer.constrained_calls,
        shared_prefill_generate_calls=trainer.shared_prefill_calls,
        generation=generation_counts(getattr(trainer, "generation", None)),
    )
    if factory is not None and trainer.constrained_calls == 0 and not trainer.args.use_vllm:
        log.warning("grpo: the constraint was not applied to trl's generation (a wrapped model?)")
    log.info("grpo: %s", {k: v for k, v in metrics.items() if k not in ("probe", "steps", "trained_prompts")})
    log.info(
        "grpo: mean reward on the %d trained prompts %.3f before, %.3f after",
        metrics["trained_prompts"]["prompts"],
        metrics["trained_prompts"]["mean_before"],
        metrics["trained_prompts"]["mean_after"],
    )
    return metrics
