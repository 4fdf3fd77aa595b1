"""`python -m benchmarks.plaited_corpus` on a small tree written here, laid out like Plaited's
repository (no Plaited file is copied): every story export is rendered, counted per area, and
each one that does not render is named with its located reason; a git directory works too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from story_helpers import WriteFn

from benchmarks.plaited_corpus import main, measure

HEAD = "import { story } from 'plaited/testing'\n"


@pytest.fixture
def corpus(tmp_path: Path, write: WriteFn) -> Path:
    write(
        "training/stories/badge.stories.tsx",
        HEAD + "export const badge = story({ intent: 'a badge', template: () => <span>new</span> })\n",
    )
    write(
        ".plaited/skills/ui-patterns/assets/bp/board.tsx",
        "import { bThread, bSync } from 'plaited'\n"
        "const taken = {}\n"
        "for (const square of [0, 1, 2]) { taken[`${square}`] = bThread([bSync({ block: 'x' })], true) }\n"
        "export const Board = () => <div role='group' aria-label='board'>{Array.from(Array(3).keys()).map((n) => <button value={n}>{n}</button>)}</div>\n",
    )
    write(
        ".plaited/skills/ui-patterns/assets/bp/board.stories.tsx",
        HEAD
        + "import { Board } from './board.tsx'\nexport const board = story({ intent: 'a board', template: Board })\n",
    )
    write(
        "src/ui/listener.ts",
        "export class Listener { handleEvent() {} }\nexport const delegates = new WeakMap()\n",
    )
    write(
        "src/ui/tests/listener.stories.tsx",
        HEAD + "import { Listener, delegates } from '../listener.ts'\n"
        "export const listener = story({ intent: 'a listener', template: () => <button type='button'>go</button> })\n",
    )
    write(
        "src/ui/tests/broken.stories.tsx",
        HEAD + "const f = () => {\n  try { return 1 } finally {}\n}\n"
        "export const broken = story({ intent: 'broken', template: () => <p>{f()}</p> })\n",
    )
    write(
        "src/workshop/tests/fixtures/only.stories.tsx",
        HEAD + "export const picked = story.only({ intent: 'only', template: () => <p>only</p> })\n"
        "export const skipped = story.skip({ intent: 'skip', template: () => <p>skip</p> })\n",
    )
    write("node_modules/dep/dep.stories.tsx", "this is not TypeScript\n")
    return tmp_path


def test_every_story_export_is_rendered_and_failures_are_located(corpus: Path) -> None:
    report = measure(corpus)
    assert (report.rendered, report.stories) == (5, 6)
    assert report.by_area == {
        "training stories": [1, 1],
        "UI-pattern skill examples": [1, 1],
        "element stories": [1, 2],
        "workshop test fixtures": [2, 2],
    }
    (failure,) = report.failures
    assert failure.export == "broken" and failure.file == "src/ui/tests/broken.stories.tsx"
    assert failure.reason == "src/ui/tests/broken.stories.tsx:3:3: unsupported syntax: try_statement"
    assert not report.problems  # node_modules is never read


def test_the_command_exits_1_on_a_failure_and_0_when_all_render(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(corpus)]) == 1
    out = capsys.readouterr().out
    assert "5/6 story exports render" in out
    assert "FAIL broken: src/ui/tests/broken.stories.tsx:3:3: unsupported syntax: try_statement" in out
    (corpus / "src/ui/tests/broken.stories.tsx").unlink()
    assert main([str(corpus)]) == 0
    assert "5/5 story exports render (100.0%" in capsys.readouterr().out


def test_a_git_directory_is_read_at_a_revision(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(corpus), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    git("add", "-A", "-f", ".")
    git("commit", "-q", "-m", "corpus")
    (corpus / "src/ui/tests/broken.stories.tsx").unlink()  # the work tree is not what is read
    assert main([str(corpus / ".git"), "--rev", "HEAD", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["rendered"], report["stories"], report["missing_blobs"]) == (5, 6, 0)
    assert len(report["revision"]) == 40 and report["ok"] is False
