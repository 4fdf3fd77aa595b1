"""benchmarks/generation.py: the engines' figures add up, and the decoder does each prompt's work once."""

from __future__ import annotations

from typing import Any
from unittest import mock

from model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer

from benchmarks.generation import (
    Workload,
    clock,
    continuous_engine,
    decoder_engine,
    matmul_peak,
    measure,
    transformers_engine,
    with_environment,
    without_kernel,
)
from worldagent.lm import decode_attention, lean_linear
from worldagent.lm.rollout import ModelShape


def _tiny(dtype: str = "float32", new_tokens: int = 4) -> tuple[Any, Any, Workload, ModelShape, float]:
    """The tiny Llama in ``dtype``, its tokenizer, four held-out-like prompts and the peak to share."""
    import torch

    _, tokenizer = tiny_model_and_tokenizer()
    model = tiny_llama_model().to(getattr(torch, dtype))
    workload = Workload([list(p) for p in PROMPTS[:4]], new_tokens=new_tokens, batch_size=4)
    return model, tokenizer, workload, ModelShape.of(model), matmul_peak(1, [(64, 64, 64)], rounds=1, dtype=dtype)[0]


def test_the_decoder_meets_the_minimum_where_plain_generate_prefills_every_call_again():
    model, tokenizer, workload, shape, peak = _tiny(new_tokens=3)
    ours = measure("decoder", lambda: decoder_engine(model, tokenizer, 4), workload, shape, peak)
    plain = measure("transformers", lambda: transformers_engine(model, tokenizer, 4), workload, shape, peak)
    stream = measure("continuous", lambda: continuous_engine(model, tokenizer, 2), workload, shape, peak)
    assert ours["retried"] == plain["retried"] == stream["retried"] == 2  # every other prompt asked again
    assert ours["minimum_tokens"] == plain["minimum_tokens"] == stream["minimum_tokens"]  # the same work asked
    assert (
        stream["tokens_over_minimum"] <= 1.05
        and ours["tokens_over_minimum"] <= 1.05 < 1.3 < plain["tokens_over_minimum"]
    )
    assert ours["prefilled_tokens"] < plain["prefilled_tokens"] == plain["prompt_tokens"]
    assert stream["first_answer"] == ours["first_answer"]
    for row in (ours, plain, stream):
        assert row["new_tokens_per_second"] > 0 and row["prompt_tokens_per_second"] > 0
        assert row["share_of_matmul_peak"] > 0 and row["grammar"] is True


def test_the_sdpa_variant_turns_the_kernel_off_only_while_it_runs():
    model, tokenizer, workload, shape, peak = _tiny()
    seen: list[object] = []

    def spying(engine):
        answer, grammar = engine

        def run(*args):
            seen.append(decode_attention.kernel())
            return answer(*args)

        return run, grammar

    plain = measure(
        "continuous-sdpa", lambda: without_kernel(spying(continuous_engine(model, tokenizer, 2))), workload, shape, peak
    )
    assert seen and all(library is None for library in seen)
    kernel = measure("continuous", lambda: continuous_engine(model, tokenizer, 2), workload, shape, peak)
    if decode_attention.kernel() is not None:  # float32: the kernel's greedy answers are SDPA's
        assert kernel["first_answer"] == plain["first_answer"]


def test_the_unpacked_variant_turns_the_lean_linears_off_and_answers_the_same_in_bfloat16():
    model, tokenizer, workload, shape, peak = _tiny("bfloat16")
    seen: list[bool] = []

    def spying(engine):
        answer, grammar = engine

        def run(*args):
            seen.append(lean_linear.enabled())
            return answer(*args)

        return run, grammar

    off = {lean_linear.ENV: "off"}
    plain = measure(
        "continuous-unpacked",
        lambda: with_environment(spying(continuous_engine(model, tokenizer, 2)), off),
        workload,
        shape,
        peak,
    )
    assert seen and not any(seen) and lean_linear.enabled()
    lean = measure("continuous", lambda: continuous_engine(model, tokenizer, 2), workload, shape, peak)
    assert lean["first_answer"] == plain["first_answer"] and peak > 0


def test_the_forward_variant_turns_the_lean_step_off_and_answers_the_same():
    from worldagent.lm import continuous, lean_step

    model, tokenizer, workload, shape, peak = _tiny()
    steps: list[str] = []
    real = continuous.decode_step

    def counted(*args):
        steps.append("lean")
        return real(*args)

    with mock.patch.object(continuous, "decode_step", counted):
        plain = measure(
            "continuous-forward",
            lambda: with_environment(continuous_engine(model, tokenizer, 2), {lean_step.ENV: "off"}),
            workload,
            shape,
            peak,
        )
        assert not steps and lean_step.enabled()
        lean = measure("continuous", lambda: continuous_engine(model, tokenizer, 2), workload, shape, peak)
    if decode_attention.kernel() is not None:  # the lean step runs where the kernel does
        assert steps
    assert lean["first_answer"] == plain["first_answer"]


def test_the_multinomial_variant_draws_with_torch_multinomial_and_answers_greedy_the_same():
    import torch

    from benchmarks.generation import with_multinomial

    model, tokenizer, workload, shape, peak = _tiny()
    calls: list[int] = []
    real = torch.multinomial

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    with mock.patch.object(torch, "multinomial", counted):
        old = measure(
            "continuous-multinomial",
            lambda: with_multinomial(continuous_engine(model, tokenizer, 2)),
            workload,
            shape,
            peak,
        )
        assert calls  # the retries drew through multinomial
        calls.clear()
        new = measure("continuous", lambda: continuous_engine(model, tokenizer, 2), workload, shape, peak)
        assert not calls  # and the decoder's own draw does not
    assert old["first_answer"] == new["first_answer"]


