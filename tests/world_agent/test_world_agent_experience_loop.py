"""The experience stage on a tiny base: store, adapter and pairs; a second run uses the first run's experience."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

from tests.lm.training_fixtures import (
    STORIES,
    TRAJECTORIES,
    build_tiny_base,
    dpo_rows,
    run_dpo,
    run_experience_loop,
    run_sft,
    sft_rows,
    tiny_params,
    write_jsonl,
)
from worldagent.config import ExperienceParams, Params
from worldagent.live import read_curve
from worldagent.lm.load import load_policy
from worldagent.lm.training import TrainingError, read_stage
from worldagent.tools.callformat import parse_calls
from worldagent.world_agent import experience_loop
from worldagent.world_agent.experience import read_store

torch.set_num_threads(1)


def experience_params(**experience: object) -> Params:
    params = tiny_params()
    settings = {
        "samples_per_prompt": 4,
        "max_prompts": 4,
        "max_new_tokens": 24,
        "generation_batch_size": 2,
        "max_steps": 2,
        "batch_size": 2,
        "max_length": 256,
        "learning_rate": 5e-3,
        "logging_steps": 1,
        "save_steps": 50,
        "pass_reward": 0.5,
        **experience,
    }
    return params.model_copy(update={"experience": ExperienceParams(**settings)})


def hash_reward(prompts, completions, id, **columns):  # noqa: A002 - trl's column name
    """Deterministic per text, spread over [0, 1): about half the samples pass at 0.5."""
    return [int(hashlib.sha256(str(c).encode()).hexdigest()[:8], 16) / 2**32 for c in completions]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("experience-loop")
    build_tiny_base(root / "base")
    write_jsonl(root / "trajectories.jsonl", sft_rows())
    run_sft(tiny_params(sft={"max_steps": 4}), root / "base", root / "trajectories.jsonl", root / "sft")
    return root


def test_two_runs_accumulate_and_the_second_learns_from_the_first(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trained_on: list[list[dict]] = []
    original = experience_loop.train_experience_adapter

    def record(*args, **kwargs):
        trained_on.append(args[6])  # the rows
        return original(*args, **kwargs)

    monkeypatch.setattr(experience_loop, "train_experience_adapter", record)
    sampled_in: list[object] = []

    def loaded(*args, **kwargs):
        sampled_in.append(kwargs.get("dtype"))
        return load_policy(*args, **kwargs)

    monkeypatch.setattr("worldagent.lm.load.load_policy", loaded)
    store, params = work / "store", experience_params()
    paths = dict(
        base_dir=work / "base",
        sft_dir=work / "sft",
        trajectories=work / "trajectories.jsonl",
        stories_root=STORIES,
        store=store,
        reward=hash_reward,
    )

    first = run_experience_loop(params, **paths, out_dir=work / "exp1", pairs_path=work / "pairs1.jsonl")
    assert first["prompts_sampled"] == 4 and first["completions"] == 16
    assert sampled_in == [params.model.dtype]  # sampled in the precision SFT trained in (model.dtype)
    assert 0 < first["passed"] < 16 and first["pass_rate"] == first["passed"] / 16
    assert first["generation"]["constrained"] and first["generation"]["tokens_per_second"] > 0
    assert first["training"]["global_step"] == 2 and first["training"]["train_tokens_per_second"] > 0
    assert first["store"]["runs"] == 1 and first["store"]["total"] == first["store"]["added"] > 0
    assert 0 <= first["reward_variance"]["frac_prompts_with_variance"] <= 1
    assert len(first["reward_variance"]["per_prompt"]) == 4
    samples = read_store(store)
    assert {s.run_id for s in samples} == {first["run_id"]}
    assert {s.model_hash for s in samples} == {read_stage(work / "sft")["adapter_sha256"]}
    # constrained decoding: every sampled answer is well-formed calls
    assert all(parse_calls(s.completion).calls and not parse_calls(s.completion).errors for s in samples)
    info = read_stage(work / "exp1")
    assert info["stage"] == "experience" and [c["stage"] for c in info["chain"]] == ["sft"]
    load_policy(work / "base", work / "exp1", device="cpu")
    pairs = [json.loads(line) for line in (work / "pairs1.jsonl").read_text().splitlines()]
    assert pairs and all(p["chosen_reward"] > p["rejected_reward"] for p in pairs)
    assert {p["source"] for p in pairs} <= {"on-policy", "reference"}
    passing_first = {(s.prompt_hash, s.completion_hash) for s in samples if s.passed}
    first_bytes = {f.name: f.read_bytes() for f in store.iterdir()}

    second = run_experience_loop(params, **paths, out_dir=work / "exp2", pairs_path=work / "pairs2.jsonl")
    assert second["run_id"] != first["run_id"] and second["seed"] == first["seed"] + 1
    # the second run samples the next intents, not the first run's again
    assert (first["prompt_start"], second["prompt_start"]) == (0, 4)
    sampled = {
        run: {s.prompt_hash for s in read_store(store) if s.run_id == run}
        for run in (first["run_id"], second["run_id"])
    }
    assert len(sampled[second["run_id"]]) == 4 and not sampled[first["run_id"]] & sampled[second["run_id"]]
    assert second["store"]["runs"] == 2 and second["store"]["previous"] == first["store"]["total"]
    assert second["store"]["total"] == first["store"]["total"] + second["store"]["added"]
    assert {s.run_id for s in read_store(store)} == {first["run_id"], second["run_id"]}
    # the second run's rejection-sampling rows include completions the first run sampled
    experience_rows = trained_on[1][: second["sft_rows"]["experience"]]
    first_texts = {s.completion for s in samples if (s.prompt_hash, s.completion_hash) in passing_first}
    assert any(row["messages"][-1]["content"] in first_texts for row in experience_rows)
    assert second["sft_rows"]["reference"] == len(sft_rows())

    # the same inputs give the same store, byte for byte (a deterministic DVC out)
    again = run_experience_loop(
        params, **{**paths, "store": work / "store-again"}, out_dir=work / "exp3", pairs_path=work / "pairs3.jsonl"
    )
    assert again["run_id"] == first["run_id"]
    assert {f.name: f.read_bytes() for f in (work / "store-again").iterdir()} == first_bytes

    # DPO starts from the experience adapter, on the rule pairs followed by the on-policy pairs
    write_jsonl(work / "rule-pairs.jsonl", dpo_rows())
    on_policy = (work / "pairs2.jsonl").read_text().splitlines()
    dpo = run_dpo(
        tiny_params(dpo={"max_steps": 1}),
        work / "base",
        work / "exp2",
        work / "rule-pairs.jsonl",
        work / "dpo",
        experience_pairs=work / "pairs2.jsonl",
    )
    assert dpo["pairs"] == {"rule": len(dpo_rows()), "on_policy": len(on_policy)} and dpo["parent"] == "experience"
    assert [c["stage"] for c in read_stage(work / "dpo")["chain"]] == ["sft", "experience"]


def test_prompts_start_where_asked_and_wrap_round_without_repeating() -> None:
    every = [row["id"] for row in experience_loop.prompt_rows(TRAJECTORIES, 10_000)]
    assert len(every) == len(set(every)) >= 3
    assert [row["id"] for row in experience_loop.prompt_rows(TRAJECTORIES, 3, start=len(every) - 1)] == [
        every[-1],
        every[0],
        every[1],
    ]
    assert [r["id"] for r in experience_loop.prompt_rows(TRAJECTORIES, 2, start=len(every) + 1)] == every[1:3]


def test_the_stage_entry_with_the_story_test_reward(work: Path, tmp_path: Path) -> None:
    """Real prompts, the real reward through the constraints: the tiny policy fails, so the pairs are
    reference-vs-failure and the adapter trains on the reference rows."""
    from worldagent.pipeline.__main__ import run as run_stage_command

    params_file = tmp_path / "params.yaml"
    params = experience_params(max_prompts=2, samples_per_prompt=2, max_new_tokens=16, max_length=4096)
    params_file.write_text(json.dumps(params.model_dump(mode="json")))
    out = tmp_path / "models"
    argv = ["experience", "--params", str(params_file), "--base", str(work / "base"), "--sft", str(work / "sft")]
    argv += ["--trajectories", str(TRAJECTORIES), "--stories-dir", str(STORIES), "--store", str(out / "store")]
    argv += ["--out", str(out / "experience"), "--pairs", str(tmp_path / "pairs.jsonl")]
    argv += ["--metrics", str(tmp_path / "metrics.json"), "--live", str(tmp_path / "live")]
    assert run_stage_command(argv) == 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["completions"] == 4 and metrics["store"]["total"] >= 1
    assert metrics["pairs"]["total"] == metrics["pairs"]["reference"] > 0
    assert metrics["training"]["global_step"] == 2
    assert read_curve(tmp_path / "live", "loss")
    assert (out / "store" / "manifest.json").is_file() and (out / "experience" / "stage.json").is_file()


def test_the_stage_needs_an_sft_adapter(work: Path, tmp_path: Path) -> None:
    (tmp_path / "sft").mkdir()
    with pytest.raises(TrainingError, match="not a complete adapter"):
        run_experience_loop(
            experience_params(),
            work / "base",
            tmp_path / "sft",
            work / "trajectories.jsonl",
            STORIES,
            tmp_path / "store",
            tmp_path / "out",
            tmp_path / "pairs.jsonl",
        )
