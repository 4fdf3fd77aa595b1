"""Shared plumbing of the stage entry points: params loading, logging, DVC-backed Prefect runs."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from worldagent.config import Params, ParamsError, load_params


def stage_main(description: str, run: Callable[[Params, Path], None], argv: list[str] | None = None) -> int:
    """`python -m tasks.<stage>`: the command dvc.yaml runs. Exit 2 on bad params or input."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--params", default="params.yaml", help="parameters file (default: params.yaml)")
    parser.add_argument("--root", default=".", help="project root that relative paths in params are resolved against")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    try:
        run(load_params(args.params), Path(args.root))
    except (ParamsError, ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def dvc_repro(stage: str, root: Path = Path(".")) -> list[str]:
    """Run one stage (and what it depends on) through DVC, so dvc.lock stays the source of truth.

    Returns the names of the stages DVC actually ran (empty when everything was up to date).
    """
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        ran = repo.reproduce(stage)
    return [str(getattr(item, "addressing", item)) for item in ran]
