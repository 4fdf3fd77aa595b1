"""Engine selection and the vLLM requests, checked without CUDA or vLLM (the GPU path itself runs
only where both are present)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from model_fixtures import PROMPTS, tiny_model_and_tokenizer

from worldagent.errors import RunError
from worldagent.lm import engines
from worldagent.lm.constrained import call_grammar_gbnf
from worldagent.lm.engines import (
    VllmPolicy,
    grpo_generation_kwargs,
    select_engine,
    vllm_engine_kwargs,
    vllm_requests,
    vllm_sampling_kwargs,
)
from worldagent.lm.rollout import SamplingConfig, encode_prompt, sampling_seed, stop_token_ids
from worldagent.tools.registry import tool_schemas


@pytest.mark.parametrize(
    ("requested", "device", "cuda", "vllm", "engine"),
    [
        (None, "cuda", True, True, "vllm"),
        (None, None, True, True, "vllm"),
        ("auto", "cuda:0", True, False, "decoder"),  # no vLLM installed: the decoder
        ("auto", "cuda", False, True, "decoder"),  # no CUDA
        ("auto", "cpu", True, True, "decoder"),  # a model on the CPU stays on the decoder
        ("decoder", "cuda", True, True, "decoder"),
        ("VLLM", "cuda", True, True, "vllm"),
    ],
)
def test_the_engine_is_vllm_only_with_cuda_and_vllm(monkeypatch, requested, device, cuda, vllm, engine):
    monkeypatch.delenv(engines.ENGINE_ENV, raising=False)
    assert select_engine(device, requested=requested, cuda=cuda, vllm=vllm) == engine


def test_asking_for_vllm_where_it_cannot_run_says_what_is_missing(monkeypatch):
    monkeypatch.setenv(engines.ENGINE_ENV, "vllm")
    with pytest.raises(RunError, match="CUDA is missing"):
        select_engine("cuda", cuda=False, vllm=True)
    with pytest.raises(RunError, match="vLLM \\(not installed\\)"):
        select_engine("cuda", cuda=True, vllm=False)
    monkeypatch.setenv(engines.ENGINE_ENV, "fast")
    with pytest.raises(RunError, match="WORLDAGENT_ENGINE='fast'"):
        select_engine("cuda")


def test_this_machine_without_cuda_or_vllm_decodes_with_the_decoder(monkeypatch):
    monkeypatch.delenv(engines.ENGINE_ENV, raising=False)
    if engines.cuda_available() and engines.vllm_installed():
        pytest.skip("a GPU machine with vLLM")
    assert select_engine("cpu") == select_engine(None) == "decoder"


def test_greedy_and_sampled_requests():
    greedy = vllm_sampling_kwargs(SamplingConfig(max_new_tokens=7), [1, 2], seed=9)
    assert greedy["temperature"] == 0.0 and greedy["max_tokens"] == 7 and greedy["n"] == 1
    assert "seed" not in greedy and "structured_outputs" not in greedy
    assert greedy["stop_token_ids"] == [1, 2] and greedy["skip_special_tokens"] is False
    config = SamplingConfig(max_new_tokens=5, do_sample=True, temperature=0.7, top_p=0.9, num_return_sequences=4)
    sampled = vllm_sampling_kwargs(config, [1], seed=3, grammar='root ::= "x"')
    assert (sampled["temperature"], sampled["top_p"], sampled["top_k"], sampled["n"], sampled["seed"]) == (
        0.7,
        0.9,
        0,
        4,
        3,
    )
    assert sampled["structured_outputs"] == {"grammar": 'root ::= "x"'}


def test_requests_are_the_decoders_prompts_and_seeds():
    model, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=4, do_sample=True, seed=11)
    prompts = [PROMPTS[0], PROMPTS[1], PROMPTS[0]]
    inputs, kwargs = vllm_requests(tokenizer, prompts, config, grammar="g", model=model)
    encoded = [encode_prompt(tokenizer, p) for p in prompts]
    assert [i["prompt_token_ids"] for i in inputs] == encoded
    # the same prompt twice draws two samples: its occurrence is in the seed, as in the decoder
    assert [k["seed"] for k in kwargs] == [
        sampling_seed(11, encoded[0], 0, 0),
        sampling_seed(11, encoded[1], 0, 0),
        sampling_seed(11, encoded[0], 1, 0),
    ]
    assert all(k["stop_token_ids"] == stop_token_ids(tokenizer, model) for k in kwargs)


def test_the_engine_caches_prefixes_of_a_merged_model(tmp_path):
    kwargs = vllm_engine_kwargs(tmp_path, max_model_len=2048, seed=4)
    assert kwargs["enable_prefix_caching"] is True and kwargs["model"] == str(tmp_path) == kwargs["tokenizer"]
    assert (kwargs["max_model_len"], kwargs["seed"]) == (2048, 4)


def test_grpo_uses_colocated_vllm_with_the_call_grammar_only_where_vllm_runs(monkeypatch):
    monkeypatch.delenv(engines.ENGINE_ENV, raising=False)
    monkeypatch.setattr(engines, "cuda_available", lambda: True)
    monkeypatch.setattr(engines, "vllm_installed", lambda: True)
    kwargs = grpo_generation_kwargs("cuda", constrained=True, max_model_len=3000)
    assert kwargs["use_vllm"] is True and kwargs["vllm_mode"] == "colocate"
    assert kwargs["vllm_max_model_length"] == 3000
    assert kwargs["generation_kwargs"]["structured_outputs"] == {"grammar": call_grammar_gbnf(tool_schemas())}
    assert (
        "structured_outputs"
        not in grpo_generation_kwargs("cuda", constrained=False, max_model_len=1)["generation_kwargs"]
    )
    assert grpo_generation_kwargs("cpu", constrained=True, max_model_len=1) == {}
    monkeypatch.setattr(engines, "vllm_installed", lambda: False)
    assert grpo_generation_kwargs("cuda", constrained=True, max_model_len=1) == {}


class FakeLLM:
    """``vllm.LLM.generate``'s shape: one output per request, each with its first sample."""

    def __init__(self, stop: int) -> None:
        self.stop, self.requests = stop, []

    def generate(self, inputs, params, use_tqdm=True):
        self.requests.append((inputs, params))
        sample = SimpleNamespace(text="<start_function_call>", token_ids=[40, 41, self.stop], finish_reason="stop")
        return [SimpleNamespace(outputs=[sample]) for _ in inputs]


def test_the_evaluation_policy_decodes_through_vllm_when_given_an_engine():
    from worldagent.world_agent.policies import decoding_policy

    model, tokenizer = tiny_model_and_tokenizer()
    llm = FakeLLM(stop_token_ids(tokenizer, model)[0])
    policy = decoding_policy(model, tokenizer, constrained=True, max_new_tokens=6, batch_size=2, llm=llm)
    assert isinstance(policy, VllmPolicy) and policy.grammar == call_grammar_gbnf(tool_schemas())
    policy.make_params = lambda kwargs: kwargs  # vLLM's SamplingParams are not installed here
    answers = policy.complete([list(p) for p in PROMPTS[:2]])
    assert answers == ["<start_function_call>"] * 2
    ((inputs, params),) = llm.requests
    assert [p["structured_outputs"] for p in params] == [{"grammar": policy.grammar}] * 2
    assert policy.stats.new_tokens == 6 and policy.stats.completions == 2
    assert [c.token_ids for c in policy.last] == [[40, 41], [40, 41]] and all(c.stopped for c in policy.last)
