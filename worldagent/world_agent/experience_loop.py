"""The experience loop: sample the current policy, score, keep the experience, learn from it.

One run of the ``experience`` stage:

1. draws ``experience.max_prompts`` training intents (the single-turn trajectories' prompts, the
   next ones after those the store's earlier runs drew) and
   samples ``experience.samples_per_prompt`` completions each from base+sft, with constrained
   decoding (:func:`worldagent.lm.continuous.generate_groups` + the tool-call processor);
2. scores every completion with the GRPO reward (:class:`worldagent.world_agent.rewards.StoryTestReward`:
   the calls through the b-thread constraints, the sandbox and the story test);
3. merges the scored samples into the experience store (:mod:`worldagent.world_agent.experience`), which
   persists between runs: the store read is last run's, the store written is last run's plus this
   run's, deduplicated, with provenance (the sampling adapter's hash, the run id, the prompt hash);
4. trains the ``experience`` adapter (rejection-sampling fine-tuning): a new LoRA on the merged SFT
   model over the passing completions of the WHOLE store (this run's and earlier runs') plus the
   reference rows, with trl's SFTTrainer;
5. writes on-policy preference pairs from the whole store for DPO (pass vs fail of the same prompt;
   the reference vs a failure where nothing passes).

The run id is derived from its inputs (the sampling model, the previous store, the params), and the
sampling seed from ``seed`` plus the number of runs already in the store: the same inputs give the
same store bytes, and a later run with the same model still draws new samples.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from worldagent.config import ExperienceParams
from worldagent.guard import files
from worldagent.io import atomic_write_text, canonical_json, jsonl, read_json, sha256_bytes
from worldagent.lm.continuous import generate_groups
from worldagent.lm.rollout import GenerationStats, SamplingConfig
from worldagent.lm.sft import sft_spec
from worldagent.lm.training import (
    LoraSetup,
    StageRun,
    TrainingError,
    is_off,
    off_reason,
    read_jsonl,
    read_stage,
    require_complete_adapter,
    skip_stage,
    train_stage,
    tree_hash,
)
from worldagent.world_agent.experience import (
    ExperienceSample,
    preference_pairs,
    read_store,
    rejection_sft_rows,
    reward_std,
    reward_variance_filter,
    samples_from_groups,
    update_store,
)
from worldagent.world_agent.relabel import is_original_single_turn
from worldagent.world_agent.rewards import RewardSetup

log = logging.getLogger(__name__)
STAGE = "experience"
# A trl-style reward function: (prompts, completions, id=[...], given_files=[...]) -> rewards.
RewardFunction = Callable[..., Sequence[float]]


# --------------------------------------------------------------------------- inputs


def prompt_rows(path: Path, max_prompts: int, start: int = 0) -> list[dict[str, Any]]:
    """``{prompt, id, given_files}`` rows, the prompts the experience loop samples and GRPO trains on:
    the system+user turns of the single-turn trajectories, ``max_prompts`` of them in file order from
    the ``start``-th on, wrapping round (never one twice); ``given_files`` is the files the task's
    sandbox starts with (JSON). Relabelled copies are left out: a reward needs the story's own test."""
    rows = []
    for row in _single_turn(path):
        prompt = []
        for message in row.get("messages") or []:
            if message.get("role") == "assistant":
                break
            prompt.append({"role": str(message["role"]), "content": str(message["content"])})
        if not prompt:
            continue
        rows.append(
            {
                "prompt": prompt,
                "id": str(row["id"]),
                "given_files": json.dumps(row.get("given_files") or [], sort_keys=True),
            }
        )
    if not rows:
        raise TrainingError(f"{path}: no single-turn trajectories with an `id` to draw prompts from")
    first = start % len(rows)
    return (rows[first:] + rows[:first])[:max_prompts]


def _single_turn(path: Path) -> list[dict[str, Any]]:
    return [row for row in read_jsonl(path) if is_original_single_turn(row) and "id" in row]


def reference_answers(path: Path) -> dict[str, str]:
    """Story id -> the reference answer (the single-turn trajectory's assistant turn)."""
    answers: dict[str, str] = {}
    for row in _single_turn(path):
        for message in row.get("messages") or []:
            if message.get("role") == "assistant":
                answers.setdefault(str(row["id"]), str(message["content"]))
                break
    return answers


