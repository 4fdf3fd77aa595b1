"""A stage's code dependencies: the project's modules its entry imports, transitively.

Computed from the source (``ast``), never listed by hand, so a new import is a new dependency the
moment it is written. Every import counts, also one inside a function (a lazily imported trainer is
still code the stage runs), and so does every package ``__init__.py`` on the way. A data file that
a module reads from beside itself (``Path(__file__).parent / "clip_configs"``) counts when the
module names it in a string literal.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path

PROJECT_PACKAGES = ("worldagent", "tasks")


def module_path(root: Path, module: str) -> Path | None:
    """``worldagent.policy.sft`` → ``worldagent/policy/sft.py`` (or the package's ``__init__.py``)."""
    if module.split(".")[0] not in PROJECT_PACKAGES:
        return None
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(root: Path, module: str) -> str:
    path = module_path(root, module)
    is_package = path is not None and path.name == "__init__.py"
    return module if is_package else module.rpartition(".")[0]


def _absolute(root: Path, module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = _package_of(root, module).split(".")
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


@cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def direct_imports(root: Path, module: str) -> set[str]:
    """The project modules ``module`` imports anywhere in its source."""
    path = module_path(root, module)
    if path is None:
        raise ValueError(f"{module}: not a module of this project (looked under {root})")
    found: set[str] = set()
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(root, module, node)
            found.add(target)
            # `from package import name`: name may be a submodule.
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in found if module_path(root, name) is not None}


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:index]) for index in range(1, len(parts))]


def data_files(root: Path, module: str) -> set[str]:
    """Files and folders beside ``module`` that its source names in a string literal."""
    path = module_path(root, module)
    assert path is not None
    neighbours = {
        entry.name: entry
        for entry in path.parent.iterdir()
        if entry.suffix != ".py"
        and entry.name != "__pycache__"
        and not entry.name.startswith(".")
        and not (entry / "__init__.py").exists()  # a subpackage is code: its modules count when imported
    }
    named = {
        node.value for node in ast.walk(_parse(path)) if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    return {neighbours[name].relative_to(root).as_posix() for name in named & neighbours.keys()}


def code_deps(root: Path, entries: Iterable[str]) -> list[str]:
    """Every project file the entry modules run: modules, package ``__init__``\\ s and named data files."""
    seen: set[str] = set()
    pending = [*entries]
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        pending.extend(direct_imports(root, module) | {p for p in _parents(module) if module_path(root, p)})
    files = set()
    for module in seen:
        path = module_path(root, module)
        assert path is not None
        files.add(path.relative_to(root).as_posix())
        files.update(data_files(root, module))
    return sorted(files)
