"""evaluate_<model>: ONE model of ``evaluate.models`` on the eval split → ``eval/<model>.json``.

One cached step per model, so a model whose inputs did not change is never generated again:

- ``base``: the base alone; ``sft``/``experience``/``dpo``/``grpo``: the stage's adapter (its chain
  merged) on the base (a stage that did not train, its adapter record ``skipped``: a file with no rows
  and a note, since its adapter is the previous stage's); ``champion``: the adapter the champion
  reference names (no champion yet: a file with no rows and a note);
- ``nearest``: the copy-the-nearest-training-story baseline
  (:class:`worldagent.world_agent.retrieval.NearestStoryPolicy` over the training split);
- ``reference``: the reference outputs, the upper bound.

Models are decoded greedily in batches with a KV cache (:func:`worldagent.world_agent.policies.evaluation_policy`),
through the constrained tool-call decoder when ``evaluate.constrained``; models listed in
``evaluate.unconstrained_models`` are decoded a second time without it (row ``"<model> (unconstrained)"``).
``out`` has deterministic bytes; ``speed`` (generation tokens per second) varies run to run.
A model not in ``evaluate.models`` (the profile does not show it) loads nothing: a file with no
rows and a note.

The stage table has one entry per model, each calling :func:`evaluate_model_stage` with the model's
name and exactly the paths that model needs.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from worldagent.config import (
    EvalModel,
    EvaluateParams,
    ModelParams,
    Params,
    RegistryParams,
    RewardWeights,
    StorytestParams,
)
from worldagent.errors import InputError
from worldagent.evaluation.compare import TRAINED_STAGES
from worldagent.evaluation.metrics import summarize
from worldagent.evaluation.model_eval import (
    EvalRow,
    GenerationCounts,
    ModelEvalFile,
    speed_payload,
    unconstrained_name,
    write_model_eval,
)
from worldagent.io import atomic_write_text, pretty_json, read_jsonl
from worldagent.world_agent.evaluate import Scorer, evaluate_outputs, load_eval_rows, load_token_files, prompts_of
from worldagent.world_agent.policies import Policy, ReferencePolicy, ReusingPolicy, evaluation_policy
from worldagent.world_agent.self_check import SelfCheckingPolicy, TieredSelfCheckingPolicy, row_check, tiered_check

if TYPE_CHECKING:
    from worldagent.lm.rollout import GenerationStats

log = logging.getLogger("worldagent.evaluation")

# (base_dir, adapter_dir or None) -> (model, tokenizer); the default is worldagent.lm.load.load_policy.
Loader = Callable[[Path, "Path | None"], tuple[Any, Any]]


def default_loader(
    base_dir: Path, adapter_dir: Path | None, dtype: str = "auto", cpu_threads: int = 1
) -> tuple[Any, Any]:
    from worldagent.lm.load import load_policy

    return load_policy(base_dir, adapter_dir, dtype=dtype, cpu_threads=cpu_threads)


def score_policy_row(
    name: str, policy: Policy, rows: Sequence[dict[str, Any]], scorer: Scorer, **extra: Any
) -> EvalRow:
    """``policy``'s answer to every row, scored: one :class:`EvalRow` (with the self-check's counts
    when ``policy`` is a :class:`SelfCheckingPolicy`)."""
    outputs = policy.complete(prompts_of(rows))
    results = evaluate_outputs(rows, outputs, scorer.stories_root, scorer.runner, scorer.weights, scorer=scorer)
    if isinstance(policy, SelfCheckingPolicy):
        extra["self_check"] = policy.counts
    row = EvalRow(name=name, metrics=summarize(results), per_intent=results, outputs=list(outputs), **extra)
    m = row.metrics
    log.info(
        "%s: reward %.3f  story %.2f  a11y %.2f  parse %.2f  (n=%d)",
        *(name, m.mean_reward, m.story_pass_rate, m.a11y_pass_rate, m.parse_rate, m.n),
    )
    return row


def decode_variants(settings: EvaluateParams, model_name: str) -> list[tuple[str, bool]]:
    """(row name, constrained) for each way ``model_name`` is decoded."""
    variants = [(model_name, settings.constrained)]
    if settings.constrained and model_name in settings.unconstrained_models:
        variants.append((unconstrained_name(model_name), False))
    return variants


def with_self_check(
    settings: EvaluateParams,
    model_name: str,
    first: Policy,
    retry: Callable[[int], Policy],
    rows: Sequence[dict[str, Any]],
    scorer: Scorer,
) -> Policy:
    """``first``, retried by ``retry(k)`` while an answer fails the agent's own check (ranked with the
    intent's quoted words when ``evaluate.self_check_words``), when ``evaluate.self_check_attempts``
    and ``evaluate.self_check_models`` say so; else ``first``."""
    if not settings.self_check_attempts or model_name not in settings.self_check_models:
        return first
    if settings.self_check_words:
        return TieredSelfCheckingPolicy(first, retry, tiered_check(scorer, rows), settings.self_check_attempts)
    return SelfCheckingPolicy(first, retry, row_check(scorer, rows), settings.self_check_attempts)


def generation_stats(policy: Policy) -> GenerationStats:
    """The decoding counts of ``policy``, its retries' included."""
    from worldagent.lm.rollout import GenerationStats

    used = policy.used if isinstance(policy, SelfCheckingPolicy) else [policy]
    total = GenerationStats()
    for part in used:
        total.add(part.stats)  # type: ignore[attr-defined]
    return total