def reference_rows(path: Path) -> list[dict[str, Any]]:
    """``{messages}`` SFT rows of the single-turn reference trajectories, in file order."""
    return [
        {"messages": [{"role": str(m["role"]), "content": str(m["content"])} for m in row["messages"]]}
        for row in _single_turn(path)
        if any(m.get("role") == "assistant" for m in row.get("messages") or [])
    ]


def model_hash(adapter_dir: Path | None, base_dir: Path) -> str:
    """Which model samples: the adapter's recorded hash (its files), else the base's content hash."""
    if adapter_dir is None:
        return "base:" + tree_hash(base_dir)
    return str(read_stage(adapter_dir).get("adapter_sha256") or tree_hash(adapter_dir))


# --------------------------------------------------------------------------- sampling and scoring


def tool_processor(tokenizer: Any, model: Any, max_new_tokens: int) -> Any:
    """The constrained-decoding processor factory for the registry's tools, calls only."""
    from worldagent.lm.constrained import tool_call_processor_factory
    from worldagent.tools.registry import tool_schemas

    return tool_call_processor_factory(tokenizer, tool_schemas(), max_new_tokens, model, calls_only=True)


def score_groups(
    reward: RewardFunction, rows: Sequence[Mapping[str, Any]], groups: Sequence[Sequence[str]]
) -> list[list[float]]:
    """``reward`` over each group of completions (text), with the row's ``id`` and ``given_files`` columns."""
    scores = []
    for row, group in zip(rows, groups, strict=True):
        values = reward(
            prompts=[row["prompt"]] * len(group),
            completions=list(group),
            id=[row["id"]] * len(group),
            given_files=[row.get("given_files", "[]")] * len(group),
        )
        scores.append([float(v) for v in values])
    return scores


def sample_groups(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Mapping[str, Any]],
    *,
    samples: int,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    batch_size: int,
    constrained: bool,
    seed: int,
    stats: GenerationStats | None = None,
    no_repeat_ngram: int = 0,
    continuous: bool = True,
) -> list[list[str]]:
    """``samples`` sampled completions (text) per row's prompt, constrained when asked; ``no_repeat_ngram``
    is the loop guard (:mod:`worldagent.lm.ngram_guard`, 0: off); ``continuous``: one stream of
    ``batch_size`` prompts' rows, else static batches (:func:`~worldagent.lm.continuous.generate_groups`)."""
    config = SamplingConfig(
        max_new_tokens=max_new_tokens,
        do_sample=True,
        temperature=temperature,
        top_p=top_p,
        num_return_sequences=samples,
        seed=seed,
        no_repeat_ngram=no_repeat_ngram,
    )
    processor = tool_processor(tokenizer, model, max_new_tokens) if constrained else None
    prompts = [row["prompt"] for row in rows]
    groups = generate_groups(model, tokenizer, prompts, config, batch_size, processor, stats, continuous=continuous)
    return [[completion.text for completion in group] for group in groups]


def variance_summary(
    rows: Sequence[Mapping[str, Any]], rewards: Sequence[Sequence[float]], min_std: float
) -> dict[str, Any]:
    """Per-prompt reward mean/std and the share of prompts whose reward varies (GRPO's signal)."""
    _, summary = reward_variance_filter([row["id"] for row in rows], rewards, min_std)
    per_prompt = [
        {"id": row["id"], "mean": sum(r) / len(r) if r else 0.0, "std": reward_std(list(r))}
        for row, r in zip(rows, rewards, strict=True)
    ]
    return {
        **summary,
        "frac_prompts_with_variance": 1.0 - summary["frac_reward_zero_std"] if per_prompt else 0.0,
        "per_prompt": per_prompt,
    }


# --------------------------------------------------------------------------- the stage


def run_id_for(
    sampler: str,
    previous_manifest: str | None,
    experience: ExperienceParams,
    setup: LoraSetup,
    reward_setup: RewardSetup,
) -> str:
    """A run id derived from what the run depends on (same inputs, same id; a new week, a new id)."""
    digest = sha256_bytes(
        canonical_json(
            {
                "model": sampler,
                "previous": previous_manifest,
                "seed": setup.seed,
                "experience": experience.model_dump(),
                "reward": reward_setup.weights.model_dump(),
            }
        ).encode("utf-8")
    )
    return f"run-{digest[:12]}"


