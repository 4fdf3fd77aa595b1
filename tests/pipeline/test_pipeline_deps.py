"""Code dependencies are computed from imports: relative, lazy, submodules, package data; of the
params schema (worldagent/config/), only the modules of the sections a stage declares."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from worldagent.config import EvaluateParams, GateParams, Params
from worldagent.pipeline.deps import code_deps, section_modules
from worldagent.pipeline.dvcfile import stage_code
from worldagent.pipeline.families import PIPELINES
from worldagent.pipeline.table import Stage
from worldagent.pipeline.world_agent import PIPELINE as WORLD_AGENT

PROJECT = Path(__file__).resolve().parents[2]
STAGES = [stage for pipeline in PIPELINES for stage in pipeline.stages]
CONFIG = "worldagent/config"
TRAINERS = ("sft", "experience", "dpo", "grpo")
EVALUATIONS = [stage for stage in WORLD_AGENT.stages if stage.name.startswith("evaluate_")]


def stage_deps(stage: Stage) -> list[str]:
    """What dvc.yaml lists as the stage's code: its entry's imports, with its declared params."""
    return stage_code(stage, PROJECT)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_imports_are_followed_transitively_relative_lazy_and_by_submodule(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "worldagent/jobs/__init__.py": "",
            "worldagent/jobs/train.py": "from worldagent.policy import sft\n",
            "worldagent/__init__.py": "",
            "worldagent/policy/__init__.py": "",
            "worldagent/policy/sft.py": "from . import helpers\n\ndef run():\n    from ..reward import score\n",
            "worldagent/policy/helpers.py": "import json\nimport torch\n",
            "worldagent/reward.py": "",
            "worldagent/unused.py": "",
            "worldagent/policy/notes.txt": "not named by any module",
        },
    )
    assert code_deps(tmp_path, ["worldagent.jobs.train"]) == sorted(
        [
            "worldagent/jobs/__init__.py",
            "worldagent/jobs/train.py",
            "worldagent/__init__.py",
            "worldagent/policy/__init__.py",
            "worldagent/policy/helpers.py",
            "worldagent/policy/sft.py",
            "worldagent/reward.py",
        ]
    )


def test_a_data_folder_a_module_names_beside_itself_is_a_dependency(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "worldagent/__init__.py": "",
            "worldagent/clip.py": 'from pathlib import Path\nCONFIGS = Path(__file__).parent / "clip_configs"\n',
            "worldagent/clip_configs/tiny.json": "{}",
            "worldagent/registry/__init__.py": "",
            "worldagent/io.py": 'KIND = "registry"  # names a subpackage, which is code, not data\n',
        },
    )
    assert "worldagent/clip_configs" in code_deps(tmp_path, ["worldagent.clip"])
    assert code_deps(tmp_path, ["worldagent.io"]) == ["worldagent/__init__.py", "worldagent/io.py"]


# -- the params schema: a stage depends on the config modules of the sections it declares ------------


@pytest.mark.parametrize("name", TRAINERS)
def test_a_training_stage_depends_on_the_training_config_and_not_on_the_evaluation_config(name: str) -> None:
    deps = stage_deps(WORLD_AGENT.stage(name))
    assert f"{CONFIG}/training.py" in deps
    assert f"{CONFIG}/evaluation.py" not in deps  # a new evaluate field never reruns training
    assert f"{CONFIG}/intervention.py" not in deps and f"{CONFIG}/specialists.py" not in deps


@pytest.mark.parametrize("stage", EVALUATIONS, ids=lambda stage: stage.name)
def test_an_evaluate_stage_depends_on_the_evaluation_config(stage: Stage) -> None:
    deps = stage_deps(stage)
    assert f"{CONFIG}/evaluation.py" in deps
    assert f"{CONFIG}/training.py" not in deps  # it declares no trainer section: the adapter is its input


def test_every_stage_depends_on_the_config_root_and_base_and_on_no_section_it_does_not_declare() -> None:
    root_and_base = {f"{CONFIG}/__init__.py", f"{CONFIG}/base.py"}
    for stage in STAGES:
        deps = {dep for dep in stage_deps(stage) if dep.startswith(f"{CONFIG}/")}
        declared = {
            module.replace(".", "/") + ".py" for module in section_modules(stage.params) - {"worldagent.config"}
        }
        assert root_and_base <= deps, stage.name
        assert deps - root_and_base == declared, stage.name


def test_every_section_a_stage_declares_maps_to_a_module_that_exists() -> None:
    for stage in STAGES:
        for key in stage.params:
            modules = section_modules([key])
            annotation = Params.model_fields[key.split(".")[0]].annotation
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):  # a root field (seed)
                assert modules == {"worldagent.config"}, key
                continue
            assert modules - {"worldagent.config"}, f"{stage.name}: {key} maps to no section module"
            for module in modules - {"worldagent.config"}:
                assert (PROJECT / (module.replace(".", "/") + ".py")).is_file(), f"{stage.name}: {key} -> {module}"


def test_the_section_modules_come_from_the_params_model_nested_sections_included() -> None:
    assert section_modules(["evaluate.max_new_tokens"]) == {"worldagent.config", "worldagent.config.evaluation"}
    assert section_modules(["evaluate"]) == section_modules(["evaluate.max_new_tokens"])
    assert section_modules(["seed"]) == {"worldagent.config"}
    # specialists nests a LoraParams (model) and an SftParams (training)
    assert section_modules(["specialists"]) == {
        "worldagent.config",
        "worldagent.config.specialists",
        "worldagent.config.model",
        "worldagent.config.training",
    }
    for name, field in Params.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            assert field.annotation.__module__ in section_modules([name]), name

    class Root(BaseModel):  # X | None and list[X] name X too
        maybe: EvaluateParams | None = None
        many: list[GateParams] = []

    assert section_modules(["maybe"], Root) == {"worldagent.config", "worldagent.config.evaluation"}
    assert section_modules(["many.x"], Root) == {"worldagent.config", "worldagent.config.evaluation"}


def test_a_key_of_no_section_is_an_error() -> None:
    with pytest.raises(ValueError, match="evalute"):
        section_modules(["evalute.max_new_tokens"])


def test_the_config_package_brings_in_only_the_declared_sections_and_a_direct_import_still_counts(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "worldagent/jobs/__init__.py": "",
            "worldagent/jobs/score.py": "from worldagent.config import Params\n",
            "worldagent/jobs/peek.py": "from worldagent.config import Params\nfrom worldagent.config.training import SftParams\n",
            "worldagent/__init__.py": "",
            "worldagent/errors.py": "",
            "worldagent/config/__init__.py": (
                "from worldagent.config.base import Section\n"
                "from worldagent.config.evaluation import EvaluateParams\n"
                "from worldagent.config.training import SftParams\n"
                "from worldagent.errors import InputError\n"
            ),
            "worldagent/config/base.py": "",
            "worldagent/config/evaluation.py": "from worldagent.config.base import Section\n",
            "worldagent/config/training.py": "from worldagent.config.base import Section\n",
        },
    )
    root_and_base = ["worldagent/config/__init__.py", "worldagent/config/base.py"]
    assert code_deps(tmp_path, ["worldagent.jobs.score"], ("evaluate.batch_size", "seed")) == sorted(
        [
            "worldagent/jobs/__init__.py",
            "worldagent/jobs/score.py",
            "worldagent/__init__.py",
            *root_and_base,
            "worldagent/config/evaluation.py",
            "worldagent/errors.py",  # the package's other imports are followed as ever
        ]
    )
    assert code_deps(tmp_path, ["worldagent.jobs.score"]) == sorted(
        [  # no params: the root and the base only
            "worldagent/jobs/__init__.py",
            "worldagent/jobs/score.py",
            "worldagent/__init__.py",
            *root_and_base,
            "worldagent/errors.py",
        ]
    )
    assert "worldagent/config/training.py" in code_deps(tmp_path, ["worldagent.jobs.peek"], ("evaluate",))
