"""Report files, plots and the compare/gate stage entries."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from evaluation_helpers import synthetic_report

from worldagent.config import GateParams, Params
from worldagent.errors import InputError
from worldagent.evaluation.compare import compare, compare_stages
from worldagent.evaluation.eval_files import read_eval_report, write_eval_outputs
from worldagent.evaluation.family import WORLD_AGENT, above_nearest_check, gate_decision, world_agent_rules
from worldagent.evaluation.report import render_report
from worldagent.io import directory_hash
from worldagent.pipeline import world_agent as world_agent_table
from worldagent.pipeline.__main__ import run as run_stage_command
from worldagent.pipeline.entry import option
from worldagent.pipeline.table import stage_paths
from worldagent.world_agent.stages.compare import compare_stage
from worldagent.world_agent.stages.gate import gate_best_stage, gate_stage

PNG = b"\x89PNG\r\n\x1a\n"
MODELS = {
    "base": [0.0, 0.0, 0.3, 0.0],
    "sft": [0.5, 0.8, 0.3, 0.0],
    "grpo": [1.0, 0.8, 0.5, 0.3],
    "reference": [1.0] * 4,
}


def test_eval_outputs_plots_and_round_trip(tmp_path: Path) -> None:
    report = synthetic_report(MODELS)
    written = write_eval_outputs(report, tmp_path / "eval.json", tmp_path / "eval_intents.jsonl")
    names = {path.relative_to(tmp_path).as_posix() for path in written}
    assert names == {
        "eval.json",
        "eval_intents.jsonl",
        "plots/rewards.csv",
        "metrics.png",
        "rewards.png",
    }
    for png in ("metrics.png", "rewards.png"):
        data = (tmp_path / png).read_bytes()
        assert data.startswith(PNG) and len(data) > 5000
    summary = json.loads((tmp_path / "eval.json").read_text())
    assert list(summary["models"]) == list(MODELS) and summary["n"] == 4
    assert summary["models"]["grpo"]["mean_reward"] == report.models["grpo"].metrics.mean_reward
    with (tmp_path / "plots" / "rewards.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0].keys() == {"model", "intent", "reward"} and len(rows) == 4 * 4
    intents = [json.loads(line) for line in (tmp_path / "eval_intents.jsonl").read_text().splitlines()]
    assert len(intents) == 16 and intents[0]["model"] == "base" and isinstance(intents[0]["errors"], list)
    assert read_eval_report(tmp_path / "eval.json", tmp_path / "eval_intents.jsonl") == report
    # Deterministic bytes: an unchanged evaluation rewrites identical files (DVC sees no change).
    before = {p: p.read_bytes() for p in written}
    write_eval_outputs(report, tmp_path / "eval.json", tmp_path / "eval_intents.jsonl")
    assert all(p.read_bytes() == data for p, data in before.items())


def test_report_mentions_every_model_the_comparison_and_the_gate() -> None:
    report = synthetic_report(MODELS)
    comparison = compare(report, "grpo", samples=200, seed=0)
    params = Params(gate=GateParams(min_story_pass_rate=0.9))
    decision = gate_decision(
        WORLD_AGENT, world_agent_rules(params.gate), report.models["grpo"].metrics.model_dump(), comparison
    )
    text = render_report(report, comparison, decision, "grpo")
    for name in MODELS:
        assert f"| {name} |" in text or f"**{name}** (candidate)" in text
    assert "## Gate decision" in text and "**FAILED**" in text
    assert "Story pass rate 0.750 is below the minimum 0.900." in text
    assert "first run" in text
    assert "## Distance from the reference (upper bound)" in text
    assert "### grpo vs base" in text and "95% CI" in text
    assert "![metrics per model](./metrics.png)" in text and "![reward per intent](./rewards.png)" in text
    assert "from the components: `avatar`, `card`" in text


def test_compare_and_gate_stages(tmp_path: Path) -> None:
    report = synthetic_report(
        {"champion": [1.0] * 6, "base": [0.0] * 6, "grpo": [0.0] * 3 + [1.0] * 3, "reference": [1.0] * 6}
    )
    summary, intents, comparison = tmp_path / "eval.json", tmp_path / "eval_intents.jsonl", tmp_path / "compare.json"
    write_eval_outputs(report, summary, intents)
    params = Params.model_validate({"compare": {"bootstrap_samples": 200}})
    compare_stage(params, summary=summary, intents=intents, comparison=comparison, live=tmp_path / "candidate")
    compared = json.loads(comparison.read_text())
    assert compared["candidate"] == "grpo" and compared["comparisons"]["champion"]["n"] == 6
    # the candidate's metrics under fixed names: one `dvc exp show` column each, whichever stage won
    candidate = json.loads((tmp_path / "candidate" / "metrics.json").read_text())
    assert candidate["story_pass_rate"] == report.models["grpo"].metrics.story_pass_rate == 0.5
    assert candidate["mean_reward"] == report.models["grpo"].metrics.mean_reward and candidate["n"] == 6

    adapter = tmp_path / "models" / "grpo"
    adapter.mkdir(parents=True)
    (adapter / "adapter_model.safetensors").write_bytes(b"weights")
    # A failing gate is a decision, not an error: gate.json says why.
    gate_json, report_md = tmp_path / "gate.json", tmp_path / "report.md"
    decision = gate_stage(
        params,
        summary=summary,
        intents=intents,
        comparison=comparison,
        candidate=adapter,
        report=report_md,
        decision=gate_json,
    )
    gate = json.loads(gate_json.read_text())
    assert set(gate) == {"passed", "reasons", "checks", "candidate", "family", "artifact_path", "artifact_hash"}
    assert gate["passed"] is decision.passed is False and gate["candidate"] == "grpo"
    assert gate["artifact_hash"] == directory_hash(adapter) and gate["family"] == "world-agent"
    assert any("champion" in reason for reason in gate["reasons"])
    markdown = report_md.read_text()
    assert "**FAILED**" in markdown and "champion" in markdown


def test_gate_stage_without_inputs_is_a_clear_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "params.yaml").write_text("{}\n")
    paths = stage_paths(world_agent_table.PIPELINE.stage("gate"), tmp_path, Params())
    options = [part for argument, path in paths.items() for part in (option(argument), str(path))]
    assert run_stage_command(["gate", "--params", str(tmp_path / "params.yaml"), *options]) == 2
    assert "run the evaluate stage first" in capsys.readouterr().err


STAGES = {
    "base": [0.0, 0.0, 0.0, 0.0, 0.3, 0.0],
    "nearest": [0.3, 0.0, 0.3, 0.0, 0.3, 0.0],
    "sft": [0.5, 0.8, 0.5, 0.3, 0.5, 0.5],
    "experience": [1.0, 0.8, 1.0, 0.5, 1.0, 0.8],
    "dpo": [1.0, 0.8, 0.5, 0.5, 1.0, 0.8],
    "grpo": [1.0, 0.8, 1.0, 0.5, 0.8, 0.8],
    "grpo (unconstrained)": [0.0, 0.8, 0.0, 0.5, 0.0, 0.0],
    "reference": [1.0] * 6,
}


def results_rows(text: str) -> list[str]:
    table = text.split("## Results", 1)[1].split("\n## ", 1)[0]
    return [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ") and "model" not in line]


def test_report_has_the_results_table_the_step_effects_the_selection_and_constrained_decoding() -> None:
    report = synthetic_report(STAGES)
    comparison = compare_stages(report, "best", samples=300, seed=0)
    assert comparison["candidate"] == "experience"
    text = render_report(report, comparison, None, comparison["candidate"])
    assert results_rows(text) == [
        "base",
        "nearest (copy the nearest training story)",
        "sft",
        "**experience** (candidate)",
        "dpo",
        "grpo",
        "reference (upper bound)",
    ]
    steps = text.split("## Step effects", 1)[1].split("\n## ", 1)[0]
    for step in (
        "sft − base",
        "experience − sft",
        "dpo − experience",
        "grpo − dpo",
        "experience (candidate) − nearest",
    ):
        assert f"| {step} | 6 |" in steps, step
    assert "Did not improve (mean reward CI includes 0 or lies below it): dpo − experience, grpo − dpo." in steps
    selection = text.split("## Candidate selection", 1)[1].split("\n## ", 1)[0]
    assert "`experience`" in selection and "optimistic" in selection and "runner-up `grpo`" in selection
    constrained = text.split("## Constrained decoding", 1)[1].split("\n## ", 1)[0]
    assert "| grpo | constrained | 1.000 | 1.000 | 0.817 |" in constrained
    assert "| grpo | unconstrained | 0.333 | 0.333 | 0.217 |" in constrained
    assert "## All metrics" in text and "| grpo (unconstrained) |" in text


def gate_with(
    tmp_path: Path, params: Params, training: dict[str, dict], adapter_bytes: dict[str, bytes]
) -> tuple[dict[str, Path], Path, Path]:
    """Writes each stage's adapter and metrics file, then runs ``gate_best_stage`` over the compare
    outputs in ``tmp_path``: (adapters, gate.json, report.md)."""
    adapters, metrics = {}, {}
    for stage, content in training.items():
        adapters[stage] = tmp_path / "models" / stage
        adapters[stage].mkdir(parents=True, exist_ok=True)
        (adapters[stage] / "adapter_model.safetensors").write_bytes(adapter_bytes[stage])
        metrics[f"{stage}_metrics"] = tmp_path / f"{stage}-metrics.json"
        metrics[f"{stage}_metrics"].write_text(json.dumps(content))
    gate_json, report_md = tmp_path / "gate.json", tmp_path / "report.md"
    gate_best_stage(
        params,
        summary=tmp_path / "eval.json",
        intents=tmp_path / "eval_intents.jsonl",
        comparison=tmp_path / "compare.json",
        **adapters,
        **metrics,
        report=report_md,
        decision=gate_json,
    )
    return adapters, gate_json, report_md


def test_gate_best_stage_gates_and_records_the_chosen_stage(tmp_path: Path) -> None:
    report = synthetic_report(STAGES)
    summary, intents, comparison = tmp_path / "eval.json", tmp_path / "eval_intents.jsonl", tmp_path / "compare.json"
    write_eval_outputs(report, summary, intents)
    params = Params.model_validate({"compare": {"bootstrap_samples": 100}})
    compare_stage(params, summary=summary, intents=intents, comparison=comparison, live=tmp_path / "candidate")
    training = {
        "sft": {"global_step": 30, "loss_first": 1.8, "loss_last": 0.4, "wall_s": 600.0},
        "experience": {
            "completions": 32,
            "prompts_sampled": 8,
            "passed": 5,
            "pass_rate": 0.15625,
            "mean_reward": 0.4,
            "reward_variance": {"frac_prompts_with_variance": 0.625},
            "store": {"total": 64, "runs": 2},
            "pairs": {"on_policy": 6, "reference": 2},
            "generation": {"tokens_per_second": 12.5},
            "training": {"global_step": 8, "loss_first": 0.5, "loss_last": 0.3, "train_tokens_per_second": 140.0},
        },
        "dpo": {"global_step": 8, "loss_first": 0.69, "loss_last": 0.5},
        "grpo": {"skipped": True, "reason": "no prompt's reward varied", "prompts": 8, "probe": {"generations": 4}},
    }
    adapters, gate_json, report_md = gate_with(tmp_path, params, training, {s: s.encode() for s in training})
    gate = json.loads(gate_json.read_text())
    assert gate["candidate"] == "experience" == json.loads(comparison.read_text())["candidate"]
    assert gate["artifact_path"] == str(adapters["experience"])
    assert gate["artifact_hash"] == directory_hash(adapters["experience"]) != directory_hash(adapters["grpo"])
    assert {"name": "above_nearest", "passed": True} in [
        {"name": c["name"], "passed": c["passed"]} for c in gate["checks"]
    ]
    text = report_md.read_text()
    assert "**experience** (candidate)" in text
    section = text.split("## Training", 1)[1].split("\n## ", 1)[0]
    assert "| sft | 30 | 1.800 → 0.400 | – | 600 |" in section
    assert "| experience | 8 | 0.500 → 0.300 | 140.0 |" in section
    assert "32 samples of 8 training intents, 5 passed" in section and "64 samples from 2 run(s)" in section
    assert "**GRPO did not train:** no prompt's reward varied" in section

    compared = json.loads(comparison.read_text())
    comparison.write_text(json.dumps({**compared, "candidate": "reference"}))
    with pytest.raises(InputError, match="not a trained stage"):
        gate_with(tmp_path, params, training, {s: s.encode() for s in training})


def test_compare_stage_without_a_trained_stage_is_a_clear_error(tmp_path: Path) -> None:
    summary, intents = tmp_path / "eval.json", tmp_path / "eval_intents.jsonl"
    write_eval_outputs(synthetic_report({"base": [0.0] * 3, "reference": [1.0] * 3}), summary, intents)
    with pytest.raises(InputError, match="no trained stage .* was evaluated, so there is no best stage"):
        compare_stage(
            Params(), summary=summary, intents=intents, comparison=tmp_path / "compare.json", live=tmp_path / "live"
        )


def test_the_training_section_shows_grpo_reward_signal_per_step() -> None:
    from worldagent.evaluation.report import _training_section

    grpo = {
        "skipped": False,
        "prompts": 3,
        "prompts_probed": 8,
        "probe": {"generations": 4, "frac_reward_zero_std": 0.625},
        "global_step": 2,
        "steps": [
            {"step": 1, "reward": 0.25, "reward_std": 0.2, "frac_reward_zero_std": 0.5, "loss": 0.01},
            {
                "step": 2,
                "reward": 0.4,
                "reward_std": 0.3,
                "frac_reward_zero_std": 0.25,
                "completions/clipped_ratio": 0.75,
                "completions/mean_length": 379.25,
                "loss": -0.02,
            },
        ],
    }
    grpo["precision"] = "bfloat16 on cpu"
    text = "\n".join(_training_section({"grpo": grpo}))
    assert "| grpo | 2 | – → – | – | – | bfloat16 on cpu |" in text  # which precision made the figures
    assert "**GRPO** trained on 3 prompts; the probe (4 samples per prompt) found reward variance on 0.375 of 8" in text
    # a step logged without trl's completion figures shows dashes, not zeros
    assert "| 1 | 0.250 | 0.200 | 0.500 | – | – | 0.0100 |" in text
    assert "| 2 | 0.400 | 0.300 | 0.250 | 0.750 | 379 | -0.0200 |" in text
    assert "sampled again" not in text  # a metrics file from before the re-sampling: no such sentence

    grpo["trained_prompts"] = {
        "prompts": 3,
        "generations": 4,
        "mean_before": 0.25,
        "mean_after": 0.5,
        "rose": 2,
        "fell": 1,
    }
    text = "\n".join(_training_section({"grpo": grpo}))
    assert (
        "The 3 trained prompts sampled again after training the way the probe sampled them (4 samples each): mean"
        " reward 0.250 before, 0.500 after; it rose on 2 and fell on 1 of them." in text
    )


def test_the_gate_requires_beating_the_nearest_story_baseline_unless_params_turn_it_off() -> None:
    # experience beats nearest clearly; an even split against nearest does not.
    clear = compare_stages(synthetic_report(STAGES), "best", samples=300, seed=0)
    check, sentence = above_nearest_check(clear, "experience")
    assert check.passed and check.value > 0
    assert sentence.startswith("Mean reward beats copying the nearest training story: candidate − nearest = ")

    tied = synthetic_report({"nearest": [0.3, 0.0, 0.3, 0.0, 0.3, 0.0], "sft": [0.0, 0.3, 0.0, 0.3, 0.3, 0.0]})
    comparison = compare_stages(tied, "best", samples=300, seed=0)
    metrics = tied.models["sft"].metrics.model_dump()
    on, off = Params(), Params(gate=GateParams(above_nearest=False))
    decision = gate_decision(
        WORLD_AGENT, world_agent_rules(on.gate), metrics, comparison, [above_nearest_check(comparison, "sft")]
    )
    assert not decision.passed and "above_nearest" in decision.reasons[0]
    assert any("does not clearly beat copying the nearest training story" in r for r in decision.reasons)
    assert gate_decision(WORLD_AGENT, world_agent_rules(off.gate), metrics, comparison).passed

    # Without the comparison the check cannot pass, and says why.
    check, sentence = above_nearest_check({"step_effects": []}, "sft")
    assert not check.passed and "was not compared" in sentence


def test_the_hour_profile_gates_sft_with_no_base_row_and_the_post_sft_stages_off(tmp_path: Path) -> None:
    # the cpu profile: base not in evaluate.models, experience/dpo/grpo off (max_steps 0): their
    # metrics files are the skip records lm.training.skip_stage writes
    report = synthetic_report({name: STAGES[name] for name in ("nearest", "sft", "reference")})
    summary, intents, comparison = tmp_path / "eval.json", tmp_path / "eval_intents.jsonl", tmp_path / "compare.json"
    write_eval_outputs(report, summary, intents)
    params = Params.model_validate({"compare": {"bootstrap_samples": 100}})
    compared = compare_stage(params, summary=summary, intents=intents, comparison=comparison, live=tmp_path / "c")
    assert compared["candidate"] == "sft"
    assert [(e["model"], e["baseline"]) for e in compared["step_effects"]] == [("sft", "nearest")]
    training = {"sft": {"global_step": 30, "loss_first": 1.8, "loss_last": 0.4, "wall_s": 600.0}}
    for stage in ("experience", "dpo", "grpo"):
        reason = f"{stage}.max_steps is 0: the stage is off in this profile"
        training[stage] = {"skipped": True, "reason": reason, "global_step": 0}
    _, gate_json, report_md = gate_with(tmp_path, params, training, dict.fromkeys(training, b"sft"))
    gate = json.loads(gate_json.read_text())
    assert gate["candidate"] == "sft" and isinstance(gate["passed"], bool)
    text = report_md.read_text()
    assert "**sft** (candidate)" in text and "| sft (candidate) − nearest |" in text
    assert "sft (candidate) − base" not in text
    section = text.split("## Training", 1)[1].split("\n## ", 1)[0]
    assert "| sft | 30 | 1.800 → 0.400 |" in section and "| experience |" not in section
    for stage in ("experience", "dpo", "grpo"):
        assert f"- **{stage} did not train:** {stage}.max_steps is 0: the stage is off in this profile." in section
    assert "Experience:**" not in section and "probe" not in section
