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
import os
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.context import get_run_context
from prefect.task_runners import ThreadPoolTaskRunner

from flows._prefect_env import explain_prefect_start, one_server_for_local_workers
from worldagent.config import load_params
from worldagent.errors import InputError, RunError, clean_errors
from worldagent.io import read_json, read_text_file
from worldagent.pipeline.costs import (
    DEFAULT_LEDGER,
    PeakMemoryWatch,
    StepCost,
    append_ledger,
    cost_table,
    read_ledger,
)
from worldagent.pipeline.plan import StagePlan, plan_dict, progress_line
from worldagent.pipeline.table import Pipeline, SideEffect, Stage
from worldagent.preflight import check_precision, precision_note, reads_precision, recorded_precisions, run_plan
from worldagent.registry.champion import read_champion_reference, refresh_champion_reference
from worldagent.registry.db import database_url

log = logging.getLogger("flows")
ALERT_EVENT = "worldagent.deploy.alert"
SEQUENTIAL = ThreadPoolTaskRunner(max_workers=1)


def dvc_repro(stage: str, root: Path, lock_wait_s: float = 900.0) -> list[str]:
    """Run one stage through DVC (``dvc repro --single-item``); the names of the stages DVC ran.

    DVC holds its repository lock only while it checks and records a stage, not while the stage's
    command runs, so independent stages can run at once; a stage that finds the lock taken, or an
    input another stage is still writing (DVC's per-path lock), waits for it (DVC itself gives up
    after 3 s) instead of failing the run.
    """
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    deadline = time.monotonic() + lock_wait_s
    while True:
        try:
            with Repo(str(root)) as repo:
                # DVC resolves a bare stage name against the working directory: address the file.
                ran = repo.reproduce(f"{Path(root).resolve() / 'dvc.yaml'}:{stage}", single_item=True)
            return [item.name for item in ran]
        except DvcException as error:
            if not _is_lock_error(error):
                # DVC's exceptions do not survive pickling (a Dask worker's result): keep the message.
                cause = f": {error.__cause__}" if error.__cause__ else ""
                raise RunError(f"dvc repro {stage} failed: {error}{cause}") from None
            if time.monotonic() > deadline:
                raise RunError(f"{stage}: DVC's lock stayed taken for {lock_wait_s:.0f} s: {error}") from None
            time.sleep(1.0 + random.random())


def _is_lock_error(error: BaseException) -> bool:
    """A lock DVC could not take: its repository lock, or (wrapped in its reproduction error) the
    per-path lock on a file another stage is writing."""
    from dvc.lock import LockError

    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, LockError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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

        emit_event(
            event=ALERT_EVENT, resource={"prefect.resource.id": "worldagent.deploy"}, payload={"message": message}
        )
        create_markdown_artifact(
            key="deploy-alert", markdown=f"## Deploy alert\n\n{message}\n", description="deploy alert"
        )
    except Exception as error:  # noqa: BLE001 - an alert must never hide the original outcome
        log.warning("could not emit the Prefect alert: %s", error)


def _on_failure(task_obj: Any, task_run: Any, state: Any) -> None:
    """A crashed side effect is an alert too."""
    alert(f"task {getattr(task_run, 'name', '?')} failed: {getattr(state, 'message', state)}")


def _resolve(entry: str) -> Callable[..., Any]:
    module, _, function = entry.partition(":")
    return getattr(importlib.import_module(module), function)


def run_stage(
    name: str,
    root: Path,
    family: str,
    run: str,
    plan: Sequence[dict[str, Any]] = (),
    profile: str | None = None,
) -> dict[str, Any]:
    """``dvc_repro(name)``: ``{"ran": the stages DVC ran, "cost": its StepCost as a dict}``. The cost
    goes into the ledger at once, as a partial line of ``family``'s run ``run`` (of ``profile``), so
    a run stopped later still says what this stage cost; with the run's ``plan``
    (:func:`worldagent.pipeline.plan.plan_dict`), a progress line says how much time is left."""
    started = time.monotonic()
    with PeakMemoryWatch() as watch:
        ran = dvc_repro(name, root)
    cost = StepCost(
        step=name, ran=name in ran, seconds=round(time.monotonic() - started, 1), peak_rss_bytes=watch.peak_bytes
    )
    ledger = root / DEFAULT_LEDGER
    append_ledger(ledger, family, datetime.now(UTC), [cost], run=run, complete=False, profile=profile)
    if plan:
        try:
            print(progress(plan, ledger, run, family, cost))
        except InputError as error:  # a ledger line someone broke must not fail a stage that ran
            log.warning("no progress line: %s", error)
    return {"ran": ran, "cost": cost.to_dict()}


