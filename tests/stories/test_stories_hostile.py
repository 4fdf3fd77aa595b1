"""Hostile stories end in a clear, located error (issue 12): size budgets while values are built,
symlinks that leave the story root refused. Time and memory are measured in
``tests/fixtures/hostile/cases.py`` (class ``earlier``); these tests only check the outcome."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from story_helpers import WriteFn

from worldagent.stories.discover import discover_stories
from worldagent.stories.errors import StoryRenderError, StorySymlinkError
from worldagent.stories.render import render_story

HEAD = "import { story } from 'plaited/testing'\n"


def doubling(name: str, times: int, seed: str = "xxxxxxxxxxxxxxxx") -> str:
    lines = [f"const {name}0 = '{seed}'"]
    lines += [f"const {name}{i} = {name}{i - 1} + {name}{i - 1}" for i in range(1, times + 1)]
    return "\n".join(lines) + "\n"


def render(tmp_path: Path, write: WriteFn, body: str, max_steps: int | None = None) -> str:
    write("h/h.stories.tsx", HEAD + body)
    if max_steps is None:
        return render_story(Path("h/h.stories.tsx"), "s", tmp_path).html
    return render_story(Path("h/h.stories.tsx"), "s", tmp_path, max_steps=max_steps).html


# The size limits are checked on their own: with the default step budget, building these
# megabyte strings spends it first (each character built is work; see test_stories_work_budget).
NO_STEP_LIMIT = 10**12


def test_many_strings_within_the_length_limit_exhaust_the_allocation_budget(tmp_path: Path, write: WriteFn) -> None:
    # A 2 MB string concatenated in a 32 x 32 map: each result is under the string limit.
    body = doubling("s", 17) + "const row = [" + ", ".join(["s17"] * 32) + "]\n"
    body += "const grid = row.map((a) => row.map((b) => a + b))\n"
    body += "export const s = story({ intent: 'x', template: () => <p>{grid.length}</p> })\n"
    with pytest.raises(StoryRenderError, match=r"h/h\.stories\.tsx:\d+:\d+: render allocation budget exceeded"):
        render(tmp_path, write, body, NO_STEP_LIMIT)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("s16.split('')", "array too long"),
        ("[...s16]", "array too long"),
        ("[s17, s17, s17].join('')", "string too long"),
        ("[[...s12], [...s12]].flat()", "array too long"),
    ],
)
def test_builtins_check_sizes_before_building(tmp_path: Path, write: WriteFn, expression: str, message: str) -> None:
    body = (
        doubling("s", 17)
        + f"const v = {expression}\nexport const s = story({{ intent: 'x', template: () => <p>{{v.length}}</p> }})\n"
    )
    with pytest.raises(StoryRenderError, match=message):
        render(tmp_path, write, body, NO_STEP_LIMIT)


def test_markup_size_is_checked_while_children_are_written(tmp_path: Path, write: WriteFn) -> None:
    body = doubling("s", 17) + "const many = [" + ", ".join(["s17"] * 8) + "]\n"
    body += "export const s = story({ intent: 'x', template: () => <p>{many}</p> })\n"
    with pytest.raises(StoryRenderError, match="too long"):
        render(tmp_path, write, body, NO_STEP_LIMIT)


def test_a_story_symlink_leaving_the_root_is_a_problem_not_a_crash(tmp_path: Path, write: WriteFn) -> None:
    outside = write(
        "outside/evil.stories.tsx", HEAD + "export const s = story({ intent: 'x', template: () => <p /> })\n"
    )
    root = tmp_path / "root"
    write("root/ok.stories.tsx", HEAD + "export const s = story({ intent: 'ok', template: () => <p>ok</p> })\n")
    os.symlink(outside, root / "evil.stories.tsx")
    discovery = discover_stories([root], root=root)
    assert [s.file for s in discovery.stories] == ["ok.stories.tsx"]
    (problem,) = discovery.problems
    assert problem.kind == "symlink" and problem.location.file == "evil.stories.tsx"
    assert "outside the story root" in problem.message


def test_an_import_or_tokens_symlink_leaving_the_root_is_never_read(tmp_path: Path, write: WriteFn) -> None:
    secret = write(
        "outside/secret.tokens.ts",
        "import { createTokens } from 'plaited/ui'\nexport const { t } = createTokens('t', { a: { $value: 'SECRET' } })\n",
    )
    root = tmp_path / "root"
    write(
        "root/a.stories.tsx",
        HEAD
        + "import { t } from './t.tokens.ts'\nexport const s = story({ intent: 'x', template: () => <p>{t.a}</p> })\n",
    )
    os.symlink(secret, root / "t.tokens.ts")
    with pytest.raises(
        StorySymlinkError, match=r"a\.stories\.tsx:2:19: 't\.tokens\.ts' is a symlink to a path outside the story root"
    ):
        render_story(root / "a.stories.tsx", "s", root)
    discovery = discover_stories([root], root=root)
    assert discovery.stories == []  # no record would carry the outside file into the training data
    assert {(p.kind, p.location.file) for p in discovery.problems} == {
        ("symlink", "a.stories.tsx"),
        ("symlink", "t.tokens.ts"),
    }


def test_a_symlinked_folder_leaving_the_root_is_refused_and_one_inside_is_allowed(
    tmp_path: Path, write: WriteFn
) -> None:
    write("outside/x.ts", "export const x = 'outside'\n")
    write("root/real/y.ts", "export const x = 'inside'\n")
    root = tmp_path / "root"
    os.symlink(tmp_path / "outside", root / "linked")
    os.symlink(root / "real", root / "alias")
    write(
        "root/a.stories.tsx",
        HEAD
        + "import { x } from './linked/x.ts'\nexport const s = story({ intent: 'x', template: () => <p>{x}</p> })\n",
    )
    with pytest.raises(StorySymlinkError, match="'linked' is a symlink"):
        render_story(root / "a.stories.tsx", "s", root)
    write(
        "root/b.stories.tsx",
        HEAD
        + "import { x } from './alias/y.ts'\nexport const s = story({ intent: 'x', template: () => <p>{x}</p> })\n",
    )
    assert render_story(root / "b.stories.tsx", "s", root).html == "<p>inside</p>"
