"""deploy (Prefect-only side effect): publish the gated candidate and move the champion, or alert.

Reads reports/world_agent/gate.json, reports/world_agent/eval.json and models/world_agent/<candidate>/;
never changes a DVC output. `python -m tasks.deploy` runs it by hand (exit 1 in CI when the gate failed).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import task

from worldagent.config import ParamsError, load_params
from worldagent.registry.api import RegistryError
from worldagent.registry.deploy import DeployError
from worldagent.registry.deploy import deploy_world_agent as deploy
from worldagent.registry.publishers import PublishError

log = logging.getLogger("deploy")
ALERT_EVENT = "worldagent.deploy.alert"


def _in_prefect_run() -> bool:
    try:
        from prefect.context import get_run_context

        get_run_context()
    except Exception:  # noqa: BLE001 - MissingContextError or no Prefect at all
        return False
    return True


def alert(message: str) -> None:
    """Log at ERROR; inside a Prefect run also emit an event (for Automations/notifications) and an artifact."""
    log.error("ALERT: %s", message)
    if not _in_prefect_run():
        return
    try:
        from prefect.artifacts import create_markdown_artifact
        from prefect.events import emit_event

        emit_event(event=ALERT_EVENT, resource={"prefect.resource.id": "worldagent.deploy"}, payload={"message": message})
        create_markdown_artifact(key="deploy-alert", markdown=f"## Deploy alert\n\n{message}\n", description="world-agent deploy alert")
    except Exception as error:  # noqa: BLE001 - an alert must never hide the original outcome
        log.warning("could not emit the Prefect alert: %s", error)


def _on_failure(task_obj: Any, task_run: Any, state: Any) -> None:
    """Prefect on_failure hook: a crashed deploy is an alert too."""
    alert(f"deploy task {getattr(task_run, 'name', '?')} failed: {getattr(state, 'message', state)}")


def is_ci(env: dict[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get("CI", "")
    return value.strip().lower() in ("1", "true", "yes")


@task(name="deploy", retries=0, on_failure=[_on_failure])
def deploy_task(root: Path = Path("."), params_path: str = "params.yaml", fail_on_reject: bool = False) -> dict[str, Any]:
    """Deploy the gated candidate; with ``fail_on_reject`` a failed gate fails the task (and its hook alerts)."""
    params = load_params(Path(root) / params_path if not Path(params_path).is_absolute() else params_path)
    result = deploy(params, Path(root), alert=alert).to_dict()
    if _in_prefect_run():
        try:
            from prefect.artifacts import create_markdown_artifact

            create_markdown_artifact(key="deploy", markdown=_markdown(result), description="world-agent deploy result")
        except Exception as error:  # noqa: BLE001
            log.warning("could not create the deploy artifact: %s", error)
    if fail_on_reject and result["action"] == "rejected":
        raise RuntimeError(f"gate failed: {'; '.join(result['reasons']) or 'no reasons given'}")
    return result


def _markdown(result: dict[str, Any]) -> str:
    lines = [f"## Deploy: {result['action']}", "", f"- family: {result['family']}", f"- version: v{result['version']}"]
    lines.append(f"- champion: {'v' + str(result['champion']) if result['champion'] else 'none'}")
    if result.get("published"):
        lines.append(f"- published: {result['published'].get('uri')}")
    lines += [f"- reason: {reason}" for reason in result["reasons"]]
    return "\n".join(lines) + "\n"


def deploy_main(description: str, run: Callable[..., Any], argv: list[str] | None = None) -> int:
    """The by-hand deploy command of a model family: exit 2 on bad params, 1 when publishing failed
    or (in CI) the gate rejected the candidate."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--params", default="params.yaml", help="parameters file (default: params.yaml)")
    parser.add_argument("--root", default=".", help="project root that relative paths in params are resolved against")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    try:
        result = run(load_params(args.params), Path(args.root), alert=alert).to_dict()
    except (ParamsError, DeployError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (PublishError, RegistryError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result, ensure_ascii=False))
    if result["action"] == "rejected" and is_ci():
        print("error: the gate failed; the champion was kept (non-zero exit because CI is set)", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    return deploy_main(__doc__.splitlines()[0], deploy, argv)


if __name__ == "__main__":
    raise SystemExit(main())