def test_the_after_variant_starts_no_retry_ahead_and_answers_the_same():
    """``continuous-after`` passes ``ahead_after=None``; the default starts retries at half the first
    answer's budget, so it spends more decoded tokens on the same asked-for work and answers."""
    from worldagent.lm import continuous

    model, tokenizer, workload, shape, peak = _tiny(new_tokens=6)  # 8 rows: room for every retry ahead
    seen: list[object] = []
    real = continuous.answer_with_retries

    def spying(*args, **kwargs):
        seen.append(args[4] if len(args) > 4 else kwargs.get("ahead_after", "default"))
        return real(*args, **kwargs)

    with mock.patch.object(continuous, "answer_with_retries", spying):
        after = measure(
            "continuous-after", lambda: continuous_engine(model, tokenizer, 8, ahead=False), workload, shape, peak
        )
        ahead = measure("continuous", lambda: continuous_engine(model, tokenizer, 8), workload, shape, peak)
    half = len(seen) // 2  # each engine called the same number of times
    assert seen[:half] == [None] * half and seen[half:] == [continuous.AHEAD_AFTER] * half
    assert after["first_answer"] == ahead["first_answer"]
    assert after["minimum_tokens"] == ahead["minimum_tokens"]  # unread retries are work, not answers
    assert ahead["tokens_over_minimum"] > after["tokens_over_minimum"]


def test_rates_are_per_cpu_second_on_a_cpu_and_per_synchronised_wall_second_on_a_gpu():
    import time

    assert clock("cpu") is time.process_time  # a shared CPU: what a core of its own would take
    with mock.patch("torch.cuda.synchronize") as synchronize:
        now = clock("cuda")
        first = now()
        assert synchronize.call_count == 1  # queued kernels finish before the clock is read
        assert now() >= first and synchronize.call_count == 2


def test_the_peak_is_the_best_shape_not_the_first_square():
    """A CPU that multiplies squares slower than a model's tall product (AMX: a 1024-wide bfloat16
    square runs on about one thread) has the tall product's rate as its peak, and the report names it."""
    import torch

    from benchmarks import generation

    shapes = generation.peak_shapes(576, 1536)
    assert shapes[0] == (1024, 1024, 1024) and (generation.PEAK_ROWS, 576, 1536) in shapes
    assert generation.peak_shapes(576, 1536, device="cuda") == [(8192, 8192, 8192), (generation.PEAK_ROWS, 576, 1536)]
    assert generation.peak_shapes() == [(1024, 1024, 1024), (2048, 2048, 2048)]

    elapsed = [0.0]
    rates = {(1024, 1024): 1e12, (2048, 2048): 1.2e12, (576, 1536): 3e12}  # FLOP/s by (inner, columns)

    def timed_mm(a: torch.Tensor, b: torch.Tensor) -> None:
        elapsed[0] += 2.0 * a.shape[0] * a.shape[1] * b.shape[1] / rates[(a.shape[1], b.shape[1])]

    small = [(64, 1024, 1024), (64, 2048, 2048), (64, 576, 1536)]  # few rows: the test stays fast
    with mock.patch.object(generation, "clock", lambda device: lambda: elapsed[0]), mock.patch("torch.mm", timed_mm):
        peak, shape = matmul_peak(1, small, rounds=2)
        first_only, _ = matmul_peak(1, small[:1], rounds=2)
    assert shape == (64, 576, 1536) and abs(peak - 3e12) < 1e3
    assert abs(first_only - 1e12) < 1e3


def test_an_adapter_is_decoded_on_the_stages_base_through_their_loader(tmp_path, capsys):
    """``--adapter`` loads the adapter on ``--base`` as the stages do (their fitted call-marker rows),
    not on a base converted here, and the report names both; a missing one is a usage error."""
    import json

    import pytest

    from benchmarks import generation

    base, adapter = tmp_path / "base", tmp_path / "sft"
    for directory, marker in ((base, "config.json"), (adapter, "stage.json")):
        directory.mkdir()
        (directory / marker).write_text("{}")
    rows = tmp_path / "eval.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": f"i{n}", "component": "c", "turns": "single", "messages": prompt}) + "\n"
            for n, prompt in enumerate(PROMPTS[:2])
        )
    )
    model, (_, tokenizer) = tiny_llama_model(), tiny_model_and_tokenizer()
    loaded: list[tuple[object, ...]] = []

    def load_policy(base_dir, adapter_dir, device=None, dtype="auto", cpu_threads=1):  # noqa: ANN001, ANN202
        loaded.append((base_dir, adapter_dir, device, dtype, cpu_threads))
        return model, tokenizer

    common = ["--prompts", "2", "--new-tokens", "2", "--batch-size", "2", "--engines", "continuous"]
    common += ["--no-score", "--json", "--eval-trajectories", str(rows), "--work", str(tmp_path / "work")]
    with mock.patch("worldagent.lm.load.load_policy", load_policy):
        assert generation.main(["--adapter", str(adapter), "--base", str(base), *common]) == 0
    assert loaded == [(base, adapter, "cpu", "float32", 1)]
    report = json.loads(capsys.readouterr().out)
    assert str(base) in report["model"] and str(adapter) in report["model"]
    assert report["engines"][0]["prompts"] == 2
    with pytest.raises(SystemExit) as missing:
        generation.main(["--adapter", str(tmp_path / "absent"), *common])
    assert missing.value.code == 2 and "no trained adapter" in capsys.readouterr().err
