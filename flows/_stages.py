"""The flows' shared machinery: a family's stage table becomes Prefect tasks, run in the table's order.

A file-to-file stage runs through DVC (``dvc repro <stage>``), so after a flow run ``dvc status`` is
clean and nothing is computed twice; a side effect (upload, deploy) is a plain task. Retries,
alerts and artifacts live here, never in code a DVC stage depends on.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.context import get_run_context

from worldagent.config import load_params
from worldagent.pipeline.table import Pipeline, SideEffect, Stage
from worldagent.registry.api import open_registry
from worldagent.registry.champion import champion_reference, write_champion_reference
from worldagent.registry.deploy import resolve_registry_url

log = logging.getLogger("flows")
ALERT_EVENT = "worldagent.deploy.alert"


def dvc_repro(stage: str, root: Path) -> list[str]:
    """Run one stage (and what it depends on) through DVC; the names of the stages DVC actually ran."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        ran = repo.reproduce(stage)
    return [str(getattr(item, "addressing", item)) for item in ran]


def _in_prefect_run() -> bool:
    try:
        get_run_context()
    except Exception:  # noqa: BLE001 - MissingContextError: called outside a flow
        return False
    return True


def alert(message: str) -> None:
    """Log at ERROR; inside a Prefect run also emit an event (for Automations/notifications) and an artifact."""
    log.error("ALERT: %s", message)
    if not _in_prefect_run():
        return
    try:
        from prefect.events import emit_event

        emit_event(event=ALERT_EVENT, resource={"prefect.resource.id": "worldagent.deploy"}, payload={"message": message})
        create_markdown_artifact(key="deploy-alert", markdown=f"## Deploy alert\n\n{message}\n", description="deploy alert")
    except Exception as error:  # noqa: BLE001 - an alert must never hide the original outcome
        log.warning("could not emit the Prefect alert: %s", error)


def _on_failure(task_obj: Any, task_run: Any, state: Any) -> None:
    """A crashed side effect is an alert too."""
    alert(f"task {getattr(task_run, 'name', '?')} failed: {getattr(state, 'message', state)}")


def _resolve(entry: str) -> Callable[..., dict[str, Any]]:
    module, _, function = entry.partition(":")
    return getattr(importlib.import_module(module), function)


def stage_task(stage: Stage) -> Any:
    return task(name=stage.name, description=stage.description, retries=0)(lambda root: dvc_repro(stage.name, root))


def side_effect_task(step: SideEffect) -> Any:
    function = _resolve(step.entry)

    def run(root: Path) -> dict[str, Any]:
        if step.name.endswith("deploy"):
            return function(root, alert=alert)
        return function(root)

    return task(name=step.name, description=step.description, retries=step.retries, on_failure=[_on_failure])(run)


@task(name="pin_champion")
def pin_champion(pipeline: Pipeline, root: Path) -> dict[str, Any]:
    """Write the registry's current champion into the family's champion reference (when it moved)."""
    params = load_params(root / "params.yaml")
    section, _, key = pipeline.registry_family.partition(".")
    family = getattr(getattr(params, section), key)
    with open_registry(resolve_registry_url(params.registry.url, root)) as registry:
        reference = champion_reference(registry, family)
    changed = write_champion_reference(root / pipeline.champion, reference)
    get_run_logger().info("champion reference %s: %s", "moved" if changed else "unchanged", reference)
    return reference


def run_pipeline(pipeline: Pipeline, root: Path, deploy: bool) -> dict[str, Any]:
    """Every step of ``pipeline`` in the table's order; ``{recomputed, gate, champion, <side effects>}``."""
    logger = get_run_logger()
    champion = pin_champion(pipeline, root)
    recomputed: list[str] = []
    effects: dict[str, Any] = {}
    for step in pipeline.steps:
        if isinstance(step, Stage):
            recomputed += [name for name in stage_task(step)(root) if name not in recomputed]
        elif deploy or not step.name.endswith("deploy"):
            effects[step.name] = side_effect_task(step)(root)
    logger.info("stages recomputed: %s", ", ".join(recomputed) or "none (everything up to date)")
    report = root / pipeline.report
    if report.exists():
        create_markdown_artifact(markdown=report.read_text(encoding="utf-8"), key=f"{pipeline.family}-report")
    decision = json.loads((root / pipeline.gate).read_text(encoding="utf-8"))
    return {"recomputed": recomputed, "champion": champion, "gate": decision, **effects}


def family_flow(pipeline: Pipeline) -> Any:
    """The Prefect flow of one family: ``flow(root=".", deploy=True)``."""

    def run(root: str = ".", deploy: bool = True) -> dict[str, Any]:
        return run_pipeline(pipeline, Path(root), deploy)

    return flow(name=pipeline.family, log_prints=True, description=f"The {pipeline.family} DAG from its stage table.")(run)


def flow_main(description: str, pipeline_flow: Callable[..., dict[str, Any]], argv: list[str] | None = None) -> int:
    """``python -m flows.<family>``: run the flow once and print its result as JSON."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--root", default=".", help="project root (default: .)")
    parser.add_argument("--no-deploy", action="store_true", help="stop after the gate")
    args = parser.parse_args(argv)
    result = pipeline_flow(root=args.root, deploy=not args.no_deploy)
    print(json.dumps(result, indent=2, default=str))
    return 0
