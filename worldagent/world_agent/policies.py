"""Policies the evaluate stage scores: anything that turns chat prompts into assistant text.

``ReferencePolicy`` answers with the reference solution (the upper bound); ``decoding_policy``
decodes greedily (or sampled, for a retry) with a transformers causal LM (batched, KV cache, optionally constrained); the
nearest-story baseline is :class:`worldagent.world_agent.retrieval.NearestStoryPolicy`. Loading models is
the caller's job (``worldagent.lm.load.load_policy``), so this module never touches the disk or the Hub.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from worldagent.config.evaluation import EvaluateParams
    from worldagent.lm.engines import VllmPolicy
    from worldagent.lm.rollout import BatchedPolicy, PromptCache

Prompt = list[dict[str, Any]]


@runtime_checkable
class Policy(Protocol):
    def complete(self, prompts: list[Prompt]) -> list[str]:
        """One assistant reply per prompt, in order."""
        ...


def prompt_key(prompt: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(str(message.get("content", "")) for message in prompt)


class ReferencePolicy:
    """Answers each prompt with its reference output (``messages[2]`` of the eval row)."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self._answers: dict[tuple[str, ...], str] = {}
        for row in rows:
            messages = row["messages"]
            self._answers[prompt_key(messages[:2])] = str(messages[2]["content"])

    def complete(self, prompts: list[Prompt]) -> list[str]:
        missing = [i for i, prompt in enumerate(prompts) if prompt_key(prompt) not in self._answers]
        if missing:
            raise KeyError(f"no reference output for prompt(s) {missing[:5]} (the prompts are not from these rows)")
        return [self._answers[prompt_key(prompt)] for prompt in prompts]


class StaticPolicy:
    """Fixed outputs in prompt order (tests and replays of saved generations)."""

    def __init__(self, outputs: Sequence[str]) -> None:
        self.outputs = list(outputs)

    def complete(self, prompts: list[Prompt]) -> list[str]:
        if len(prompts) != len(self.outputs):
            raise ValueError(f"StaticPolicy has {len(self.outputs)} outputs for {len(prompts)} prompts")
        return list(self.outputs)


class ReusingPolicy:
    """``answers[i]`` where ``reuse[i]``, ``decoder``'s answers for the other prompts (in prompt order).

    For a second decoding that would give some answers a first one already gave: the unconstrained
    row reuses the constrained greedy answers the call grammar never steered (``Completion.steered``).
    ``stats`` are the decoder's (the prompts it decoded); ``reused``: the answers taken as they were.
    """

    def __init__(self, decoder: BatchedPolicy, answers: Sequence[str], reuse: Sequence[bool]) -> None:
        if len(answers) != len(reuse):
            raise ValueError(f"{len(answers)} answers for {len(reuse)} reuse flags")
        self.decoder, self.answers, self.reuse = decoder, list(answers), list(reuse)
        self.stats = decoder.stats
        self.reused = 0

    def complete(self, prompts: list[Prompt]) -> list[str]:
        if len(prompts) != len(self.answers):
            raise ValueError(f"ReusingPolicy has {len(self.answers)} answers for {len(prompts)} prompts")
        todo = [i for i, reuse in enumerate(self.reuse) if not reuse]
        answers = list(self.answers)
        for i, answer in zip(todo, self.decoder.complete([prompts[i] for i in todo]) if todo else [], strict=True):
            answers[i] = answer
        self.reused = len(prompts) - len(todo)
        return answers


def decoding_policy(
    model: Any,
    tokenizer: Any,
    *,
    constrained: bool,
    max_new_tokens: int,
    batch_size: int,
    no_repeat_ngram: int = 0,
    temperature: float | None = None,
    seed: int = 0,
    prompt_cache: PromptCache | None = None,
    llm: Any = None,
    draft_tokens: int = 0,
) -> BatchedPolicy | VllmPolicy:
    """Batched decoding with a KV cache (:class:`worldagent.lm.rollout.BatchedPolicy`): greedy,
    or sampled at ``temperature`` (seeded by ``seed``) when it is given.

    ``llm``: a ``vllm.LLM`` holding this model (:func:`worldagent.lm.engines.select_engine` chose
    vLLM): the same decoding through it (:class:`worldagent.lm.engines.VllmPolicy`), the call
    grammar as vLLM structured outputs.

    ``prompt_cache``: the prefilled prompts of an earlier decoding of the same model, which this one
    uses instead of prefilling them again (a self-check retry asks the same prompts).

    ``constrained``: tool calls are decoded through the call grammar of the default tools
    (:func:`worldagent.lm.rollout.constrained_policy`, calls only), so every answer parses.
    ``no_repeat_ngram``: the loop guard (:mod:`worldagent.lm.ngram_guard`); 0: off.
    ``draft_tokens``: an answer's drafted tokens a step (:mod:`worldagent.lm.speculation`); 0: off.
    """
    from worldagent.lm.rollout import BatchedPolicy, SamplingConfig, constrained_policy
    from worldagent.tools.registry import tool_schemas

    sampling = {"do_sample": True, "temperature": temperature, "seed": seed} if temperature is not None else {}
    config = SamplingConfig(
        max_new_tokens=max_new_tokens, no_repeat_ngram=no_repeat_ngram, draft_tokens=draft_tokens, **sampling
    )
    if llm is not None:
        from worldagent.lm.constrained import call_grammar_gbnf
        from worldagent.lm.engines import VllmPolicy

        return VllmPolicy(llm, tokenizer, config, call_grammar_gbnf(tool_schemas()) if constrained else None)
    if constrained:
        return constrained_policy(model, tokenizer, tool_schemas(), config, batch_size, prompt_cache=prompt_cache)
    return BatchedPolicy(model, tokenizer, config, batch_size, prompt_cache=prompt_cache)


def evaluation_policy(
    model: Any,
    tokenizer: Any,
    settings: EvaluateParams,
    stage: str,
    *,
    constrained: bool | None = None,
    temperature: float | None = None,
    seed: int = 0,
    prompt_cache: PromptCache | None = None,
    llm: Any = None,
) -> BatchedPolicy | VllmPolicy:
    """:func:`decoding_policy` as the evaluation decodes ``stage``'s answers: its token budget, batch
    size and loop guard from ``settings``; the call grammar as ``settings.constrained`` says unless
    ``constrained`` is given (a decode variant). Written once so a benchmark decodes as the stage does."""
    return decoding_policy(
        model,
        tokenizer,
        constrained=settings.constrained if constrained is None else constrained,
        max_new_tokens=settings.budget(stage),
        batch_size=settings.batch_size,
        no_repeat_ngram=settings.no_repeat_ngram,
        draft_tokens=settings.draft_tokens,
        temperature=temperature,
        seed=seed,
        prompt_cache=prompt_cache,
        llm=llm,
    )
