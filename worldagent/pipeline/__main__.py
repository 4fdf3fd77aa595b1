"""``python -m worldagent.pipeline [--write | --check | --args STAGE]``: dvc.yaml from the stage tables.

``--args STAGE`` prints a stage's path options, for launching its entry another way:

    accelerate launch --config_file configs/accelerate/multi_gpu.yaml -m worldagent.world_agent.stages.sft $(python -m worldagent.pipeline --args sft)
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from worldagent.config import load_params
from worldagent.pipeline.dvcfile import render
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.table import interpolate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("."), help="project root (default: .)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="write dvc.yaml")
    action.add_argument("--check", action="store_true", help="exit 1 with a diff when dvc.yaml is out of date")
    action.add_argument("--args", metavar="STAGE", help="print a stage's path options (params.yaml values filled in)")
    args = parser.parse_args(argv)
    if args.args:
        stages = {stage.name: stage for pipeline in PIPELINES for stage in pipeline.stages}
        if args.args not in stages:
            parser.error(f"no stage {args.args!r}; the stages are {', '.join(stages)}")
        params = load_params(args.root / "params.yaml")
        paths = {name: interpolate(path, params) for name, path in stages[args.args].arguments.items()}
        print(" ".join(f"--{name.replace('_', '-')} {path}" for name, path in paths.items()))
        return 0
    text = render(PIPELINES, args.root)
    target = args.root / "dvc.yaml"
    if args.write:
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    if args.check:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
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