def vllm_engine(
    settings: EvaluateParams,
    seed: int,
    model_name: str,
    model: Any,
    tokenizer: Any,
    rows: Sequence[dict[str, Any]],
    stack: contextlib.ExitStack,
) -> Any:
    """A ``vllm.LLM`` holding ``model`` (merged into a temporary directory that ``stack`` removes)
    where :func:`worldagent.lm.engines.select_engine` picks vLLM for its device; else None."""
    from worldagent.lm.engines import load_vllm, merged_model_dir, select_engine
    from worldagent.lm.rollout import encode_prompt

    device = str(next(model.parameters()).device)
    if select_engine(device) != "vllm":
        return None
    work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="worldagent-vllm-")))
    longest = max((len(encode_prompt(tokenizer, prompt)) for prompt in prompts_of(rows)), default=0)
    log.info("%s: decoding through vLLM (CUDA present, vLLM installed)", model_name)
    return load_vllm(
        merged_model_dir(model, tokenizer, work),
        max_model_len=longest + settings.budget(model_name),
        seed=seed,
    )


def generate_rows(
    settings: EvaluateParams,
    seed: int,
    model_name: str,
    model: Any,
    tokenizer: Any,
    rows: Sequence[dict[str, Any]],
    scorer: Scorer,
    llm: Any = None,
) -> tuple[list[EvalRow], dict[str, dict[str, Any]]]:
    """The model's rows (constrained and/or not) and their timings; ``seed`` seeds the retries and
    vLLM; ``llm`` is :func:`vllm_engine`'s engine, None for the project's decoder."""
    from worldagent.lm import decode_attention, lean_linear
    from worldagent.lm.rollout import BatchedPolicy, PromptCache

    evaluated: list[EvalRow] = []
    timings: dict[str, dict[str, Any]] = {}
    greedy: Policy | None = None  # the constrained variant's first (greedy) decoding
    # every prompt is prefilled once for this model: its retries and its other variant reuse it
    prompts = PromptCache()
    for name, constrained in decode_variants(settings, model_name):
        decode = partial(
            evaluation_policy,
            model,
            tokenizer,
            settings,
            model_name,
            constrained=constrained,
            prompt_cache=prompts,
            llm=llm,
        )

        def retry(k: int, decode: Callable[..., Policy] = decode) -> Policy:
            # the k-th retry samples with its own seed: a different, reproducible answer each time
            return decode(temperature=settings.self_check_temperature, seed=seed + k)

        decoder = decode()
        first: Policy = decoder
        # (vLLM does not say where the grammar steered: its answers are not reused)
        if not constrained and isinstance(greedy, BatchedPolicy) and len(greedy.last) == len(rows):
            # where the grammar never changed the greedy choice, decoding without it answers the same
            first = ReusingPolicy(decoder, [c.text for c in greedy.last], [not c.steered for c in greedy.last])
        policy = with_self_check(settings, model_name, first, retry, rows, scorer)
        row = score_policy_row(name, policy, rows, scorer)
        if constrained:
            greedy = decoder
        stats = generation_stats(policy)
        row.generation = GenerationCounts(
            prompts=stats.prompts,
            new_tokens=stats.new_tokens,
            batches=stats.batches,
            batch_size=settings.batch_size,
            max_new_tokens=settings.budget(model_name),
            constrained=constrained,
        )
        evaluated.append(row)
        timings[name] = {
            "constrained": constrained,
            "prompts": stats.prompts,
            "new_tokens": stats.new_tokens,
            "seconds": round(stats.seconds, 3),
            "prefill_seconds": round(stats.prefill_seconds, 3),
            "tokens_per_second": round(stats.tokens_per_second, 2),
            "engine": "vllm" if llm is not None else "decoder",
            "decode_attention": decode_attention.label(model) if llm is None else "vllm",
            "products": lean_linear.multiplies_in(model) if llm is None else "vllm",
            "batch_size": settings.batch_size,
            # the work done against the least any engine must do (every unique prompt token prefilled
            # once, every new token decoded once)
            "prefilled_tokens": stats.prefilled_tokens,
            "reused_prompt_tokens": stats.reused_tokens,
            "decoded_tokens": stats.decoded_tokens,
            "drafted_tokens": stats.drafted_tokens,
            "kept_drafts": stats.kept_drafts,
            "minimum_tokens": stats.minimum_tokens,
            "spent_over_minimum": round(stats.spent_over_minimum, 3),
        }
        if isinstance(first, ReusingPolicy):
            timings[name]["reused_first_answers"] = first.reused
        log.info(
            "%s: %d new tokens in %.1f s (%.1f tokens/s)%s",
            *(name, stats.new_tokens, stats.seconds, stats.tokens_per_second),
            f"; {first.reused} first answers reused" if isinstance(first, ReusingPolicy) else "",
        )
    return evaluated, timings


