"""The stage tables are the one declaration of every family's DAG: dvc.yaml, the stage commands and
the flows agree with them, and each stage depends on exactly the code it runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from worldagent.pipeline.deps import code_deps
from worldagent.pipeline.dvcfile import render
from worldagent.pipeline.entry import entry_module, keyword_arguments, path_arguments, resolve
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.table import Stage

PROJECT = Path(__file__).resolve().parents[2]
STAGES = [stage for pipeline in PIPELINES for stage in pipeline.stages]
SOURCES = ("${discover.stories_dir}",)  # inputs no stage makes: the user's stories and the champion references


def test_dvc_yaml_is_written_from_the_tables() -> None:
    committed = (PROJECT / "dvc.yaml").read_text(encoding="utf-8")
    assert committed == render(PIPELINES, PROJECT), (
        "dvc.yaml is out of date: run `python -m worldagent.pipeline --write`"
    )


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.name)
def test_each_entry_takes_exactly_the_paths_its_table_gives(stage: Stage) -> None:
    run = resolve(stage.entry)
    given = set(stage.arguments) | set(stage.options)
    assert set(path_arguments(run)) <= given, "the table leaves out an argument the function requires"
    assert given <= keyword_arguments(run), "the table gives an argument the function does not take"


def test_every_input_is_made_by_an_earlier_stage_or_is_a_source() -> None:
    for pipeline in PIPELINES:
        made: set[str] = set()
        for stage in pipeline.stages:
            for argument, path in stage.inputs.items():
                source = path in SOURCES or path == pipeline.champion or "${compare.candidate}" in path
                assert source or path in made, f"{stage.name}.{argument}: {path} is made by no earlier stage"
            made |= set(stage.outputs.values()) | set(stage.reports.values()) | set(stage.metrics.values())


def test_no_stage_depends_on_orchestration_code() -> None:
    for stage in STAGES:
        deps = code_deps(PROJECT, [entry_module(stage.entry)])
        assert not [dep for dep in deps if dep.startswith("flows/")], stage.name
        for dep in (dep for dep in deps if dep.endswith(".py")):
            tree = ast.parse((PROJECT / dep).read_text(encoding="utf-8"))
            imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
            imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
            assert not {name.split(".")[0] for name in imported} & {"prefect", "dvc"}, f"{stage.name}: {dep}"
            assert "worldagent.pipeline" not in imported, f"{stage.name}: {dep} imports the stage tables"


def test_the_reward_module_is_code_of_grpo_and_not_of_the_stages_before_it() -> None:
    reward = "worldagent/world_agent/rewards.py"
    world_agent = PIPELINES[0]
    assert reward in code_deps(PROJECT, [entry_module(world_agent.stage("grpo").entry)])
    for name in ("discover", "generate", "base", "sft", "dpo"):
        assert reward not in code_deps(PROJECT, [entry_module(world_agent.stage(name).entry)]), name


def test_the_champion_is_an_explicit_input_of_what_compares_with_it() -> None:
    for pipeline in PIPELINES:
        readers = [stage.name for stage in pipeline.stages if pipeline.champion in stage.inputs.values()]
        assert readers, f"{pipeline.family}: no stage reads the champion reference {pipeline.champion}"
