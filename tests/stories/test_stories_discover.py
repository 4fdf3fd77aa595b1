from __future__ import annotations

import json
from pathlib import Path

import pytest
from story_helpers import PRELUDE, WriteFn

from worldagent.stories.discover import (
    Discovery,
    discover_stories,
    discovery_to_jsonl,
    export_name_to_words,
)
from worldagent.stories.errors import DiscoveryError, SourceLocation

INTENTS = (
    PRELUDE
    + """
export const meta = { title: 'Widget', intent: 'Meta intent', description: 'Meta description' }
const W: FT = ({ label = 'w' }) => <p>{label}</p>
export const fromStory = story({ intent: 'Story intent', description: 'Story description', template: W })
export const fromDescription = story({ description: 'Described widget', template: W })
export const fromMeta = story({ template: W })
"""
)


def _discover(root: Path, strict: bool = False) -> Discovery:
    return discover_stories([root], root, strict=strict)


def _by_export(d: Discovery) -> dict[str, object]:
    return {s.export: s for s in d.stories}


def test_intent_resolution_order(tmp_path: Path, write: WriteFn) -> None:
    write("widget/widget.stories.tsx", INTENTS)
    stories = _by_export(_discover(tmp_path))
    assert (stories["fromStory"].intent, stories["fromStory"].intent_source) == ("Story intent", "story")
    assert (stories["fromDescription"].intent, stories["fromDescription"].intent_source) == (
        "Described widget",
        "description",
    )
    assert (stories["fromMeta"].intent, stories["fromMeta"].intent_source) == ("Meta intent", "meta")
    assert stories["fromStory"].description == "Story description"
    assert stories["fromMeta"].description == "Meta description"
    assert stories["fromMeta"].title == "Widget"


def test_export_name_fallback_is_a_no_intent_problem(tmp_path: Path, write: WriteFn) -> None:
    write(
        "w/w.stories.tsx",
        PRELUDE + "const W: FT = () => <p>w</p>\n\nexport const primaryButton = story({ template: W })\n",
    )
    d = _discover(tmp_path)
    (record,) = d.stories
    assert (record.intent, record.intent_source) == ("primary button", "export-name")
    assert [(p.kind, p.location) for p in d.problems] == [("no-intent", SourceLocation("w/w.stories.tsx", 5, 1))]
    assert "primaryButton" in d.problems[0].message


def test_export_name_to_words() -> None:
    assert export_name_to_words("primaryButton") == "primary button"
    assert export_name_to_words("HTMLLink2Small") == "html link 2 small"
    assert export_name_to_words("with_underscore") == "with underscore"


def test_duplicate_intent_reports_second_with_first_location(tmp_path: Path, write: WriteFn) -> None:
    body = (
        "const W: FT = () => <p>w</p>\nexport const {name} = story({{ intent: 'Make a  Save button', template: W }})\n"
    )
    write("a/a.stories.tsx", PRELUDE + body.format(name="first"))
    write("b/b.stories.tsx", PRELUDE + "\n" + body.format(name="second").replace("a  Save", "a save"))
    d = _discover(tmp_path)
    (problem,) = d.problems
    assert problem.kind == "duplicate-intent"
    assert problem.location == SourceLocation("b/b.stories.tsx", 5, 1)
    assert "a/a.stories.tsx:4:1" in problem.message
    assert len(d.stories) == 2


def test_malformed_file_is_reported_and_scan_continues(tmp_path: Path, write: WriteFn) -> None:
    write(
        "a/a.stories.tsx",
        PRELUDE + "const W: FT = () => <p>w</p>\nexport const ok = story({ intent: 'fine', template: W })\n",
    )
    write("b/b.stories.tsx", PRELUDE + "export const broken = story({ intent: 'x', template: () => <div> })\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c/c.stories.tsx").write_bytes(b"export const a = 1\nconst b = '\xff'\n")
    d = _discover(tmp_path)
    assert [s.id for s in d.stories] == ["a/a.stories.tsx#ok"]
    kinds = {(p.kind, p.location.file) for p in d.problems}
    assert kinds == {("syntax", "b/b.stories.tsx"), ("encoding", "c/c.stories.tsx")}
    encoding = next(p for p in d.problems if p.kind == "encoding")
    assert (encoding.location.line, encoding.location.col) == (2, 12)
    syntax = next(p for p in d.problems if p.kind == "syntax")
    assert syntax.location.line == 3


def test_too_large_story_file_is_a_problem(tmp_path: Path, write: WriteFn) -> None:
    write(
        "a/a.stories.tsx",
        PRELUDE + "const W: FT = () => <p>w</p>\nexport const ok = story({ intent: 'fine', template: W })\n",
    )
    big = tmp_path / "big/big.stories.tsx"
    big.parent.mkdir()
    big.write_bytes(b"// " + b"x" * (2 * 1024 * 1024))
    d = _discover(tmp_path)
    assert [(p.kind, p.location) for p in d.problems] == [("too-large", SourceLocation("big/big.stories.tsx", 1, 1))]
    assert len(d.stories) == 1


