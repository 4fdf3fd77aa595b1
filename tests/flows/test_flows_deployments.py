"""prefect.yaml: every deployment's entrypoint is a flow of this project, on a declared work pool."""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect.flows import Flow, load_flow_from_entrypoint

PROJECT = Path(__file__).resolve().parents[2]


def test_every_deployment_loads_its_flow_and_names_a_work_pool() -> None:
    project = yaml.safe_load((PROJECT / "prefect.yaml").read_text())
    deployments = {d["name"]: d for d in project["deployments"]}
    assert {"weekly", "weekly-gpu"} <= deployments.keys()
    for deployment in deployments.values():
        path, _, name = deployment["entrypoint"].partition(":")
        assert isinstance(load_flow_from_entrypoint(str(PROJECT / path) + ":" + name), Flow)
        assert deployment["work_pool"]["name"]
    assert deployments["weekly-gpu"]["work_pool"]["name"] == "gpu"