def _manifest_hash(store: Path) -> str | None:
    manifest = Path(store) / "manifest.json"
    return sha256_bytes(files.read_bytes(manifest, what="the experience manifest")) if manifest.is_file() else None


def _runs(store: Path) -> int:
    manifest = Path(store) / "manifest.json"
    if not manifest.is_file():
        return 0
    return len(read_json(manifest, "the experience manifest", expect=dict).get("runs") or {})


def training_rows(
    samples: Sequence[ExperienceSample], references: Sequence[Mapping[str, Any]], experience: ExperienceParams
) -> tuple[list[dict[str, Any]], int]:
    """(``{messages}`` rows, how many came from the experience): the store's passing completions, then
    the reference rows when ``experience.reference_rows``."""
    rejection = [
        {"messages": row["messages"]}
        for row in rejection_sft_rows(samples, max_per_prompt=experience.max_rows_per_prompt)
    ]
    rows = rejection + ([dict(r) for r in references] if experience.reference_rows else [])
    return rows, len(rejection)


def train_experience_adapter(
    experience: ExperienceParams,
    setup: LoraSetup,
    reward_setup: RewardSetup,
    assistant_only_loss: bool,
    base_dir: Path,
    sft_dir: Path,
    rows: list[dict[str, Any]],
    out_dir: Path,
    *,
    live_dir: Path | None = None,
    device: str | None = None,
    callbacks: Sequence[Any] = (),
) -> dict[str, Any]:
    """A new LoRA on the merged SFT model over ``rows`` (trl's SFTTrainer, the prompt masked when
    ``assistant_only_loss``, sft's setting), written to ``out_dir``."""
    if not rows:
        raise TrainingError("experience: nothing to train on (no passing completion and experience.reference_rows off)")
    run = StageRun(
        stage=STAGE,
        section=experience,
        setup=setup,
        base_dir=Path(base_dir),
        out_dir=Path(out_dir),
        data_hash=sha256_bytes(canonical_json(rows).encode("utf-8")),
        live_dir=live_dir,
        callbacks=tuple(callbacks),
        record_extra={"reward": reward_setup.weights.model_dump()},
    )
    return train_stage(run, Path(sft_dir), lambda loaded: sft_spec(rows, experience, assistant_only_loss), device)


def skip_experience(
    sft_dir: Path, store: Path, out_dir: Path, pairs_path: Path, previous: Path, live_dir: Path | None
) -> dict[str, Any]:
    """The stage off (``experience.max_steps`` 0): no model, no sampling. The sft adapter is written
    through, the store is last run's unchanged and there are no on-policy pairs; every out exists."""
    store_stats = update_store(store, [], previous=previous)
    atomic_write_text(Path(pairs_path), "")
    return skip_stage(STAGE, sft_dir, Path(out_dir), live_dir, off_reason(STAGE), store=store_stats)


