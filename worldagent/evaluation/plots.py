"""PNG plots drawn locally with matplotlib (Agg, no pyplot state) for report.md, plus the rewards' data as CSV.

Paths (as dvc.yaml declares them): ``reports/world_agent/{metrics,rewards}.png`` and
``reports/world_agent/plots/rewards.csv`` (model, intent, reward).

``dvc plots show`` fetches its JavaScript from the internet; the PNGs need nothing. The per-model
metrics DVC draws come from the evaluate stage's DVCLive folder (``worldagent.evaluation.live_metrics``).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from worldagent.evaluation.metrics import LABELS, METRICS, EvalReport
from worldagent.io import atomic_write_bytes, atomic_write_text

METRICS_PNG = "metrics.png"
REWARDS_PNG = "rewards.png"
REWARDS_CSV = "rewards.csv"
# Deterministic PNG bytes: no software/version chunk, so an unchanged report is byte-identical.
_PNG_METADATA = {"Software": None}


def reward_rows(report: EvalReport) -> list[dict[str, Any]]:
    return [
        {"model": name, "intent": result.id, "reward": round(result.reward, 6)}
        for name, evaluation in report.models.items()
        for result in evaluation.per_intent
    ]


def to_csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _save(figure: Figure, path: Path) -> None:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata=_PNG_METADATA)
    atomic_write_bytes(path, buffer.getvalue())


def draw_metrics(report: EvalReport, path: Path) -> None:
    """Grouped bars: one group per metric, one bar per model."""
    names = list(report.models)
    figure = Figure(figsize=(max(8.0, 1.6 * len(METRICS)), 4.5))
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(names))
    for offset, name in enumerate(names):
        values = [float(getattr(report.models[name].metrics, metric)) for metric in METRICS]
        positions = [i - 0.4 + width * (offset + 0.5) for i in range(len(METRICS))]
        axes.bar(positions, values, width=width, label=name)
    axes.set_xticks(
        range(len(METRICS)), [LABELS[m].replace(" (per intent)", "\n(per intent)") for m in METRICS], fontsize=8
    )
    axes.set_ylabel("value (rates and reward in [0, 1])")
    axes.set_title(f"World-agent metrics on {len(report.intents)} held-out intents")
    axes.grid(axis="y", alpha=0.3)
    if names:
        axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(figure, path)


def draw_rewards(report: EvalReport, path: Path) -> None:
    """Reward per intent (x) for every model (one marker line each)."""
    intents = list(report.intents)
    figure = Figure(figsize=(max(8.0, 0.45 * len(intents) + 3), 4.5))
    axes = figure.add_subplot()
    index = {intent: i for i, intent in enumerate(intents)}
    markers = "osD^v<>ph*"
    for k, (name, evaluation) in enumerate(report.models.items()):
        points = sorted((index[r.id], r.reward) for r in evaluation.per_intent if r.id in index)
        axes.plot(
            [p[0] for p in points],
            [p[1] for p in points],
            marker=markers[k % len(markers)],
            linestyle="-",
            alpha=0.8,
            label=name,
        )
    labels = [intent.split("#", 1)[-1] for intent in intents]
    axes.set_xticks(range(len(intents)), labels, rotation=60, ha="right", fontsize=7)
    axes.set_ylim(-0.05, 1.05)
    axes.set_ylabel("reward")
    axes.set_title("Reward per held-out intent")
    axes.grid(alpha=0.3)
    if report.models:
        axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(figure, path)


def write_plots(report: EvalReport, images_dir: Path, data_dir: Path) -> list[Path]:
    """Both PNGs (in ``images_dir``) and the rewards' CSV data (in ``data_dir``); returns the paths written."""
    images_dir.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    paths = [data_dir / REWARDS_CSV, images_dir / METRICS_PNG, images_dir / REWARDS_PNG]
    atomic_write_text(paths[0], to_csv(reward_rows(report), ["model", "intent", "reward"]))
    draw_metrics(report, paths[1])
    draw_rewards(report, paths[2])
    return paths
