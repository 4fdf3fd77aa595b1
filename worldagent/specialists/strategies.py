"""Training-data strategies: feedback and execution trails → trl datasets.

- ``from_feedback``: the feedback rows of one target, since a time, newest first, at most
  ``specialists.max_rows``; rows held out for evaluation (a stable hash of the row id) are left out.
- ``from_runs``: each execution's step trail sliced at every browser decision into
  ``(page snapshot, task, previous actions) → action``.

Both produce the same three files (``write_dataset``): ``sft.jsonl`` (trl conversational
``{messages}`` from good rows, and from bad rows whose notes carry a corrected action),
``preferences.jsonl`` (trl ``{prompt, chosen, rejected}`` where a good and a bad row share the
same input) and ``raw.jsonl`` (the portable feedback export: ``input``/``output`` JSON-encoded).
A strategy that is not implemented, or that finds nothing to train on, raises
:class:`TrainingDataError` instead of writing an empty file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from worldagent.errors import InputError
from worldagent.io import atomic_directory, canonical_json, jsonl, pretty_json, read_jsonl
from worldagent.registry.db import utcnow
from worldagent.specialists.decisions import (
    as_browser_action,
    as_browser_input,
    completion_text,
    conversation,
    corrected_action,
    decode_json_value,
    prompt_messages,
)
from worldagent.specialists.store import FeedbackStore, iso

SFT_FILE, PREFERENCES_FILE, RAW_FILE, MANIFEST_FILE = "sft.jsonl", "preferences.jsonl", "raw.jsonl", "manifest.json"
RAW_KEYS = ("targetType", "targetId", "executionId", "input", "output", "label", "notes", "createdAt")


class TrainingDataError(InputError):
    """No dataset can be made (unknown strategy, nothing to train on, a bad dataset file)."""


def is_held_out(feedback_id: int | str, fraction: float) -> bool:
    """Stable split: the same row is always held out (or not) for the same fraction."""
    if fraction <= 0:
        return False
    digest = hashlib.sha256(f"feedback:{feedback_id}".encode()).hexdigest()
    return int(digest[:8], 16) / 0x1_0000_0000 < fraction


def from_feedback(
    store: FeedbackStore,
    target_id: str,
    *,
    since: datetime | None = None,
    limit: int = 1000,
    eval_fraction: float = 0.0,
    target_type: str | None = None,
) -> list[dict[str, Any]]:
    """The target's feedback rows (newest first, at most ``limit``), held-out rows left out."""
    rows = store.list_feedback(target_id=target_id, target_type=target_type, since=since, limit=limit)
    return [row for row in rows if not is_held_out(row["id"], eval_fraction)]


def slice_execution(execution: Mapping[str, Any], bad_steps: Sequence[int] = ()) -> list[dict[str, Any]]:
    """One row per browser decision: input ``{pageSnapshot, task, previousActions}``, output the action."""
    rows: list[dict[str, Any]] = []
    previous: list[dict[str, Any]] = []
    for position, step in enumerate(execution.get("steps", [])):
        action = as_browser_action(step.get("action"))
        if step.get("kind", "browser") != "browser" or action is None:
            continue
        rows.append(
            {
                "targetType": execution.get("targetType", "agent"),
                "targetId": execution.get("targetId"),
                "executionId": execution.get("id"),
                "input": {
                    "pageSnapshot": step.get("pageSnapshot") or "",
                    "task": execution.get("task", ""),
                    "previousActions": list(previous),
                },
                "output": action.model_dump(),
                "label": "bad" if position in bad_steps else "good",
                "notes": None,
                "createdAt": execution.get("createdAt"),
            }
        )
        previous.append(action.model_dump())
    return rows


def from_runs(
    store: FeedbackStore,
    target_id: str,
    *,
    since: datetime | None = None,
    limit: int = 1000,
    eval_fraction: float = 0.0,
    target_type: str | None = None,
) -> list[dict[str, Any]]:
    """Every execution of the target sliced at its browser decisions (newest execution first), at most ``limit`` rows."""
    rows: list[dict[str, Any]] = []
    for execution in store.executions(target_id, since=since):
        for row in slice_execution(execution):
            if not is_held_out(f"{row['executionId']}:{len(rows)}", eval_fraction):
                rows.append(row)
        if len(rows) >= limit:
            break
    return rows[:limit]


