"""File input and output shared by every stage: one JSON/JSONL reader, one atomic writer.

Reading: :func:`read_json` and :func:`read_jsonl` turn every way a file can be wrong (missing,
unreadable, not UTF-8, invalid JSON, nested too deeply, too large, the wrong top-level type) into
one :class:`~worldagent.errors.InputError` (or the caller's subclass of it) that names the file and
the line and column, so ``clean_errors`` prints one line the user can act on.

Writing: :func:`atomic_write_bytes` (one file) and :func:`atomic_directory` (a whole directory)
write into a temporary sibling and rename it into place, so readers see the old or the new
content, never half of it. Both apply one permission policy, :data:`the ordinary modes
<FILE_MODE>` filtered by the process umask, because ``mkstemp``/``mkdtemp`` create 0600 files
and 0700 directories that other users (a model server, a CI cache) could not read.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from worldagent import safejson
from worldagent.errors import InputError
from worldagent.guard import files
from worldagent.guard.text import TextError, check_json

FILE_MODE = 0o666  # before the umask, as open() would create it
DIR_MODE = 0o777
MAX_JSON_BYTES = 256 * 1024 * 1024  # far above any artifact the pipeline writes; bounds a hostile file


# -- reading ------------------------------------------------------------------------------------


def _read_text(path: Path, what: str, hint: str | None, error: type[InputError], max_bytes: int) -> str:
    """The file guard's read (a regular file under ``max_bytes``, UTF-8), its error as ``error``."""
    label = f" ({what})" if what else ""
    try:
        return files.read_text(path, max_bytes=max_bytes, what=what, hint=hint)
    except files.MissingFileError:
        raise error(f"{path}: not found{label}" + (f"; {hint}" if hint else "")) from None
    except files.NotRegularFileError as problem:
        raise error(f"{path}: {problem.reason}{label}") from None
    except files.FileTooLargeError as problem:
        raise error(
            f"{path}: {what or 'the file'} is {problem.size} bytes, more than the {max_bytes} allowed"
        ) from None
    except InputError as problem:  # unreadable, or not UTF-8 (the text policy names line and byte)
        raise error(f"{problem}{label}" if what and what not in str(problem) else str(problem)) from None


def read_text_file(
    path: Path,
    what: str = "",
    *,
    hint: str | None = None,
    error: type[InputError] = InputError,
    max_bytes: int = MAX_JSON_BYTES,
) -> str:
    """A text file through the file guard (regular, under ``max_bytes``, UTF-8); errors name the file."""
    return _read_text(Path(path), what, hint, error, max_bytes)


def _parse(text: str, where: str, error: type[InputError], line: int | None = None) -> Any:
    """Parse ``text``; ``line`` is its line number in ``where`` when it is one line of a JSONL file."""
    try:
        value = safejson.loads(text)  # nesting past safejson.MAX_DEPTH is a parse error, not a RecursionError
    except json.JSONDecodeError as problem:
        at = problem.lineno if line is None else line
        raise error(f"{where}:{at}:{problem.colno}: invalid JSON: {problem.msg}") from None
    try:
        return check_json(text, value, where if line is None else f"{where}:{line}")  # the text policy
    except TextError as problem:
        raise error(str(problem)) from None


def parse_json(text: str, where: str, error: type[InputError] = InputError) -> Any:
    """``json.loads`` whose errors name ``where`` (a file, a field) and the line and column."""
    return _parse(text, where, error)


