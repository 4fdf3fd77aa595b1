"""The types of a stage table: file-to-file stages that DVC runs, and Prefect-only side effects."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import BaseModel


@dataclass(frozen=True)
class Plot:
    """A DVC plot: a file the stage writes, with the columns DVC draws (none for an image) and,
    where the default line is not the right picture, DVC's template (``bar_horizontal``,
    ``simple``, ``confusion``) and axis titles."""

    path: str
    x: str | None = None
    y: str | None = None
    template: str | None = None
    title: str | None = None
    x_label: str | None = None
    y_label: str | None = None


CURVES = (Plot("plots/metrics", x="step"),)
"""What a training stage's DVCLive folder plots: one TSV a logged value, by step."""


@dataclass(frozen=True)
class LiveFolder:
    """A DVCLive folder (``worldagent.live``) a stage logs into: its ``metrics.json`` is a DVC metric
    and ``plots`` (paths inside the folder) are DVC plots. A training stage's are its step curves; an
    evaluation's are what it logs with ``log_plot`` or ``log_sklearn_plot``."""

    path: str
    plots: tuple[Plot, ...] = CURVES


@dataclass(frozen=True)
class Stage:
    """One ``dvc.yaml`` stage: ``python -m worldagent.pipeline run <name> --<option> VALUE --<arg> <path> ...``.

    Every option and path reaches the function as a command-line argument named after the key it
    has here; the function takes the same names as keyword arguments (a test checks both agree).
    """

    name: str
    entry: str
    """``module:function``: the stage's typed ``function(params, *, <arg>: Path, ...)`` that does the work;
    it receives only the params sections this entry declares (``params``)."""
    description: str
    options: Mapping[str, str] = field(default_factory=dict)
    """Argument → a fixed non-path value (a per-model evaluation's model name), written into the command."""
    inputs: Mapping[str, str] = field(default_factory=dict)
    """Argument → path the stage reads (a DVC dependency). ``${section.key}`` reads params.yaml."""
    outputs: Mapping[str, str] = field(default_factory=dict)
    """Argument → path the stage writes, kept in the DVC cache (datasets, models)."""
    persist: tuple[str, ...] = ()
    """Arguments of ``outputs`` that DVC keeps in place before the stage runs (``persist: true``):
    a store the stage reads and extends, run after run (the experience store). Still cached, so
    ``dvc push``/``dvc pull`` carry it from one machine or week to the next."""
    reports: Mapping[str, str] = field(default_factory=dict)
    """Argument → path the stage writes and git keeps (small files a reviewer reads; not cached)."""
    metrics: Mapping[str, str] = field(default_factory=dict)
    """Argument → JSON metrics file (``dvc metrics show``; git keeps it)."""
    plots: Mapping[str, Plot] = field(default_factory=dict)
    """Argument → plot file (``dvc plots show``; git keeps it)."""
    live: Mapping[str, str | LiveFolder] = field(default_factory=dict)
    """Argument → a DVCLive folder (``worldagent.live``) the stage logs into: its ``metrics.json`` is a
    DVC metric and its plots DVC plots. A path alone is a training stage's folder, whose plots are
    its curves (``plots/metrics/``: one TSV a value, by step)."""
    extra_plots: tuple[Plot, ...] = ()
    """Plots the stage writes next to one of its reports, under names its library owns."""
    params: tuple[str, ...] = ()
    """The params.yaml keys the stage reads (sections or dotted keys): a change reruns it."""

    def __post_init__(self) -> None:
        for name in ("options", "inputs", "outputs", "reports", "metrics", "plots", "live"):
            object.__setattr__(self, name, dict(getattr(self, name)))  # a copy: the table owns its paths
        folders = {
            arg: folder if isinstance(folder, LiveFolder) else LiveFolder(folder) for arg, folder in self.live.items()
        }
        object.__setattr__(self, "live", folders)
        arguments = [*self.options, *self.inputs, *self.outputs, *self.reports, *self.metrics, *self.plots, *self.live]
        repeated = sorted({argument for argument in arguments if arguments.count(argument) > 1})
        if repeated:
            raise ValueError(f"stage {self.name}: argument(s) {', '.join(repeated)} declared twice")
        unknown = sorted(set(self.persist) - set(self.outputs))
        if unknown:
            raise ValueError(f"stage {self.name}: persist names {', '.join(unknown)}, which are not outputs")

    @property
    def arguments(self) -> dict[str, str]:
        """Every argument of the entry's ``run`` with its path, in declaration order."""
        plots = {argument: plot.path for argument, plot in self.plots.items()}
        live = {argument: folder.path for argument, folder in self.live_folders.items()}
        return {**self.inputs, **self.outputs, **self.reports, **self.metrics, **plots, **live}

    @property
    def live_folders(self) -> dict[str, LiveFolder]:
        """``live`` with every folder as a :class:`LiveFolder` (``__post_init__`` made them so)."""
        return {argument: folder for argument, folder in self.live.items() if isinstance(folder, LiveFolder)}

    @property
    def metric_files(self) -> list[str]:
        """Every DVC metrics file: the declared ones and each DVCLive folder's ``metrics.json``."""
        folders = self.live_folders.values()
        return [*self.metrics.values(), *(f"{folder.path}/metrics.json" for folder in folders)]

    @property
    def plot_files(self) -> list[Plot]:
        """Every DVC plot: the declared ones, the extra ones and those of each DVCLive folder."""
        folders = self.live_folders.values()
        live = [replace(plot, path=f"{folder.path}/{plot.path}") for folder in folders for plot in folder.plots]
        return [*self.plots.values(), *self.extra_plots, *live]


@dataclass(frozen=True)
class SideEffect:
    """A Prefect-only step (upload, deploy): it reads DVC outputs and never changes them."""

    name: str
    entry: str
    """``module:function`` that the flow calls with the params and the project root (a deploy also
    with the flow's ``alert``)."""
    description: str
    retries: int = 0


@dataclass(frozen=True)
class Pipeline:
    """A family's DAG in order: the one place the order is written."""

    family: str
    steps: tuple[Stage | SideEffect, ...]
    report: str
    """The human-readable report the flow attaches to its Prefect run."""
    gate: str
    """The gate decision (JSON) the deploy step reads."""
    champion: str
    """The champion reference file (``worldagent.registry.champion``) the DAG compares against."""
    registry_family: str
    """The params.yaml key naming the family in the model registry."""

    @property
    def stages(self) -> tuple[Stage, ...]:
        return tuple(step for step in self.steps if isinstance(step, Stage))

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(f"{self.family} has no stage {name!r}")


_PARAM_REFERENCE = re.compile(r"\$\{([a-z_][a-z0-9_.]*)\}")


def interpolate(path: str, params: BaseModel) -> str:
    """``${discover.stories_dir}`` → its value in params, the way DVC reads params.yaml."""

    def value(match: re.Match[str]) -> str:
        node: object = params
        for key in match.group(1).split("."):
            node = getattr(node, key)
        return str(node)

    return _PARAM_REFERENCE.sub(value, path)


def stage_paths(stage: Stage, root: Path, params: BaseModel) -> dict[str, Path]:
    """The keyword arguments of ``stage``'s ``run`` for a project at ``root``, without DVC."""
    return {argument: root / interpolate(path, params) for argument, path in stage.arguments.items()}
