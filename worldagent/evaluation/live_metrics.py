"""The world agent's held-out evaluation through DVCLive, so ``dvc exp show`` has a column for every
model's metrics and the candidate's, and ``dvc plots show/diff`` draws the models side by side.

The evaluate stage's folder (``reports/world_agent/evaluation/``): ``metrics.json`` holds each
evaluated model's metrics (``sft.story_pass_rate``, ...), and ``plots/custom/<metric>.json`` one bar
per model for each headline metric (DVC's ``bar_horizontal`` template: ``dvc plots diff`` puts two
experiments' bars side by side). The compare stage's folder (``reports/world_agent/candidate/``)
holds the chosen candidate's metrics under fixed names, whichever stage it is. Nothing is logged by
step, so no file holds a clock time and an unchanged evaluation rewrites the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from worldagent.evaluation.metrics import LABELS, METRICS, EvalReport, ModelMetrics
from worldagent.live import open_live

HEADLINE: tuple[str, ...] = ("story_pass_rate", "mean_reward", "a11y_pass_rate", "parse_rate")
"""The metrics drawn as one bar per model (``plots/custom/<metric>.json``)."""


def _values(metrics: ModelMetrics) -> dict[str, float]:
    return {"n": metrics.n, **{metric: float(getattr(metrics, metric)) for metric in METRICS}}


def log_evaluation(directory: Path, report: EvalReport) -> None:
    """Every model's metrics as DVC metrics (``<model>.<metric>``) and a bar per model for each of
    :data:`HEADLINE` as DVC plots, into the DVCLive folder ``directory`` (emptied first)."""
    live = open_live(directory)
    try:
        for name, evaluation in report.models.items():
            for metric, value in _values(evaluation.metrics).items():
                live.log_metric(f"{name}/{metric}", value, plot=False)  # a summary value, not a curve
        for metric in HEADLINE:
            bars = [{"model": name, metric: float(getattr(e.metrics, metric))} for name, e in report.models.items()]
            live.log_plot(
                metric,
                bars,
                x=metric,
                y="model",
                template="bar_horizontal",
                title=f"Held-out {LABELS[metric]} per model",
                x_label=LABELS[metric],
                y_label="model",
            )
    finally:
        live.end()


def log_candidate(directory: Path, metrics: ModelMetrics) -> None:
    """The candidate's metrics under fixed names (``story_pass_rate``, ``mean_reward``, ...), into the
    DVCLive folder ``directory``: one ``dvc exp show`` column each, whichever stage was chosen."""
    live = open_live(directory)
    try:
        for metric, value in _values(metrics).items():
            live.log_metric(metric, value, plot=False)
    finally:
        live.end()
