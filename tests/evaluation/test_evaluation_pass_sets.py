"""benchmarks.pass_sets: each evaluation's passes, the stories all and any pass, the histogram."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluation_helpers import intent_result

from benchmarks.pass_sets import agreement_choice, first_row, main, most_agreed, passes_per_story, same_intents, table
from worldagent.errors import InputError
from worldagent.evaluation.metrics import summarize
from worldagent.evaluation.model_eval import EvalRow, ModelEvalFile, write_model_eval
from worldagent.world_agent.self_check import Level


def _row(name: str, passed: list[bool], ids: list[str] | None = None) -> EvalRow:
    ids = ids or [f"c/c.stories.tsx#x{i}" for i in range(len(passed))]
    results = [intent_result(i, 1.0 if p else 0.5, story_passed=p) for i, p in zip(ids, passed, strict=True)]
    return EvalRow(name=name, metrics=summarize(results), per_intent=results, outputs=[""] * len(results))


def _write(path: Path, row: EvalRow | None) -> Path:
    rows = [row] if row else []
    ids = [r.id for r in row.per_intent] if row else []
    return write_model_eval(path, ModelEvalFile(model="sft", intents=ids, components=["c"], rows=rows))


def test_the_histogram_counts_stories_by_how_many_rows_pass_them() -> None:
    rows = [_row("a", [True, True, False, False]), _row("b", [True, False, True, False])]
    assert passes_per_story(rows) == {0: 1, 1: 2, 2: 1}


def test_the_table_names_each_file_and_the_every_and_any_counts() -> None:
    lines = "\n".join(table({"a.json": _row("a", [True, True, False]), "b.json": _row("b", [True, False, False])}))
    assert "| a.json | 2 of 3 | 0.833 |" in lines and "| b.json | 1 of 3 | 0.667 |" in lines
    assert "Passed by every file: 1; by at least one: 2 of 3 (0.667)." in lines
    assert "0: 1, 1: 1, 2: 1." in lines


def test_evaluations_of_other_intents_are_refused_naming_the_file() -> None:
    rows = {"a.json": _row("a", [True, False]), "b.json": _row("b", [True, False], ids=["c/c.stories.tsx#x1", "y"])}
    with pytest.raises(InputError, match=r"b\.json: evaluates other intents than a\.json"):
        same_intents(rows)


def test_a_file_without_rows_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="champion.json: holds no evaluated row"):
        first_row(_write(tmp_path / "champion.json", None))


def test_the_command_prints_the_table_of_the_files_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a.json", _row("a", [True, False]))
    b = _write(tmp_path / "b.json", _row("b", [False, True]))
    assert main([str(a), str(b)]) == 0
    assert "by at least one: 2 of 2 (1.000)" in capsys.readouterr().out
    assert main([str(a), str(tmp_path / "missing.json")]) != 0
    assert "missing.json" in capsys.readouterr().err


def test_agreement_keeps_the_candidate_most_like_the_others() -> None:
    answers = ["a button reading Save", "a button reading Save!", "a dialog titled Delete files"]
    assert most_agreed(answers, [0, 1, 2]) in (0, 1)
    assert most_agreed(answers, [2]) == 2  # only the candidates compete; the others are still compared with
    assert most_agreed(["x", "y"], [0, 1]) == 0  # a tie keeps the earliest


def test_agreement_choice_counts_the_passes_of_the_agreed_top_ranked_answers() -> None:
    ids = ["c/c.stories.tsx#x0", "c/c.stories.tsx#x1"]
    outputs = {"a": ["qqq", "tab list"], "b": ["save the file", "zz"], "c": ["save the file.", "tab list"]}
    passed = {"a": [False, True], "b": [True, False], "c": [False, False]}
    rows = [_row(n, passed[n], ids).model_copy(update={"outputs": outputs[n]}) for n in "abc"]
    eval_rows = [{"id": i} for i in ids]
    every_answer_top: Level = lambda i, answer: 2  # noqa: E731
    # b's and c's first answers agree (b, the earlier, passes); a's and c's second answers agree (a passes)
    assert agreement_choice(rows, eval_rows, every_answer_top) == 2
    outliers_top: Level = lambda i, answer: 2 if answer in ("qqq", "zz") else 1  # noqa: E731
    assert agreement_choice(rows, eval_rows, outliers_top) == 0  # the rank comes first: the outliers, which fail
