"""intervention_deploy (Prefect-only side effect): publish the gated predictor and move the champion, or alert.

Reads reports/intervention/gate.json, evaluation_metrics.json and models/intervention/predictor/;
never changes a DVC output. `python -m tasks.intervention_deploy` runs it by hand (exit 1 in CI
when the gate failed).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from prefect import task

from tasks.deploy import _in_prefect_run, _on_failure, alert, is_ci
from worldagent.config import ParamsError, load_params
from worldagent.intervention.deploy import deploy_predictor
from worldagent.registry.api import RegistryError
from worldagent.registry.deploy import DeployError
from worldagent.registry.publishers import PublishError

log = logging.getLogger("intervention_deploy")


@task(name="intervention_deploy", retries=0, on_failure=[_on_failure])
def intervention_deploy_task(root: Path = Path("."), params_path: str = "params.yaml") -> dict[str, Any]:
    params = load_params(Path(root) / params_path if not Path(params_path).is_absolute() else params_path)
    result = deploy_predictor(params, Path(root), alert=alert).to_dict()
    if _in_prefect_run():
        try:
            from prefect.artifacts import create_markdown_artifact

            lines = [f"## Intervention predictor deploy: {result['action']}", "", f"- version: v{result['version']}", f"- champion: {result['champion']}"]
            create_markdown_artifact(key="intervention-deploy", markdown="\n".join(lines + [f"- {r}" for r in result["reasons"]]) + "\n")
        except Exception as error:  # noqa: BLE001
            log.warning("could not create the deploy artifact: %s", error)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="params.yaml", help="parameters file (default: params.yaml)")
    parser.add_argument("--root", default=".", help="project root that relative paths in params are resolved against")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    try:
        result = deploy_predictor(load_params(args.params), Path(args.root), alert=alert).to_dict()
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


if __name__ == "__main__":
    raise SystemExit(main())
