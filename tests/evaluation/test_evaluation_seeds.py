"""benchmarks.seeds: a training stage again with only the seed (or a ``--set`` params key) changed,
into a scratch folder, and its evaluation paired with the committed rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.seeds import (
    evaluation_output,
    main,
    parse_override,
    seed_commands,
    seed_params,
    seed_table,
    variant_folder,
    variant_name,
)
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


def test_a_set_key_changes_that_key_only_and_leaves_the_caller_s_params_alone() -> None:
    raw = {"seed": 1234, "lora": {"r": 16, "top_layers": 12}, "evaluate": {"unconstrained_models": ["grpo"]}}
    overrides = [parse_override("lora.top_layers=null"), parse_override("lora.r=64")]
    changed = seed_params(raw, 1234, overrides)
    assert changed["lora"] == {"r": 64, "top_layers": None} and changed["seed"] == 1234
    assert raw["lora"] == {"r": 16, "top_layers": 12}


@pytest.mark.parametrize(
    ("text", "message"),
    [("lora.top_layers", "expected KEY=VALUE"), ("=3", "expected KEY=VALUE"), ("lora..r=3", "expected KEY=VALUE")],
)
def test_a_malformed_set_is_refused_with_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_override(text)


def test_a_set_into_a_missing_section_names_it() -> None:
    with pytest.raises(InputError, match="`lorra.r` is not a key"):
        seed_params({"seed": 1, "lora": {}}, 1, [parse_override("lorra.r=8")])


def test_a_mistyped_set_key_fails_before_anything_trains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("seed: 1234\nlora:\n  r: 16\n", encoding="utf-8")
    code = main(
        [
            "--params",
            str(params),
            "--stage",
            "sft",
            "--seeds",
            "1234",
            "--set",
            "lora.rank=64",
            "--work",
            str(tmp_path / "w"),
        ]
    )
    assert code != 0 and "rank" in capsys.readouterr().err
    assert not list((tmp_path / "w").rglob("run.log"))  # no stage was started


def test_variants_are_named_and_filed_by_their_seed_and_set_keys() -> None:
    assert variant_name("sft", 1234, ["lora.top_layers=null"]) == "sft seed 1234, lora.top_layers=null"
    assert variant_name("grpo", 7, []) == "grpo seed 7"
    assert (
        variant_folder(1234, ["lora.target_modules=[q_proj, v_proj]"])
        == "seed-1234-lora.target_modules=_q_proj__v_proj_"
    )
    assert variant_folder(7, []) == "seed-7"


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


def test_a_variant_of_params_is_not_pooled_with_the_seeds() -> None:
    rows = {
        "dpo": _row("dpo", [0.3, 0.3]),
        "sft seed 1234 (committed)": _row("sft", [0.3, 0.3]),
        "sft seed 1234, lora.r=64": _row("sft", [1.0, 0.3]),
    }
    table = "\n".join(seed_table(rows, "sft seed 1234 (committed)", "dpo", samples=200, pooled=False))
    assert "| sft seed 1234, lora.r=64 − sft seed 1234 (committed) | +0.350 [" in table
    assert "mean of the" not in table


def test_evaluations_of_other_intents_are_refused() -> None:
    other = _row("grpo", [0.5])
    other.per_intent[0].id = "elsewhere"
    rows = {"dpo": _row("dpo", [0.3]), "grpo seed 1234 (committed)": other, "grpo seed 7": _row("grpo", [0.3])}
    with pytest.raises(InputError, match="share no intent"):
        seed_table(rows, "grpo seed 1234 (committed)", "dpo")