Strategy = Callable[..., list[dict[str, Any]]]
STRATEGIES: dict[str, Strategy] = {"from_feedback": from_feedback, "from_runs": from_runs}


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise TrainingDataError(f"strategy {name!r} is not implemented; available: {', '.join(STRATEGIES)}") from None


# --------------------------------------------------------------------------- formats


def _good_examples(rows: Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    """(input, output) of good rows, plus the corrected action of bad browser rows whose notes carry one."""
    out = []
    for row in rows:
        if row["label"] == "good":
            out.append((row["input"], row["output"]))
        elif as_browser_input(row["input"]) is not None:
            fixed = corrected_action(row.get("notes"))
            if fixed is not None:
                out.append((row["input"], fixed.model_dump()))
    return out


def sft_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{"messages": conversation(inp, out)} for inp, out in _good_examples(rows)]


def preference_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """trl preference pairs: every good × bad completion of the same input (distinct completions only)."""
    good: dict[str, list[str]] = {}
    bad: dict[str, list[str]] = {}
    inputs: dict[str, Any] = {}
    for inp, out in _good_examples(rows):
        key = canonical_json(inp)
        inputs[key] = inp
        good.setdefault(key, []).append(completion_text(inp, out))
    for row in rows:
        if row["label"] == "bad":
            key = canonical_json(row["input"])
            inputs[key] = row["input"]
            bad.setdefault(key, []).append(completion_text(row["input"], row["output"]))
    pairs = []
    for key in sorted(set(good) & set(bad)):
        for chosen in dict.fromkeys(good[key]):
            for rejected in dict.fromkeys(bad[key]):
                if chosen != rejected:
                    pairs.append(
                        {
                            "prompt": prompt_messages(inputs[key]),
                            "chosen": [{"role": "assistant", "content": chosen}],
                            "rejected": [{"role": "assistant", "content": rejected}],
                        }
                    )
    return pairs


def raw_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The portable export: one object per row, ``input``/``output`` as JSON-encoded strings."""
    out = []
    for row in rows:
        item = {key: row.get(key) for key in RAW_KEYS}
        item["input"] = json.dumps(row.get("input"), ensure_ascii=False)
        item["output"] = json.dumps(row.get("output"), ensure_ascii=False)
        out.append(item)
    return out


def write_dataset(
    rows: Sequence[Mapping[str, Any]],
    out_dir: Path,
    manifest: Mapping[str, Any],
    extra_rows: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Write sft/preferences/raw + manifest into ``out_dir`` atomically; returns the manifest.

    ``extra_rows`` (the embedded browser set's train split) join ``sft.jsonl`` after the job's own
    rows, through the same conversion; ``raw.jsonl`` stays the job's own feedback.
    """
    sft = sft_rows(rows)
    if not sft:
        raise TrainingDataError(
            f"no trainable rows: {len(rows)} row(s) found but none is labelled good (or carries a corrected action in its notes)"
        )
    embedded = sft_rows(extra_rows)
    sft += embedded
    prefs = preference_rows(rows)
    raw = raw_rows(rows)
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as tmp:
        files = {"sft": SFT_FILE, "preferences": PREFERENCES_FILE, "raw": RAW_FILE}
        (tmp / SFT_FILE).write_text(jsonl(sft), encoding="utf-8")
        (tmp / PREFERENCES_FILE).write_text(jsonl(prefs), encoding="utf-8")
        (tmp / RAW_FILE).write_text(jsonl(raw), encoding="utf-8")
        info = {
            **dict(manifest),
            "rows": len(rows),
            "counts": {"sft": len(sft), "preferences": len(prefs), "raw": len(raw), "embedded": len(embedded)},
            "files": {kind: str(out_dir / name) for kind, name in files.items()},
            "datasetRef": str(out_dir / SFT_FILE),
        }
        (tmp / MANIFEST_FILE).write_text(pretty_json(info), encoding="utf-8")
    return info


def dataset_name(strategy: str, rows: Sequence[Mapping[str, Any]]) -> str:
    stamp = utcnow().strftime("%Y%m%dT%H%M%S%f")
    digest = hashlib.sha256(canonical_json([dict(r) for r in rows]).encode()).hexdigest()[:8]
    return f"{stamp}-{strategy}-{digest}"


