"""Logs in the reference tool's export shape, in and out of the experience store.

A directory with:

- ``interventions.json``: a list of ``{session_id, step, total_steps, reason, goal, start_url,
  page_state: {url, title, state: {scroll_y, scroll_height, viewport_width, viewport_height,
  interactive_elements, accessibility_summary}}, actions_before: [{action, target, success}],
  screenshot_path}``;
- ``successes.json``: a list of ``{session_id, goal, start_url, total_steps}`` (our exports add
  ``steps``, the full step list, which the importer reads when present);
- ``manifest.json``: ``{counts: {interventions, successes}, ...}`` (optional; checked when present).

The page-state numbers are read from under ``state``. A page state whose numbers sit at the top
level (older logs) is normalised under ``state`` and counted in the report as ``flat_page_states``.
Screenshot paths are resolved against the log directory when relative.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select

from worldagent.errors import InputError
from worldagent.intervention.dataset import PAGE_DEFAULTS
from worldagent.intervention.store import REASONS, ExperienceStore, TaskRow, add_task, task_to_dict
from worldagent.io import atomic_write_text, pretty_json, read_json

STATE_FIELDS = (*PAGE_DEFAULTS, "accessibility_summary")


class ReferenceImportError(InputError):
    """A log file is missing or malformed; the message names the file, entry and field."""


ImportError_ = ReferenceImportError  # the old, cryptic name, kept for callers


def _read_list(path: Path, required: bool) -> list[dict[str, Any]]:
    if not path.exists() and not required:
        return []
    data = read_json(path, "expected interventions.json and successes.json", error=ReferenceImportError)
    if isinstance(data, dict):  # {"interventions": [...]} wrappers
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list):
        raise ImportError_(f"{path}: expected a JSON list of entries")
    for i, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise ImportError_(f"{path}[{i}]: expected an object, got {type(entry).__name__}")
        if not entry.get("session_id"):
            raise ImportError_(f"{path}[{i}]: 'session_id' is missing")
    return data


def normalise_page_state(page: Any, counts: Counter[str]) -> dict[str, Any]:
    """The reference layout ``{url, title, state: {...}}``; flat numbers move under ``state`` (counted)."""
    if not isinstance(page, dict):
        counts["missing_page_states"] += 1
        return {}
    out = dict(page)
    state = out.get("state")
    if not isinstance(state, dict):
        flat = {k: out.pop(k) for k in STATE_FIELDS if k in out}
        if flat:
            counts["flat_page_states"] += 1
        state = flat
    for name in PAGE_DEFAULTS:
        if name not in state:
            counts[f"missing_field.{name}"] += 1
    out["state"] = state
    return out


def _action(entry: Any, where: str) -> dict[str, Any]:
    if isinstance(entry, str):
        name, _, target = entry.strip().partition(" ")
        return {"action": name, "target": target, "success": True}
    if isinstance(entry, dict) and (entry.get("action") or entry.get("type")):
        return {
            "action": str(entry.get("action") or entry.get("type")),
            "target": str(entry.get("target") or entry.get("selector") or ""),
            "success": bool(entry.get("success", True)),
        }
    raise ImportError_(f"{where}: an action needs an 'action' name, got {repr(entry)[:200]}")


def _whole(entry: dict[str, Any], key: str, where: str, *, optional: bool = False) -> int | None:
    """``entry[key]`` as a whole number ≥ 0 (``3`` or ``"3"``); anything else names the entry and field."""
    value = entry.get(key)
    if value is None and optional:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value != value
        or value
        in (
            float("inf"),
            float("-inf"),
        )
    ):
        raise ImportError_(f"{where}.{key}: expected a whole number, got {value!r}"[:300])
    if value != int(value) or not 0 <= int(value) <= 1_000_000:
        raise ImportError_(f"{where}.{key}: expected a whole number from 0 to 1000000, got {value!r}")
    return int(value)


def _text(entry: dict[str, Any], key: str, where: str, default: str = "") -> str:
    """``entry[key]`` as text (a number is written out); an object or a list names the entry and field."""
    value = entry.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, dict | list):
        raise ImportError_(f"{where}.{key}: expected text, got {type(value).__name__}")
    return str(value)


def _items(entry: dict[str, Any], key: str, where: str) -> list[Any]:
    value = entry.get(key) or []
    if not isinstance(value, list):
        raise ImportError_(f"{where}.{key}: expected a list, got {type(value).__name__}")
    return value


def _screenshot(value: Any, base: Path, counts: Counter[str]) -> str | None:
    if not value:
        counts["missing_screenshots"] += 1
        return None
    path = Path(str(value))
    path = path if path.is_absolute() else base / path
    if not path.is_file():
        counts["screenshot_files_not_found"] += 1
    return str(path)


def read_reference_logs(directory: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Tasks in the store's layout, and a report of counts and fallbacks."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ImportError_(f"{directory}: not a directory of exported logs")
    counts: Counter[str] = Counter()
    tasks: dict[str, dict[str, Any]] = {}
    ivs = _read_list(directory / "interventions.json", required=True)
    for i, entry in enumerate(ivs):
        where = f"{directory / 'interventions.json'}[{i}]"
        sid = _text(entry, "session_id", where)
        if "step" not in entry:
            raise ImportError_(f"{where}: 'step' is missing")
        step = _whole(entry, "step", where)
        max_steps = _whole(entry, "max_steps", where, optional=True)
        reason = _text(entry, "reason", where, "other")
        if reason not in REASONS:
            counts[f"unknown_reason.{reason}"] += 1
            reason = "other"
        actions = [
            _action(a, f"{where}.actions_before[{k}]") for k, a in enumerate(_items(entry, "actions_before", where))
        ]
        if sid in tasks:  # a second intervention in the same session
            tasks[sid]["interventions"].append({"step": step, "reason": reason, "details": "imported"})
            continue
        page = normalise_page_state(entry.get("page_state"), counts)
        shot = _screenshot(entry.get("screenshot_path"), directory, counts)
        steps = [
            {"index": k, **a, "page_before": {}, "page_after": None, "screenshot_path": None}
            for k, a in enumerate(actions)
        ]
        counts["steps_without_page_state"] += max(0, len(steps) - 1)
        if steps:  # the page and screenshot belong to the step at which the human stepped in
            steps[-1]["page_before"], steps[-1]["screenshot_path"] = page, shot
        else:
            counts["interventions_without_actions"] += 1
        tasks[sid] = {
            "session_id": sid,
            "goal": _text(entry, "goal", where),
            "start_url": _text(entry, "start_url", where),
            "category": _text(entry, "category", where, "unknown"),
            "status": "intervention",
            "max_steps": max_steps,
            "steps": steps,
            "interventions": [
                {
                    "step": len(steps) - 1 if steps else step,
                    "reason": reason,
                    "details": f"imported; original step {entry['step']} of {entry.get('total_steps')}",
                }
            ],
        }
    for i, entry in enumerate(_read_list(directory / "successes.json", required=True)):
        where = f"{directory / 'successes.json'}[{i}]"
        sid = _text(entry, "session_id", where)
        if sid in tasks:
            raise ImportError_(f"{where}: session {sid!r} is also in interventions.json")
        steps = []
        max_steps = _whole(entry, "max_steps", where, optional=True)
        for k, st in enumerate(_items(entry, "steps", where)):
            action = _action(st, f"{where}.steps[{k}]")
            steps.append(
                {
                    "index": k,
                    **action,
                    "page_before": normalise_page_state(st.get("page_before"), counts) if isinstance(st, dict) else {},
                    "page_after": None,
                    "screenshot_path": _screenshot(
                        st.get("screenshot_path") if isinstance(st, dict) else None, directory, counts
                    ),
                }
            )
        if not steps:
            counts["successes_without_steps"] += 1
        tasks[sid] = {
            "session_id": sid,
            "goal": _text(entry, "goal", where),
            "start_url": _text(entry, "start_url", where),
            "category": _text(entry, "category", where, "unknown"),
            "status": "complete",
            "max_steps": max_steps,
            "steps": steps,
            "interventions": [],
        }
    manifest_path = directory / "manifest.json"
    if manifest_path.is_file():
        manifest = read_json(manifest_path, "the manifest", error=ReferenceImportError)
        expected = (manifest.get("counts") or {}) if isinstance(manifest, dict) else {}
        expected = expected if isinstance(expected, dict) else {}
        if "interventions" in expected and _whole(expected, "interventions", f"{manifest_path}.counts") != len(ivs):
            counts["manifest_count_mismatch"] += 1
    report = {
        "tasks": len(tasks),
        "interventions": sum(t["status"] == "intervention" for t in tasks.values()),
        "successes": sum(t["status"] == "complete" for t in tasks.values()),
        "steps": sum(len(t["steps"]) for t in tasks.values()),
        "fallbacks": dict(sorted(counts.items())),
    }
    return [tasks[k] for k in sorted(tasks)], report


def import_logs(store: ExperienceStore, directory: Path, skip_existing: bool = True) -> dict[str, Any]:
    tasks, report = read_reference_logs(directory)
    added = skipped = 0
    with store.session() as s:
        existing = set(s.scalars(select(TaskRow.session_id)).all())
        for task in tasks:
            if task["session_id"] in existing:
                if not skip_existing:
                    raise ImportError_(f"session {task['session_id']!r} is already in {store.url}")
                skipped += 1
                continue
            add_task(s, task, source="import")
            added += 1
    return {**report, "added": added, "skipped_existing": skipped}


def export_logs(store: ExperienceStore, directory: Path) -> dict[str, Any]:
    """Write the store in the reference shape (the importer reads it back unchanged)."""
    with store.session() as s:
        rows = [
            task_to_dict(t)
            for t in s.scalars(select(TaskRow).where(TaskRow.status != "running").order_by(TaskRow.session_id))
        ]
    interventions, successes = to_reference(rows)
    manifest = {
        "format": "reference-v1",
        "counts": {"interventions": len(interventions), "successes": len(successes), "tasks": len(rows)},
    }
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_text(directory / "interventions.json", pretty_json(interventions))
    atomic_write_text(directory / "successes.json", pretty_json(successes))
    atomic_write_text(directory / "manifest.json", pretty_json(manifest))
    return manifest


def to_reference(
    rows: list[dict[str, Any]], splits: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(interventions, successes) entries of finished tasks in :func:`task_to_dict`'s layout."""
    interventions, successes = [], []
    for task in rows:
        if task["status"] == "intervention":
            for iv in task["interventions"]:
                at = min(iv["step"], len(task["steps"]) - 1) if task["steps"] else -1
                step = task["steps"][at] if at >= 0 else {}
                interventions.append(
                    {
                        "session_id": task["session_id"],
                        "step": iv["step"],
                        "total_steps": task["total_steps"],
                        "reason": iv["reason"],
                        "goal": task["goal"],
                        "start_url": task["start_url"],
                        "category": task["category"],
                        "max_steps": task["max_steps"],
                        "page_state": step.get("page_before") or {},
                        "actions_before": [
                            {"action": st["action"], "target": st["target"], "success": st["success"]}
                            for st in task["steps"][: at + 1]
                        ],
                        "screenshot_path": step.get("screenshot_path"),
                        **({"split": splits[task["session_id"]]} if splits else {}),
                    }
                )
        elif task["status"] == "complete":
            successes.append(
                {
                    "session_id": task["session_id"],
                    "goal": task["goal"],
                    "start_url": task["start_url"],
                    "category": task["category"],
                    "max_steps": task["max_steps"],
                    "total_steps": task["total_steps"],
                    "steps": [
                        {k: st[k] for k in ("action", "target", "success", "page_before", "screenshot_path")}
                        for st in task["steps"]
                    ],
                    **({"split": splits[task["session_id"]]} if splits else {}),
                }
            )
    return interventions, successes
