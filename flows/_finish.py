"""What every model family's flow does after its DVC stages: log what ran, attach the report, read
the gate, deploy (or not); and the flows' shared command line."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact


def finish_run(
    project: Path,
    ran: Mapping[str, Sequence[str]],
    report: Path,
    gate: Path,
    artifact_key: str,
    artifact_description: str,
    deploy_task: Callable[[Path], dict[str, Any]] | None,
) -> dict[str, Any]:
    """``{recomputed, gate, deploy}`` of a flow run whose stages returned the DVC stages they ran."""
    recomputed = sorted({stage for stages in ran.values() for stage in stages})
    get_run_logger().info("stages recomputed: %s", ", ".join(recomputed) or "none (everything up to date)")
    if (project / report).exists():
        create_markdown_artifact(markdown=(project / report).read_text(encoding="utf-8"), key=artifact_key, description=artifact_description)
    decision = json.loads((project / gate).read_text(encoding="utf-8"))
    deployed = deploy_task(project) if deploy_task is not None else {"skipped": "deploy=False"}
    return {"recomputed": recomputed, "gate": decision, "deploy": deployed}


def flow_main(description: str, pipeline: Callable[..., dict[str, Any]], argv: list[str] | None = None) -> int:
    """``python -m flows.<family>``: run the flow once and print its result as JSON."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--root", default=".", help="project root (default: .)")
    parser.add_argument("--no-deploy", action="store_true", help="stop after the gate")
    args = parser.parse_args(argv)
    result = pipeline(root=args.root, deploy=not args.no_deploy)
    print(json.dumps(result, indent=2, default=str))
    return 0