def generate_training_data(
    store: FeedbackStore,
    job: Mapping[str, Any],
    data_dir: Path,
    *,
    strategy: str | None = None,
    since: datetime | None = None,
    limit: int = 1000,
    eval_fraction: float = 0.0,
    extra_rows: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Run the job's (or the given) strategy for the job's scope and write the dataset under ``data_dir``
    (``extra_rows``: good rows every specialist trains on too, see :func:`write_dataset`)."""
    name = strategy or job.get("strategy") or "from_feedback"
    fn = get_strategy(name)
    rows = fn(
        store, job["scopeId"], since=since, limit=limit, eval_fraction=eval_fraction, target_type=job.get("scopeType")
    )
    if not rows:
        when = f" since {iso(since)}" if since else ""
        raise TrainingDataError(f"strategy {name}: no rows for {job.get('scopeType')} {job['scopeId']!r}{when}")
    out_dir = Path(data_dir) / "datasets" / f"job-{job['id']}" / dataset_name(name, rows)
    manifest = {
        "jobId": job["id"],
        "strategy": name,
        "targetId": job["scopeId"],
        "since": iso(since),
        "limit": limit,
        "evalFraction": eval_fraction,
    }
    return write_dataset(rows, out_dir, manifest, extra_rows)


# --------------------------------------------------------------------------- reading datasets (trainer side)


def conversations_from_rows(rows: Sequence[Mapping[str, Any]], source: str = "dataset") -> list[dict[str, Any]]:
    """Any dataset this module writes, or a raw feedback export, → ``{messages}`` rows to train on.

    Accepted rows: ``{messages}`` (sft), ``{prompt, chosen, ...}`` (preferences: the chosen side),
    and raw feedback ``{input, output, label, notes, ...}`` (input/output JSON values or JSON-encoded
    strings; good rows, and bad browser rows with a corrected action in their notes).
    """
    out: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, Mapping):
            raise TrainingDataError(f"{source}: row {number} is not a JSON object")
        if "messages" in row:
            messages = row["messages"]
            if not isinstance(messages, list) or not all(
                isinstance(m, Mapping) and "role" in m and "content" in m for m in messages
            ):
                raise TrainingDataError(f"{source}: row {number}: messages must be a list of {{role, content}}")
            if not any(m["role"] == "assistant" for m in messages):
                raise TrainingDataError(f"{source}: row {number} has no assistant message")
            out.append({"messages": [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]})
        elif "prompt" in row and "chosen" in row:
            prompt, chosen = row["prompt"], row["chosen"]
            if not isinstance(prompt, list) or not isinstance(chosen, list):
                raise TrainingDataError(f"{source}: row {number}: prompt and chosen must be message lists")
            out.append(
                {"messages": [{"role": str(m["role"]), "content": str(m["content"])} for m in [*prompt, *chosen]]}
            )
        elif "input" in row and "output" in row and "label" in row:
            if row["label"] not in ("good", "bad"):
                raise TrainingDataError(f"{source}: row {number}: label must be good or bad")
            raw.append(
                {
                    "input": decode_json_value(row["input"]),
                    "output": decode_json_value(row["output"]),
                    "label": row["label"],
                    "notes": row.get("notes"),
                }
            )
        else:
            raise TrainingDataError(f"{source}: row {number}: expected messages, prompt/chosen or input/output/label")
    out.extend(sft_rows(raw))
    if not out:
        raise TrainingDataError(f"{source}: no trainable row (no good row, no corrected action)")
    return out


def read_dataset_file(path: Path) -> list[dict[str, Any]]:
    """JSONL rows → conversations; a missing, unreadable, empty or malformed file is a TrainingDataError."""
    path = Path(path)
    try:
        is_file = path.is_file()
    except OSError as error:  # e.g. a name too long for the file system
        raise TrainingDataError(f"datasetRef: cannot read {path}: {error.strerror}") from None
    if not is_file:
        raise TrainingDataError(f"datasetRef: {path} is not a file")
    rows = read_jsonl(path, "datasetRef", expect=None, error=TrainingDataError)
    if not rows:
        raise TrainingDataError(f"datasetRef: {path} is empty")
    return conversations_from_rows(rows, source=f"datasetRef {path}")
