"""A stage's code dependencies: the project's modules its entry imports, transitively.

Computed from the source (``ast``), never listed by hand, so a new import is a new dependency the
moment it is written. Every import counts, also one inside a function (a lazily imported trainer is
still code the stage runs), and so does every package ``__init__.py`` on the way. A data file that
a module reads from beside itself (``Path(__file__).parent / "clip_configs"``) counts when the
module names it in a string literal.

The params schema is the one exception to following imports. ``worldagent/config/`` holds one
module per concern (``data``, ``model``, ``training``, ``evaluation``, ...) and its ``__init__.py``
imports them all to build the root ``Params``; following those imports would make every stage
depend on every section, so one new ``evaluate`` field would rerun training. Instead a stage
depends on the config package's ``__init__.py`` (the root model, its root fields such as ``seed``,
loading), its shared ``base`` module, and the modules of the params sections the stage declares:
a declared key ``evaluate.max_new_tokens`` or a whole section ``reward`` names its top-level
section, whose module, and the modules of the section classes nested in it, are read from the
``Params`` model itself (``Params.model_fields[section].annotation.__module__``), never from a
table. A section module that the stage's code imports directly (``from worldagent.config.evaluation
import X``) still counts, as any import does, and so do a section module's own imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import get_args, get_origin

from pydantic import BaseModel

PROJECT_PACKAGES = ("worldagent",)
CONFIG = "worldagent.config"
"""The params schema package: its ``__init__`` imports the section modules, which are not followed."""
CONFIG_BASE = f"{CONFIG}.base"
"""The schema every section shares (``Section``, shared field types): a dependency wherever the package is."""


def module_path(root: Path, module: str) -> Path | None:
    """``worldagent.lm.sft`` → ``worldagent/lm/sft.py`` (or the package's ``__init__.py``)."""
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


def _classes(annotation: object) -> Iterator[type]:
    """The classes an annotation names: ``X``, ``X | None``, ``list[X]``."""
    if isinstance(annotation, type) and get_origin(annotation) is None:
        yield annotation
    for argument in get_args(annotation):
        yield from _classes(argument)


def _schema_modules(model: type[BaseModel]) -> set[str]:
    """The modules that declare ``model`` and every model class nested in its fields, however deep."""
    modules = {model.__module__}
    for field in model.model_fields.values():
        for cls in _classes(field.annotation):
            if issubclass(cls, BaseModel):
                modules |= _schema_modules(cls)
    return modules


def _root_schema() -> type[BaseModel]:
    from worldagent.config import Params  # the schema this pipeline validates params.yaml with

    return Params


def section_modules(params: Iterable[str], schema: type[BaseModel] | None = None) -> set[str]:
    """The config modules that declare the params.yaml keys ``params``, read from ``schema`` (``Params``).

    ``evaluate.max_new_tokens`` and ``evaluate`` both name the section ``evaluate``: the module of its
    class and of the classes nested in it. A root field (``seed``) lives in the package's
    ``__init__``, which is always among the result. A key that names no field of the schema is an error.
    """
    schema = schema or _root_schema()
    modules = {CONFIG}
    for key in params:
        section = key.split(".")[0]
        field = schema.model_fields.get(section)
        if field is None:
            raise ValueError(f"params key {key!r}: {schema.__name__} has no field {section!r}")
        for cls in _classes(field.annotation):
            if issubclass(cls, BaseModel):
                modules |= _schema_modules(cls)
    return {module for module in modules if module == CONFIG or module.startswith(f"{CONFIG}.")}


def _followed_imports(root: Path, module: str, sections: set[str]) -> set[str]:
    """What ``module`` brings in: its imports, except that the config package's ``__init__`` brings in
    its shared base and the declared ``sections``' modules in place of every section module it imports."""
    imports = direct_imports(root, module)
    if module != CONFIG:
        return imports
    return {name for name in imports if not name.startswith(f"{CONFIG}.")} | {CONFIG_BASE} | sections


def code_deps(root: Path, entries: Iterable[str], params: Iterable[str] = ()) -> list[str]:
    """Every project file the entry modules run: modules, package ``__init__``\\ s and named data files.

    ``params`` are the params.yaml keys the stage declares: the config modules of their sections are
    dependencies, and the config package's ``__init__`` brings in no other section module.
    """
    params = tuple(params)
    sections = {m for m in section_modules(params) if m != CONFIG and module_path(root, m)} if params else set()
    seen: set[str] = set()
    pending = [*entries, *sections]
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        imports = _followed_imports(root, module, sections)
        pending.extend({name for name in imports if module_path(root, name)})
        pending.extend(p for p in _parents(module) if module_path(root, p))
    files = set()
    for module in seen:
        path = module_path(root, module)
        assert path is not None
        files.add(path.relative_to(root).as_posix())
        files.update(data_files(root, module))
    return sorted(files)
