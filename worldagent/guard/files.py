"""The one way a user's file is read: a regular file, under a size cap, inside its root.

- **Regular files only.** A FIFO, a device (``/dev/zero``), a socket or a directory is refused by
  its ``lstat``/``fstat`` mode before a byte is read. The file is opened with ``O_NONBLOCK`` and
  checked again with ``fstat`` on the open descriptor, so a FIFO swapped in after the first check
  cannot hang the reader either.
- **A size cap checked before reading**, and enforced while reading (at most ``max_bytes + 1``
  bytes are ever read: ``/proc`` files and growing files report another size than they hold).
- **Inside a root, with lstat semantics.** :func:`resolve_inside` walks the path one component at a
  time from the root; a symbolic link is followed only when its target stays inside the root, and
  ``..`` or an absolute path that leaves the root is refused before anything is opened. The agent's
  sandbox resolves every path it is given (reads, writes and checks) through it.

Every problem is a :class:`FileError` (an ``InputError``) naming the path and what to do, so a
command prints one line instead of a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from worldagent.errors import InputError
from worldagent.guard.text import decode_utf8

DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # far above any story, page or params file; bounds a hostile one
_CHUNK = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class FileError(InputError):
    """A file that cannot be read as asked; the message names it and the reason."""

    def __init__(self, message: str, path: object = None, reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason or message


class MissingFileError(FileError):
    """The file (or a folder on its way) does not exist."""


class NotRegularFileError(FileError):
    """A FIFO, device, socket or directory where a regular file was expected."""


class FileTooLargeError(FileError):
    """A file over the size cap; ``size`` is what it reported or what was read past the cap."""

    def __init__(self, message: str, path: object, size: int, limit: int) -> None:
        super().__init__(message, path, f"{size} bytes, more than the {limit} allowed")
        self.size = size
        self.limit = limit


class OutsideRootError(FileError):
    """A path that leaves its root (``..``, an absolute path, or a symbolic link pointing out);
    ``target`` is where a link leads, when one does."""

    def __init__(self, message: str, path: object = None, reason: str = "", target: Path | None = None) -> None:
        super().__init__(message, path, reason)
        self.target = target


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _label(what: str) -> str:
    return f" ({what})" if what else ""


# -- paths inside a root ------------------------------------------------------------------------


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def resolve_inside(root: Path | str, path: Path | str, *, what: str = "") -> Path:
    """The real path of ``path`` (relative to ``root``, or absolute inside it), never outside ``root``.

    Lexical ``..`` that climbs out, an absolute path elsewhere, and a symbolic link (at any
    component) whose target leaves the root are an :class:`OutsideRootError`. Components that do
    not exist yet are kept as written (a file about to be created). Nothing is opened.
    """
    real_root = Path(os.path.realpath(root))
    given = Path(path)
    if "\x00" in str(given):
        raise OutsideRootError(f"{path}: contains a NUL byte{_label(what)}", path, "contains a NUL byte")
    if given.is_absolute():
        lexical = Path(os.path.normpath(given))
        for base in (real_root, Path(os.path.abspath(root))):
            if _inside(lexical, base):
                relative = lexical.relative_to(base)
                break
        else:
            raise OutsideRootError(
                f"{path}: outside the folder {real_root}{_label(what)}", path, f"outside the root {real_root}"
            )
    else:
        relative = Path(os.path.normpath(given))
        if relative.parts[:1] == ("..",):
            raise OutsideRootError(
                f"{path}: climbs out of the folder {real_root} ('..'){_label(what)}", path, "'..' leaves the root"
            )
    current = real_root
    parts = [part for part in relative.parts if part not in ("", ".")]
    for index, part in enumerate(parts):
        step = current / part
        try:
            mode = os.lstat(step).st_mode
        except FileNotFoundError:
            return current.joinpath(*parts[index:])  # the rest does not exist yet: nothing to follow
        except NotADirectoryError:
            raise MissingFileError(f"{path}: {current} is not a folder{_label(what)}", path, "not a folder") from None
        except OSError as problem:  # a name too long, a link loop on the way, a folder it may not enter
            reason = problem.strerror or str(problem)
            raise FileError(f"{path}: cannot be resolved ({reason}){_label(what)}", path, reason) from None
        if stat.S_ISLNK(mode):
            try:
                target = Path(os.path.realpath(step, strict=True))
            except FileNotFoundError:  # a dangling link: where it would point decides
                target = Path(os.path.realpath(step))
            except OSError as problem:  # a link loop
                reason = problem.strerror or str(problem)
                raise FileError(f"{path}: cannot be resolved ({reason}){_label(what)}", path, reason) from None
            if not _inside(target, real_root):
                raise OutsideRootError(
                    f"{path}: {step.relative_to(real_root)} is a symbolic link to {target}, outside the folder "
                    f"{real_root}{_label(what)}",
                    path,
                    f"resolves to {str(target)!r}, outside the root {str(real_root)!r}",
                    target,
                )
            current = target
        else:
            current = step
    return current


# -- reading ------------------------------------------------------------------------------------


def _refuse_mode(path: Path, mode: int, what: str) -> None:
    if not stat.S_ISREG(mode):
        kind = _kind(mode)
        raise NotRegularFileError(
            f"{path}: is {kind}, not a regular file{_label(what)}", path, f"is {kind}, not a regular file"
        )


def _too_large(path: Path, size: int, limit: int, what: str) -> FileTooLargeError:
    return FileTooLargeError(
        f"{path}: {what or 'the file'} is {size} bytes, more than the {limit} allowed", path, size, limit
    )


def read_bytes(
    path: Path | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    root: Path | str | None = None,
    what: str = "",
    hint: str | None = None,
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; inside ``root`` when one is given.

    Raises :class:`MissingFileError`, :class:`NotRegularFileError`, :class:`FileTooLargeError`,
    :class:`OutsideRootError` or :class:`FileError` (unreadable), each naming ``path``.
    """
    target = resolve_inside(root, path, what=what) if root is not None else Path(path)
    try:
        _refuse_mode(target, os.stat(target).st_mode, what)  # before open: opening a device can act
        fd = os.open(target, _OPEN_FLAGS)
    except FileNotFoundError:
        raise MissingFileError(
            f"{target}: not found{_label(what)}" + (f"; {hint}" if hint else ""), path, "no such file"
        ) from None
    except NotADirectoryError:
        raise MissingFileError(f"{target}: a folder on its way is a file{_label(what)}", path, "no such file") from None
    except OSError as problem:
        if problem.errno == errno.ENXIO:  # a socket, or a FIFO swapped in (O_NONBLOCK: no hang)
            raise NotRegularFileError(
                f"{target}: is a socket or FIFO, not a regular file{_label(what)}", path, "not a regular file"
            ) from None
        raise FileError(f"{target}: cannot read{_label(what)}: {problem.strerror or problem}", path) from None
    try:
        info = os.fstat(fd)
        _refuse_mode(target, info.st_mode, what)  # the file opened may not be the one checked
        if info.st_size > max_bytes:
            raise _too_large(target, info.st_size, max_bytes, what)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            try:
                chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - size))
            except BlockingIOError:
                raise NotRegularFileError(f"{target}: would block: not a regular file{_label(what)}", path) from None
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise _too_large(target, size, max_bytes, what)
        return b"".join(chunks)
    except OSError as problem:
        raise FileError(f"{target}: cannot read{_label(what)}: {problem.strerror or problem}", path) from None
    finally:
        os.close(fd)


def open_regular(path: Path | str, *, what: str = "") -> BinaryIO:
    """A binary handle on a regular file, for streaming reads of files too large to hold (hashing a
    model): the same FIFO/device/socket refusal as :func:`read_bytes`, without a size cap."""
    target = Path(path)
    try:
        _refuse_mode(target, os.stat(target).st_mode, what)
        fd = os.open(target, _OPEN_FLAGS)
    except FileNotFoundError:
        raise MissingFileError(f"{target}: not found{_label(what)}", path, "no such file") from None
    except OSError as problem:
        raise FileError(f"{target}: cannot read{_label(what)}: {problem.strerror or problem}", path) from None
    try:
        _refuse_mode(target, os.fstat(fd).st_mode, what)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_text(
    path: Path | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    root: Path | str | None = None,
    what: str = "",
    hint: str | None = None,
) -> str:
    """:func:`read_bytes`, decoded as UTF-8 under the one text policy (``TextError`` naming the line)."""
    data = read_bytes(path, max_bytes=max_bytes, root=root, what=what, hint=hint)
    return decode_utf8(data, str(path))


def is_regular_file(path: Path | str) -> bool:
    """Whether ``path`` is a regular file (following links; a FIFO or device is not). Never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
