"""The one stage entry: ``python -m worldagent.pipeline run <stage> [--<option> VALUE ...] --<arg> PATH ...``.

Every ``dvc.yaml`` stage runs through here. The stage table (``worldagent/pipeline/``) names the
stage's function (``module:function``), its non-path options (a per-model evaluation's model name)
and its paths; this module turns them into required command-line options, loads and validates
``params.yaml``, hands the function only the params sections its table entry declares
(:func:`scoped_params`), and turns the project's errors into one clean line (``worldagent.errors``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from worldagent.config import Params, load_params
from worldagent.errors import RunError, clean_errors
from worldagent.pipeline.table import Stage

StageRun = Callable[..., object]


class UndeclaredParamsError(RunError):
    """A stage read a params.yaml section (or key) its table entry does not declare: DVC would not
    rerun it when that value changes, so the read fails instead of going unnoticed."""


def resolve(entry: str) -> StageRun:
    """``"package.module:function"`` → the function."""
    module, _, function = entry.partition(":")
    if not function:
        raise ValueError(f"{entry!r}: a stage entry is 'module:function'")
    return getattr(importlib.import_module(module), function)


def entry_module(entry: str) -> str:
    """The module an entry's code starts from (what its code dependencies are computed from)."""
    return entry.partition(":")[0]


def path_arguments(run: StageRun) -> list[str]:
    """The keyword-only arguments without a default of a stage's function: what its table entry
    must give (paths, and options such as a model name). Arguments with a default (a test's model
    loader, the root that relative paths inside the data resolve against) keep it."""
    return [
        p.name
        for p in inspect.signature(run).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    ]


def keyword_arguments(run: StageRun) -> set[str]:
    """Every keyword-only argument of a stage's function, with or without a default."""
    return {p.name for p in inspect.signature(run).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY}


def option(argument: str) -> str:
    return "--" + argument.replace("_", "-")


class _Undeclared:
    """Stands for a params section the stage did not declare: any read fails loudly."""

    def __init__(self, stage: str, section: str, value: BaseModel, allowed: frozenset[str] = frozenset()) -> None:
        object.__setattr__(self, "_stage", stage)
        object.__setattr__(self, "_section", section)
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_allowed", allowed)

    def __getattr__(self, key: str) -> Any:
        value: BaseModel = object.__getattribute__(self, "_value")
        allowed: frozenset[str] = object.__getattribute__(self, "_allowed")
        fields = type(value).model_fields
        # a partly declared section: its declared keys, and its methods (which read their own keys)
        if key in allowed or (allowed and key not in fields and not key.startswith("__")):
            return getattr(value, key)
        stage, section = object.__getattribute__(self, "_stage"), object.__getattribute__(self, "_section")
        raise UndeclaredParamsError(
            f"stage {stage} read params.{section}.{key}, which its table entry does not declare: "
            f"add '{section}.{key}' (or '{section}') to its params in worldagent/pipeline/"
        )

    def __repr__(self) -> str:
        return f"<params.{object.__getattribute__(self, '_section')}: not declared by this stage>"


def scoped_params(params: Params, declared: Iterable[str], stage: str = "this stage") -> Params:
    """``params`` with every section the stage does not declare replaced by a stand-in that fails on
    any read; a section declared by some of its keys (``evaluate.max_new_tokens``) allows those keys.
    Root fields (``seed``) stay readable: a stage that reads one declares it, and DVC tracks it."""
    whole: set[str] = set()
    keys: dict[str, set[str]] = {}
    for name in declared:
        section, _, key = name.partition(".")
        if key:
            keys.setdefault(section, set()).add(key.split(".")[0])
        else:
            whole.add(section)
    update: dict[str, Any] = {}
    for section in type(params).model_fields:
        value = getattr(params, section)
        if section in whole or not isinstance(value, BaseModel):
            continue
        update[section] = _Undeclared(stage, section, value, frozenset(keys.get(section, ())))
    return params.model_copy(update=update)


def stage_parser(
    name: str, description: str, run: StageRun, arguments: Iterable[str], options: Mapping[str, str] = {}
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m worldagent.pipeline run {name}", description=description)
    parser.add_argument("--params", default="params.yaml", type=Path, help="parameters file (default: params.yaml)")
    if options:
        group = parser.add_argument_group("options (dvc.yaml passes them from the stage table)")
        for key, value in options.items():
            group.add_argument(option(key), dest=key, required=True, choices=[value], metavar=value)
    paths = parser.add_argument_group("paths (dvc.yaml passes them from the stage table)")
    for argument in arguments:
        paths.add_argument(option(argument), dest=argument, type=Path, required=True, metavar="PATH")
    return parser


def run_stage(stage: Stage, argv: list[str] | None = None) -> int:
    """Parse the stage's options and paths, load params (scoped to what the stage declares) and run
    its function. Exit 2 on bad input, 1 when a run cannot finish."""

    @clean_errors
    def main() -> int:
        run = resolve(stage.entry)
        parser = stage_parser(stage.name, stage.description, run, stage.arguments, stage.options)
        args = vars(parser.parse_args(argv))
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
        params = scoped_params(load_params(args.pop("params")), stage.params, stage.name)
        run(params, **args)
        return 0

    return main()
