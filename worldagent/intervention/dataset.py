"""Labelled steps, split by session, and the features every model reads.

A step is positive when a human stepped in at that step or within ``label_horizon`` steps after
it, so every step of every episode has a label (successes are not only final states).

Page-state features read the reference layout, with the numbers nested under ``state``; a missing
field takes a documented default and is counted (``missing_fields`` in the manifest), never
silently: see :data:`PAGE_DEFAULTS`.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from worldagent.errors import InputError

PAD, UNK = "<pad>", "<unk>"
SPLITS: tuple[str, ...] = ("train", "validation", "test")
# Page-state fields under ``state`` and the value used when one is missing (counted in the manifest).
PAGE_DEFAULTS: dict[str, float] = {
    "scroll_y": 0.0,
    "scroll_height": 0.0,
    "viewport_width": 1280.0,
    "viewport_height": 800.0,
    "interactive_elements": 0.0,
}
KEYWORDS: dict[str, tuple[str, ...]] = {
    "kw_dialog": ("dialog", "modal"),
    "kw_login": ("sign in", "password", "log in", "login"),
    "kw_captcha": ("captcha", "robot", "challenge"),
}
PAGE_FEATURES: tuple[str, ...] = (
    "scroll_frac",
    "scroll_height",
    "viewport_width",
    "viewport_height",
    "interactive_elements",
    *KEYWORDS,
    "url_login",
    "title_len",
    "step_frac",
    "budget_left",
    "budget_known",
    *(f"missing_{name}" for name in PAGE_DEFAULTS),
)
HAND_FEATURES: tuple[str, ...] = (
    "repeat_target",
    "repeat_action",
    "failures",
    "last_failed",
    "distinct_targets",
    "same_url",
)


class DatasetError(InputError):
    """Bad experience data; the message names the session, step and field."""


@dataclass(frozen=True)
class PageVector:
    values: list[float]
    url_bucket: int
    missing: list[str]


def url_bucket(url: str, buckets: int) -> int:
    """A stable (sha256, not Python's salted ``hash``) bucket of the URL's host and first path segment."""
    parts = urlsplit(url or "")
    key = f"{parts.netloc}/{(parts.path.strip('/').split('/') or [''])[0]}"
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % buckets


def _number(state: dict[str, Any], name: str, missing: list[str]) -> float:
    value = state.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        missing.append(name)
        return PAGE_DEFAULTS[name]
    return float(value)


def page_vector(page_state: dict[str, Any] | None, step: int, max_steps: int | None, buckets: int) -> PageVector:
    """Numeric page-state features (nested ``state`` fields) plus the URL's hash bucket."""
    page_state = page_state if isinstance(page_state, dict) else {}
    state = page_state.get("state")
    state = state if isinstance(state, dict) else {}
    missing: list[str] = []
    scroll_y = _number(state, "scroll_y", missing)
    height = _number(state, "scroll_height", missing)
    vw = _number(state, "viewport_width", missing)
    vh = _number(state, "viewport_height", missing)
    interactive = _number(state, "interactive_elements", missing)
    summary = str(state.get("accessibility_summary") or "").lower()
    url = str(page_state.get("url") or "")
    title = str(page_state.get("title") or "")
    values = [
        scroll_y / height if height > 0 else 0.0,
        math.log1p(max(height, 0.0)) / 10.0,
        vw / 1920.0,
        vh / 1080.0,
        math.log1p(max(interactive, 0.0)) / 5.0,
        *(float(any(word in summary for word in words)) for words in KEYWORDS.values()),
        float("login" in url.lower() or "signin" in url.lower()),
        min(len(title), 120) / 120.0,
        step / 20.0,
        (max_steps - step) / max_steps if max_steps else 0.0,
        float(bool(max_steps)),
        *(float(name in missing) for name in PAGE_DEFAULTS),
    ]
    return PageVector(values=values, url_bucket=url_bucket(url, buckets), missing=missing)


def action_token(action: dict[str, Any]) -> str:
    name = str(action.get("action") or "").strip().lower() or UNK
    target = str(action.get("target") or "").strip().lower()
    if name in ("click", "type", "select", "hover") and target:
        return f"{name}:{target[:60]}"
    return name


def build_vocab(rows: Iterable[dict[str, Any]], min_count: int = 1) -> list[str]:
    """Action tokens of the training rows (current actions), most frequent first; 0 = pad, 1 = unknown."""
    counts = Counter(action_token(row["actions"][-1]) for row in rows if row["actions"])
    tokens = sorted(
        (tok for tok, c in counts.items() if c >= min_count and tok not in (PAD, UNK)), key=lambda t: (-counts[t], t)
    )
    return [PAD, UNK, *tokens]


def encode_actions(
    actions: Sequence[dict[str, Any]], vocab: dict[str, int], history: int
) -> tuple[list[int], list[int], int]:
    """Token ids and success flags (0 pad, 1 failed, 2 succeeded) of the last ``history`` actions,
    left-padded; also how many were unknown to the vocabulary."""
    recent = list(actions)[-history:]
    ids, ok, unknown = [], [], 0
    for action in recent:
        token = vocab.get(action_token(action))
        if token is None:
            token, unknown = vocab[UNK], unknown + 1
        ids.append(token)
        ok.append(2 if action.get("success", True) else 1)
    pad = history - len(recent)
    return [0] * pad + ids, [0] * pad + ok, unknown


def hand_features(row: dict[str, Any], history: int) -> list[float]:
    """The logistic baseline's hand-made features: repetition and failures in the recent actions."""
    recent = row["actions"][-history:]
    targets = [str(a.get("target") or "") for a in recent]
    names = [str(a.get("action") or "") for a in recent]
    last_target, last_name = (targets[-1], names[-1]) if recent else ("", "")
    urls = row.get("recent_urls") or []
    return [
        sum(t == last_target and t != "" for t in targets) / history,
        sum(n == last_name for n in names) / history,
        sum(not a.get("success", True) for a in recent) / history,
        float(bool(recent) and not recent[-1].get("success", True)),
        len(set(targets)) / history,
        float(len(urls) >= 2 and all(u == urls[-1] for u in urls)),
    ]


def label_steps(task: dict[str, Any], horizon: int) -> list[tuple[int, str]]:
    """(label, reason) for every step: 1 when an intervention happens at or within ``horizon`` steps after it."""
    steps = task["steps"]
    out = [(0, "none")] * len(steps)
    for iv in task.get("interventions", []):
        at = int(iv["step"])
        for i in range(max(0, at - horizon), min(len(steps), at + 1)):
            out[i] = (1, str(iv.get("reason") or "other"))
    return out


def task_rows(task: dict[str, Any], horizon: int, history: int) -> list[dict[str, Any]]:
    """One self-contained row per step: what a predictor sees at that step, plus its label."""
    labels = label_steps(task, horizon)
    rows: list[dict[str, Any]] = []
    for i, step in enumerate(task["steps"]):
        if not step.get("action"):
            raise DatasetError(f"session {task['session_id']!r} step {i}: 'action' is missing or empty")
        start = max(0, i - history + 1)
        actions = [
            {"action": s["action"], "target": s.get("target") or "", "success": bool(s.get("success", True))}
            for s in task["steps"][start : i + 1]
        ]
        recent_urls = [str((s.get("page_before") or {}).get("url") or "") for s in task["steps"][max(0, i - 2) : i + 1]]
        rows.append(
            {
                "id": f"{task['session_id']}/{i:03d}",
                "session_id": task["session_id"],
                "category": task.get("category") or "unknown",
                "step": i,
                "max_steps": task.get("max_steps"),
                "label": labels[i][0],
                "reason": labels[i][1],
                "actions": actions,
                "recent_urls": recent_urls,
                "page_state": step.get("page_before") or {},
                "screenshot_path": step.get("screenshot_path"),
            }
        )
    return rows


def split_sessions(tasks: Sequence[dict[str, Any]], validation: float, test: float, seed: int) -> dict[str, str]:
    """session id → split. Stratified by status, ordered by a seeded sha256, so it is stable and disjoint."""
    if validation + test >= 1:
        raise DatasetError(f"validation_fraction + test_fraction must be < 1, got {validation + test}")
    by_status: dict[str, list[str]] = {}
    for task in tasks:
        by_status.setdefault(task["status"], []).append(task["session_id"])
    assignment: dict[str, str] = {}
    for status in sorted(by_status):
        ids = sorted(by_status[status], key=lambda s: hashlib.sha256(f"{seed}:{s}".encode()).hexdigest())
        n_test, n_val = round(len(ids) * test), round(len(ids) * validation)
        for k, sid in enumerate(ids):
            assignment[sid] = "test" if k < n_test else "validation" if k < n_test + n_val else "train"
    return assignment


@dataclass
class Arrays:
    """Model inputs for a list of rows, as numpy arrays (the visual part comes from the embed stage)."""

    page: np.ndarray  # (N, len(PAGE_FEATURES)) float32
    url: np.ndarray  # (N,) int64
    actions: np.ndarray  # (N, history) int64
    success: np.ndarray  # (N, history) int64
    hand: np.ndarray  # (N, len(HAND_FEATURES)) float32
    labels: np.ndarray  # (N,) int64
    unknown_actions: int
    missing_fields: dict[str, int]


def featurize(rows: Sequence[dict[str, Any]], vocab: dict[str, int], history: int, buckets: int) -> Arrays:
    pages, urls, acts, oks, hands, labels = [], [], [], [], [], []
    unknown = 0
    missing: Counter[str] = Counter()
    for row in rows:
        if not row.get("actions"):
            raise DatasetError(f"{row.get('id', '?')}: 'actions' is empty (the step's own action is required)")
        vec = page_vector(
            row.get("page_state"), int(row.get("step", len(row["actions"]) - 1)), row.get("max_steps"), buckets
        )
        missing.update(vec.missing)
        ids, ok, unk = encode_actions(row["actions"], vocab, history)
        unknown += unk
        pages.append(vec.values)
        urls.append(vec.url_bucket)
        acts.append(ids)
        oks.append(ok)
        hands.append(hand_features(row, history) + vec.values)
        labels.append(int(row.get("label", 0)))
    n = len(rows)
    return Arrays(
        page=np.asarray(pages, dtype=np.float32).reshape(n, len(PAGE_FEATURES)),
        url=np.asarray(urls, dtype=np.int64),
        actions=np.asarray(acts, dtype=np.int64).reshape(n, history),
        success=np.asarray(oks, dtype=np.int64).reshape(n, history),
        hand=np.asarray(hands, dtype=np.float32).reshape(n, len(HAND_FEATURES) + len(PAGE_FEATURES)),
        labels=np.asarray(labels, dtype=np.int64),
        unknown_actions=unknown,
        missing_fields=dict(sorted(missing.items())),
    )
