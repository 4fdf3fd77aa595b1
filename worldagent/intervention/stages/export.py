"""intervention_export: the experience store → labelled steps split by session, reference-shaped logs, a manifest."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

from worldagent.config import Params
from worldagent.errors import InputError
from worldagent.intervention.dataset import SPLITS, page_vector, split_sessions, task_rows
from worldagent.intervention.importer import to_reference
from worldagent.intervention.store import load_tasks, open_store
from worldagent.io import atomic_write_text, jsonl, pretty_json

log = logging.getLogger("worldagent.intervention")


def export_stage(
    params: Params, *, store: Path, steps: Path, interventions: Path, successes: Path, manifest: Path
) -> dict[str, Any]:
    """Read the experience store → the labelled ``steps`` (JSONL), the reference-shaped
    ``interventions`` and ``successes`` logs, and ``manifest``.

    The store is the simulator's SQLite file ``store``, unless ``intervention.store_url`` names
    another one (any SQLAlchemy URL: the store real agent runs were recorded or imported into)."""
    store_url = params.intervention.store_url or f"sqlite:///{store}"
    export_params = params.intervention.export
    experience = open_store(store_url, create=False)
    try:
        tasks = load_tasks(experience)
    finally:
        experience.close()
    if not tasks:
        raise InputError(
            f"{store_url}: the experience store has no finished tasks (empty database): record or import some first"
        )
    splits = split_sessions(tasks, export_params.validation_fraction, export_params.test_fraction, params.seed)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        for row in task_rows(task, export_params.label_horizon, export_params.history):
            row["split"] = splits[task["session_id"]]
            rows.append(row)
    if not rows:
        raise InputError(f"{store_url}: the finished tasks have no steps to learn from")
    reference_interventions, reference_successes = to_reference(tasks, splits)
    summary = {
        "format": "reference-v1",
        "counts": {
            "interventions": len(reference_interventions),
            "successes": len(reference_successes),
            "tasks": len(tasks),
            "steps": len(rows),
        },
        "balance": {
            "intervention_sessions": sum(t["status"] == "intervention" for t in tasks) / len(tasks),
            "positive_steps": sum(r["label"] for r in rows) / len(rows),
        },
        "splits": _per_split(tasks, rows, splits),
        "label_horizon": export_params.label_horizon,
        "reasons": dict(sorted(Counter(r["reason"] for r in rows if r["label"]).items())),
        "fallbacks": _fallbacks(tasks, rows),
    }
    atomic_write_text(steps, jsonl(rows))
    atomic_write_text(interventions, pretty_json(reference_interventions))
    atomic_write_text(successes, pretty_json(reference_successes))
    atomic_write_text(manifest, pretty_json(summary))
    sessions = {k: v["sessions"] for k, v in summary["splits"].items()}
    log.info("exported %d steps from %d sessions: %s", len(rows), len(tasks), sessions)
    return summary


def _per_split(tasks: list[dict[str, Any]], rows: list[dict[str, Any]], splits: dict[str, str]) -> dict[str, Any]:
    per_split: dict[str, Any] = {}
    for split in SPLITS:
        sessions = [t for t in tasks if splits[t["session_id"]] == split]
        steps = [r for r in rows if r["split"] == split]
        positives = sum(r["label"] for r in steps)
        per_split[split] = {
            "sessions": len(sessions),
            "intervention_sessions": sum(t["status"] == "intervention" for t in sessions),
            "steps": len(steps),
            "positive_steps": positives,
            "positive_rate": positives / len(steps) if steps else 0.0,
        }
    return per_split


def _fallbacks(tasks: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    missing_fields: Counter[str] = Counter()
    for row in rows:
        missing_fields.update(page_vector(row["page_state"], row["step"], row["max_steps"], 1).missing)
    return {
        "steps_without_screenshot": sum(not r["screenshot_path"] for r in rows),
        "page_state_missing_fields": dict(sorted(missing_fields.items())),
        "sessions_without_steps": sum(not t["steps"] for t in tasks),
    }
