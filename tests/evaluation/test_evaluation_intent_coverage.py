"""benchmarks.intent_coverage: which held-out intents name what their story test asserts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluation_helpers import intent_result

from benchmarks.intent_coverage import group_scores, main, open_names
from worldagent.evaluation.eval_files import eval_summary, intent_rows
from worldagent.evaluation.metrics import EvalReport, IntentResult, ModelEval, summarize
from worldagent.storytest.runner import reference_assertions

STORIES_DIR = Path(__file__).resolve().parents[2] / "data" / "stories"
STORY = ("badge/badge.stories.tsx", "deploymentStatuses")


def _result(intent_id: str, passed: bool, reward: float) -> IntentResult:
    return intent_result(
        intent_id, reward, component="badge", story_passed=passed, a11y_passed=passed, assertions_passed=1
    )


def _report(per_intent: list[IntentResult]) -> EvalReport:
    return EvalReport(models={"sft": ModelEval(metrics=summarize(per_intent), per_intent=per_intent)})


def test_scores_split_each_model_row_into_determined_and_open_intents() -> None:
    report = _report([_result("a", True, 1.0), _result("b", False, 0.5), _result("c", False, 0.0)])
    [score] = group_scores(report, {"a", "b"})
    assert score["model"] == "sft"
    assert score["determined"] == {"n": 2, "story_pass_rate": 0.5, "mean_reward": 0.75}
    assert score["open"] == {"n": 1, "story_pass_rate": 0.0, "mean_reward": 0.0}
    assert group_scores(report, set())[0]["determined"]["story_pass_rate"] is None


@pytest.fixture
def held_out(tmp_path: Path) -> tuple[Path, list[str]]:
    """Two held-out rows of one bundled story: one intent names every asserted name, one none."""
    names = [a.name for a in reference_assertions(STORIES_DIR / STORY[0], STORY[1], STORIES_DIR) if a.name.strip()]
    assert names  # the story asserts named nodes, or the test shows nothing
    story_id = f"{STORY[0]}#{STORY[1]}"
    (tmp_path / "stories.jsonl").write_text(
        json.dumps({"id": story_id, "file": STORY[0], "export": STORY[1]})
        + "\n"
        + json.dumps({"id": "other", "file": STORY[0], "export": STORY[1]})
        + "\n"
    )
    rows = [
        {"id": story_id, "turns": "single", "intent": " and ".join(names), "given_files": [], "component": "badge"},
        {"id": story_id, "turns": "multi", "intent": "the multi-turn row of the same intent", "given_files": []},
        {
            "id": "other",
            "turns": "single",
            "intent": "status badges",
            "given_files": [{"path": "x.ts", "content": "nothing"}],
            "component": "badge",
        },
    ]
    (tmp_path / "eval.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp_path, names


def test_open_names_render_each_reference_once_per_intent(held_out: tuple[Path, list[str]]) -> None:
    root, names = held_out
    result = open_names(root / "eval.jsonl", root / "stories.jsonl", STORIES_DIR)
    assert result == {f"{STORY[0]}#{STORY[1]}": [], "other": list(dict.fromkeys(names))}


def test_the_command_reports_both_groups_per_model(
    held_out: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = held_out
    report = _report([_result(f"{STORY[0]}#{STORY[1]}", True, 1.0), _result("other", False, 0.2)])
    (root / "eval.json").write_text(json.dumps(eval_summary(report)))
    (root / "eval_intents.jsonl").write_text("".join(json.dumps(row) + "\n" for row in intent_rows(report)))
    arguments = ["--eval-trajectories", str(root / "eval.jsonl"), "--stories", str(root / "stories.jsonl")]
    arguments += ["--stories-dir", str(STORIES_DIR)]
    arguments += ["--eval-summary", str(root / "eval.json"), "--eval-intents", str(root / "eval_intents.jsonl")]
    assert main([*arguments, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["intents"], report["determined"]) == (2, 1)
    assert report["scores"][0]["determined"]["story_pass_rate"] == 1.0
    assert report["scores"][0]["open"]["mean_reward"] == 0.2
    assert main(arguments) == 0
    table = capsys.readouterr().out
    assert "1 of 2 held-out intents" in table and "| sft | 1.000 | 1.000 | 0.000 | 0.200 |" in table
