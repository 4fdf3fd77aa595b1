"""Policies: the reference upper bound, greedy batched decoding with and without the call grammar, and the
single-step evaluate stage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from evaluation_helpers import ROOT

from worldagent.config import Params
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.io import directory_hash
from worldagent.pipeline import world_agent as world_agent_table
from worldagent.tools.callformat import parse_calls
from worldagent.world_agent.evaluate import prompts_of
from worldagent.world_agent.policies import (
    Policy,
    ReferencePolicy,
    ReusingPolicy,
    StaticPolicy,
    decoding_policy,
    evaluation_policy,
)
from worldagent.world_agent.stages.evaluate import evaluate_stage


def run_evaluate(params: Params, root: Path, loader, champion: dict | None = None) -> None:  # type: ignore[no-untyped-def]
    """The evaluate stage on the project's paths, with the champion reference ``champion``."""
    reference = root / "champion.json"
    none = {"family": "world-agent", "version": None, "artifact_path": None, "artifact_hash": None}
    reference.write_text(json.dumps(champion or none))
    models = root / world_agent_table.MODELS
    evaluate_stage(
        params,
        eval_trajectories=root / world_agent_table.EVAL_TRAJECTORIES,
        stories=root / "data" / "generated" / "world_agent" / "stories.jsonl",
        stories_dir=root / params.discover.stories_dir,
        base=models / "base",
        sft=models / "sft",
        dpo=models / "dpo",
        grpo=models / "grpo",
        champion=reference,
        summary=root / world_agent_table.EVAL,
        intents=root / world_agent_table.EVAL_INTENTS,
        root=root,
        loader=loader,
    )


def test_reference_and_static_policies(eval_rows) -> None:
    rows = eval_rows[:3]
    prompts = prompts_of(rows)
    assert isinstance(ReferencePolicy(rows), Policy)
    assert ReferencePolicy(rows).complete(prompts[::-1]) == [row["messages"][2]["content"] for row in rows[::-1]]
    with pytest.raises(KeyError, match="no reference output"):
        ReferencePolicy(rows[:1]).complete(prompts)
    with pytest.raises(ValueError):
        StaticPolicy(["a"]).complete(prompts)


def test_decoding_policy_constrained_answers_parse_and_unconstrained_is_plain_batched(eval_rows) -> None:
    from tests.lm.model_fixtures import tiny_model_and_tokenizer

    model, tokenizer = tiny_model_and_tokenizer()
    prompts = prompts_of(eval_rows[:3])
    constrained = decoding_policy(model, tokenizer, constrained=True, max_new_tokens=40, batch_size=2)
    free = decoding_policy(model, tokenizer, constrained=False, max_new_tokens=40, batch_size=2)
    assert constrained.logits_processor is not None and free.logits_processor is None
    answers = constrained.complete(prompts)
    for answer in answers:
        parsed = parse_calls(answer)
        assert parsed.calls and not parsed.errors  # well formed by construction, even from random weights
    assert constrained.stats.prompts == 3 and constrained.stats.new_tokens > 0 and constrained.stats.batches == 2
    assert free.complete(prompts) != answers  # the processor really changed what was decoded


def test_a_reusing_policy_decodes_only_the_prompts_it_cannot_reuse(eval_rows) -> None:
    prompts = prompts_of(eval_rows[:3])

    class Recorder(StaticPolicy):
        stats = object()

        def complete(self, asked):  # type: ignore[no-untyped-def]
            self.asked = asked
            return [f"fresh {len(asked)}"] * len(asked)

    decoder = Recorder([])
    policy = ReusingPolicy(decoder, ["a", "b", "c"], [True, False, True])  # type: ignore[arg-type]
    assert isinstance(policy, Policy) and policy.stats is decoder.stats
    assert policy.complete(prompts) == ["a", "fresh 1", "c"]
    assert decoder.asked == [prompts[1]] and policy.reused == 2
    with pytest.raises(ValueError, match="3 answers for 2 prompts"):
        policy.complete(prompts[:2])
    with pytest.raises(ValueError, match="2 answers for 3 reuse flags"):
        ReusingPolicy(decoder, ["a", "b"], [True, True, True])  # type: ignore[arg-type]


