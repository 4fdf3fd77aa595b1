"""No library function takes the whole ``Params`` when it reads a few sections: it takes those
sections (``worldagent.config``'s typed section models), so its signature says what it reads.

The whole ``Params`` stays where it belongs: the stage functions the tables name (the pipeline hands
them ``Params`` scoped to the sections their entry declares), the one stage entry
(``worldagent/pipeline/entry.py``), the command lines (``worldagent/**/cli*.py``), the flows (not
under ``worldagent/``) and the params schema itself (``worldagent/config/``). The few functions that
really read the whole configuration, or any key named at run time, are listed below with why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from worldagent.pipeline.families import PIPELINES

ROOT = Path(__file__).resolve().parents[2]

ALLOWED_FILES = ("worldagent/pipeline/entry.py",)
ALLOWED_DIRS = ("worldagent/config/",)

# Functions that read the whole configuration by design, each with why.
WHOLE_PARAMS_READERS = {
    # stage-shaped alternatives to table entries (CONTRACTS.md): params as an entry would get them
    "worldagent/world_agent/stages/evaluate.py:evaluate_stage": "the single-step evaluate stage",
    "worldagent/world_agent/stages/gate.py:gate_stage": "the gate stage for a fixed compare.candidate",
    # the whole configuration is the provenance: its hash goes on the registry version, and each
    # family (worldagent.evaluation.family) picks its own sections from it for the model card
    "worldagent/registry/deploy.py:deploy": "the registry version's provenance and the family's card",
    "worldagent/registry/deploy.py:params_hash": "hashes every section",
    # the service's one constructor from the configuration (its command line, the flow): it keeps the
    # sections it reads (specialists, model.tiny, seed) and the registry's URL, not the whole
    "worldagent/specialists/service.py:from_params": "builds the service from the configuration",
    # a stage path's ``${section.key}`` may name any key, as DVC interpolates it
    "worldagent/pipeline/pr_check.py:_resolve": "interpolates ${section.key} in a stage path",
    "worldagent/pipeline/pr_check.py:stage_command": "resolves a stage's paths (_resolve)",
    "worldagent/pipeline/pr_check.py:new_story_rows": "resolves a stage's paths (_resolve)",
    "worldagent/pipeline/pr_check.py:evaluate_new_stories": "resolves a stage's paths (_resolve)",
    "worldagent/pipeline/pr_check.py:pinnable": "resolves a stage's paths (_resolve)",
}


def stage_functions() -> set[str]:
    """``path:function`` of every stage and side effect the tables name."""
    found = set()
    for pipeline in PIPELINES:
        for step in pipeline.steps:
            module, _, function = step.entry.partition(":")
            found.add(f"{module.replace('.', '/')}.py:{function}")
    return found


def _names_params(annotation: ast.expr | None) -> bool:
    """Whether an annotation is, or contains, ``Params`` (``Params | None``, ``"Params"``, ``config.Params``)."""
    if annotation is None:
        return False
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Params":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Params":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip() == "Params":
            return True
    return False


def functions_taking_params(path: Path) -> Iterator[tuple[str, int]]:
    """(function name, line) of each function in ``path`` with a parameter annotated ``Params``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        if any(argument is not None and _names_params(argument.annotation) for argument in every):
            yield node.name, node.lineno


def _exempt_file(relative: str) -> bool:
    return relative in ALLOWED_FILES or relative.startswith(ALLOWED_DIRS) or Path(relative).name.startswith("cli")


def offenders() -> list[str]:
    allowed = stage_functions() | set(WHOLE_PARAMS_READERS)
    found = []
    for path in sorted((ROOT / "worldagent").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if _exempt_file(relative):
            continue
        for function, line in functions_taking_params(path):
            if f"{relative}:{function}" not in allowed:
                found.append(f"{relative}:{line}: {function}")
    return found


def test_no_library_function_takes_the_whole_params() -> None:
    assert offenders() == [], (
        "these functions take the whole Params; give them the sections they read (worldagent.config's"
        " section models, or a root field such as seed) instead"
    )


def test_the_check_sees_a_params_parameter_in_any_form(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "def plain(params: Params) -> None: ...\n"
        "def optional(*, params: Params | None = None) -> None: ...\n"
        "def quoted(params: 'Params') -> None: ...\n"
        "def dotted(settings: config.Params) -> None: ...\n"
        "class Service:\n"
        "    @classmethod\n"
        "    def from_params(cls, params: Params) -> None: ...\n"
        "def sections(evaluate: EvaluateParams, seed: int) -> None: ...\n"
    )
    assert [name for name, _ in functions_taking_params(module)] == [
        "plain",
        "optional",
        "quoted",
        "dotted",
        "from_params",
    ]


def test_every_listed_exception_still_exists() -> None:
    """An entry left behind after its function moved or changed would hide the next offender."""
    for entry in WHOLE_PARAMS_READERS:
        relative, _, function = entry.partition(":")
        taking = {name for name, _ in functions_taking_params(ROOT / relative)}
        assert function in taking, f"{entry} no longer takes Params: remove it from the list"
