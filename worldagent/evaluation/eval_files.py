"""The evaluate stage's files: ``eval.json`` (models → metrics, the held-out intents' count and
components), ``eval_intents.jsonl`` (one row per model and intent) and the plots beside ``eval.json``
(``metrics.png``, ``rewards.png`` and the rewards' data ``plots/rewards.csv``). The same metrics reach
``dvc exp show`` through the stage's DVCLive folder (``worldagent.evaluation.live_metrics``).

Written by evaluate, read back by compare and gate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worldagent.evaluation.metrics import EvalReport, IntentResult, ModelEval, ModelMetrics
from worldagent.evaluation.plots import write_plots
from worldagent.io import atomic_write_text, jsonl, read_json, read_jsonl

PLOTS_DIR = "plots"


def eval_summary(report: EvalReport) -> dict[str, Any]:
    return {
        "n": len(report.intents),
        "components": report.components,
        "models": {name: evaluation.metrics.model_dump() for name, evaluation in report.models.items()},
        "notes": report.notes,
    }


def intent_rows(report: EvalReport) -> list[dict[str, Any]]:
    rows = []
    for name, evaluation in report.models.items():
        for result in evaluation.per_intent:
            rows.append({"model": name, **result.model_dump()})
    return rows


def write_eval_outputs(report: EvalReport, summary: Path, intents: Path) -> list[Path]:
    """``summary`` (eval.json), ``intents`` (one row per model and intent) and the plots beside the
    summary (``metrics.png``, ``rewards.png``, ``plots/rewards.csv``); returns the paths written."""
    # Insertion order (not sorted keys): the models stay in evaluation order, deterministically.
    atomic_write_text(summary, json.dumps(eval_summary(report), ensure_ascii=False, indent=2) + "\n")
    atomic_write_text(intents, jsonl(intent_rows(report)))
    return [summary, intents, *write_plots(report, summary.parent, summary.parent / PLOTS_DIR)]


def read_eval_report(summary_path: Path, rows_path: Path) -> EvalReport:
    """Rebuild the EvalReport the evaluate stage wrote (for compare and gate)."""
    hint = "run the evaluate stage first"
    summary = read_json(summary_path, "the evaluation summary", hint=hint, expect=dict)
    rows = read_jsonl(rows_path, "the per-intent results", hint=hint)
    per_model: dict[str, list[IntentResult]] = {name: [] for name in summary["models"]}
    intents: list[str] = []
    for row in rows:
        row = dict(row)
        name = row.pop("model")
        per_model.setdefault(name, []).append(IntentResult(**row))
        if row["id"] not in intents:
            intents.append(row["id"])
    models = {
        name: ModelEval(metrics=ModelMetrics(**summary["models"][name]), per_intent=per_model.get(name, []))
        for name in summary["models"]
    }
    return EvalReport(
        models=models,
        intents=intents,
        components=list(summary.get("components", [])),
        notes=list(summary.get("notes", [])),
    )