def progress(plan: Sequence[dict[str, Any]], ledger: Path, run: str, family: str, cost: StepCost) -> str:
    """The progress line after ``cost``'s stage: the stages of run ``run`` the ledger has (every
    family's, whichever process ran them) are done; the plan's other stages are what is left."""
    done = {
        (record["family"], step["step"])
        for record in read_ledger(ledger)
        if record.get("run") == run
        for step in record["steps"]
    }
    stages = [StagePlan(**stage) for stage in plan]
    return progress_line(stages, done, family, cost.step, cost.seconds, cost.ran)


def run_side_effect(entry: str, root: Path, is_deploy: bool) -> dict[str, Any]:
    """``entry(params, root)`` (a deploy also gets the flow's alert); its result as a dict."""
    function = _resolve(entry)
    params = load_params(root / "params.yaml")
    result = function(params, root, alert=alert) if is_deploy else function(params, root)
    return result.to_dict() if hasattr(result, "to_dict") else result


def stage_task(stage: Stage) -> Any:
    """A task that runs ``stage`` through DVC. DVC decides whether it must run, so Prefect caches nothing."""
    return task(run_stage, name=stage.name, description=stage.description, retries=0, cache_policy=NONE)


def side_effect_task(step: SideEffect) -> Any:
    options = {"name": step.name, "description": step.description, "retries": step.retries}
    return task(run_side_effect, **options, cache_policy=NONE, on_failure=[_on_failure])


@task(name="pin_champion", cache_policy=NONE)
def pin_champion(champion: str, registry_family: str, root: Path) -> dict[str, Any]:
    """Pin the registry's current champion in the family's champion reference (when it moved)."""
    params = load_params(root / "params.yaml")
    section, _, key = registry_family.partition(".")
    family = getattr(getattr(params, section), key)
    url = database_url(params.registry.url, root)
    moved = refresh_champion_reference(url, family, root / champion)
    reference = read_champion_reference(root / champion)
    get_run_logger().info("champion reference %s: %s", "moved" if moved else "unchanged", reference)
    return reference


def upstream(pipeline: Pipeline, step: Stage | SideEffect) -> list[str]:
    """The steps ``step`` waits for: the stages that make its inputs (a side effect: every step before it)."""
    before = pipeline.steps[: pipeline.steps.index(step)]
    if isinstance(step, SideEffect):
        return [earlier.name for earlier in before]
    wanted = set(step.inputs.values())
    return [
        earlier.name
        for earlier in before
        if isinstance(earlier, Stage)
        and wanted & {*earlier.outputs.values(), *earlier.reports.values(), *earlier.metrics.values()}
    ]


def submit_pipeline(
    pipeline: Pipeline,
    root: Path,
    deploy: bool,
    run: str,
    plan: Sequence[dict[str, Any]] = (),
    profile: str | None = None,
) -> dict[str, Any]:
    """Submit every step of ``pipeline`` to the flow's task runner, each after the steps it needs;
    ``run`` names this run in the ledger, ``plan`` and ``profile`` go to each stage (:func:`run_stage`)."""
    futures: dict[str, Any] = {"pin_champion": pin_champion.submit(pipeline.champion, pipeline.registry_family, root)}
    for step in pipeline.steps:
        if isinstance(step, SideEffect) and step.name.endswith("deploy") and not deploy:
            continue
        waits = [futures[name] for name in upstream(pipeline, step) if name in futures]
        if isinstance(step, Stage) and pipeline.champion in step.inputs.values():
            waits.append(futures["pin_champion"])
        if isinstance(step, Stage):
            futures[step.name] = stage_task(step).submit(
                step.name, root, pipeline.family, run, plan, profile, wait_for=waits
            )
        else:
            is_deploy = step.name.endswith("deploy")
            futures[step.name] = side_effect_task(step).submit(step.entry, root, is_deploy, wait_for=waits)
    return futures


def collect(
    pipeline: Pipeline, root: Path, futures: dict[str, Any], run: str, profile: str | None = None
) -> dict[str, Any]:
    """``{recomputed, champion, gate, costs, <side effects>}`` of a submitted pipeline, once it
    finished; what each stage cost is logged, kept as a Prefect artifact and appended to the ledger
    as run ``run``'s whole record."""
    recomputed: list[str] = []
    costs: list[StepCost] = []
    effects: dict[str, Any] = {}
    for step in pipeline.steps:
        if step.name not in futures:
            continue
        result = futures[step.name].result()
        if isinstance(step, Stage):
            recomputed += [name for name in result["ran"] if name not in recomputed]
            costs.append(StepCost(**result["cost"]))
        else:
            effects[step.name] = result
    logger = get_run_logger()
    logger.info("%s: stages recomputed: %s", pipeline.family, ", ".join(recomputed) or "none")
    table = cost_table(costs)
    logger.info("%s: what each stage cost (ledger: %s):\n%s", pipeline.family, DEFAULT_LEDGER, table)
    create_markdown_artifact(markdown=table, key=f"{pipeline.family}-costs", description="wall time and peak memory")
    append_ledger(root / DEFAULT_LEDGER, pipeline.family, datetime.now(UTC), costs, run=run, profile=profile)
    report = root / pipeline.report
    if report.exists():
        create_markdown_artifact(markdown=read_text_file(report, "the report"), key=f"{pipeline.family}-report")
    decision = read_json(root / pipeline.gate, "the gate decision", expect=dict)
    champion = futures["pin_champion"].result()
    return {
        "recomputed": recomputed,
        "champion": champion,
        "gate": decision,
        "costs": [cost.to_dict() for cost in costs],
        **effects,
    }


