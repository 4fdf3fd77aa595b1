from __future__ import annotations

from pathlib import Path

import pytest

from worldagent.stories.errors import (
    SourceLocation,
    StoryEncodingError,
    StorySyntaxError,
    StoryTooLargeError,
)
from worldagent.stories.parse import (
    check_syntax,
    parse_tsx,
    read_source,
    resolve_import,
    syntax_errors,
)


def test_read_source_reports_first_invalid_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.stories.tsx"
    path.write_bytes(b"const a = 1\nconst b = '\xc3\xa9\xff'\n")
    with pytest.raises(StoryEncodingError) as info:
        read_source(path, file="x/bad.stories.tsx")
    err = info.value
    assert isinstance(err, StorySyntaxError)
    # line 2: `const b = '` is 11 chars, the é is one character, so the bad byte is column 13
    assert err.location == SourceLocation("x/bad.stories.tsx", 2, 13)
    assert str(err).startswith("x/bad.stories.tsx:2:13: ")


def test_read_source_uses_path_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("b.tsx").write_bytes(b"\xff")
    with pytest.raises(StoryEncodingError, match=r"^b\.tsx:1:1: "):
        read_source(Path("b.tsx"))


def test_too_large_file_is_refused_without_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.stories.tsx"
    path.write_bytes(b"// " + b"x" * (2 * 1024 * 1024) + b"\n")
    opened: list[object] = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    with pytest.raises(StoryTooLargeError) as info:
        read_source(path, file="big.stories.tsx")
    assert opened == []  # refused on size alone
    assert info.value.location == SourceLocation("big.stories.tsx", 1, 1)
    assert "1048576" in info.value.message


def test_max_bytes_is_a_parameter(tmp_path: Path) -> None:
    path = tmp_path / "a.ts"
    path.write_text("export const a = 1\n")
    assert read_source(path, max_bytes=100) == b"export const a = 1\n"
    with pytest.raises(StoryTooLargeError):
        read_source(path, max_bytes=5)


def test_syntax_errors_locate_first_error_node() -> None:
    source = b"const ok = 1\nconst A = () => <div>\n  <span>\n</div>\n"
    tree = parse_tsx(source, "a.stories.tsx")
    errors = syntax_errors(tree, "a.stories.tsx", source)
    assert errors, "expected ERROR/MISSING nodes"
    assert errors == sorted(errors)
    assert errors[0].line >= 2
    with pytest.raises(StorySyntaxError) as info:
        check_syntax(tree, source, "a.stories.tsx")
    assert info.value.location == errors[0]


def test_clean_source_has_no_syntax_errors() -> None:
    source = b"export const A = ({ a = 1 }: { a?: number }) => <p>{a}</p>\n"
    assert syntax_errors(parse_tsx(source, "a.tsx"), "a.tsx", source) == []


def test_ts_files_use_typescript_grammar() -> None:
    # `<T>x` is a cast in .ts and a JSX syntax error in .tsx
    source = b"const a = <number>b\n"
    assert syntax_errors(parse_tsx(source, "a.ts"), "a.ts", source) == []
    assert syntax_errors(parse_tsx(source, "a.tsx"), "a.tsx", source) != []


def test_parse_is_cached_by_content() -> None:
    source = b"const a = 1\n"
    assert parse_tsx(source, "a.tsx") is parse_tsx(bytes(source), "b.tsx")


def test_resolve_import_extension_rules() -> None:
    files = {"c/x.css.ts", "c/y.tsx", "c/z/index.ts"}
    exists = files.__contains__
    assert resolve_import("./x.css.ts", "c/c.stories.tsx", exists) == "c/x.css.ts"
    assert resolve_import("./x.css", "c/c.stories.tsx", exists) == "c/x.css.ts"
    assert resolve_import("./y", "c/c.stories.tsx", exists) == "c/y.tsx"
    assert resolve_import("./z", "c/c.stories.tsx", exists) == "c/z/index.ts"
    assert resolve_import("./nope", "c/c.stories.tsx", exists) is None
    assert resolve_import("../../etc/passwd", "c/c.stories.tsx", lambda p: True) is None


def test_huge_file_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.tsx"
    with open(path, "wb") as fh:
        fh.truncate(64 * 1024 * 1024)
    monkeypatch.setattr("worldagent.stories.parse.open", lambda *a, **k: pytest.fail("opened"), raising=False)
    with pytest.raises(StoryTooLargeError):
        read_source(path)
