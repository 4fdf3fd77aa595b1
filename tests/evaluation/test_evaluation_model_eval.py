"""One cached evaluation step per model: eval/<model>.json (deterministic), its speed file, the
nearest-story baseline, constrained and unconstrained rows, and the step combining them into eval.json."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from evaluation_helpers import DATA, STORIES

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.evaluation.eval_files import read_eval_report
from worldagent.evaluation.model_eval import ModelEvalFile, combine, read_model_eval, write_model_eval
from worldagent.io import read_jsonl
from worldagent.pipeline.entry import path_arguments
from worldagent.pipeline.world_agent import EVAL_MODELS, PIPELINE
from worldagent.tools.callformat import parse_calls
from worldagent.world_agent.evaluate import load_eval_rows, prompts_of
from worldagent.world_agent.stages.evaluate import combine_evaluations_stage, combine_model_files, evaluate_stage
from worldagent.world_agent.stages.evaluate_model import evaluate_model_stage

# the stage table's entries call the one stage function with each model's name
MODEL_STAGES = {name: partial(evaluate_model_stage, name=name) for name in EVAL_MODELS}
evaluate_base_stage = MODEL_STAGES["base"]
evaluate_champion_stage = MODEL_STAGES["champion"]
evaluate_nearest_stage = MODEL_STAGES["nearest"]
evaluate_reference_stage = MODEL_STAGES["reference"]
evaluate_adapter_stage = evaluate_model_stage

EVAL = DATA / "trajectories.eval.jsonl"
TRAIN = DATA / "trajectories.jsonl"
SPLIT = {"eval_trajectories": EVAL, "stories": DATA / "stories.jsonl", "stories_dir": STORIES}


def params(**evaluate: Any) -> Params:
    # no self-check retries unless a test asks for them (they are tested on their own)
    settings = {"max_intents": 3, "max_new_tokens": 24, "batch_size": 2, "self_check_attempts": 0, **evaluate}
    return Params.model_validate({"evaluate": settings})


def no_champion(path: Path) -> Path:
    path.write_text(
        json.dumps({"family": "world-agent", "version": None, "artifact_path": None, "artifact_hash": None})
    )
    return path


@pytest.fixture
def base_dir(tmp_path: Path) -> Path:
    base = tmp_path / "models" / "base"
    base.mkdir(parents=True)
    return base


def test_each_model_stage_takes_exactly_the_paths_it_needs() -> None:
    split = {"eval_trajectories", "stories", "stories_dir", "out"}
    expected = {
        "base": split | {"base", "speed"},
        "nearest": split | {"trajectories"},
        "champion": split | {"base", "champion", "speed"},
        "reference": split,
        **dict.fromkeys(("sft", "experience", "dpo", "grpo"), split | {"base", "adapter", "speed"}),
    }
    assert set(MODEL_STAGES) == set(expected)
    for name in MODEL_STAGES:
        stage = PIPELINE.stage(f"evaluate_{name}")
        assert stage.options == {"name": name}
        assert set(stage.arguments) == expected[name], name
    combined = {f"{name}_eval" for name in expected} | {"summary", "intents", "live"}
    assert set(path_arguments(combine_evaluations_stage)) == combined


def test_reference_and_nearest_files_are_deterministic_and_the_baseline_never_copies_its_own_intent(
    tmp_path: Path,
) -> None:
    out = tmp_path / "eval"
    reference = evaluate_reference_stage(params(), **SPLIT, out=out / "reference.json")
    nearest = evaluate_nearest_stage(params(), **SPLIT, trajectories=TRAIN, out=out / "nearest.json")
    assert [row.name for row in reference.rows] == ["reference"]
    assert reference.rows[0].metrics.mean_reward == 1.0 and reference.rows[0].generation is None
    [row] = nearest.rows
    assert row.name == "nearest" and len(row.copied or []) == 3 == len(nearest.intents)
    training = {r["id"]: r for r in read_jsonl(TRAIN) if r.get("turns") == "single"}
    eval_ids = {r["id"] for r in read_jsonl(EVAL)}
    for copied, output, intent in zip(row.copied or [], row.outputs, nearest.intents, strict=True):
        assert copied in training and copied not in eval_ids and copied != intent
        assert output == training[copied]["messages"][2]["content"]  # copied unchanged
    assert row.metrics.mean_reward < reference.rows[0].metrics.mean_reward
    assert any("nearest training story" in note for note in nearest.notes)

    before = {path.name: path.read_bytes() for path in out.iterdir()}
    evaluate_reference_stage(params(), **SPLIT, out=out / "reference.json")
    evaluate_nearest_stage(params(), **SPLIT, trajectories=TRAIN, out=out / "nearest.json")
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before  # DVC sees no change
    assert read_model_eval(out / "nearest.json", "nearest") == nearest
    with pytest.raises(InputError, match="expected 'reference'"):
        read_model_eval(out / "nearest.json", "reference")


def test_a_model_is_decoded_constrained_and_unconstrained_with_its_speed_recorded(
    tmp_path: Path, base_dir: Path, tiny_model
) -> None:
    loaded: list[Any] = []

    def loader(base: Path, adapter: Path | None):
        loaded.append((base, adapter))
        return tiny_model

    out, speed = tmp_path / "base.json", tmp_path / "base.speed.json"
    settings = params(unconstrained_models=["base"])
    evaluation = evaluate_base_stage(settings, **SPLIT, base=base_dir, out=out, speed=speed, loader=loader)
    assert loaded == [(base_dir, None)]  # loaded once for both rows
    constrained, free = evaluation.rows
    assert (constrained.name, free.name) == ("base", "base (unconstrained)")
    assert constrained.generation and constrained.generation.constrained
    assert free.generation and not free.generation.constrained
    assert constrained.metrics.parse_rate == 1.0  # well-formed calls by construction, from random weights
    assert all(parse_calls(text).calls and not parse_calls(text).errors for text in constrained.outputs)
    assert free.metrics.parse_rate < 1.0
    assert constrained.generation.prompts == 3 and constrained.generation.new_tokens > 0
    timings = json.loads(speed.read_text())
    assert timings["model"] == "base" and set(timings["rows"]) == {"base", "base (unconstrained)"}
    for row in timings["rows"].values():
        assert row["tokens_per_second"] > 0 and row["new_tokens"] > 0 and row["seconds"] > 0
        # no CUDA here: the project's decoder, its work counted against the least any engine must do
        assert row["engine"] == "decoder" and row["prefilled_tokens"] > 0
        assert row["products"] == "float32"  # the tiny model's own weights
        assert row["spent_over_minimum"] >= 1.0 and row["minimum_tokens"] > row["new_tokens"]
    # calls only: the grammar steered every answer of the untrained base, so none was reused
    assert timings["rows"]["base (unconstrained)"]["reused_first_answers"] == 0
    assert timings["rows"]["base (unconstrained)"]["prompts"] == 3
    assert "seconds" not in out.read_text()  # timings stay out of the cached, deterministic file

    first = out.read_bytes()
    evaluate_base_stage(settings, **SPLIT, base=base_dir, out=out, speed=speed, loader=loader)
    assert out.read_bytes() == first  # greedy decoding: the same bytes again

    only = evaluate_base_stage(
        params(constrained=False, unconstrained_models=["base"]),
        **SPLIT,
        base=base_dir,
        out=out,
        speed=speed,
        loader=loader,
    )
    assert [row.name for row in only.rows] == ["base"] and not only.rows[0].generation.constrained  # type: ignore[union-attr]


def test_the_untrained_base_can_have_its_own_smaller_budget_and_the_file_says_so(
    tmp_path: Path, base_dir: Path, tiny_model
) -> None:
    settings = params(base_max_new_tokens=4, unconstrained_models=["base", "dpo"])
    files = {"out": tmp_path / "m.json", "speed": tmp_path / "m.speed.json"}
    base = evaluate_base_stage(settings, **SPLIT, base=base_dir, **files, loader=lambda b, a: tiny_model)
    assert [row.generation.max_new_tokens for row in base.rows] == [4, 4]  # type: ignore[union-attr]
    assert all(0 < row.generation.new_tokens <= 3 * 4 for row in base.rows)  # type: ignore[union-attr]
    assert base.notes == [
        "The models' answers were decoded in float32 on cpu (`evaluate.dtype`).",
        "`base` was decoded with at most 4 new tokens per answer (the other models 24).",
    ]

    adapter = tmp_path / "models" / "dpo"
    adapter.mkdir()
    dpo = MODEL_STAGES["dpo"](
        settings, **SPLIT, base=base_dir, adapter=adapter, **files, loader=lambda b, a: tiny_model
    )
    assert [row.generation.max_new_tokens for row in dpo.rows] == [24, 24]  # type: ignore[union-attr]
    assert dpo.notes == base.notes[:1]
    assert max(row.generation.new_tokens for row in dpo.rows) > 3 * 4  # type: ignore[union-attr]


@pytest.mark.parametrize(("setting", "decoded_in"), [("model", "bfloat16"), ("float32", "float32")])
def test_models_are_decoded_in_evaluate_dtype_and_the_report_says_so_once(
    tmp_path: Path, base_dir: Path, tiny_model, monkeypatch: pytest.MonkeyPatch, setting: str, decoded_in: str
) -> None:
    import worldagent.world_agent.stages.evaluate_model as stage

    asked: list[str] = []
    threads: list[int] = []

    def loader(base: Path, adapter: Path | None, dtype: str, cpu_threads: int) -> Any:
        asked.append(dtype)
        threads.append(cpu_threads)
        return tiny_model

    monkeypatch.setattr(stage, "default_loader", loader)
    settings = Params.model_validate(
        {
            "model": {"dtype": "bfloat16"},
            "evaluate": {**params().evaluate.model_dump(), "dtype": setting, "threads": 3},
        }
    )
    adapter = tmp_path / "models" / "sft"
    adapter.mkdir(parents=True)
    files = [tmp_path / "base.json", tmp_path / "sft.json"]
    evaluate_base_stage(settings, **SPLIT, base=base_dir, out=files[0], speed=tmp_path / "b.speed.json")
    evaluate_adapter_stage(
        settings, name="sft", **SPLIT, base=base_dir, adapter=adapter, out=files[1], speed=tmp_path / "s.speed.json"
    )
    assert asked == [decoded_in, decoded_in]  # "model": as trained (model.dtype)
    assert threads == [3, 3]  # evaluate.threads
    said = "The models' answers were decoded in float32 on cpu (`evaluate.dtype`)."  # what tiny_model holds
    assert said in read_model_eval(files[1]).notes
    report = combine([read_model_eval(path) for path in files])
    assert report.notes.count(said) == 1 and set(report.models) == {"base", "sft"}


def test_adapter_and_champion_stages(tmp_path: Path, base_dir: Path, tiny_model) -> None:
    loaded: list[Any] = []

    def loader(base: Path, adapter: Path | None):
        loaded.append(adapter)
        return tiny_model

    adapter = tmp_path / "models" / "dpo"
    adapter.mkdir()
    settings = params(unconstrained_models=[])
    run = MODEL_STAGES["dpo"]
    evaluation = run(
        settings,
        **SPLIT,
        base=base_dir,
        adapter=adapter,
        out=tmp_path / "dpo.json",
        speed=tmp_path / "dpo.speed.json",
        loader=loader,
    )
    assert loaded == [adapter] and [row.name for row in evaluation.rows] == ["dpo"]
    with pytest.raises(InputError, match="experience adapter not found"):
        MODEL_STAGES["experience"](
            settings,
            **SPLIT,
            base=base_dir,
            adapter=tmp_path / "missing",
            out=tmp_path / "x.json",
            speed=tmp_path / "x.speed.json",
            loader=loader,
        )
    with pytest.raises(InputError, match="unknown model 'ensemble'"):
        evaluate_adapter_stage(
            settings,
            name="ensemble",
            **SPLIT,
            base=base_dir,
            adapter=adapter,
            out=tmp_path / "x.json",
            speed=tmp_path / "x.speed.json",
            loader=loader,
        )

    champion = evaluate_champion_stage(
        settings,
        **SPLIT,
        base=base_dir,
        champion=no_champion(tmp_path / "champion.json"),
        out=tmp_path / "champion.json.out",
        speed=tmp_path / "champion.speed.json",
        root=tmp_path,
        loader=loader,
    )
    assert champion.rows == [] and any("first run" in note for note in champion.notes)
    assert loaded == [adapter]  # nothing loaded without a champion


def test_combining_the_per_model_files_writes_eval_json_in_the_models_order(
    tmp_path: Path, base_dir: Path, tiny_model
) -> None:
    files = {name: tmp_path / "eval" / f"{name}.json" for name in MODEL_STAGES}
    settings = params(models=["base", "nearest", "champion", "reference"])
    evaluate_reference_stage(settings, **SPLIT, out=files["reference"])
    evaluate_champion_stage(
        settings,
        **SPLIT,
        base=base_dir,
        champion=no_champion(tmp_path / "champion.json"),
        out=files["champion"],
        speed=tmp_path / "c.speed.json",
        root=tmp_path,
    )
    evaluate_nearest_stage(settings, **SPLIT, trajectories=TRAIN, out=files["nearest"])
    evaluate_base_stage(
        settings,
        **SPLIT,
        base=base_dir,
        out=files["base"],
        speed=tmp_path / "b.speed.json",
        loader=lambda base, adapter: tiny_model,
    )
    summary, intents = tmp_path / "eval.json", tmp_path / "eval_intents.jsonl"
    # every model's file is an input; only those of evaluate.models are read (sft.json etc. do not exist)
    report = combine_evaluations_stage(
        settings,
        **{f"{name}_eval": path for name, path in files.items()},
        summary=summary,
        intents=intents,
        live=tmp_path / "evaluation",
    )
    assert list(report.models) == ["base", "nearest", "reference"]
    assert read_eval_report(summary, intents) == report  # the format compare and gate read
    assert any("first run" in note for note in report.notes)
    assert (tmp_path / "metrics.png").is_file() and (tmp_path / "plots" / "rewards.csv").is_file()
    # every evaluated model's metrics in the DVCLive folder, for `dvc exp show`
    logged = json.loads((tmp_path / "evaluation" / "metrics.json").read_text())
    assert list(logged) == ["base", "nearest", "reference"]
    assert logged["reference"]["mean_reward"] == report.models["reference"].metrics.mean_reward == 1.0

    # A model evaluation missing, or made on another eval split, is an error, not a shorter table.
    with pytest.raises(InputError, match="run the evaluate_dpo stage first"):
        combine_model_files(["base", "dpo"], files, summary, intents)
    with pytest.raises(InputError, match="no evaluation file given for dpo"):
        combine_model_files(["base", "dpo"], {"base": files["base"]}, summary, intents)
    stale = read_model_eval(files["nearest"])
    stale.intents = stale.intents[:2]
    for row in stale.rows:
        row.per_intent, row.outputs = row.per_intent[:2], row.outputs[:2]
    write_model_eval(files["nearest"], stale)
    with pytest.raises(InputError, match="covers other intents"):
        combine_model_files(settings.evaluate.models, files, summary, intents)


def test_a_file_whose_rows_do_not_match_its_intents_is_refused(tmp_path: Path) -> None:
    evaluation = evaluate_reference_stage(params(), **SPLIT, out=tmp_path / "reference.json")
    evaluation.rows[0].outputs.pop()
    write_model_eval(tmp_path / "broken.json", evaluation)
    with pytest.raises(InputError, match="does not cover the file's intents"):
        read_model_eval(tmp_path / "broken.json")
    (tmp_path / "garbage.json").write_text('{"model": "x"}')
    with pytest.raises(InputError, match="not a model evaluation file"):
        read_model_eval(tmp_path / "garbage.json")
    twice = ModelEvalFile(model="again", intents=evaluation.intents, components=[], rows=evaluation.rows[:1])
    fixed = read_model_eval(tmp_path / "reference.json")
    with pytest.raises(InputError, match="appears in two"):
        combine([fixed, twice.model_copy(update={"rows": fixed.rows})])


def test_the_single_step_path_is_a_loop_over_the_per_model_function(tmp_path: Path, base_dir: Path, tiny_model) -> None:
    settings = params(models=["base", "nearest", "experience", "reference"], unconstrained_models=[])
    common = dict(
        **SPLIT,
        base=base_dir,
        sft=tmp_path / "sft",
        dpo=tmp_path / "dpo",
        grpo=tmp_path / "grpo",
        champion=no_champion(tmp_path / "champion.json"),
        summary=tmp_path / "eval.json",
        intents=tmp_path / "eval_intents.jsonl",
        root=tmp_path,
        loader=lambda base, adapter: tiny_model,
    )
    report = evaluate_stage(settings, **common)
    assert list(report.models) == ["base", "reference"]
    assert sum("was not evaluated: this evaluate step was not given its input" in note for note in report.notes) == 2
    report = evaluate_stage(settings, **common, trajectories=TRAIN)
    assert list(report.models) == ["base", "nearest", "reference"]


def test_a_model_stage_runs_from_the_command_line_its_table_entry_gives_it(tmp_path: Path, capsys) -> None:
    from worldagent.pipeline.entry import option, run_stage

    (tmp_path / "params.yaml").write_text("evaluate: {max_intents: 2}\n")
    common = ["--params", str(tmp_path / "params.yaml")]
    common += [part for key, path in SPLIT.items() for part in (option(key), str(path))]
    out = tmp_path / "eval" / "reference.json"
    reference = [*common, "--name", "reference", "--out", str(out)]
    assert run_stage(PIPELINE.stage("evaluate_reference"), reference) == 0
    assert read_model_eval(out, "reference").rows[0].metrics.n == 2
    missing = ["--base", str(tmp_path), "--adapter", str(tmp_path / "none"), "--speed", str(tmp_path / "s.json")]
    dpo = [*common, "--name", "dpo", *missing, "--out", str(out)]
    assert run_stage(PIPELINE.stage("evaluate_dpo"), dpo) == 2
    assert "dpo adapter not found (run the dpo stage first)" in capsys.readouterr().err


def test_a_model_that_fails_its_own_check_is_sampled_again_and_the_file_counts_it(
    tmp_path: Path, base_dir: Path, tiny_model
) -> None:
    files = {"out": tmp_path / "base.json", "speed": tmp_path / "base.speed.json"}
    run = partial(evaluate_base_stage, **SPLIT, base=base_dir, **files, loader=lambda b, a: tiny_model)
    plain = run(params(unconstrained_models=[], self_check_attempts=2))  # base is not in the default self_check_models
    assert plain.rows[0].self_check is None and not any("self-check" in note for note in plain.notes)

    checked = run(params(unconstrained_models=[], self_check_attempts=2, self_check_models=["base"]))
    [row] = checked.rows
    counts = row.self_check
    assert counts is not None and counts.attempts == 2
    # random weights never write a story that renders: every prompt is retried twice, and the
    # greedy first answers are kept
    assert (counts.first_passed, counts.fixed, counts.failed, counts.retried_answers) == (0, 0, 3, 6)
    assert row.outputs == plain.rows[0].outputs
    assert row.generation is not None and row.generation.prompts == 3 + 6
    assert any(note.startswith("`base` self-check") for note in checked.notes)
    first = files["out"].read_bytes()
    run(params(unconstrained_models=[], self_check_attempts=2, self_check_models=["base"]))
    assert files["out"].read_bytes() == first  # seeded retries: the same bytes again


def test_the_nearest_baseline_copies_the_runner_up_when_the_nearest_copy_fails_its_check(tmp_path: Path) -> None:
    from worldagent.world_agent.retrieval import BM25Index, NearestStoryPolicy, documents_from_trajectories

    training = read_jsonl(TRAIN)
    [first_prompt] = prompts_of(load_eval_rows(EVAL, 1))  # the stage's first intent
    nearest = evaluate_nearest_stage(params(self_check_attempts=0), **SPLIT, trajectories=TRAIN, out=tmp_path / "a")
    chosen = nearest.rows[0].copied[0]  # type: ignore[index]
    # break the story the first intent copies: its answer no longer renders
    broken = tmp_path / "trajectories.jsonl"
    with broken.open("w", encoding="utf-8") as handle:
        for row in training:
            if row["id"] == chosen:
                row["messages"][-1]["content"] = row["messages"][-1]["content"].replace("export const", "export cnst")
            handle.write(json.dumps(row) + "\n")
    off = evaluate_nearest_stage(params(self_check_attempts=0), **SPLIT, trajectories=broken, out=tmp_path / "b")
    on = evaluate_nearest_stage(params(self_check_attempts=1), **SPLIT, trajectories=broken, out=tmp_path / "c")
    assert off.rows[0].copied[0] == chosen and off.rows[0].per_intent[0].reward == 0.0  # type: ignore[index]
    runner_up = on.rows[0].copied[0]  # type: ignore[index]
    index = BM25Index(documents_from_trajectories(read_jsonl(broken)))
    assert runner_up != chosen and runner_up == NearestStoryPolicy(index, 1).choose(first_prompt).id
    answers = {row["id"]: row["messages"][-1]["content"] for row in read_jsonl(broken)}
    assert on.rows[0].outputs == [answers[copied] for copied in on.rows[0].copied or []]
    assert on.rows[0].per_intent[0].reward > 0.0
    assert on.rows[0].self_check is not None and on.rows[0].self_check.fixed >= 1


def skipped_adapter(path: Path, stage: str, passthrough_of: str) -> Path:
    """An adapter directory as a stage that did not train writes it (GRPO's pass_through)."""
    from worldagent.lm.training import write_stage

    path.mkdir(parents=True)
    reason = f"{stage}.max_steps is 0: the stage is off in this profile"
    write_stage(path, {"stage": stage, "passthrough_of": passthrough_of, "skipped": True, "reason": reason})
    return path


def refusing_loader(base: Path, adapter: Path | None) -> Any:
    raise AssertionError(f"nothing should be loaded, yet {adapter or base} was")


def test_a_stage_that_did_not_train_is_not_evaluated_again_and_its_file_says_why(
    tmp_path: Path, base_dir: Path
) -> None:
    adapter = skipped_adapter(tmp_path / "models" / "dpo", "dpo", "experience")
    out, speed = tmp_path / "dpo.json", tmp_path / "dpo.speed.json"
    evaluation = MODEL_STAGES["dpo"](
        params(), **SPLIT, base=base_dir, adapter=adapter, out=out, speed=speed, loader=refusing_loader
    )
    assert evaluation.rows == [] and len(evaluation.intents) == 3
    assert evaluation.notes == [
        "`dpo` did not train (dpo.max_steps is 0: the stage is off in this profile):"
        " its adapter is `experience`'s, not evaluated again."
    ]
    assert read_model_eval(out, "dpo") == evaluation
    assert json.loads(speed.read_text()) == {"model": "dpo", "rows": {}}  # the declared metric still exists


def test_a_model_the_profile_does_not_evaluate_loads_nothing(tmp_path: Path, base_dir: Path) -> None:
    adapter = tmp_path / "models" / "experience"
    adapter.mkdir(parents=True)
    settings = params(models=["base", "sft", "reference"])
    for name, extra in (
        ("experience", {"base": base_dir, "adapter": adapter, "speed": tmp_path / "x.speed.json"}),
        ("nearest", {"trajectories": tmp_path / "missing.jsonl"}),  # not even its inputs are read
    ):
        evaluation = MODEL_STAGES[name](
            settings, **SPLIT, **extra, out=tmp_path / f"{name}.json", loader=refusing_loader
        )
        assert evaluation.rows == [] and evaluation.notes == [f"`{name}` is not in `evaluate.models`: not evaluated."]


def test_the_report_compares_the_stages_that_trained_and_says_why_the_others_were_not_evaluated(
    tmp_path: Path, base_dir: Path, tiny_model
) -> None:
    from worldagent.evaluation.report import render_report
    from worldagent.world_agent.stages.compare import compare_stage

    settings = params(models=["base", "nearest", "sft", "experience", "dpo", "grpo", "reference"])
    files = {name: tmp_path / "eval" / f"{name}.json" for name in MODEL_STAGES}
    models = tmp_path / "models"
    (models / "sft").mkdir(parents=True)  # a trained adapter (the test's loader stands in for it)
    adapters = {
        "sft": models / "sft",
        "experience": skipped_adapter(models / "experience", "experience", "sft"),
        "dpo": skipped_adapter(models / "dpo", "dpo", "experience"),
        "grpo": skipped_adapter(models / "grpo", "grpo", "dpo"),
    }
    loaded: list[Path | None] = []

    def loader(base: Path, adapter: Path | None) -> Any:
        loaded.append(adapter)
        return tiny_model

    for name in ("base", "sft", "experience", "dpo", "grpo"):
        adapter = {"adapter": adapters[name]} if name != "base" else {}
        speed = tmp_path / f"{name}.speed.json"
        MODEL_STAGES[name](settings, **SPLIT, base=base_dir, **adapter, out=files[name], speed=speed, loader=loader)
    assert loaded == [None, adapters["sft"]]  # the base and sft only
    evaluate_nearest_stage(settings, **SPLIT, trajectories=TRAIN, out=files["nearest"])
    evaluate_reference_stage(settings, **SPLIT, out=files["reference"])
    evaluate_champion_stage(
        settings,
        **SPLIT,
        base=base_dir,
        champion=no_champion(tmp_path / "c.json"),
        out=files["champion"],
        root=tmp_path,
    )

    summary, intents, comparison = tmp_path / "eval.json", tmp_path / "eval_intents.jsonl", tmp_path / "compare.json"
    report = combine_evaluations_stage(
        settings,
        **{f"{name}_eval": path for name, path in files.items()},
        summary=summary,
        intents=intents,
        live=tmp_path / "evaluation",
    )
    assert list(report.models) == ["base", "nearest", "sft", "reference"]
    compared = compare_stage(
        settings, summary=summary, intents=intents, comparison=comparison, live=tmp_path / "candidate"
    )
    assert json.loads(comparison.read_text())["candidate"] == "sft" == compared["candidate"]
    steps = [(effect["model"], effect["baseline"]) for effect in compared["step_effects"]]
    assert steps[0] == ("sft", "base") and {model for model, _ in steps} == {"sft"}  # base → sft, nothing after

    text = render_report(read_eval_report(summary, intents), compared, None, "sft")
    for name, source in (("experience", "sft"), ("dpo", "experience"), ("grpo", "dpo")):
        assert f"- `{name}` did not train ({name}.max_steps is 0: the stage is off in this profile):" in text
        assert f"its adapter is `{source}`'s, not evaluated again." in text
    assert "- `champion` is not in `evaluate.models`: not evaluated." in text
