"""The weekly world-agent run on a GPU worker (the Prefect work pool ``gpu``; prefect.yaml's
``weekly-gpu`` deployment, which .github/workflows/train.yml submits when a Prefect server is
configured). The worker runs in its own clone, so the state a hosted runner handles around the
flow is handled here, in order:

1. check out ``ref`` (the commit the workflow ran for; none: the clone as it is);
2. pull last week's state: DVC outputs and run cache (``dvc pull --run-cache --allow-missing``);
3. switch the clone's params.yaml to ``profile`` (``gpu``: the full budgets laid out for one GPU);
   the committed params.yaml stays the ``cpu`` profile's, and the next checkout restores it;
4. the world-agent DAG (``flows.world_agent``'s stages, the gate against the registry's champion,
   the deploy when ``deploy``);
5. push this week's state (``dvc push --run-cache``) when ``push``.

    python -m flows.gpu --ref origin/main --no-push       # by hand, on a GPU machine
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from flows._stages import SEQUENTIAL, run_pipelines
from worldagent.errors import RunError, clean_errors
from worldagent.pipeline.world_agent import PIPELINE


def before_commands(ref: str | None, profile: str, pull: bool) -> list[list[str]]:
    """Steps 1-3 as commands, run from the clone's root."""
    commands: list[list[str]] = []
    if ref:
        commands += [["git", "fetch", "--quiet", "origin"], ["git", "checkout", "--quiet", "--force", "--detach", ref]]
    if pull:
        commands.append([sys.executable, "-m", "dvc", "pull", "--run-cache", "--allow-missing"])
    commands.append([sys.executable, "-m", "worldagent.cli", "profile", "use", profile])
    return commands


def after_commands(push: bool) -> list[list[str]]:
    """Step 5 as commands."""
    return [[sys.executable, "-m", "dvc", "push", "--run-cache"]] if push else []


def run_command(command: Sequence[str], root: Path) -> None:
    done = subprocess.run(list(command), cwd=root, check=False)
    if done.returncode != 0:
        raise RunError(f"{' '.join(command)} failed with exit status {done.returncode} (in {root})")


@flow(name="world-agent-gpu", log_prints=True, task_runner=SEQUENTIAL)
def gpu_pipeline(
    root: str = ".",
    ref: str | None = None,
    profile: str = "gpu",
    deploy: bool = True,
    pull: bool = True,
    push: bool = True,
) -> dict[str, Any]:
    """Steps 1-5 of the module docstring; the world-agent flow's result."""
    where = Path(root)
    for command in before_commands(ref, profile, pull):
        get_run_logger().info("$ %s", " ".join(command))
        run_command(command, where)
    result = run_pipelines([PIPELINE], where, deploy)[PIPELINE.family]
    for command in after_commands(push):
        get_run_logger().info("$ %s", " ".join(command))
        run_command(command, where)
    return result


@clean_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The weekly world-agent run on a GPU worker.")
    parser.add_argument("--root", default=".")
    parser.add_argument("--ref", default=None, help="check out this commit first (default: the clone as it is)")
    parser.add_argument("--profile", default="gpu")
    parser.add_argument("--no-deploy", action="store_true")
    parser.add_argument("--no-pull", action="store_true")
    parser.add_argument("--no-push", action="store_true")
    args = parser.parse_args(argv)
    result = gpu_pipeline(
        root=args.root,
        ref=args.ref,
        profile=args.profile,
        deploy=not args.no_deploy,
        pull=not args.no_pull,
        push=not args.no_push,
    )
    print(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