def preflight(pipelines: Sequence[Pipeline], root: Path, warn: bool = True) -> None:
    """Stop before any stage when one of them would run many times slower here than intended
    (``worldagent.preflight``): only a family whose stages read ``model.dtype`` or ``evaluate.dtype``
    is held to it. A precision other than the committed run's is a warning (``warn``): the run goes on."""
    if any(isinstance(step, Stage) and reads_precision(step) for pipeline in pipelines for step in pipeline.steps):
        params = load_params(root / "params.yaml")
        check_precision(params.model, params.evaluate, root / "params.yaml")
        if warn and (note := precision_note(params.model, recorded_precisions(pipelines, root))):
            log.warning(note)


def run_pipelines(pipelines: Sequence[Pipeline], root: Path, deploy: bool) -> dict[str, dict[str, Any]]:
    """Every family's steps at once, as far as the flow's task runner allows; results by family."""
    preflight(pipelines, root)
    profile, plan, text = run_plan(pipelines, root)
    (get_run_logger() if _in_prefect_run() else log).info("the run's plan:\n%s", text)
    stages = plan_dict(plan)
    run = datetime.now(UTC).isoformat(timespec="seconds")  # the run's name in the ledger
    submitted = {
        pipeline.family: submit_pipeline(pipeline, root, deploy, run, stages, profile) for pipeline in pipelines
    }
    return {
        pipeline.family: collect(pipeline, root, submitted[pipeline.family], run, profile) for pipeline in pipelines
    }


def task_runner(root: Path) -> Any:
    """The task runner ``orchestrate`` in params.yaml asks for."""
    settings = load_params(root / "params.yaml").orchestrate
    if settings.task_runner == "sequential":
        return SEQUENTIAL
    from prefect_dask import DaskTaskRunner

    if settings.dask_address:
        return DaskTaskRunner(address=settings.dask_address)
    cluster = {"n_workers": settings.dask_workers, "threads_per_worker": 1, "processes": True}
    return DaskTaskRunner(cluster_kwargs=cluster)


def run_flow(pipeline_flow: Any, root: Path, deploy: bool) -> Any:
    """``pipeline_flow(root, deploy)`` on the task runner params.yaml names; a local Dask cluster's
    workers share the flow's temporary Prefect server (``one_server_for_local_workers``)."""
    settings = load_params(root / "params.yaml").orchestrate
    local_workers = settings.task_runner == "dask" and not settings.dask_address
    with one_server_for_local_workers(local_workers):
        return pipeline_flow.with_options(task_runner=task_runner(root))(root=str(root), deploy=deploy)


def family_flow(pipeline: Pipeline) -> Any:
    """The Prefect flow of one family: ``flow(root=".", deploy=True)``."""

    def run(root: str = ".", deploy: bool = True) -> dict[str, Any]:
        return run_pipelines([pipeline], Path(root), deploy)[pipeline.family]

    description = f"The {pipeline.family} DAG from its stage table."
    # One stage at a time unless flow_main (params.yaml's orchestrate) picks another runner.
    return flow(run, name=pipeline.family, log_prints=True, description=description, task_runner=SEQUENTIAL)


@clean_errors
@explain_prefect_start
def flow_main(
    description: str, pipeline_flow: Any, pipelines: Sequence[Pipeline], argv: list[str] | None = None
) -> int:
    """``python -m flows.<name>``: run the flow of ``pipelines`` once, on the task runner params.yaml
    names, and print its result."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--root", default=".", help="project root; the flow runs from there (default: .)")
    parser.add_argument("--no-deploy", action="store_true", help="stop after the gate")
    args = parser.parse_args(argv)
    # DVC resolves paths against the working directory, and so do Dask workers started from here.
    os.chdir(args.root)
    # Before Prefect's server starts: a setting that cannot run here is one line, not a failed flow run.
    preflight(pipelines, Path("."), warn=False)  # the flow's own preflight warns, once
    print(run_plan(pipelines, Path("."))[2], flush=True)  # before Prefect's server starts: what this run will cost
    result = run_flow(pipeline_flow, Path("."), deploy=not args.no_deploy)
    print(json.dumps(result, indent=2, default=str))
    return 0
