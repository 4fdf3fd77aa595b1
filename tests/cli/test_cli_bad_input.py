"""Bad input through the user-facing commands: a clear error naming the file and place, in bounded time."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from worldagent.cli import main
from worldagent.tools.callformat import CallParseError, ToolCall, parse_json_call
from worldagent.tools.registry import default_registry
from worldagent.tools.sandbox import Sandbox

PROJECT = Path(__file__).resolve().parents[2]
HEADER = "import { type FT } from 'plaited'\nimport { story } from 'plaited/testing'\n"


def write_story(directory: Path, name: str, body: str) -> Path:
    path = directory / name / f"{name}.stories.tsx"
    path.parent.mkdir(parents=True)
    path.write_text(HEADER + body)
    return path


def discover_stderr(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[list[dict], str]:
    assert main(["discover", *map(str, paths), "--json"]) == 0
    captured = capsys.readouterr()
    return [json.loads(line) for line in captured.out.splitlines()], captured.err


def test_bad_files_are_reported_with_file_line_col_and_the_rest_continue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(PROJECT / "data" / "stories" / "button", tmp_path / "button")
    write_story(tmp_path, "malformed", "export const a = story({ intent: 'x', template: () => <div>\n")
    write_story(tmp_path, "nointent", "export const lonelyThing = story({ template: () => <p>x</p> })\n")
    write_story(
        tmp_path,
        "dupe",
        "export const a = story({ intent: 'Create a disabled \"Submit order\" button', template: () => <p>x</p> })\n",
    )
    binary = tmp_path / "binary" / "binary.stories.tsx"
    binary.parent.mkdir()
    binary.write_bytes(HEADER.encode() + b"export const a = story({ intent: '\xff\xfe' })\n")
    huge = tmp_path / "huge" / "huge.stories.tsx"
    huge.parent.mkdir()
    huge.write_text(HEADER + "// " + "x" * (10 * 1024 * 1024) + "\n")

    start = time.perf_counter()
    stories, err = discover_stderr(capsys, tmp_path)
    assert time.perf_counter() - start < 30
    assert {s["export"] for s in stories} >= {"primaryButton", "lonelyThing"}
    assert "malformed/malformed.stories.tsx:3:" in err
    assert "nointent/nointent.stories.tsx:3:" in err and "no-intent" in err
    assert "dupe/dupe.stories.tsx:3:" in err and "duplicate" in err
    assert "binary/binary.stories.tsx:3:" in err
    assert "huge/huge.stories.tsx:1:1" in err


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("export const a = story({ intent: 'x', template: () => <Missing /> })\n", "Missing"),
        ("const Loop: FT = () => <Loop />\nexport const a = story({ intent: 'x', template: Loop })\n", "recursion"),
    ],
)
def test_story_test_reports_render_errors_with_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str
) -> None:
    story = write_story(tmp_path, "bad", body)
    start = time.perf_counter()
    assert main(["story-test", str(story), "--json"]) == 1
    assert time.perf_counter() - start < 10
    result = json.loads(capsys.readouterr().out)
    assert not result["passed"]
    error = result["errors"][0]
    assert error.startswith("render: bad.stories.tsx:") and message in error


def test_invalid_json_tool_call_names_line_and_column() -> None:
    with pytest.raises(CallParseError, match=r"line 2 col \d+"):
        parse_json_call('{"name": "writeStory",\n "arguments": {"path": }}')


def test_tool_path_with_dotdot_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    sandbox_root = tmp_path / "sandbox"
    sandbox_root.mkdir()
    registry = default_registry(Sandbox(sandbox_root), run_story=lambda path: {})
    result = registry.execute(ToolCall("writeTemplate", {"path": "../escape.tsx", "content": "x"}))
    assert not result.success and "../escape.tsx" in (result.error or "") and ".." in (result.error or "")
    assert not (tmp_path / "escape.tsx").exists() and list(sandbox_root.iterdir()) == []
