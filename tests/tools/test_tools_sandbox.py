from __future__ import annotations

import os
from pathlib import Path

import pytest

from worldagent import io as io_module
from worldagent.tools.sandbox import Sandbox, SandboxError


@pytest.fixture()
def box(tmp_path: Path) -> Sandbox:
    (tmp_path / "root").mkdir()
    return Sandbox(tmp_path / "root", max_bytes=1024)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", "empty path"),
        ("   ", "empty path"),
        ("a\x00b", "NUL byte"),
        ("/etc/passwd", "absolute"),
        ("C:\\Windows\\x", "absolute"),
        ("C:x", "absolute"),
        ("\\\\server\\share\\x", "absolute"),
        ("\\x", "absolute"),
        ("../x", "'..'"),
        ("a/../../x", "'..'"),
        ("a/..", "'..'"),
        ("a\\..\\..\\x", "'..'"),
        (".", "root itself"),
    ],
)
def test_resolve_refuses(box: Sandbox, path: str, reason: str) -> None:
    with pytest.raises(SandboxError, match=reason) as info:
        box.resolve(path)
    assert repr(path) in str(info.value)


def test_resolve_accepts_relative(box: Sandbox) -> None:
    assert box.resolve("a/./b.tsx") == box.root / "a" / "b.tsx"
    assert box.resolve("a\\b.tsx") == box.root / "a" / "b.tsx"
    assert box.relative("./a//b.tsx") == "a/b.tsx"


def test_symlink_to_outside_is_refused(box: Sandbox, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (box.root / "link.tsx").symlink_to(outside)
    with pytest.raises(SandboxError, match="outside the sandbox root"):
        box.resolve("link.tsx")
    with pytest.raises(SandboxError):
        box.write_text("link.tsx", "x")
    with pytest.raises(SandboxError):
        box.read_text("link.tsx")
    assert outside.read_text() == "secret"


def test_symlinked_parent_directory_is_refused(box: Sandbox, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (box.root / "dir").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SandboxError, match="outside the sandbox root"):
        box.resolve("dir/new.tsx")
    with pytest.raises(SandboxError, match="outside"):
        box.write_text("dir/sub/new.tsx", "x")
    assert list(elsewhere.iterdir()) == []


def test_dangling_symlink_to_outside_is_refused(box: Sandbox, tmp_path: Path) -> None:
    (box.root / "ghost.tsx").symlink_to(tmp_path / "missing.tsx")
    with pytest.raises(SandboxError, match="outside"):
        box.resolve("ghost.tsx")
    with pytest.raises(SandboxError, match="symlink"):
        box.write_text("ghost.tsx", "x")
    assert not (tmp_path / "missing.tsx").exists()


def test_no_writing_through_symlink_inside_root(box: Sandbox) -> None:
    (box.root / "real.tsx").write_text("old")
    (box.root / "alias.tsx").symlink_to(box.root / "real.tsx")
    with pytest.raises(SandboxError, match="symlink"):
        box.write_text("alias.tsx", "new")
    assert (box.root / "real.tsx").read_text() == "old"


def test_symlink_loop_is_an_error(box: Sandbox) -> None:
    (box.root / "a").symlink_to(box.root / "b")
    (box.root / "b").symlink_to(box.root / "a")
    with pytest.raises(SandboxError):
        box.write_text("a/x.tsx", "x")


def test_write_and_read(box: Sandbox) -> None:
    assert box.write_text("deep/er/x.tsx", "héllo\n") == len("héllo\n".encode())
    assert box.read_text("deep/er/x.tsx") == "héllo\n"
    assert box.write_text("deep/er/x.tsx", "second") == 6
    assert box.read_text("deep/er/x.tsx") == "second"
    assert sorted(p.name for p in (box.root / "deep" / "er").iterdir()) == ["x.tsx"]


def test_max_size(box: Sandbox) -> None:
    with pytest.raises(SandboxError, match="1025 bytes; the limit is 1024"):
        box.write_text("big.tsx", "x" * 1025)
    assert not (box.root / "big.tsx").exists()
    box.write_text("ok.tsx", "x" * 1024)


def test_write_refuses_directory_target(box: Sandbox) -> None:
    (box.root / "d.tsx").mkdir()
    with pytest.raises(SandboxError, match="not a regular file"):
        box.write_text("d.tsx", "x")


def test_failed_write_leaves_no_temp_file_and_keeps_old_content(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    box.write_text("x.tsx", "old")

    def broken_replace(src: str, dst: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(io_module.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        box.write_text("x.tsx", "new")
    assert [p.name for p in box.root.iterdir()] == ["x.tsx"]
    assert (box.root / "x.tsx").read_text() == "old"


def test_failed_fsync_leaves_no_temp_file(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError("fsync failed")

    monkeypatch.setattr(io_module.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="fsync failed"):
        box.write_text("y.tsx", "data")
    assert list(box.root.iterdir()) == []


def test_written_file_is_world_readable(box: Sandbox) -> None:
    box.write_text("p.tsx", "x")
    assert os.stat(box.root / "p.tsx").st_mode & 0o777 == 0o644
