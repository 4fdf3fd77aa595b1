"""benchmarks.seeds: a training stage again with only the seed changed, into a scratch folder, and
its evaluation paired with the committed rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.seeds import evaluation_output, seed_commands, seed_params, seed_table
from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.metrics import IntentResult, summarize
from worldagent.evaluation.model_eval import EvalRow
from worldagent.pipeline.table import Pipeline, Plot, Stage

STAGES = (
    Stage(
        "grpo",
        "tasks.grpo",
        "trains",
        inputs={"dpo": "models/dpo", "stories_dir": "${discover.stories_dir}"},
        outputs={"out": "models/grpo"},
        metrics={"metrics": "reports/training/grpo-metrics.json"},
        plots={"curves": Plot("reports/training/grpo.json", x="step", y="loss")},
    ),
    Stage(
        "evaluate_grpo",
        "tasks.evaluate_grpo",
        "evaluates",
        inputs={"base": "models/base", "adapter": "models/grpo"},
        outputs={"out": "reports/eval/grpo.json"},
        metrics={"speed": "reports/eval_speed/grpo.json"},
    ),
)
PIPELINE = Pipeline("world-agent", STAGES, "report.md", "gate.json", "champion.json", "world_agent.family")


def test_seed_params_change_the_seed_and_drop_the_unconstrained_row_only() -> None:
    raw = {"seed": 1234, "sft": {"max_steps": 150}, "evaluate": {"unconstrained_models": ["grpo"], "batch_size": 34}}
    changed = seed_params(raw, 7)
    assert changed == {"seed": 7, "sft": {"max_steps": 150}, "evaluate": {"unconstrained_models": [], "batch_size": 34}}
    assert raw["seed"] == 1234 and raw["evaluate"]["unconstrained_models"] == [
        "grpo"
    ]  # the caller's copy is left alone


def _arguments(command: list[str]) -> dict[str, str]:
    return dict(zip(command[3::2], command[4::2], strict=True))


def test_the_stage_writes_only_under_the_seed_folder_and_its_evaluation_reads_that_adapter(tmp_path: Path) -> None:
    params = Params.model_validate({"discover": {"stories_dir": "data/stories"}})
    train, evaluate = seed_commands(PIPELINE, "grpo", params, tmp_path / "params.yaml", tmp_path)
    assert train[1:3] == ["-m", "tasks.grpo"] and evaluate[1:3] == ["-m", "tasks.evaluate_grpo"]
    trained = _arguments(train)
    assert trained["--params"] == str(tmp_path / "params.yaml")
    assert (trained["--dpo"], trained["--stories-dir"]) == ("models/dpo", "data/stories")  # the committed inputs
    assert {trained[a] for a in ("--out", "--metrics", "--curves")} == {
        str(tmp_path / "out"),
        str(tmp_path / "metrics.json"),
        str(tmp_path / "curves.json"),
    }
    evaluated = _arguments(evaluate)
    assert evaluated["--adapter"] == trained["--out"] and evaluated["--base"] == "models/base"
    assert evaluated["--out"] == str(evaluation_output(PIPELINE, "grpo", tmp_path))
    written = [trained[a] for a in ("--out", "--metrics", "--curves")] + [evaluated[a] for a in ("--out", "--speed")]
    assert len(set(written)) == len(written) and all(Path(path).parent == tmp_path for path in written)


def _row(name: str, rewards: list[float]) -> EvalRow:
    results = [
        IntentResult(
            id=f"c/s.stories.tsx#x{i}",
            intent=f"intent {i}",
            component="c",
            parsed=True,
            calls=2,
            violations=0,
            story_passed=reward == 1.0,
            a11y_passed=True,
            assertions_passed=0,
            assertions_total=1,
            reward=reward,
            tool_efficiency=1.0,
        )
        for i, reward in enumerate(rewards)
    ]
    return EvalRow(name=name, metrics=summarize(results), per_intent=results, outputs=[""] * len(results))


def test_the_table_pairs_each_seed_with_the_committed_and_previous_rows_and_pools_the_seeds() -> None:
    rows = {
        "dpo": _row("dpo", [0.3, 0.3, 0.3, 0.3]),
        "grpo seed 1234 (committed)": _row("grpo", [0.3, 0.3, 0.3, 0.3]),
        "grpo seed 7": _row("grpo", [1.0, 0.3, 1.0, 0.3]),
    }
    table = "\n".join(seed_table(rows, "grpo seed 1234 (committed)", "dpo", samples=200))
    assert "| grpo seed 7 | 2 of 4 | 0.650 |" in table
    assert "| grpo seed 7 − grpo seed 1234 (committed) | +0.350 [" in table
    assert "| grpo seed 7 − dpo | +0.350 [" in table
    assert "| mean of the 2 seeds − dpo | +0.175 [" in table  # the committed seed counts as one of them
    assert "grpo seed 1234 (committed) − " not in table


def test_evaluations_of_other_intents_are_refused() -> None:
    other = _row("grpo", [0.5])
    other.per_intent[0].id = "elsewhere"
    rows = {"dpo": _row("dpo", [0.3]), "grpo seed 1234 (committed)": other, "grpo seed 7": _row("grpo", [0.3])}
    with pytest.raises(InputError, match="share no intent"):
        seed_table(rows, "grpo seed 1234 (committed)", "dpo")