def test_strict_mode_raises_with_all_problems(tmp_path: Path, write: WriteFn) -> None:
    write("a/a.stories.tsx", PRELUDE + "const W: FT = () => <p>w</p>\nexport const noIntent = story({ template: W })\n")
    write("b/b.stories.tsx", "export const x = (\n")
    write(
        "c/c.stories.tsx",
        PRELUDE
        + "import { styles } from './missing.css.ts'\nexport const s = story({ intent: 'c', template: () => <p /> })\n",
    )
    with pytest.raises(DiscoveryError) as info:
        _discover(tmp_path, strict=True)
    kinds = sorted(p.kind for p in info.value.problems)
    assert kinds == ["import", "no-intent", "syntax"]
    text = str(info.value)
    assert "a/a.stories.tsx:4:1" in text and "b/b.stories.tsx:" in text and "c/c.stories.tsx:3:24" in text


def test_missing_relative_import_is_reported(tmp_path: Path, write: WriteFn) -> None:
    write(
        "c/c.stories.tsx",
        PRELUDE + "import { styles } from './c.css'\nexport const s = story({ intent: 'c', template: () => <p /> })\n",
    )
    d = _discover(tmp_path)
    assert [(p.kind, p.location) for p in d.problems] == [("import", SourceLocation("c/c.stories.tsx", 3, 24))]
    assert len(d.stories) == 1  # the story is still emitted
    write("c/c.css.ts", "import { createStyles } from 'plaited'\nexport const styles = createStyles({})\n")
    assert _discover(tmp_path).problems == []


def test_record_fields_template_source_and_files(tmp_path: Path, write: WriteFn) -> None:
    write(
        "card/card.tokens.ts",
        "import { createTokens } from 'plaited'\nexport const cardTokens = createTokens('card', { bg: { $value: '#fff' } })\n",
    )
    write(
        "card/card.css.ts",
        "import { createStyles } from 'plaited'\nimport { cardTokens } from './card.tokens'\nexport const styles = createStyles({ card: { background: cardTokens.bg } })\n",
    )
    write(
        "card/card.stories.tsx",
        PRELUDE
        + """import { styles } from './card.css.ts'

const Unused: FT = () => <p>unused</p>

const Title: FT = ({ children }) => <h2>{children}</h2>

const label = 'Card'

const Card: FT<{ title?: string }> = ({ title = label, children }) => (
  <section {...styles.card}><Title>{title}</Title>{children}</section>
)

export const basicCard = story({
  intent: 'A card',
  template: Card,
  args: { title: 'Hello', tags: ['a', 1, -2.5, true, null] },
  play: async () => { Unused },
})

export const inlineCard = story({ intent: 'Inline card', template: () => <Card>{label}</Card> })
""",
    )
    d = _discover(tmp_path)
    assert d.problems == []
    basic, inline = d.stories
    assert basic.id == "card/card.stories.tsx#basicCard"
    assert (basic.file, basic.export, basic.component, basic.template) == (
        "card/card.stories.tsx",
        "basicCard",
        "card",
        "Card",
    )
    assert basic.components == ["Card", "Title"]
    assert basic.args == {"title": "Hello", "tags": ["a", 1, -2.5, True, None]}
    assert basic.style_files == ["card/card.css.ts"]
    assert basic.token_files == ["card/card.tokens.ts"]  # followed through the css file
    assert (basic.line, basic.col) == (15, 1)
    src = basic.template_source
    assert src.startswith("const Title: FT")
    assert (
        src.index("const Title")
        < src.index("const label")
        < src.index("const Card")
        < src.index("export const basicCard")
    )
    assert "Unused: FT" not in src and "inlineCard" not in src
    assert "\n\nconst label = 'Card'\n\n" in src
    assert inline.template == "inline" and inline.args is None
    assert inline.components == ["Card", "Title"]


def test_content_hash_is_deterministic_and_covers_imports(tmp_path: Path, write: WriteFn) -> None:
    write(
        "c/c.css.ts",
        "import { createStyles } from 'plaited'\nexport const styles = createStyles({ a: { color: 'red' } })\n",
    )
    write(
        "c/c.stories.tsx",
        PRELUDE
        + "import { styles } from './c.css.ts'\nexport const s = story({ intent: 'c', template: () => <p {...styles.a} /> })\n",
    )
    first = _discover(tmp_path).stories[0].content_hash
    assert first == _discover(tmp_path).stories[0].content_hash
    assert len(first) == 64
    write(
        "c/c.css.ts",
        "import { createStyles } from 'plaited'\nexport const styles = createStyles({ a: { color: 'blue' } })\n",
    )
    assert _discover(tmp_path).stories[0].content_hash != first


def test_records_sorted_and_jsonl_byte_stable(tmp_path: Path, write: WriteFn) -> None:
    write(
        "z/z.stories.tsx",
        PRELUDE
        + "export const zz = story({ intent: 'zé', template: () => <p /> })\nexport const aa = story({ intent: 'za', template: () => <p /> })\n",
    )
    write("a/a.stories.tsx", PRELUDE + "export const a = story({ intent: 'a', template: () => <p /> })\n")
    d = discover_stories([tmp_path / "z", tmp_path / "a/a.stories.tsx"], tmp_path)
    assert [(s.file, s.export) for s in d.stories] == [
        ("a/a.stories.tsx", "a"),
        ("z/z.stories.tsx", "zz"),
        ("z/z.stories.tsx", "aa"),
    ]
    text = discovery_to_jsonl(d.stories)
    assert text == discovery_to_jsonl(_discover(tmp_path).stories)
    assert text.endswith("\n") and "\r" not in text and "zé" in text
    lines = text.splitlines()
    assert len(lines) == 3
    assert list(json.loads(lines[0])) == list(type(d.stories[0]).model_fields)
    assert discovery_to_jsonl([]) == ""