def _require_dir(path: Path | None, what: str, stage: str) -> Path:
    if path is None or not Path(path).is_dir():
        raise InputError(f"{path}: {what} not found (run the {stage} stage first)")
    return Path(path)


def not_listed_note(name: str) -> str:
    """What ``eval/<name>.json`` says of a model the profile does not evaluate."""
    return f"`{name}` is not in `evaluate.models`: not evaluated."


def did_not_train_note(name: str, adapter: Path) -> str | None:
    """What ``eval/<name>.json`` says when the stage's adapter record says it did not train (the
    stage was off or had nothing to train, so its adapter is the previous stage's); None when it trained.

    An adapter without its record is left to the loader, which rejects it as incomplete."""
    from worldagent.lm.training import STAGE_FILE, read_stage

    if not (adapter / STAGE_FILE).is_file():
        return None
    record = read_stage(adapter)
    if not record.get("skipped"):
        return None
    reason = record.get("reason") or "no reason recorded"
    source = record.get("passthrough_of") or "the previous stage"
    return f"`{name}` did not train ({reason}): its adapter is `{source}`'s, not evaluated again."


def evaluate_model(
    settings: EvaluateParams,
    name: str,
    rows: Sequence[dict[str, Any]],
    scorer: Scorer,
    *,
    seed: int,
    model: ModelParams,
    registry: RegistryParams,
    base: Path | None = None,
    adapter: Path | None = None,
    champion: Path | None = None,
    trajectories: Path | None = None,
    root: Path = Path("."),
    loader: Loader | None = None,
) -> tuple[ModelEvalFile, dict[str, dict[str, Any]]]:
    """One model's evaluation file and its timings (see the module docstring for what ``name`` takes).

    ``seed`` seeds the retries; ``model.dtype`` is what ``evaluate.dtype: model`` decodes in and
    ``registry.family`` whose champion ``champion`` is (each read only by the models that need it)."""
    evaluation = ModelEvalFile(
        model=name,
        intents=[str(row["id"]) for row in rows],
        components=sorted({str(row["component"]) for row in rows}),
    )
    timings: dict[str, dict[str, Any]] = {}
    if name not in get_args(EvalModel):
        raise InputError(f"unknown model {name!r} to evaluate")
    if name not in settings.models:
        evaluation.notes.append(not_listed_note(name))
        return evaluation, timings
    if name == "reference":
        evaluation.rows.append(score_policy_row(name, ReferencePolicy(rows), rows, scorer))
    elif name == "nearest":
        from worldagent.world_agent.retrieval import BM25Index, NearestStoryPolicy, documents_from_trajectories

        if trajectories is None:
            raise InputError("the nearest-story baseline needs the training trajectories (trajectories.jsonl)")
        training = read_jsonl(trajectories, "the training trajectories", hint="run the generate stage first")
        try:
            index = BM25Index(documents_from_trajectories(training))
        except ValueError as error:
            raise InputError(f"{trajectories}: {error}") from None
        nearest = [NearestStoryPolicy(index)]  # rank k: the k-th retry copies the (k+1)-th nearest story

        def runner_up(rank: int) -> Policy:
            nearest.append(NearestStoryPolicy(index, rank))
            return nearest[-1]

        policy = with_self_check(settings, name, nearest[0], runner_up, rows, scorer)
        row = score_policy_row(name, policy, rows, scorer)
        ranks = policy.answered_by if isinstance(policy, SelfCheckingPolicy) else [0] * len(rows)
        row.copied = [nearest[rank].choose(prompt).id for prompt, rank in zip(prompts_of(rows), ranks, strict=True)]
        evaluation.rows.append(row)
        evaluation.notes.append(
            "`nearest` answers each intent with the nearest training story's calls copied unchanged"
            " (BM25 over the training intents; the baseline a trained model must beat)."
        )
    else:
        base = _require_dir(base, "base model", "base")
        if name == "champion":
            from worldagent.registry.champion import load_champion

            if champion is None:
                raise InputError("the champion evaluation needs the champion reference file")
            pinned = load_champion(champion, root, registry.family)
            if pinned is None:
                evaluation.notes.append("No champion is deployed yet (first run): the champion was not evaluated.")
                return evaluation, timings
            evaluation.notes.append(
                f"The champion is {pinned.label} ({pinned.path}), re-evaluated on the same intents."
            )
            adapter = pinned.path
        elif name in TRAINED_STAGES:
            adapter = _require_dir(adapter, f"{name} adapter", name)
            if untrained := did_not_train_note(name, adapter):
                evaluation.notes.append(untrained)
                return evaluation, timings
        adapter = adapter if name != "base" else None
        if loader is None:  # evaluate.dtype, not always the one it was trained in (model.dtype)
            dtype = settings.decode_dtype(model.dtype)
            policy_model, tokenizer = default_loader(base, adapter, dtype=dtype, cpu_threads=settings.threads)
        else:
            policy_model, tokenizer = loader(base, adapter)
        evaluation.notes.append(precision_note(policy_model))
        try:
            with contextlib.ExitStack() as stack:
                llm = vllm_engine(settings, seed, name, policy_model, tokenizer, rows, stack)
                evaluated, timings = generate_rows(settings, seed, name, policy_model, tokenizer, rows, scorer, llm)
        finally:
            del policy_model
            gc.collect()
        evaluation.rows.extend(evaluated)
        if budget_note := _budget_note(settings, name):
            evaluation.notes.append(budget_note)
    evaluation.notes.extend(row.self_check.note(row.name) for row in evaluation.rows if row.self_check)
    return evaluation, timings


