"""`worldagent compare A B`: two evaluations paired by intent, B − A with the compare stage's bootstrap.

The real input is a committed run: ``tests/fixtures/full-budgets-run/eval_intents.jsonl`` (every evaluated model's
per-intent results, in git) and the per-model files the evaluate stages write, rebuilt here from it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from evaluation_helpers import ROOT, intent_result

from worldagent.errors import InputError
from worldagent.evaluation.compare_evals import EvalSide, compare_evaluations, load_side, split_spec
from worldagent.evaluation.metrics import IntentResult, summarize
from worldagent.evaluation.model_eval import EvalRow, ModelEvalFile, write_model_eval

# the full budgets' run (every trained stage evaluated), as reports/world_agent/ held it before the cpu profile
REPORTS = ROOT / "tests" / "fixtures" / "full-budgets-run"
INTENT_ROWS = REPORTS / "eval_intents.jsonl"
SEED = 1234  # params.yaml's seed, which the committed compare.json was computed with


def committed_results(model: str) -> list[IntentResult]:
    rows = [json.loads(line) for line in INTENT_ROWS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [IntentResult(**{k: v for k, v in row.items() if k != "model"}) for row in rows if row["model"] == model]


def model_file(directory: Path, model: str, results: list[IntentResult], *extra_rows: EvalRow) -> Path:
    """``eval/<model>.json`` as the per-model evaluate stage writes it (outputs left empty)."""
    row = EvalRow(name=model, metrics=summarize(results), per_intent=results, outputs=[""] * len(results))
    evaluation = ModelEvalFile(
        model=model,
        intents=[r.id for r in results],
        components=sorted({r.component for r in results}),
        rows=[row, *extra_rows],
    )
    return write_model_eval(directory / f"{model}.json", evaluation)


@pytest.fixture(scope="module")
def eval_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("eval")
    for model in ("sft", "experience", "dpo"):
        model_file(directory, model, committed_results(model))
    return directory


def test_the_committed_run_compares_as_its_compare_stage_did(eval_dir: Path) -> None:
    """dpo − experience over the committed per-model files gives compare.json's step effect to the last
    digit: the same intents paired, the same resamples, the same CI."""
    result = compare_evaluations(
        load_side(str(eval_dir / "experience.json")), load_side(str(eval_dir / "dpo.json")), seed=SEED
    )
    committed = json.loads((REPORTS / "compare.json").read_text(encoding="utf-8"))
    step = next(e for e in committed["step_effects"] if (e["model"], e["baseline"]) == ("dpo", "experience"))
    assert result["n"] == step["n"] == 67
    for metric in ("mean_reward", "story_pass_rate"):
        assert result["metrics"][metric]["diff"] == pytest.approx(step["metrics"][metric]["diff"], abs=1e-12)
        assert result["metrics"][metric]["a"] == pytest.approx(step["metrics"][metric]["baseline"])
        assert result["metrics"][metric]["b"] == pytest.approx(step["metrics"][metric]["model"])
    summary = json.loads((REPORTS / "eval.json").read_text(encoding="utf-8"))["models"]
    for metric, values in result["metrics"].items():
        assert values["a"] == pytest.approx(summary["experience"][metric])
        assert values["b"] == pytest.approx(summary["dpo"][metric])


def test_eval_intents_rows_read_as_the_per_model_files(eval_dir: Path) -> None:
    from_files = compare_evaluations(load_side(str(eval_dir / "sft.json")), load_side(str(eval_dir / "dpo.json")))
    from_rows = compare_evaluations(load_side(f"{INTENT_ROWS}#sft"), load_side(f"{INTENT_ROWS}#dpo"))
    assert from_rows["metrics"] == from_files["metrics"]
    assert from_rows["passes"] == from_files["passes"]
    assert from_rows["b"] == {"file": str(INTENT_ROWS), "row": "dpo"}


def test_the_passes_only_one_side_has_are_the_committed_ones(eval_dir: Path) -> None:
    sft, dpo = committed_results("sft"), committed_results("dpo")
    passed_sft = {r.id for r in sft if r.story_passed}
    passed_dpo = {r.id for r in dpo if r.story_passed}
    passes = compare_evaluations(load_side(str(eval_dir / "sft.json")), load_side(str(eval_dir / "dpo.json")))["passes"]
    assert set(passes["only_a"]) == passed_sft - passed_dpo
    assert set(passes["only_b"]) == passed_dpo - passed_sft
    assert passes["both"] == len(passed_sft & passed_dpo)
    assert passes["neither"] == 67 - len(passed_sft | passed_dpo)
    assert passes["only_a"] and passes["only_b"]  # the same pass rate, other stories (0.358 each)


def test_pairing_is_by_intent_not_by_position(tmp_path: Path, eval_dir: Path) -> None:
    shuffled = committed_results("dpo")
    random.Random(3).shuffle(shuffled)
    model_file(tmp_path, "dpo", shuffled)
    a = load_side(str(eval_dir / "experience.json"))
    in_order = compare_evaluations(a, load_side(str(eval_dir / "dpo.json")), seed=SEED)
    assert compare_evaluations(a, load_side(str(tmp_path / "dpo.json")), seed=SEED) == {
        **in_order,
        "b": {"file": str(tmp_path / "dpo.json"), "row": "dpo"},
    }


def test_the_ci_follows_the_seed_and_not_the_mean(eval_dir: Path) -> None:
    a, b = load_side(str(eval_dir / "sft.json")), load_side(str(eval_dir / "dpo.json"))
    first, again, other = (compare_evaluations(a, b, seed=s)["metrics"]["mean_reward"]["diff"] for s in (0, 0, 1))
    assert first == again
    assert other["mean"] == first["mean"]
    assert (other["low"], other["high"]) != (first["low"], first["high"])


def test_a_clear_difference_is_called_and_its_ci_excludes_zero() -> None:
    ids = [f"card/x.stories.tsx#s{i}" for i in range(20)]
    a = EvalSide("a.json", "a", [intent_result(i, 0.2) for i in ids])
    b = EvalSide("b.json", "b", [intent_result(i, 0.9, story_passed=True) for i in ids])
    result = compare_evaluations(a, b)
    reward = result["metrics"]["mean_reward"]
    assert reward["diff"]["mean"] == pytest.approx(0.7)
    assert reward["diff"]["low"] > 0 and reward["verdict"] == "better"
    assert compare_evaluations(b, a)["metrics"]["mean_reward"]["verdict"] == "worse"
    assert result["passes"]["only_b"] == ids and result["passes"]["only_a"] == []


def test_unpaired_evaluations_are_an_error_naming_the_intents(tmp_path: Path, eval_dir: Path) -> None:
    model_file(tmp_path, "dpo", committed_results("dpo")[1:])
    missing = committed_results("dpo")[0].id
    with pytest.raises(InputError, match=rf"1 only in A \({missing}\)"):
        compare_evaluations(load_side(str(eval_dir / "sft.json")), load_side(str(tmp_path / "dpo.json")))
    reworded = committed_results("dpo")
    reworded[5] = reworded[5].model_copy(update={"intent": "something else"})
    model_file(tmp_path, "dpo", reworded)
    with pytest.raises(InputError, match="worded differently"):
        compare_evaluations(load_side(str(eval_dir / "sft.json")), load_side(str(tmp_path / "dpo.json")))


def test_malformed_or_ambiguous_inputs_are_clear_errors(tmp_path: Path, eval_dir: Path) -> None:
    not_eval = tmp_path / "metrics.json"
    not_eval.write_text(json.dumps({"model": "sft", "intents": [], "rows": "x"}))
    with pytest.raises(InputError, match=r"metrics.json: not a model evaluation file \(components"):
        load_side(str(not_eval))
    with pytest.raises(InputError, match=r"holds 8 models .*name one as .*eval_intents.jsonl#MODEL"):
        load_side(str(INTENT_ROWS))
    with pytest.raises(InputError, match="no model 'ppo'"):
        load_side(f"{INTENT_ROWS}#ppo")
    with pytest.raises(InputError, match=r"no row 'sft \(unconstrained\)'; it holds 'sft'"):
        load_side(f"{eval_dir / 'sft.json'}#sft (unconstrained)")
    broken = tmp_path / "rows.jsonl"
    broken.write_text('{"model": "sft", "id": "a/b.stories.tsx#x"}\n')
    with pytest.raises(InputError, match=r"rows.jsonl:1: not a per-intent result"):
        load_side(f"{broken}#sft")
    with pytest.raises(InputError, match="nothing.json"):
        load_side(str(tmp_path / "nothing.json"))
    empty = ModelEvalFile(model="champion", intents=[], components=[])
    write_model_eval(tmp_path / "champion.json", empty)
    with pytest.raises(InputError, match="'champion' was not evaluated"):
        load_side(str(tmp_path / "champion.json"))


def test_a_row_other_than_the_first_is_chosen_by_name(tmp_path: Path) -> None:
    results = committed_results("grpo")
    worse = [r.model_copy(update={"reward": 0.0, "story_passed": False}) for r in results]
    extra = EvalRow(name="grpo (unconstrained)", metrics=summarize(worse), per_intent=worse, outputs=[""] * len(worse))
    path = model_file(tmp_path, "grpo", results, extra)
    assert load_side(str(path)).row == "grpo"
    side = load_side(f"{path}#grpo (unconstrained)")
    assert side.row == "grpo (unconstrained)" and all(r.reward == 0.0 for r in side.results)
    assert split_spec("a/b.json#x") == (Path("a/b.json"), "x")
    assert split_spec("a/b.json") == (Path("a/b.json"), None)
