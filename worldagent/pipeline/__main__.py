"""``python -m worldagent.pipeline [--write | --check | --args STAGE]``: dvc.yaml from the stage tables;
``python -m worldagent.pipeline run STAGE --<option> VALUE --<arg> PATH ...``: the one stage entry,
the command every ``dvc.yaml`` stage runs.

``--args STAGE`` prints a stage's options and paths, for launching it another way:

    accelerate launch --config_file configs/accelerate/multi_gpu.yaml -m worldagent.pipeline run sft $(python -m worldagent.pipeline --args sft)
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from worldagent.config import load_params
from worldagent.guard import files
from worldagent.pipeline.dvcfile import render
from worldagent.pipeline.entry import option, run_stage
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.table import Stage, interpolate


def stages() -> dict[str, Stage]:
    return {stage.name: stage for pipeline in PIPELINES for stage in pipeline.stages}


def run(argv: list[str]) -> int:
    """``run STAGE ...``: the stage's function with its options, paths and declared params."""
    table = stages()
    if not argv or argv[0] not in table:
        named = repr(argv[0]) if argv else "no stage"
        print(f"error: {named}: the stages are {', '.join(table)}", file=sys.stderr)
        return 2
    return run_stage(table[argv[0]], argv[1:])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        return run(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m worldagent.pipeline", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="write dvc.yaml")
    action.add_argument("--check", action="store_true", help="exit 1 with a diff when dvc.yaml is out of date")
    action.add_argument("--args", metavar="STAGE", help="print a stage's path options (params.yaml values filled in)")
    args = parser.parse_args(argv)
    if args.args:
        table = stages()
        if args.args not in table:
            parser.error(f"no stage {args.args!r}; the stages are {', '.join(table)}")
        stage = table[args.args]
        params = load_params(args.root / "params.yaml")
        values = {**stage.options, **{name: interpolate(path, params) for name, path in stage.arguments.items()}}
        print(" ".join(f"{option(name)} {value}" for name, value in values.items()))
        return 0
    text = render(PIPELINES, args.root)
    target = args.root / "dvc.yaml"
    if args.write:
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    if args.check:
        current = files.read_text(target, what="dvc.yaml") if target.is_file() else ""
        if current == text:
            return 0
        sys.stdout.writelines(
            difflib.unified_diff(current.splitlines(True), text.splitlines(True), str(target), "tables")
        )
        print(f"\n{target} is out of date: run `python -m worldagent.pipeline --write`", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
