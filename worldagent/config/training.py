"""The trainer sections: ``sft``, ``dpo``, ``grpo`` and ``experience``, each a ``TrainerParams``
with the knobs of its own stage.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from worldagent.config.base import NgramGuard, Section

FreedMemory = Literal["keep", "trim", "unmap"]  # see TrainerParams.freed_memory


class TrainerParams(Section):
    """Knobs shared by the trl stages; each stage has its own section with these keys."""

    epochs: float = Field(default=1.0, gt=0)
    max_steps: int = -1
    """> 0 overrides ``epochs``; -1: train for ``epochs``. 0 in ``experience``, ``dpo`` and ``grpo`` turns
    that stage off: no model is loaded, nothing is sampled, and the input adapter is written through
    unchanged with ``{"skipped": true, "reason": ...}`` in its record and the stage's metrics."""
    learning_rate: float = Field(default=1e-3, gt=0)
    batch_size: int = Field(default=4, gt=0)
    gradient_accumulation_steps: int = Field(default=1, gt=0)
    max_length: int = Field(default=2560, gt=0)
    logging_steps: int = Field(default=5, gt=0)
    save_steps: int = Field(default=50, gt=0)
    warmup_ratio: float = Field(default=0.0, ge=0, lt=1)
    activation_checkpointing: Literal["auto"] | bool = "auto"
    """Recompute activations in the backward pass instead of keeping them. ``auto``: on an accelerator
    for models of 100M+ parameters, whose memory is what runs out; never on a CPU, where it costs
    ~1.4x per step. ``true`` buys memory with that time (SmolLM2's DPO: docs/profiles.md, "Memory")."""
    freed_memory: FreedMemory = "keep"
    """What becomes of the memory each step frees (``worldagent.allocator``; docs/profiles.md, "Memory").
    ``keep``: glibc's default; it stays in the process as holes that later blocks do not always fit
    (SmolLM2's SFT: 6.9 GB after 16 steps, 9.36 GB after 99). ``trim``: its free pages go back to
    the OS after every micro-batch (5.8 GB after the same 16 steps, no slower). ``unmap``: large
    blocks get mappings of their own, returned on free: the lowest peak (SmolLM2's DPO 7.3 -> 5.6 GB),
    for ~1.1-1.6x the step time on a CPU."""


class SftParams(TrainerParams):
    assistant_only_loss: bool = True


class DpoParams(TrainerParams):
    beta: float = Field(default=0.1, gt=0)
    chosen_nll_weight: float = Field(default=0.0, ge=0)
    """Weight of a negative log-likelihood term on the chosen answer added to the DPO loss (RPO; trl's
    ``loss_type=["sigmoid", "sft"]``), so the preference does not pull the chosen answers' own
    likelihood down with the rejected ones; 0: plain DPO."""


class GrpoParams(TrainerParams):
    num_generations: int = Field(default=4, ge=2)
    temperature: float = Field(default=0.9, gt=0)
    max_completion_length: int = Field(default=1280, gt=0)
    max_prompts: int = Field(default=16, gt=0)  # prompts drawn from the training split
    probe_generations: int = Field(default=4, ge=2)
    """Completions per prompt sampled with the current policy before training, to measure whether
    the prompt's reward varies; prompts whose reward does not vary are left out (no GRPO gradient)."""
    min_reward_std: float = Field(default=1e-6, ge=0)
    """A prompt has signal when the standard deviation of its probe rewards is above this."""
    constrained: bool = True
    """Constrained decoding (``worldagent.lm.constrained``) in GRPO's own generation and the probe."""
    steps_per_generation: int | None = Field(default=None, gt=0)
    """trl's ``steps_per_generation``: the micro-batches one generation round serves. trl generates
    ``batch_size`` x this many completions in one ``generate`` call, so more prompts' groups decode
    side by side (a decode step costs nearly the same at 4 rows as at 16); the later micro-batches
    train on completions of a policy a few updates old, which trl's clipped importance ratio
    accounts for. None: trl's default, ``gradient_accumulation_steps`` (one round an optimizer step)."""


class ExperienceParams(TrainerParams):
    """The experience loop (``worldagent.world_agent.experience_loop``): sample the SFT policy on training
    intents, score through the constraints and the story test, keep the experience in the store, and
    train a rejection-sampling adapter on the passing completions (+ the reference rows)."""

    samples_per_prompt: int = Field(default=4, ge=1)
    """Completions sampled per training intent and run."""
    temperature: float = Field(default=0.9, gt=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_prompts: int = Field(default=16, gt=0)
    """Training intents sampled per run (single-turn trajectories in file order, each run starting
    where the store's last run stopped, wrapping round)."""
    max_new_tokens: int = Field(default=1280, gt=0)
    generation_batch_size: int = Field(default=16, gt=0)
    """Prompts generated together (each with ``samples_per_prompt`` sequences). At ``max_prompts``
    or more, every sample is in one batch, whose decode kernel reads each prompt's columns once for
    all its samples; fewer stream the samples through that many prompts' rows."""
    constrained: bool = True
    """Constrained decoding: tool calls well formed with known tool and argument names."""
    no_repeat_ngram: NgramGuard = 0
    """Loop guard for the sampled completions (see ``NgramGuard``); 0: off."""
    pass_reward: float = Field(default=0.99, ge=0)
    """A completion passes when its reward reaches this (1.0: story passes, accessible, every assertion)."""
    max_rows_per_prompt: int = Field(default=2, gt=0)
    """Passing completions per prompt that become SFT rows (best first), so no prompt dominates."""
    max_pairs_per_prompt: int = Field(default=2, gt=0)
    """On-policy (or reference-vs-failure) preference pairs per prompt."""
    reference_rows: bool = True
    """Train on the reference rows too, so the adapter does not forget what SFT taught."""
    min_reward_std: float = Field(default=1e-6, ge=0)
    """A prompt's reward varies (GRPO signal) when the std of its samples is above this."""
