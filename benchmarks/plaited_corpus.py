"""Fidelity on Plaited's own repository: does every story export render?

    .venv/bin/python -m benchmarks.plaited_corpus PATH                 # a checkout of plaited/plaited
    .venv/bin/python -m benchmarks.plaited_corpus GIT_DIR --rev REV    # a clone's git directory
    .venv/bin/python -m benchmarks.plaited_corpus PATH --json
    .venv/bin/python -m benchmarks.plaited_corpus                      # tests/fixtures/plaited

Every ``*.stories.tsx`` file under PATH (``node_modules`` and ``.git`` left out) goes through the
project's discovery and story interpreter, exactly as `discover` and `story-test` do; each story
export is rendered once. Printed: per area (training stories, the UI-pattern skill examples, the
framework's own element stories, the workshop's test fixtures), how many render; then each one
that does not, with its located reason (``file:line:col: message``). Exit status 1 when any
story does not render (or a story file cannot be read), so the command can gate a change.

A git directory (bare, a clone's ``.git``, or a mirror) is read without a work tree: the
TypeScript sources of REV (default ``HEAD``) are written to a temporary folder first. Blobs the
clone does not hold (a partial clone) are skipped and counted; nothing is fetched.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from benchmarks.common import print_json
from worldagent.stories.discover import discover_stories
from worldagent.stories.errors import StoryError
from worldagent.stories.render import render_story

# What the interpreter may read besides the stories: their relative imports.
SOURCE_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mts")
FIXTURES = Path("tests/fixtures/plaited")
SKIPPED_FOLDERS = frozenset({"node_modules", ".git"})
# Areas of Plaited's repository, by path prefix (first match wins); "other" for the rest.
AREAS: tuple[tuple[str, str], ...] = (
    ("training/", "training stories"),
    (".plaited/skills/", "UI-pattern skill examples"),
    ("skills/", "UI-pattern skill examples"),
    (".agents/skills/", "UI-pattern skill examples"),
    ("src/workshop/", "workshop test fixtures"),
    ("src/", "element stories"),
)


@dataclass
class Failure:
    file: str
    export: str
    reason: str


@dataclass
class CorpusReport:
    root: str
    revision: str | None
    stories: int = 0
    rendered: int = 0
    by_area: dict[str, list[int]] = field(default_factory=dict)  # area -> [rendered, total]
    failures: list[Failure] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # story files discovery could not read
    missing_blobs: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures and not self.problems


def area_of(rel: str) -> str:
    return next((name for prefix, name in AREAS if rel.startswith(prefix)), "other")


def story_files(root: Path) -> list[Path]:
    """Every ``*.stories.tsx`` under ``root``, outside ``node_modules`` and ``.git``, sorted."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        found.extend(Path(folder) / f for f in files if f.endswith(".stories.tsx"))
    return sorted(found)


def measure(root: Path, revision: str | None = None, missing_blobs: int = 0) -> CorpusReport:
    """Discover and render every story export under ``root``."""
    start = time.perf_counter()
    report = CorpusReport(str(root), revision, missing_blobs=missing_blobs)
    files = story_files(root)
    discovery = discover_stories(files, root=root) if files else None
    if discovery is None:
        return report
    report.problems = [
        str(p) for p in discovery.problems if p.kind in ("syntax", "encoding", "too-large", "symlink", "import")
    ]
    for record in discovery.stories:
        tally = report.by_area.setdefault(area_of(record.file), [0, 0])
        tally[1] += 1
        report.stories += 1
        try:
            render_story(root / record.file, record.export, root)
        except StoryError as error:
            report.failures.append(Failure(record.file, record.export, str(error)))
            continue
        tally[0] += 1
        report.rendered += 1
    report.seconds = time.perf_counter() - start
    return report


# ---------------------------------------------------------------------------------- git input


def is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def _git(git_dir: Path, *args: str, data: bytes | None = None) -> bytes:
    # GIT_NO_LAZY_FETCH: a partial clone must not reach the network for the blobs it lacks.
    env = {**os.environ, "GIT_NO_LAZY_FETCH": "1"}
    result = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], input=data, capture_output=True, check=False, timeout=600, env=env
    )
    if result.returncode != 0:
        raise SystemExit(f"git {' '.join(args[:2])} in {git_dir}: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout


def _tree_sources(git_dir: Path, revision: str) -> Iterator[tuple[str, str]]:
    """(object id, path) of each TypeScript source in ``revision``'s tree."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", "--full-tree", revision)
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, oid = meta.decode().split()
        path = raw_path.decode("utf-8", errors="surrogateescape")
        parts = PurePosixPath(path).parts
        if kind != "blob" or mode == "120000" or SKIPPED_FOLDERS & set(parts) or ".." in parts:
            continue
        if path.endswith(SOURCE_SUFFIXES):
            yield oid, path


def export_tree(git_dir: Path, revision: str, dest: Path) -> int:
    """Write ``revision``'s TypeScript sources under ``dest``; returns how many blobs were missing."""
    entries = list(_tree_sources(git_dir, revision))
    out = _git(git_dir, "cat-file", "--batch", data="".join(f"{oid}\n" for oid, _ in entries).encode())
    missing = 0
    pos = 0
    for _oid, path in entries:  # --batch answers in request order
        end = out.index(b"\n", pos)
        header = out[pos:end].decode()
        pos = end + 1
        if header.endswith(" missing"):
            missing += 1
            continue
        size = int(header.split()[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(out[pos : pos + size])
        pos += size + 1  # the blob, then its newline
    return missing


def measure_git(git_dir: Path, revision: str) -> CorpusReport:
    resolved = _git(git_dir, "rev-parse", "--verify", f"{revision}^{{commit}}").decode().strip()
    with tempfile.TemporaryDirectory(prefix="plaited-corpus-") as tmp:
        missing = export_tree(git_dir, resolved, Path(tmp))
        report = measure(Path(tmp), resolved, missing)
    report.root = str(git_dir)
    return report


# ---------------------------------------------------------------------------------------- CLI


def format_report(report: CorpusReport) -> str:
    where = report.root + (f" @ {report.revision[:12]}" if report.revision else "")
    share = report.rendered / report.stories if report.stories else 0.0
    lines = [f"{where}: {report.rendered}/{report.stories} story exports render ({share:.1%}, {report.seconds:.1f} s)"]
    for area, (done, total) in sorted(report.by_area.items()):
        lines.append(f"  {area:<28} {done:>4}/{total}")
    if report.missing_blobs:
        lines.append(f"  ({report.missing_blobs} source blobs absent from the clone were skipped)")
    for failure in report.failures:
        lines.append(f"  FAIL {failure.export}: {failure.reason}")
    for problem in report.problems:
        lines.append(f"  PROBLEM {problem}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "path",
        type=Path,
        nargs="?",
        default=FIXTURES,
        help="a checkout of plaited/plaited, or a git directory"
        " (default: the Plaited-API fixture stories, as `make bench` runs it)",
    )
    parser.add_argument("--rev", default="HEAD", help="revision to read when PATH is a git directory (default HEAD)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    path: Path = args.path
    if not path.is_dir():
        parser.error(f"{path}: not a folder")
    report = measure_git(path, args.rev) if is_git_dir(path) else measure(path)
    if args.json:
        print_json(asdict(report) | {"ok": report.ok})
    else:
        print(format_report(report))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
