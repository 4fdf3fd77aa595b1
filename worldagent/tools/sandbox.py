"""A directory the agent's tools may read and write, and nothing outside it.

Every path the agent names (a write, a read, a story run, the checks that run before a write) is
resolved here, through the file guard's one resolver (``worldagent.guard.files.resolve_inside``),
before anything touches it; reads go through the guard's reader (regular files only, size cap).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.io import atomic_write_bytes

DEFAULT_MAX_BYTES = 256 * 1024


class SandboxError(InputError):
    """A path or write the sandbox refuses; the message names the path and the reason."""

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"path {path!r} refused: {reason}")
        self.path = path
        self.reason = reason


class Sandbox:
    """Paths are relative, '/'-separated (a '\\' counts as a separator too), resolved inside ``root``.

    A symlink (at any component) is followed only when its target stays inside the root, so a link
    (or a linked parent directory) pointing outside the root is refused before it is opened. Concurrent changes to the tree between the check and
    the write are out of scope: the sandbox guards against the agent, not other local processes.
    """

    def __init__(self, root: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(root).resolve()
        self.max_bytes = max_bytes

    def resolve(self, path: str) -> Path:
        """The real (symlink-free) absolute path for ``path``; SandboxError if it is unsafe."""
        return self._contained(path, self.root.joinpath(*self._parts(path)))

    def relative(self, path: str) -> str:
        """The normalised posix form of ``path`` relative to the root (validated)."""
        self.resolve(path)
        return "/".join(self._parts(path))

    def write_text(self, path: str, content: str) -> int:
        """Write UTF-8 ``content`` atomically; return the number of bytes written."""
        data = self._encode(path, content)
        target = self._write_target(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        # The parents just created may not change containment, but re-check after mkdir anyway.
        self._contained(path, target.parent)
        atomic_write_bytes(target, data)
        return len(data)

    def read_text(self, path: str) -> str:
        """The UTF-8 text of a regular file inside the sandbox (no FIFO or device), at most ``max_bytes``."""
        real = self.resolve(path)
        try:
            return files.read_text(real, max_bytes=self.max_bytes, root=self.root)
        except files.FileTooLargeError as error:
            raise SandboxError(path, f"file is {error.size} bytes; the limit is {self.max_bytes}") from None
        except files.MissingFileError:
            raise SandboxError(path, "no such file") from None
        except files.FileError as error:
            raise SandboxError(path, error.reason) from None
        except InputError as error:  # not UTF-8 (the text policy)
            raise SandboxError(path, str(error)) from None

    def exists(self, path: str) -> bool:
        return self.resolve(path).exists()

    # -- checks ----------------------------------------------------------------------------

    def _parts(self, path: str) -> list[str]:
        if not isinstance(path, str):
            raise SandboxError(path, f"path must be a string, got {type(path).__name__}")
        if not path.strip():
            raise SandboxError(path, "empty path")
        if "\x00" in path:
            raise SandboxError(path, "contains a NUL byte")
        if _is_absolute(path):
            raise SandboxError(path, "absolute paths are not allowed; use a path relative to the sandbox root")
        parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
        if ".." in parts:
            raise SandboxError(path, "'..' components are not allowed")
        if not parts:
            raise SandboxError(path, "names the sandbox root itself, not a file")
        return parts

    def _contained(self, path: str, candidate: Path) -> Path:
        try:
            return files.resolve_inside(self.root, candidate)
        except files.OutsideRootError as error:
            where = f"resolves to {str(error.target)!r}, outside" if error.target is not None else "is outside"
            raise SandboxError(path, f"{where} the sandbox root {str(self.root)!r}") from None
        except files.FileError as error:
            raise SandboxError(path, error.reason) from None
        except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on Python 3.11
            raise SandboxError(path, f"cannot be resolved ({exc})") from None

    def _write_target(self, path: str) -> Path:
        parts = self._parts(path)
        parent = self._contained(path, self.root.joinpath(*parts[:-1]))
        target = parent / parts[-1]
        if target.is_symlink():
            raise SandboxError(path, "is a symlink; writing through symlinks is not allowed")
        if target.exists() and not target.is_file():
            raise SandboxError(path, "exists and is not a regular file")
        self._contained(path, target)
        return target

    def _encode(self, path: str, content: str) -> bytes:
        if not isinstance(content, str):
            raise SandboxError(path, f"content must be a string, got {type(content).__name__}")
        data = content.encode("utf-8")
        if len(data) > self.max_bytes:
            raise SandboxError(path, f"content is {len(data)} bytes; the limit is {self.max_bytes}")
        return data


def _is_absolute(path: str) -> bool:
    windows = PureWindowsPath(path)
    # Drive-relative "C:foo" is refused too: it names another drive's working directory.
    return PurePosixPath(path).is_absolute() or bool(windows.drive) or bool(windows.root)