def precision_note(model: Any) -> str:
    """What the answers were decoded in: the same sentence for every model so decoded (the report keeps one)."""
    from worldagent.lm.device import precision_label

    weights = next(model.parameters())  # the base's (LoRA weights stay float32): as the training metrics say it
    precision = precision_label(weights.dtype, weights.device.type)
    return f"The models' answers were decoded in {precision} (`evaluate.dtype`)."


def _budget_note(settings: EvaluateParams, name: str) -> str | None:
    budget, usual = settings.budget(name), settings.max_new_tokens
    if budget == usual:
        return None
    return f"`{name}` was decoded with at most {budget} new tokens per answer (the other models {usual})."


def make_scorer(storytest: StorytestParams, reward: RewardWeights, stories: Path, stories_dir: Path) -> Scorer:
    from worldagent.storytest.runner import make_runner

    return Scorer(stories_dir, make_runner(storytest), reward, load_token_files(stories))


def evaluate_model_stage(
    params: Params,
    *,
    name: str,
    eval_trajectories: Path,
    stories: Path,
    stories_dir: Path,
    out: Path,
    speed: Path | None = None,
    base: Path | None = None,
    adapter: Path | None = None,
    champion: Path | None = None,
    trajectories: Path | None = None,
    root: Path = Path("."),
    loader: Loader | None = None,
) -> ModelEvalFile:
    """Evaluate the model ``name`` → ``out`` (eval/<name>.json) and, for generating models, ``speed``."""
    rows = load_eval_rows(eval_trajectories, params.evaluate.max_intents)
    scorer = make_scorer(params.storytest, params.reward, stories, stories_dir)
    evaluation, timings = evaluate_model(
        params.evaluate,
        name,
        rows,
        scorer,
        seed=params.seed,
        model=params.model,
        registry=params.registry,
        base=base,
        adapter=adapter,
        champion=champion,
        trajectories=trajectories,
        root=root,
        loader=loader,
    )
    write_model_eval(out, evaluation)
    if speed is not None:
        atomic_write_text(speed, pretty_json(speed_payload(name, timings)))
    return evaluation
