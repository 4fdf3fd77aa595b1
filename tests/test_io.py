"""worldagent.io: the one JSON reader (file, line, column) and the one atomic writer (one permission policy)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from worldagent.errors import InputError
from worldagent.io import (
    atomic_directory,
    atomic_write_text,
    directory_hash,
    read_json,
    read_jsonl,
    without_run_dependent,
    write_directory,
)


class MyError(InputError):
    pass


def test_read_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "gate.json"
    path.write_text('{\n  "passed": tru\n}\n')
    with pytest.raises(InputError, match=r"gate\.json:2:13: invalid JSON"):
        read_json(path)
    with pytest.raises(MyError, match=r"missing\.json: not found \(the gate decision\); run the gate stage first"):
        read_json(tmp_path / "missing.json", "the gate decision", hint="run the gate stage first", error=MyError)
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="expected a JSON object"):
        read_json(path, expect=dict)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(InputError, match="not UTF-8"):
        read_json(path)
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested deeper than"):
        read_json(path)
    path.write_text('{"big": "' + "x" * 100 + '"}')
    with pytest.raises(InputError, match="more than the 50 allowed"):
        read_json(path, max_bytes=50)


def test_read_jsonl_names_the_line_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n')
    assert read_jsonl(path) == [{"a": 1}, {"a": 2}]
    path.write_text('{"a": 1}\n\n{"a": }\n')
    with pytest.raises(InputError, match=r"rows\.jsonl:3:7: invalid JSON"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n[1]\n')
    with pytest.raises(InputError, match=r"rows\.jsonl:2: expected a JSON object, got array"):
        read_jsonl(path)
    assert read_jsonl(path, expect=None) == [{"a": 1}, [1]]


def test_atomic_writers_use_ordinary_modes_under_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "file.txt", "x")
        write_directory(tmp_path / "out", {"a.bin": b"a", "sub/b.bin": b"b"})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "file.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "out" / "sub").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "out" / "sub" / "b.bin").stat().st_mode) == 0o644


def test_atomic_directory_is_all_or_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_directory(out, {"old.txt": b"old"})
    with pytest.raises(RuntimeError, match="crash"), atomic_directory(out) as tmp:
        (tmp / "new.txt").write_text("new")
        raise RuntimeError("crash")
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and [p.name for p in out.iterdir()] == ["old.txt"]
    write_directory(out, {"new.txt": b"new"})
    assert [p.name for p in out.iterdir()] == ["new.txt"]
    with pytest.raises(FileExistsError), atomic_directory(out, replace=False):
        pass
    assert (out / "new.txt").read_text() == "new"


def test_directory_hash_is_the_content_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_directory(a, {"weights.bin": b"w", "config.json": b"{}"})
    write_directory(b, {"config.json": b"{}", "weights.bin": b"w", "README.md": b"card", "checkpoint-1/x": b"opt"})
    assert directory_hash(a) == directory_hash(b) is not None  # card and checkpoints are not the artifact
    (b / "weights.bin").write_bytes(b"other")
    assert directory_hash(a) != directory_hash(b)
    assert directory_hash(tmp_path / "missing") is None
    (a / "link").symlink_to(b / "weights.bin")
    with pytest.raises(InputError, match="symbolic link"):
        directory_hash(a)


def test_run_dependent_figures_are_dropped_at_any_depth() -> None:
    record = {
        "loss_last": 0.5,
        "wall_s": 12.3,
        "pretrain": {"steps": 4, "seconds": 1.0, "curve": [{"loss": 1.0, "train_runtime_s": 2.0}]},
        "probe": {"tokens_per_second": 9.0, "kept": 3},
    }
    assert without_run_dependent(record) == {
        "loss_last": 0.5,
        "pretrain": {"steps": 4, "curve": [{"loss": 1.0}]},
        "probe": {"kept": 3},
    }
    assert record["wall_s"] == 12.3  # the caller's record (the metrics file's) keeps them
