"""The command line of every stage entry (``python -m tasks.<stage> --<arg> PATH ...``).

A stage's ``run(params, *, name: Path, ...)`` declares its paths as keyword-only arguments; this
module turns them into required ``--name`` options, loads and validates ``params.yaml``, and turns
the project's errors into one clean line (``worldagent.errors``). The paths themselves live in the
family's stage table (``worldagent/pipeline/``), which writes them into ``dvc.yaml``.
"""

from __future__ import annotations

import argparse
import inspect
import logging
from collections.abc import Callable
from pathlib import Path

from worldagent.config import Params, load_params
from worldagent.errors import clean_errors

StageRun = Callable[..., object]


def path_arguments(run: StageRun) -> list[str]:
    """The keyword-only ``Path`` arguments without a default of a stage's ``run``: the paths its
    table entry must give. Arguments with a default (a test's model loader, the root that relative
    paths inside the data resolve against) keep it on the command line."""
    return [
        p.name
        for p in inspect.signature(run).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    ]


def option(argument: str) -> str:
    return "--" + argument.replace("_", "-")


def stage_parser(description: str, run: StageRun) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--params", default="params.yaml", type=Path, help="parameters file (default: params.yaml)")
    paths = parser.add_argument_group("paths (dvc.yaml passes them from the stage table)")
    for argument in path_arguments(run):
        paths.add_argument(option(argument), dest=argument, type=Path, required=True, metavar="PATH")
    return parser


def stage_main(description: str, run: Callable[..., object], argv: list[str] | None = None) -> int:
    """Parse the stage's paths, load params and run it. Exit 2 on bad input, 1 when a run cannot finish."""

    @clean_errors
    def main() -> int:
        args = vars(stage_parser(description, run).parse_args(argv))
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
        params: Params = load_params(args.pop("params"))
        run(params, **args)
        return 0

    return main()