def test_decoding_policy_applies_the_loop_guard_when_set(eval_rows) -> None:
    from tests.lm.model_fixtures import tiny_model_and_tokenizer

    model, tokenizer = tiny_model_and_tokenizer()
    prompts = prompts_of(eval_rows[:2])
    plain = decoding_policy(model, tokenizer, constrained=False, max_new_tokens=48, batch_size=2)
    guarded = decoding_policy(model, tokenizer, constrained=False, max_new_tokens=48, batch_size=2, no_repeat_ngram=3)
    assert plain.config.no_repeat_ngram == 0 and guarded.config.no_repeat_ngram == 3
    assert guarded.complete(prompts) != plain.complete(prompts)  # the untrained model loops; the guard stops it


def test_evaluation_policy_decodes_each_stage_with_the_evaluate_section_settings(tiny_model) -> None:
    model, tokenizer = tiny_model
    settings = Params.model_validate(
        {"evaluate": {"max_new_tokens": 40, "base_max_new_tokens": 12, "batch_size": 3, "no_repeat_ngram": 5}}
    ).evaluate
    sft = evaluation_policy(model, tokenizer, settings, "sft")
    base = evaluation_policy(model, tokenizer, settings, "base")
    assert (sft.config.max_new_tokens, base.config.max_new_tokens) == (40, 12)  # each stage's own budget
    assert sft.batch_size == 3 and sft.config.no_repeat_ngram == 5 and not sft.config.do_sample
    assert sft.logits_processor is not None  # the grammar, as ``evaluate.constrained`` says
    assert evaluation_policy(model, tokenizer, settings, "sft", constrained=False).logits_processor is None
    off = settings.model_copy(update={"constrained": False})
    assert evaluation_policy(model, tokenizer, off, "sft").logits_processor is None
    retry = evaluation_policy(model, tokenizer, settings, "dpo", temperature=0.7, seed=9)
    assert retry.config.do_sample and (retry.config.temperature, retry.config.seed) == (0.7, 9)


def test_evaluate_stage_with_injected_loader_and_no_champion(tmp_path: Path, tiny_model) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data")
    (tmp_path / "models" / "world_agent" / "base").mkdir(parents=True)
    loaded: list[Any] = []

    def loader(base_dir: Path, adapter_dir: Path | None):
        loaded.append((base_dir.name, adapter_dir))
        return tiny_model

    params = Params.model_validate(
        {"evaluate": {"max_intents": 3, "max_new_tokens": 4, "models": ["base", "champion", "reference"]}}
    )
    run_evaluate(params, tmp_path, loader)
    assert loaded == [("base", None)]
    report = read_eval_report(tmp_path / world_agent_table.EVAL, tmp_path / world_agent_table.EVAL_INTENTS)
    assert list(report.models) == ["base", "reference"]
    assert report.models["reference"].metrics.mean_reward == 1.0
    assert report.models["base"].metrics.mean_reward == 0.0  # 4 tokens: no call can be written, let alone pass
    assert any("first run" in note for note in report.notes)
    assert (tmp_path / world_agent_table.REPORTS / "metrics.png").is_file()

    missing = Params.model_validate({"evaluate": {"models": ["sft"]}})
    with pytest.raises(ValueError, match="sft adapter not found"):
        run_evaluate(missing, tmp_path, loader)


def test_champion_is_loaded_from_the_resolved_adapter(tmp_path: Path, tiny_model) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data")
    (tmp_path / "models" / "world_agent" / "base").mkdir(parents=True)
    (tmp_path / "published" / "v1").mkdir(parents=True)
    (tmp_path / "published" / "v1" / "adapter_model.safetensors").write_bytes(b"champion weights")
    loaded: list[Any] = []

    def loader(base_dir: Path, adapter_dir: Path | None):
        loaded.append(adapter_dir)
        return tiny_model

    params = Params.model_validate({"evaluate": {"max_intents": 2, "max_new_tokens": 2, "models": ["champion"]}})
    sha = directory_hash(tmp_path / "published" / "v1")
    champion = {"family": "world-agent", "version": 1, "artifact_hash": sha, "artifact_path": "published/v1"}
    run_evaluate(params, tmp_path, loader, champion)
    assert loaded == [tmp_path / "published" / "v1"]
    report = read_eval_report(tmp_path / world_agent_table.EVAL, tmp_path / world_agent_table.EVAL_INTENTS)
    assert list(report.models) == ["champion"] and any("world-agent v1" in note for note in report.notes)

    # weights that changed under the reference are never evaluated as the champion
    (tmp_path / "published" / "v1" / "adapter_model.safetensors").write_bytes(b"other weights")
    with pytest.raises(ValueError, match="not the recorded"):
        run_evaluate(params, tmp_path, loader, champion)
