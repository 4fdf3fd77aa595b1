"""``max_steps: 0`` turns experience, dpo and grpo off: nothing loads, the input adapter is written through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.lm.training_fixtures import STORIES, tiny_params
from worldagent.config import ExperienceParams, Params, parse_params
from worldagent.lm.training import pass_through, read_stage
from worldagent.world_agent.experience import read_store
from worldagent.world_agent.stages import dpo as dpo_stage
from worldagent.world_agent.stages import experience as experience_stage
from worldagent.world_agent.stages import grpo as grpo_stage
from worldagent.world_agent.stages.evaluate_model import did_not_train_note


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a stage that is off loaded a model")


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way a stage loads or samples a model raises."""
    import worldagent.lm.base
    import worldagent.lm.load
    import worldagent.lm.training
    import worldagent.world_agent.experience_loop
    import worldagent.world_agent.grpo

    monkeypatch.setattr(worldagent.lm.base, "load_base", _refuse)
    monkeypatch.setattr(worldagent.lm.load, "load_policy", _refuse)
    monkeypatch.setattr(worldagent.lm.training, "load_training_model", _refuse)
    monkeypatch.setattr(worldagent.world_agent.grpo, "load_model", _refuse)
    monkeypatch.setattr(worldagent.world_agent.experience_loop, "sample_groups", _refuse)


def adapter(directory: Path, stage: str) -> Path:
    """A complete adapter as far as the stages read one: its files and a stage.json."""
    directory.mkdir(parents=True)
    (directory / "adapter_model.safetensors").write_bytes(f"{stage} weights".encode())
    (directory / "adapter_config.json").write_text('{"r": 2}', encoding="utf-8")
    (directory / "stage.json").write_text(json.dumps({"stage": stage, "chain": [], "params": {}}), encoding="utf-8")
    return directory


def off(stage: str) -> Params:
    params = tiny_params(**{stage: {"max_steps": 0}})
    if stage == "experience":  # tiny_params leaves experience at its default
        params = params.model_copy(update={"experience": ExperienceParams(max_steps=0)})
    return params


def assert_written_through(source: Path, out: Path, stage: str, metrics_file: Path) -> dict[str, Any]:
    reason = f"{stage}.max_steps is 0: the stage is off in this profile"
    adapter_files = lambda d: {p.name: p.read_bytes() for p in d.iterdir() if p.name != "stage.json"}  # noqa: E731
    assert adapter_files(out) == adapter_files(source)
    info = read_stage(out)
    assert info["stage"] == stage and info["passthrough_of"] == read_stage(source)["stage"]
    assert info["skipped"] is True and info["reason"] == reason
    metrics = json.loads(metrics_file.read_text(encoding="utf-8"))  # the declared metrics file exists
    assert metrics["skipped"] is True and metrics["reason"] == reason and metrics["global_step"] == 0
    return metrics


def test_zero_steps_is_valid_and_negative_steps_still_parse_as_before() -> None:
    params = parse_params({"experience": {"max_steps": 0}, "dpo": {"max_steps": 0}, "grpo": {"max_steps": 0}})
    assert (params.experience.max_steps, params.dpo.max_steps, params.grpo.max_steps) == (0, 0, 0)
    assert parse_params({"dpo": {"max_steps": -1}}).dpo.max_steps == -1


def test_experience_off_writes_the_sft_adapter_through(tmp_path: Path) -> None:
    sft = adapter(tmp_path / "sft", "sft")
    out, store, pairs, metrics = (
        tmp_path / "experience",
        tmp_path / "store",
        tmp_path / "pairs.jsonl",
        tmp_path / "m.json",
    )
    experience_stage.run(
        off("experience"),
        base=tmp_path / "base",
        sft=sft,
        trajectories=tmp_path / "no-trajectories.jsonl",
        stories_dir=STORIES,
        store=store,
        out=out,
        pairs=pairs,
        metrics=metrics,
        live=tmp_path / "live",
    )
    assert_written_through(sft, out, "experience", metrics)
    assert pairs.read_text(encoding="utf-8") == ""  # no on-policy pairs, the out exists
    assert (store / "manifest.json").is_file() and read_store(store) == []


def test_dpo_off_writes_its_input_adapter_through(tmp_path: Path) -> None:
    experience = adapter(tmp_path / "experience", "experience")
    out, metrics = tmp_path / "dpo", tmp_path / "m.json"
    dpo_stage.run(
        off("dpo"),
        base=tmp_path / "base",
        experience=experience,
        preferences=tmp_path / "no-preferences.jsonl",
        experience_pairs=tmp_path / "no-pairs.jsonl",
        out=out,
        metrics=metrics,
        live=tmp_path / "live",
    )
    assert assert_written_through(experience, out, "dpo", metrics)["parent"] == "experience"


def test_grpo_off_writes_the_dpo_adapter_through(tmp_path: Path) -> None:
    dpo = adapter(tmp_path / "dpo", "dpo")
    out, metrics = tmp_path / "grpo", tmp_path / "m.json"
    grpo_stage.run(
        off("grpo"),
        base=tmp_path / "base",
        dpo=dpo,
        trajectories=tmp_path / "no-trajectories.jsonl",
        stories_dir=STORIES,
        out=out,
        metrics=metrics,
        live=tmp_path / "live",
    )
    assert_written_through(dpo, out, "grpo", metrics)


def test_a_chain_of_stages_that_are_off_names_the_stage_that_trained(tmp_path: Path) -> None:
    sft = adapter(tmp_path / "sft", "sft")
    experience, dpo = tmp_path / "experience", tmp_path / "dpo"
    pass_through("experience", sft, experience, {"skipped": True, "reason": "off"})
    pass_through("dpo", experience, dpo, {"skipped": True, "reason": "off"})
    assert read_stage(experience)["passthrough_of"] == read_stage(dpo)["passthrough_of"] == "sft"
    assert did_not_train_note("dpo", dpo) == "`dpo` did not train (off): its adapter is `sft`'s, not evaluated again."
