"""The evaluation sections: ``evaluate`` (the per-model evaluations and the table's rows),
``compare`` (paired bootstrap against the champion) and ``gate`` (what a candidate must reach).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from worldagent.config.base import NgramGuard, Section

EvalModel = Literal["base", "nearest", "sft", "experience", "dpo", "grpo", "champion", "reference"]
GeneratingModel = Literal["base", "sft", "experience", "dpo", "grpo", "champion"]
SelfCheckModel = Literal["base", "nearest", "sft", "experience", "dpo", "grpo", "champion"]


class EvaluateParams(Section):
    max_new_tokens: int = Field(default=1536, gt=0)
    base_max_new_tokens: int | None = Field(default=None, gt=0)
    """The untrained base's budget (None: ``max_new_tokens``). Its answers never end by themselves,
    so every one runs to the budget: a third of all evaluation time at 1,024 tokens in the smollm2
    profile, for a row that scores 0. The report says which budget each row had."""

    batch_size: int = Field(default=8, gt=0)
    dtype: Literal["model", "auto", "prefer-bfloat16", "float32", "bfloat16", "float16"] = "model"
    """The precision models are decoded in; ``model``: the one they were trained in (``model.dtype``).
    A bfloat16 answer moves with the batch it was decoded in (other padding, other kernel blocking,
    other rounding): the same adapter scored −0.052 [−0.102, −0.009] at batch size 33 against 34.
    float32 answers were identical at both, at 1.4x the time on a CPU (docs/profiles.md)."""
    threads: int = Field(default=1, gt=0)
    """Torch threads while a model is evaluated on a CPU (``WORLDAGENT_TORCH_THREADS`` overrides).
    Decoding is bound by the arithmetic of the weights and the memory traffic of the KV cache, and
    both scale with the cores: on 2 idle cores the SFT evaluation's decode step took 0.16 s with 2
    threads against 0.31 s with 1. One thread a stage where stages share the cores
    (``orchestrate.task_runner: dask``), where two threads can be several times slower."""
    max_intents: int | None = Field(default=None, gt=0)  # None: the whole eval split
    # The table's rows, in this order: ``nearest`` copies the nearest training story unchanged (the
    # baseline every trained stage must beat), ``reference`` is the upper bound.
    models: list[EvalModel] = Field(
        default_factory=lambda: ["base", "nearest", "sft", "experience", "dpo", "grpo", "champion", "reference"]
    )
    constrained: bool = True  # decode tool calls through worldagent.lm.constrained (well formed by construction)
    # Loop guard (see ``NgramGuard``): must exceed the longest n-gram a good answer repeats (the
    # story's path, written in writeStory and again in runStory). 0: off.
    no_repeat_ngram: NgramGuard = 0
    draft_tokens: int = Field(default=4, ge=0)
    """Answers' tokens drafted a step from their own context (the prompt's files and story,
    what the answer wrote) and checked in the same step: :mod:`worldagent.lm.speculation`. A step
    reads the weights and each row's cache once for a row's token and its drafts, so the answers
    take fewer steps; they are the one-token decoder's answers up to the rounding of larger products
    (float32: the same; a retry's draws too). The CPU decoders' lean step only. 0: off."""
    # Models also decoded without the constraint: rows "<model> (unconstrained)" show what it buys.
    unconstrained_models: list[GeneratingModel] = Field(default_factory=lambda: ["grpo"])
    self_check_attempts: int = Field(default=3, ge=0)
    """Retries per intent whose answer fails the agent's own check (it parses, no call is blocked, the
    story renders and passes the accessibility and pattern rules; never the hidden assertions):
    ``worldagent.world_agent.self_check``. A retry is a sampled decode of the same model (the
    next-nearest story for ``nearest``); the first answer that passes is scored (with ``self_check_words``,
    the earliest of the highest rank). 0: off."""
    self_check_words: bool = True
    """Rank answers by the own check and, above it, by whether the page also shows every phrase the
    intent quotes (the user's words are in the prompt, so that is still the agent's own check): a
    prompt is answered again while no answer shows them, and a retry replaces the kept answer only
    at a higher rank. False: the own check alone, the first passing answer kept."""
    self_check_temperature: float = Field(default=0.7, gt=0)  # sampling temperature of a retry
    # The models that retry (every decode variant of each). Not ``base``: its 256-token answers
    # never render, so retries would cost minutes for a row that stays at 0.
    self_check_models: list[SelfCheckModel] = Field(
        default_factory=lambda: ["nearest", "sft", "experience", "dpo", "grpo", "champion"]
    )

    def decode_dtype(self, trained: str) -> str:
        """The ``model.dtype`` setting to decode in, given the one the models were trained in."""
        return trained if self.dtype == "model" else self.dtype

    def budget(self, model: str) -> int:
        """New tokens at most per answer of ``model``."""
        return self.base_max_new_tokens or self.max_new_tokens if model == "base" else self.max_new_tokens


class CompareParams(Section):
    bootstrap_samples: int = Field(default=1000, gt=0)
    confidence: float = Field(default=0.95, gt=0, lt=1)
    # ``best``: the trained stage (sft, experience, dpo, grpo) with the highest held-out mean reward.
    candidate: Literal["best", "sft", "experience", "dpo", "grpo"] = "best"


class GateParams(Section):
    min_story_pass_rate: float = Field(default=0.0, ge=0, le=1)
    min_a11y_pass_rate: float = Field(default=0.05, ge=0, le=1)  # at least one held-out intent renders accessibly
    max_constraint_violations: float = Field(default=0.5, ge=0)  # mean blocked calls per intent
    margin: float = Field(default=0.05, ge=0)  # non-inferiority margin on mean reward
    above_nearest: bool = True
    """The candidate must beat copying the nearest training story unchanged: the paired bootstrap CI
    of candidate − nearest mean reward (compare.json's step effects) lies wholly above 0. A policy
    that cannot is not worth deploying; the tiny profile turns it off (its model only tests the
    machinery)."""
