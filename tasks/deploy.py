"""deploy (a side effect, run by the flows after the gate, or by hand): publish the gated candidate
and move the champion alias, or alert and keep the old champion.

Reads the gate decision, the evaluation and the candidate artifact; never changes a DVC output.

    python -m tasks.deploy                          # the world-agent policy
    python -m tasks.deploy --family intervention    # the intervention predictor

Exit 2 on bad params or input, 1 when publishing failed or (with CI set) the gate rejected the candidate.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from worldagent.config import load_params
from worldagent.errors import RunError, clean_errors
from worldagent.intervention.deploy import deploy_predictor
from worldagent.registry.api import RegistryError
from worldagent.registry.deploy import DeployError, deploy, log_alert
from worldagent.registry.publishers import PublishError

Alert = Callable[[str], None]


def deploy_world_agent(root: Path, alert: Alert = log_alert, params_path: str = "params.yaml") -> dict[str, Any]:
    return deploy(load_params(root / params_path), root, alert=alert).to_dict()


def deploy_intervention(root: Path, alert: Alert = log_alert, params_path: str = "params.yaml") -> dict[str, Any]:
    return deploy_predictor(load_params(root / params_path), root, alert=alert).to_dict()


FAMILIES: Mapping[str, Callable[..., dict[str, Any]]] = {
    "world-agent": deploy_world_agent,
    "intervention": deploy_intervention,
}


def is_ci(env: Mapping[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get("CI", "")
    return value.strip().lower() in ("1", "true", "yes")


@clean_errors
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=sorted(FAMILIES), default="world-agent", help="model family")
    parser.add_argument("--params", default="params.yaml", help="parameters file, relative to --root")
    parser.add_argument("--root", default=".", type=Path, help="project root")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", force=True)
    try:
        result = FAMILIES[args.family](args.root, params_path=args.params)
    except DeployError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (PublishError, RegistryError) as error:
        raise RunError(str(error)) from None
    print(json.dumps(result, ensure_ascii=False))
    if result["action"] == "rejected" and is_ci():
        print("error: the gate failed; the champion was kept (non-zero exit because CI is set)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
