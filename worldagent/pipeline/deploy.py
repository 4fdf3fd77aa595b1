"""deploy (a side effect, run by the flows after the gate, or by hand): publish the gated candidate
and move the champion alias, or alert and keep the old champion.

Reads the gate decision, the evaluation and the candidate artifact where the stage tables put them;
never changes a DVC output.

    python -m worldagent.pipeline.deploy                          # the world-agent policy
    python -m worldagent.pipeline.deploy --family intervention    # the intervention predictor

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

from worldagent.config import Params, load_params
from worldagent.errors import clean_errors
from worldagent.evaluation.family import INTERVENTION, WORLD_AGENT
from worldagent.evaluation.gate import read_gate
from worldagent.pipeline import intervention, world_agent
from worldagent.registry.deploy import DeployError, DeployResult, deploy


def deploy_world_agent(params: Params, root: Path = Path("."), **options: Any) -> DeployResult:
    """Deploy the world agent's candidate adapter (the gate's ``candidate``, else ``compare.candidate``)."""
    root = Path(root)
    gate_json = root / world_agent.GATE
    candidate = str(read_gate(gate_json, DeployError).get("candidate") or params.compare.candidate)
    return deploy(
        WORLD_AGENT,
        params,
        gate_json=gate_json,
        artifact_dir=root / world_agent.MODELS / candidate,
        metrics_json=root / world_agent.EVAL,
        data_manifest=root / world_agent.MANIFEST,
        root=root,
        **options,
    )


def deploy_intervention(params: Params, root: Path = Path("."), **options: Any) -> DeployResult:
    """Deploy the intervention predictor's bundle."""
    root = Path(root)
    return deploy(
        INTERVENTION,
        params,
        gate_json=root / intervention.GATE,
        artifact_dir=root / intervention.PREDICTOR,
        metrics_json=root / intervention.METRICS,
        data_manifest=root / intervention.MANIFEST,
        root=root,
        **options,
    )


FAMILIES: Mapping[str, Callable[..., DeployResult]] = {
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
    result = FAMILIES[args.family](load_params(args.root / args.params), args.root).to_dict()
    print(json.dumps(result, ensure_ascii=False))
    if result["action"] == "rejected" and is_ci():
        print("error: the gate failed; the champion was kept (non-zero exit because CI is set)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
