"""A directory the agent's tools may read and write, and nothing outside it."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from worldagent.errors import InputError
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

    Symlinks are followed when checking containment, so a link (or a linked parent directory)
    pointing outside the root is refused. Concurrent changes to the tree between the check and
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
        real = self.resolve(path)
        if not real.is_file():
            raise SandboxError(path, "no such file")
        size = real.stat().st_size
        if size > self.max_bytes:
            raise SandboxError(path, f"file is {size} bytes; the limit is {self.max_bytes}")
        return real.read_bytes().decode("utf-8")

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
            real = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on Python 3.11
            raise SandboxError(path, f"cannot be resolved ({exc})") from None
        if real != self.root and not real.is_relative_to(self.root):
            raise SandboxError(path, f"resolves to {str(real)!r}, outside the sandbox root {str(self.root)!r}")
        return real

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
