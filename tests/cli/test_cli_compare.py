"""`worldagent compare A B` as a user types it, on the committed run's per-intent results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from worldagent.cli import main

ROWS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "full-budgets-run" / "eval_intents.jsonl"


def test_compare_prints_each_metric_with_its_ci_and_the_passes_only_one_side_has(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare", f"{ROWS}#experience", f"{ROWS}#dpo", "--seed", "1234"]) == 0
    out = capsys.readouterr().out
    assert "67 intents, paired" in out and "seed 1234" in out
    # compare.json's step effect of dpo over experience, as the report prints it
    assert re.search(r"\nmean reward +0\.553 +0\.562 +\+0\.009 +\[-0\.050, \+0\.064\] +no clear difference\n", out)
    assert re.search(r"\nstory pass rate +0\.313 +0\.358 +\+0\.045 +\[-0\.030, \+0\.119\] ", out)
    assert "stories passed: 2 only by A, 5 only by B, 19 by both, 41 by neither" in out
    assert "  only B: dialog/dialog.stories.tsx#discardDraftDialog" in out


def test_compare_json_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", f"{ROWS}#sft", f"{ROWS}#dpo", "--json", "--samples", "200"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["bootstrap_samples"] == 200 and result["seed"] == 0
    assert result["a"]["row"] == "sft" and result["b"]["row"] == "dpo"
    assert result["metrics"]["story_pass_rate"]["diff"]["mean"] == pytest.approx(0.0)
    assert len(result["passes"]["only_a"]) == len(result["passes"]["only_b"]) > 0


def test_compare_bad_input_exits_2_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(ROWS), f"{ROWS}#dpo"]) == 2
    assert "name one as" in capsys.readouterr().err
    stray = tmp_path / "sft.json"
    stray.write_text("[1, 2]")
    assert main(["compare", str(stray), f"{ROWS}#dpo"]) == 2
    assert f"{stray}: expected a JSON object" in capsys.readouterr().err
    assert main(["compare", f"{ROWS}#sft", f"{ROWS}#dpo", "--confidence", "1.5"]) == 2
    assert "confidence in (0, 1)" in capsys.readouterr().err