def run_experience(
    experience: ExperienceParams,
    setup: LoraSetup,
    reward_setup: RewardSetup,
    base_dir: Path,
    sft_dir: Path,
    trajectories: Path,
    stories_root: Path,
    store: Path,
    out_dir: Path,
    pairs_path: Path,
    *,
    assistant_only_loss: bool = True,
    previous_store: Path | None = None,
    live_dir: Path | None = None,
    reward: RewardFunction | None = None,
    runner: Any = None,
    device: str | None = None,
) -> dict[str, Any]:
    """One experience-loop run (see the module doc); returns the metrics.

    ``store`` is read (last run's experience; ``previous_store`` instead when given) and rewritten
    with this run's samples merged in. ``reward`` replaces the story-test reward (tests).
    ``assistant_only_loss``: sft's setting, which the rejection-sampling fine-tune shares.
    ``experience.max_steps`` 0: the stage is off (:func:`skip_experience`).
    """
    from worldagent.lm.load import load_policy

    base_dir, sft_dir, trajectories, store = Path(base_dir), Path(sft_dir), Path(trajectories), Path(store)
    require_complete_adapter(sft_dir, "sft")
    p = experience
    previous = Path(previous_store) if previous_store is not None else store
    if is_off(p):
        return skip_experience(sft_dir, store, Path(out_dir), Path(pairs_path), previous, live_dir)
    # Each run draws the intents after the last run's, so weekly runs cover the training split in turn.
    prompt_start = _runs(previous) * p.max_prompts
    rows = prompt_rows(trajectories, p.max_prompts, start=prompt_start)
    sampler = model_hash(sft_dir, base_dir)
    run_id = run_id_for(sampler, _manifest_hash(previous), p, setup, reward_setup)
    seed = setup.seed + _runs(previous)

    # sampled in the precision SFT trained in, as GRPO's rollouts and the evaluations decode: on a
    # CPU with bfloat16 that is about half a float32 sample's time (docs/decisions.md)
    model, tokenizer = load_policy(base_dir, sft_dir, device=device, dtype=setup.model.dtype)
    if reward is None:
        reward = reward_setup.story_test_reward(Path(stories_root), tokenizer, runner)
    stats = GenerationStats()
    groups = sample_groups(
        model,
        tokenizer,
        rows,
        samples=p.samples_per_prompt,
        temperature=p.temperature,
        top_p=p.top_p,
        max_new_tokens=p.max_new_tokens,
        batch_size=p.generation_batch_size,
        constrained=p.constrained,
        seed=seed,
        stats=stats,
        no_repeat_ngram=p.no_repeat_ngram,
    )
    del model  # the trainer loads its own copy; one is enough in memory
    started = time.perf_counter()
    rewards = score_groups(reward, rows, groups)
    scoring_s = time.perf_counter() - started
    new = samples_from_groups(
        rows,
        groups,
        rewards,
        pass_reward=p.pass_reward,
        model_hash=sampler,
        run_id=run_id,
        details={"temperature": p.temperature, "constrained": p.constrained, "seed": seed},
    )
    store_stats = update_store(store, new, previous=previous)
    stored = read_store(store)

    train_rows, from_experience = training_rows(stored, reference_rows(trajectories), p)
    training = train_experience_adapter(
        p, setup, reward_setup, assistant_only_loss, base_dir, sft_dir, train_rows, Path(out_dir), live_dir=live_dir
    )

    pairs = preference_pairs(stored, reference_answers(trajectories), max_pairs_per_prompt=p.max_pairs_per_prompt)
    atomic_write_text(Path(pairs_path), jsonl(pairs))

    flat = [r for group in rewards for r in group]
    passed = sum(s.passed for s in new)
    metrics: dict[str, Any] = {
        "run_id": run_id,
        "model_hash": sampler,
        "seed": seed,
        "prompts_sampled": len(rows),
        "prompt_start": prompt_start,
        "samples_per_prompt": p.samples_per_prompt,
        "completions": len(flat),
        "passed": passed,
        "pass_rate": passed / len(flat) if flat else 0.0,
        "mean_reward": sum(flat) / len(flat) if flat else 0.0,
        "reward_variance": variance_summary(rows, rewards, p.min_reward_std),
        "store": {
            **store_stats,
            "runs": _runs(store),
            "prompts": len({s.prompt_hash for s in stored}),
            "passed": sum(s.passed for s in stored),
        },
        "sft_rows": {"experience": from_experience, "reference": len(train_rows) - from_experience},
        "pairs": {
            "total": len(pairs),
            "on_policy": sum(row["source"] == "on-policy" for row in pairs),
            "reference": sum(row["source"] == "reference" for row in pairs),
        },
        "generation": {
            "constrained": p.constrained,
            "new_tokens": stats.new_tokens,
            "seconds": round(stats.seconds, 3),
            "tokens_per_second": round(stats.tokens_per_second, 3),
        },
        "scoring_seconds": round(scoring_s, 3),
        "training": training,
    }
    log.info(
        "experience: %d prompts × %d samples, pass rate %.3f, store %d (+%d), %d SFT rows from experience, %d pairs",
        len(rows),
        p.samples_per_prompt,
        metrics["pass_rate"],
        store_stats["total"],
        store_stats["added"],
        from_experience,
        len(pairs),
    )
    return metrics