def read_json(
    path: Path,
    what: str = "",
    *,
    hint: str | None = None,
    expect: type | None = None,
    error: type[InputError] = InputError,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """The JSON value in ``path``; any problem is ``error`` naming the file, line and column.

    ``what`` says what the file is ("the gate decision"), ``hint`` how to make it ("run the gate
    stage first"), ``expect`` the required top-level type (``dict`` or ``list``).
    """
    path = Path(path)
    value = _parse(_read_text(path, what, hint, error, max_bytes), str(path), error)
    if expect is not None and not isinstance(value, expect):
        raise error(
            f"{path}: expected a JSON {_type_name(expect)}{f' ({what})' if what else ''}, got {_type_name(type(value))}"
        )
    return value


def iter_jsonl(
    path: Path,
    what: str = "",
    *,
    hint: str | None = None,
    expect: type | None = dict,
    error: type[InputError] = InputError,
    max_bytes: int = MAX_JSON_BYTES,
) -> Iterator[Any]:
    """The values of a JSON Lines file, one per non-blank line, each checked against ``expect``."""
    path = Path(path)
    text = _read_text(path, what, hint, error, max_bytes)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value = _parse(line, str(path), error, line=number)
        if expect is not None and not isinstance(value, expect):
            raise error(f"{path}:{number}: expected a JSON {_type_name(expect)}, got {_type_name(type(value))}")
        yield value


def read_jsonl(path: Path, what: str = "", **options: Any) -> list[Any]:
    """:func:`iter_jsonl` as a list (same keyword options)."""
    return list(iter_jsonl(path, what, **options))


def _type_name(kind: type) -> str:
    return {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        kind, "null" if kind is type(None) else kind.__name__
    )


# -- writing ------------------------------------------------------------------------------------


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _apply_modes(root: Path) -> None:
    """The one permission policy: ordinary modes under the umask, for ``root`` and all it holds."""
    mask = _umask()
    if root.is_dir():
        os.chmod(root, DIR_MODE & ~mask)
        for path in root.rglob("*"):
            if path.is_symlink():
                continue
            os.chmod(path, (DIR_MODE if path.is_dir() else FILE_MODE) & ~mask)
    else:
        os.chmod(root, FILE_MODE & ~mask)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory and rename: readers see all or nothing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _apply_modes(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def replace_directory(tmp: Path, out_dir: Path) -> None:
    """Rename a finished ``tmp`` directory over ``out_dir``.

    The old directory is moved aside first and removed only once the new one is in place, so a
    crash leaves either the old or the new directory, never a half-written one.
    """
    old = None
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}-{time.monotonic_ns()}")
        os.replace(out_dir, old)
    try:
        os.replace(tmp, out_dir)
    except BaseException:
        if old is not None:
            os.replace(old, out_dir)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(out_dir.parent)


def temp_sibling(out_dir: Path) -> Path:
    """A fresh, empty temporary directory next to ``out_dir`` (stale ones from killed runs removed)."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.parent.glob(f".{out_dir.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))


@contextmanager
def atomic_directory(out_dir: Path, *, replace: bool = True, durable: bool = False) -> Iterator[Path]:
    """Yield a temporary directory to fill; on success it becomes ``out_dir`` in one rename.

    With ``replace`` false an existing ``out_dir`` is an error (a published version is never
    overwritten) and is re-checked right before the rename. On any exception the temporary
    directory is removed and ``out_dir`` is untouched. Files get :func:`the one permission policy
    <_apply_modes>`; with ``durable`` every file is fsynced before the rename (for what must survive
    a power cut, such as a published version; a stage output can simply be recomputed).
    """
    out_dir = Path(out_dir)
    if not replace and out_dir.exists():
        raise FileExistsError(f"{out_dir} already exists")
    tmp = temp_sibling(out_dir)
    try:
        yield tmp
        for path in tmp.rglob("*") if durable else ():
            if path.is_file() and not path.is_symlink():
                with files.open_regular(path) as handle:
                    os.fsync(handle.fileno())
        _apply_modes(tmp)
        if replace:
            replace_directory(tmp, out_dir)
        else:
            if out_dir.exists():  # rename onto an empty directory would succeed: refuse it first
                raise FileExistsError(f"{out_dir} already exists")
            os.rename(tmp, out_dir)
            _fsync_dir(out_dir.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_directory(out_dir: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (relative name → content) as the whole of ``out_dir``, atomically."""
    with atomic_directory(out_dir) as tmp:
        for name, data in files.items():
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


# -- formats and hashes -------------------------------------------------------------------------


def canonical_json(value: Any) -> str:
    """JSON with stable key order and no locale or platform dependence."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def jsonl(rows: Iterable[Any]) -> str:
    return "".join(canonical_json(row) + "\n" for row in rows)


def pretty_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


# Figures that differ between two runs of the same training (clock time, speed, memory). They
# belong in a stage's metrics file, never inside a model directory: a DVC out that changes on every
# rerun makes everything downstream (the evaluations) run again for byte-identical weights.
RUN_DEPENDENT_KEYS = frozenset(
    {
        "wall_s",
        "seconds",
        "scoring_seconds",
        "train_runtime_s",
        "train_samples_per_second",
        "train_steps_per_second",
        "train_tokens_per_second",
        "tokens_per_second",
        "peak_rss_mib",
    }
)


def without_run_dependent(value: Any) -> Any:
    """``value`` with every :data:`RUN_DEPENDENT_KEYS` entry removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_run_dependent(v) for k, v in value.items() if k not in RUN_DEPENDENT_KEYS}
    if isinstance(value, list):
        return [without_run_dependent(v) for v in value]
    return value


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with files.open_regular(path) as handle:  # a FIFO in an artifact folder is refused, never waited on
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- artifact content hash ----------------------------------------------------------------------

# What is not part of a model artifact: training checkpoints, logs, hidden and temporary files,
# and the model card (written at publish time, so it differs between the gated and the published copy).
ARTIFACT_IGNORE: tuple[str, ...] = ("checkpoint-*", ".*", "README.md", "runs", "*.tmp")


def directory_files(directory: Path, ignore: tuple[str, ...] | list[str] = ARTIFACT_IGNORE) -> list[str]:
    """Relative posix paths of the files under ``directory``, sorted; ignored names skip whole subtrees.

    Symbolic links are refused: an artifact is its own bytes, never a pointer out of the folder.
    """
    import fnmatch

    directory = Path(directory)
    files: list[str] = []
    for current, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, pattern) for pattern in ignore))
        for name in dirs:
            if (Path(current) / name).is_symlink():
                raise InputError(f"{Path(current) / name}: a symbolic link inside an artifact directory is not allowed")
        for name in sorted(names):
            if any(fnmatch.fnmatch(name, pattern) for pattern in ignore):
                continue
            path = Path(current) / name
            if path.is_symlink():
                raise InputError(f"{path}: a symbolic link inside an artifact directory is not allowed")
            files.append(path.relative_to(directory).as_posix())
    return sorted(files)


def directory_hash(directory: Path, ignore: tuple[str, ...] | list[str] = ARTIFACT_IGNORE) -> str | None:
    """The artifact's content hash: sha256 over each file's relative path and sha256, in sorted order.

    Deterministic (no timestamps, no modes), so the same bytes always give the same hash, wherever
    they lie. None when ``directory`` is missing or holds no artifact files.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return None
    files = directory_files(directory, ignore)
    if not files:
        return None
    digest = hashlib.sha256()
    for rel in files:
        digest.update(f"{rel}\0{sha256_file(directory / rel)}\n".encode())
    return digest.hexdigest()
