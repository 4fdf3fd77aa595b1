"""`worldagent story-test DIR --json`: one result per story, then a summary; the exit status
is non-zero only when a story fails or cannot be rendered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldagent.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plaited"
HEAD = "import { story } from 'plaited/testing'\nimport { createStyles } from 'plaited/ui'\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    code = main(["story-test", *argv, "--json"])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_every_fixture_story_renders(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(capsys, str(FIXTURES))
    *results, summary = lines
    assert summary["summary"]["stories"] == len(results) >= 40
    assert summary["summary"]["rendered"] == len(results) and summary["summary"]["errors"] == 0
    assert all(r["rendered"] for r in results)
    assert code == 1  # some fixture stories break a rule on purpose


def test_a_render_error_fails_only_its_story(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.stories.tsx").write_text(
        HEAD + "export const good = story({ intent: 'good', template: () => <p>ok</p> })\n"
        "export const bad = story({ intent: 'bad', template: () => <Missing /> })\n"
    )
    code, lines = run(capsys, str(tmp_path))
    results = {r["export"]: r for r in lines[:-1]}
    assert code == 1
    assert results["good"]["rendered"] and results["good"]["passed"] and results["good"]["a11yPassed"]
    assert not results["bad"]["rendered"] and results["bad"]["errors"][0].startswith(
        "render: a.stories.tsx:4:60: unknown component <Missing>"
    )
    assert lines[-1] == {"summary": {"stories": 2, "rendered": 1, "passed": 1, "failed": 0, "errors": 1}}


def test_a_passing_folder_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "b.stories.tsx").write_text(
        HEAD + "export const b = story({ intent: 'b', template: () => <p>b</p> })\n"
    )
    code, lines = run(capsys, str(tmp_path))
    assert code == 0 and lines[-1]["summary"] == {"stories": 1, "rendered": 1, "passed": 1, "failed": 0, "errors": 0}
