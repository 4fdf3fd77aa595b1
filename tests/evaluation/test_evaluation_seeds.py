"""benchmarks.seeds: a training stage again with only the seed (or a ``--set`` params key) changed,
into a scratch folder, and its evaluation paired with the committed rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluation_helpers import STORIES, cookies_answers, intent_result, scored_row

from benchmarks.seeds import (
    committed_run_id,
    evaluation_output,
    main,
    own_check_choice,
    parse_override,
    pass_overlap,
    persisted,
    seed_commands,
    seed_params,
    seed_table,
    store_before_run,
    variant_folder,
    variant_name,
)
from worldagent.config import Params, RewardWeights
from worldagent.errors import InputError
from worldagent.evaluation.metrics import summarize
from worldagent.evaluation.model_eval import EvalRow
from worldagent.pipeline.table import Pipeline, Plot, Stage
from worldagent.storytest.runner import PythonStoryRunner
from worldagent.world_agent.evaluate import Scorer
from worldagent.world_agent.experience import ExperienceSample, merge_samples, read_store, write_store
from worldagent.world_agent.self_check import tiered_check

STAGES = (
    Stage(
        "grpo",
        "worldagent.world_agent.stages.grpo",
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
    assert train[1:3] == ["-m", "worldagent.world_agent.stages.grpo"] and evaluate[1:3] == ["-m", "tasks.evaluate_grpo"]
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
        intent_result(f"c/s.stories.tsx#x{i}", reward, intent=f"intent {i}", story_passed=reward == 1.0)
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


EXPERIENCE = (
    Stage(
        "experience",
        "worldagent.world_agent.stages.experience",
        "samples and trains",
        inputs={"sft": "models/sft"},
        outputs={"store": "data/experience", "out": "models/experience"},
        persist=("store",),
        metrics={"metrics": "reports/training/experience-metrics.json"},
    ),
    Stage(
        "evaluate_experience",
        "tasks.evaluate_experience",
        "evaluates",
        inputs={"adapter": "models/experience"},
        outputs={"out": "reports/eval/experience.json"},
    ),
)


def test_a_persistent_store_is_read_and_written_in_the_seed_folder(tmp_path: Path) -> None:
    pipeline = Pipeline("world-agent", EXPERIENCE, "report.md", "gate.json", "champion.json", "world_agent.family")
    params = Params.model_validate({})
    train, _ = seed_commands(pipeline, "experience", params, tmp_path / "params.yaml", tmp_path)
    assert persisted(pipeline.stage("experience"), params, tmp_path) == {
        Path("data/experience"): Path(_arguments(train)["--store"])
    }


def test_weeks_run_the_stage_again_on_the_same_store_before_one_evaluation(tmp_path: Path) -> None:
    pipeline = Pipeline("world-agent", EXPERIENCE, "report.md", "gate.json", "champion.json", "world_agent.family")
    params = Params.model_validate({})
    *weeks, evaluate = seed_commands(pipeline, "experience", params, tmp_path / "params.yaml", tmp_path, weeks=3)
    assert [command[2] for command in weeks] == ["worldagent.world_agent.stages.experience"] * 3 and evaluate[
        2
    ] == "tasks.evaluate_experience"
    assert weeks[0] == weeks[1] == weeks[2]  # each week reads and grows the one scratch store
    assert _arguments(evaluate)["--adapter"] == _arguments(weeks[-1])["--out"]  # the last week's adapter


@pytest.mark.parametrize(
    ("stage", "weeks", "message"),
    [("grpo", 2, "grpo keeps no store"), ("grpo", 0, "at least one week"), ("experience", 0, "at least one week")],
)
def test_weeks_need_a_stage_that_keeps_a_store_and_at_least_one_week(
    tmp_path: Path, stage: str, weeks: int, message: str
) -> None:
    pipeline = Pipeline("world-agent", STAGES + EXPERIENCE, "report.md", "gate.json", "champion.json", "f")
    with pytest.raises(InputError, match=f"--weeks {weeks}: .*{message}"):
        seed_commands(pipeline, stage, Params.model_validate({}), tmp_path / "params.yaml", tmp_path, weeks=weeks)


def test_weeks_are_named_and_filed_apart_from_one_week() -> None:
    assert variant_name("experience", 1234, [], weeks=4) == "experience seed 1234, 4 weeks"
    assert variant_folder(1234, ["experience.learning_rate=0.0002"], weeks=4) == (
        "seed-1234-experience.learning_rate=0.0002-weeks-4"
    )
    assert variant_folder(1234, [], weeks=1) == variant_folder(1234, [])


def _sample(intent: str, completion: str, run: str) -> ExperienceSample:
    prompt = [{"role": "user", "content": intent}]
    return ExperienceSample(intent, prompt, completion, 1.0, True, "model", run)


def test_the_seed_store_is_the_committed_store_without_the_committed_run_s_samples(tmp_path: Path) -> None:
    earlier = [_sample("a", "first", "run-1"), _sample("b", "second", "run-1")]
    write_store(tmp_path / "before", earlier)
    # the committed run drew an earlier completion again (the store keeps run-1's) and two new ones
    drawn = [_sample("a", "first", "run-2"), _sample("c", "third", "run-2"), _sample("d", "fourth", "run-2")]
    write_store(tmp_path / "committed", merge_samples(earlier, drawn)[0])
    manifest = store_before_run(tmp_path / "committed", "run-2", tmp_path / "seed")
    assert manifest["runs"] == {"run-1": 2}
    assert {sample.completion for sample in read_store(tmp_path / "seed")} == {"first", "second"}
    for name in ("manifest.json", *manifest["sha256"]):  # byte for byte the store that run read
        assert (tmp_path / "seed" / name).read_bytes() == (tmp_path / "before" / name).read_bytes()
    assert len(read_store(tmp_path / "committed")) == 4  # left alone
    with pytest.raises(InputError, match="no sample of run run-3"):
        store_before_run(tmp_path / "committed", "run-3", tmp_path / "other")


def test_the_committed_run_id_comes_from_the_stage_metrics_or_a_clear_error(tmp_path: Path) -> None:
    metrics = tmp_path / "experience-metrics.json"
    metrics.write_text('{"run_id": "run-39390c831427", "passed": 20}', encoding="utf-8")
    assert committed_run_id(metrics) == "run-39390c831427"
    metrics.write_text('{"passed": 20}', encoding="utf-8")
    with pytest.raises(InputError, match="no run_id"):
        committed_run_id(metrics)
    with pytest.raises(InputError, match="make pipeline"):
        committed_run_id(tmp_path / "missing.json")


def test_pass_overlap_counts_the_stories_every_run_passes_and_any_run_passes() -> None:
    runs = [_row("a", [1.0, 1.0, 0.0, 0.0]), _row("b", [1.0, 0.0, 1.0, 0.0]), _row("c", [1.0, 1.0, 0.0, 0.0])]
    assert pass_overlap(runs) == (1, 3)


def test_the_own_checks_pick_takes_the_higher_ranked_answer_and_the_first_run_on_a_tie(eval_rows, token_files) -> None:
    scorer = Scorer(STORIES, PythonStoryRunner(), RewardWeights(), token_files)
    row, (reference, mislabelled, unparsed) = cookies_answers(eval_rows)
    unlocked = reference.replace("disabled: true", "disabled: false")  # shows the words, fails the hidden test
    level = tiered_check(scorer, [row])
    answers = {"reference": reference, "mislabelled": mislabelled, "unparsed": unparsed, "unlocked": unlocked}
    runs = {name: scored_row(scorer, row, [answer], name) for name, answer in answers.items()}

    def pick(*names: str) -> tuple[int, int]:
        return own_check_choice([runs[name] for name in names], [row], level)

    # the mislabelled answer renders without "Essential cookies": the reference outranks it
    assert pick("mislabelled", "reference") == (1, 0)
    assert pick("unparsed", "mislabelled") == (0, 0)
    # both at the top rank: the first run's answer is kept, and the intent counts as all-top
    assert pick("unlocked", "reference") == (0, 1)
    assert pick("reference", "unlocked") == (1, 1)
