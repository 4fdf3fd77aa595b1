"""``dvc.yaml`` from the stage tables: commands, exact dependencies, params, outs, metrics, plots.

The file stays a real, readable ``dvc.yaml`` that ``dvc repro`` runs; it is written from the
tables (``python -m worldagent.pipeline --write``) and a test fails when the committed file and
the tables disagree, so the tables are the one place a stage is declared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from worldagent.errors import InputError
from worldagent.guard.yaml import load_yaml
from worldagent.pipeline.deps import code_deps
from worldagent.pipeline.entry import entry_module, option
from worldagent.pipeline.table import Pipeline, Plot, Stage

ENTRY = "worldagent.pipeline.entry"
"""The one stage entry every command goes through (``python -m worldagent.pipeline run``)."""

HEADER = """\
# Written by `python -m worldagent.pipeline --write` from the stage tables in worldagent/pipeline/:
# edit a table (or a stage's code) and write this file again; `make test` fails while they disagree.
# Code dependencies are the project modules each stage's entry imports, computed, never listed by
# hand; of the params schema (worldagent/config/), only the modules of the sections the stage declares.
# `${...}` reads params.yaml. `dvc repro` reruns exactly what changed; `dvc status` says what would.
"""


def command(stage: Stage) -> list[str]:
    """The stage's command through the one stage entry, one argument per line (folded by YAML)."""
    values = {**stage.options, **stage.arguments}
    return [
        f"python -m worldagent.pipeline run {stage.name}",
        *(f"{option(arg)} {value}" for arg, value in values.items()),
    ]


def stage_code(stage: Stage, root: Path) -> list[str]:
    """The code a stage runs: its function's module and the stage entry, with their imports."""
    return code_deps(root, [entry_module(stage.entry), ENTRY], stage.params)


def scalar(text: str) -> str:
    """``text`` plain when YAML reads it back unchanged, else quoted."""
    try:
        plain = load_yaml(f"key: {text}", "dvc.yaml") == {"key": text}
    except InputError:  # not YAML, or not text (the YAML guard)
        plain = False
    return text if plain else json.dumps(text, ensure_ascii=False)


def _uncached(paths: Iterable[str], indent: str) -> list[str]:
    return [line for path in paths for line in (f"{indent}- {path}:", f"{indent}    cache: false")]


def _plot(plot: Plot, indent: str) -> list[str]:
    lines = [f"{indent}- {plot.path}:", f"{indent}    cache: false"]
    properties = (
        ("template", plot.template),
        ("x", plot.x),
        ("y", plot.y),
        ("title", plot.title),
        ("x_label", plot.x_label),
        ("y_label", plot.y_label),
    )
    lines += [f"{indent}    {key}: {scalar(value)}" for key, value in properties if value]
    return lines


def stage_lines(stage: Stage, root: Path) -> list[str]:
    lines = [f"  {stage.name}:", f"    desc: {scalar(stage.description)}", "    cmd: >-"]
    lines += [f"      {part}" for part in command(stage)]
    lines += ["    deps:", *(f"      - {path}" for path in stage.inputs.values())]
    lines += [f"      - {path}" for path in stage_code(stage, root)]
    if stage.params:
        lines += ["    params:", *(f"      - {key}" for key in stage.params)]
    if stage.outputs or stage.reports:
        lines += ["    outs:"]
        for argument, path in stage.outputs.items():
            # persist: DVC leaves the out in place before running the stage (the stage extends it)
            lines += (
                [f"      - {path}:", "          persist: true"] if argument in stage.persist else [f"      - {path}"]
            )
        lines += _uncached(stage.reports.values(), "      ")
    if stage.metric_files:
        lines += ["    metrics:", *_uncached(stage.metric_files, "      ")]
    plots = stage.plot_files
    if plots:
        lines += ["    plots:", *(line for plot in plots for line in _plot(plot, "      "))]
    return lines


def render(pipelines: Iterable[Pipeline], root: Path) -> str:
    lines = [HEADER.rstrip("\n"), "stages:"]
    for pipeline in pipelines:
        lines.append(f"  # -- {pipeline.family} " + "-" * (94 - len(pipeline.family)))
        for stage in pipeline.stages:
            lines += stage_lines(stage, root)
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
