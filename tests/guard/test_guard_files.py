"""The file guard: regular files only, a size cap before reading, nothing outside the root."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.guard.text import TextError


def test_reads_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("héllo", encoding="utf-8")
    assert files.read_text(tmp_path / "a.txt") == "héllo"
    assert files.read_bytes("a.txt", root=tmp_path) == "héllo".encode()


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def read() -> None:
        try:
            files.read_bytes(fifo)
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion
            done.append(error)

    thread = threading.Thread(target=read, daemon=True)
    started = time.perf_counter()
    thread.start()
    thread.join(5)
    assert not thread.is_alive(), "reading a FIFO blocked"
    assert time.perf_counter() - started < 1
    assert isinstance(done[0], files.NotRegularFileError)
    assert "FIFO" in str(done[0]) and str(fifo) in str(done[0])


def test_device_is_refused_before_reading() -> None:
    started = time.perf_counter()
    with pytest.raises(files.NotRegularFileError, match="/dev/zero: is a device"):
        files.read_bytes("/dev/zero")
    assert time.perf_counter() - started < 0.5


def test_socket_and_directory_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(files.NotRegularFileError, match="socket"):
            files.read_bytes(path)
    finally:
        server.close()
    with pytest.raises(files.NotRegularFileError, match="directory"):
        files.read_bytes(tmp_path)


def test_size_cap_is_checked_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with big.open("wb") as handle:
        handle.truncate(10 * 1024 * 1024)  # sparse: its size says it all
    with pytest.raises(files.FileTooLargeError, match="10485760 bytes, more than the 1024 allowed"):
        files.read_bytes(big, max_bytes=1024)
    assert files.read_bytes(big, max_bytes=10 * 1024 * 1024)[:1] == b"\0"


def test_proc_files_are_capped_while_reading() -> None:
    # /proc files report size 0; the cap still holds because at most max_bytes + 1 are read.
    with pytest.raises(files.FileTooLargeError):
        files.read_bytes("/proc/self/maps", max_bytes=16)


def test_missing_file_names_the_path_and_hint(tmp_path: Path) -> None:
    with pytest.raises(files.MissingFileError, match=r"nope.json: not found \(the gate decision\); run the gate"):
        files.read_bytes(tmp_path / "nope.json", what="the gate decision", hint="run the gate")


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"ok\nab\xffc")
    with pytest.raises(TextError, match=r"bad.txt:2:3: not UTF-8"):
        files.read_text(tmp_path / "bad.txt")


def test_errors_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        files.read_bytes(tmp_path / "missing")


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd"])
def test_paths_leaving_the_root_are_refused(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(files.OutsideRootError):
        files.resolve_inside(root, path)


def test_symlink_leaving_the_root_is_refused_at_any_component(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "dir").symlink_to(outside, target_is_directory=True)
    (root / "file").symlink_to(outside / "secret")
    for path in ("dir/secret", "file", "dir/new/deeper.txt"):
        with pytest.raises(files.OutsideRootError, match="symbolic link"):
            files.resolve_inside(root, path)
        with pytest.raises(files.OutsideRootError):
            files.read_bytes(path, root=root)


def test_symlink_inside_the_root_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert files.resolve_inside(tmp_path, "link.txt") == (tmp_path / "real.txt").resolve()
    assert files.read_text("link.txt", root=tmp_path) == "x"


def test_absolute_path_inside_the_root_and_files_not_yet_made(tmp_path: Path) -> None:
    assert files.resolve_inside(tmp_path, tmp_path / "a" / "b.txt") == tmp_path.resolve() / "a" / "b.txt"
    assert files.resolve_inside(tmp_path, "a/./b.txt") == tmp_path.resolve() / "a" / "b.txt"


def test_is_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    (tmp_path / "f").write_text("")
    assert files.is_regular_file(tmp_path / "f")
    assert not files.is_regular_file(tmp_path / "p")
    assert not files.is_regular_file("/dev/null")
    assert not files.is_regular_file(tmp_path / "missing")
