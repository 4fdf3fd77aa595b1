"""What DVC reruns, checked with real DVC on a copy of the project: orchestration changes rerun
nothing, a library change reruns the stages that import it (and what reads their outputs), a moved
champion reruns what compares with it. Outputs are placeholders recorded with `dvc commit`, so nothing trains."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.harness import copy_project, dvc
from worldagent.config import load_params
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.table import Stage, interpolate
from worldagent.pipeline.world_agent import PIPELINE as WORLD_AGENT

pytestmark = pytest.mark.slow


def would_run(root: Path) -> list[str]:
    """The stages `dvc repro --dry` would run, sorted: those whose own dependencies changed (a dry
    run changes no output, so the stages after them, which DVC reruns when it does, are not listed)."""
    return sorted(re.findall(r"Running stage '([a-z_]+)'", dvc(root, "repro", "--dry", "--all-pipelines")))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = copy_project(tmp_path, {}, ("button",))
    params = load_params(root / "params.yaml")
    for pipeline in PIPELINES:
        for stage in pipeline.stages:
            for path in [*stage.outputs.values(), *stage.reports.values(), *stage.metric_files]:
                target = root / interpolate(path, params)
                target.parent.mkdir(parents=True, exist_ok=True)
                if Path(path).suffix:
                    target.write_text(f"placeholder {path}\n")
                else:
                    target.mkdir(exist_ok=True)
                    (target / "placeholder").write_text(path)
            for plot in stage.plot_files:
                target = root / plot.path
                if target.suffix:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text("placeholder\n")
                else:  # a DVCLive folder's curves
                    target.mkdir(parents=True, exist_ok=True)
                    (target / "placeholder.tsv").write_text("step\tplaceholder\n0\t0\n")
    dvc(root, "commit", "--force")
    assert would_run(root) == []
    return root


def test_orchestration_changes_rerun_nothing(project: Path) -> None:
    flow = project / "flows" / "world_agent.py"
    flow.write_text(flow.read_text() + "\n# a comment in a flow\n")
    table = project / "worldagent" / "pipeline" / "world_agent.py"
    table.write_text(table.read_text().replace("retries=2", "retries=5"))
    assert would_run(project) == []


def test_the_reward_module_reruns_the_stages_it_scores_and_what_follows(project: Path) -> None:
    rewards = project / "worldagent" / "world_agent" / "rewards.py"
    rewards.write_text(rewards.read_text() + "\n# a change to the reward\n")
    assert would_run(project) == ["experience", "grpo"]
    assert after(WORLD_AGENT.stage("grpo")) == ["evaluate_grpo", "evaluate", "compare", "gate"]


def test_a_new_evaluate_field_reruns_the_evaluation_only(project: Path) -> None:
    schema = project / "worldagent" / "config" / "evaluation.py"
    text = schema.read_text()
    field = "    batch_size: int = Field(default=8, gt=0)\n"
    assert field in text
    schema.write_text(text.replace(field, field + "    a_new_field: bool = False\n"))
    evaluations = [stage.name for stage in WORLD_AGENT.stages if stage.name.startswith("evaluate_")]
    # the stages that declare evaluate, compare or gate: no training stage, no intervention stage
    assert would_run(project) == sorted([*evaluations, "evaluate", "compare", "gate"])


def test_the_decoding_precision_regenerates_the_generating_evaluations_only(project: Path) -> None:
    params = project / "params.yaml"
    values = yaml.safe_load(params.read_text())
    values["evaluate"]["dtype"] = "bfloat16" if values["evaluate"].get("dtype") != "bfloat16" else "float32"
    params.write_text(yaml.safe_dump(values, sort_keys=False))
    # not nearest or reference (they decode nothing), no trainer: training keeps model.dtype
    generating = ["base", "champion", "dpo", "experience", "grpo", "sft"]
    assert would_run(project) == [f"evaluate_{name}" for name in generating]


def test_a_new_trainer_field_reruns_the_trainers_only(project: Path) -> None:
    schema = project / "worldagent" / "config" / "training.py"
    schema.write_text(schema.read_text() + "\n# a change to the trainers' schema\n")
    assert would_run(project) == ["dpo", "experience", "grpo", "sft"]  # no evaluation is generated again


def test_a_moved_champion_reruns_what_compares_with_it(project: Path) -> None:
    champion = project / "models" / "world_agent" / "champion.json"
    champion.write_text('{"family": "world-agent", "version": 3, "artifact_path": "p", "artifact_hash": "h"}\n')
    assert would_run(project) == ["evaluate_champion"]  # no other model is generated again
    assert after(WORLD_AGENT.stage("evaluate_champion")) == ["evaluate", "compare", "gate"]


def after(stage: Stage) -> list[str]:
    """The stages that read ``stage``'s outputs, directly or through another stage."""
    made = {*stage.outputs.values(), *stage.reports.values(), *stage.metrics.values()}
    followers: list[str] = []
    for later in WORLD_AGENT.stages[WORLD_AGENT.stages.index(stage) + 1 :]:
        if made & set(later.inputs.values()):
            followers.append(later.name)
            made |= {*later.outputs.values(), *later.reports.values(), *later.metrics.values()}
    return followers
