"""The `worldagent` command: what a user types and sees."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from worldagent.cli import main
from worldagent.config import ParamsError, load_params
from worldagent.pipeline.__main__ import run as run_stage_command

PROJECT = Path(__file__).resolve().parents[2]
BUTTON = PROJECT / "data" / "stories" / "button"


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("discover", "story-test", "a11y", "generate"):
        assert command in out


def test_the_parser_is_built_without_the_heavy_libraries() -> None:
    """Every command's parser is built at start: a command that never touches the registry, a
    model or a flow must not pay for (or need) SQLAlchemy, torch, transformers, FastAPI or Prefect."""
    import subprocess
    import sys

    heavy = ("sqlalchemy", "torch", "transformers", "fastapi", "prefect")
    code = f"import sys, worldagent.cli as c; c.build_parser(); print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PROJECT)
    assert out.stdout.strip() == "[]", out.stdout


def test_discover_json_prints_one_object_per_story_and_reports_bad_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(BUTTON, tmp_path / "button")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "broken.stories.tsx").write_text(
        "export const x = story({ intent: 'x', template: () => <div>\n"
    )
    assert main(["discover", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    stories = [json.loads(line) for line in captured.out.splitlines()]
    # Every `export const NAME = story(` of the file, in file order: the test follows the stories
    # the folder holds rather than a copy of their names.
    exported = re.findall(r"^export const (\w+) = story\(", (BUTTON / "button.stories.tsx").read_text(), re.M)
    assert len(exported) >= 7
    assert [s["export"] for s in stories] == exported
    assert all({"file", "export", "intent"} <= s.keys() for s in stories)
    assert stories[0]["intent"] == 'Create a primary button labelled "Save changes"'
    assert "broken/broken.stories.tsx:1:" in captured.err
    assert main(["discover", str(tmp_path), "--strict"]) == 1


def test_discover_missing_path_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["discover", "no/such/dir"]) == 2
    assert "no such file or directory: no/such/dir" in capsys.readouterr().err


def test_story_test_passes_the_reference_and_fails_a_degraded_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["story-test", str(BUTTON / "button.stories.tsx"), "--export", "primaryButton", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["a11yPassed"] and result["totalAssertions"] >= 1

    shutil.copytree(BUTTON, tmp_path / "button")
    story = tmp_path / "button" / "button.stories.tsx"
    story.write_text(story.read_text().replace("<button", "<div").replace("</button>", "</div>"))
    code = main(
        [
            "story-test",
            str(story),
            "--export",
            "primaryButton",
            "--reference",
            str(BUTTON / "button.stories.tsx"),
            "--json",
        ]
    )
    result = json.loads(capsys.readouterr().out)
    assert code == 1 and not result["passed"] and result["passedAssertions"] < result["totalAssertions"]


def test_a11y_json_lists_rule_target_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "page.html"
    page.write_text('<button></button><img src="a.png">')
    assert main(["a11y", str(page), "--json"]) == 1
    rules = {v["rule"] for v in json.loads(capsys.readouterr().out)}
    assert {"button-name", "image-alt"} <= rules
    page.write_text("<button>Save</button>")
    assert main(["a11y", str(page), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_params_errors_name_the_file_and_key(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("discover:\n  stirct: true\n")
    with pytest.raises(ParamsError, match=r"params.yaml: invalid parameters\n  discover.stirct: unknown key"):
        load_params(params)
    params.write_text("discover: [\n")
    with pytest.raises(ParamsError, match=r"params.yaml:\d+:\d+: invalid YAML"):
        load_params(params)


def test_stage_entry_point_exits_2_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("generate:\n  eval_fraction: 2\n")
    paths = [
        "--stories-dir",
        str(tmp_path),
        "--stories",
        str(tmp_path / "s.jsonl"),
        "--report",
        str(tmp_path / "r.json"),
    ]
    assert run_stage_command(["discover", "--params", str(params), *paths]) == 2
    assert "generate.eval_fraction" in capsys.readouterr().err
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.browser
@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)
def test_story_test_in_headless_chromium_with_axe(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "story-test",
                str(BUTTON / "button.stories.tsx"),
                "--export",
                "disabledButton",
                "--runner",
                "browser",
                "--json",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] and result["a11yPassed"] and result["errors"] == []
