"""intervention_deploy (Prefect-only side effect): publish the gated predictor and move the champion, or alert.

Reads reports/intervention/gate.json, evaluation_metrics.json and models/intervention/predictor/;
never changes a DVC output. `python -m tasks.intervention_deploy` runs it by hand (exit 1 in CI
when the gate failed).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from prefect import task

from tasks.deploy import _in_prefect_run, _on_failure, alert, deploy_main
from worldagent.config import load_params
from worldagent.registry.deploy import deploy_intervention as deploy_predictor

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
    return deploy_main(__doc__.splitlines()[0], deploy_predictor, argv)


if __name__ == "__main__":
    raise SystemExit(main())
