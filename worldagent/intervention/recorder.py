"""The recorder an agent calls while it runs, and a Playwright helper that captures a live page.

rec = Recorder(open_store(url), screenshots_dir="data/experience/screenshots")
sid = rec.start_task(goal="buy a lamp", start_url="https://shop.example", category="ecommerce")
shot, state = capture_page_state(page, rec.screenshot_path(sid, 0))     # Playwright sync Page
rec.record_step(sid, action="click", target="#buy", success=True, page_before=state, screenshot_path=shot)
rec.record_intervention(sid, step=0, reason="captcha")                   # a human had to step in
rec.finish(sid, "intervention")
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from worldagent.intervention.store import (
    REASONS,
    STATUSES,
    ExperienceStore,
    InterventionRow,
    StepRow,
    StoreError,
    TaskRow,
)

# A short accessibility-tree summary: role counts and the first names, computed in the page.
_PAGE_STATE_JS = """
() => {
  const sel = 'a[href],button,input,select,textarea,[role=button],[role=link],[role=checkbox],[tabindex]:not([tabindex="-1"])';
  const interactive = Array.from(document.querySelectorAll(sel)).filter(e => !e.disabled);
  const names = interactive.slice(0, 8).map(e => {
    const role = e.getAttribute('role') || e.tagName.toLowerCase();
    const name = (e.getAttribute('aria-label') || e.innerText || e.value || e.getAttribute('placeholder') || '').trim().slice(0, 40);
    return role + ' "' + name + '"';
  });
  const dialogs = document.querySelectorAll('dialog[open],[role=dialog],[aria-modal=true]').length;
  return {
    scroll_y: Math.round(window.scrollY),
    scroll_height: Math.round(document.documentElement.scrollHeight),
    viewport_width: window.innerWidth,
    viewport_height: window.innerHeight,
    interactive_elements: interactive.length,
    dialogs: dialogs,
    accessibility_summary: names.join('; ') + (dialogs ? ' | dialog open' : ''),
  };
}
"""


def capture_page_state(page: Any, screenshot_path: str | Path | None = None) -> tuple[str | None, dict[str, Any]]:
    """Screenshot (when a path is given) and page state of a Playwright sync ``Page``, in the store's layout."""
    shot = None
    if screenshot_path is not None:
        path = Path(screenshot_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path))
        shot = str(path)
    state = page.evaluate(_PAGE_STATE_JS)
    return shot, {"url": page.url, "title": page.title(), "state": state}


class Recorder:
    """Write one agent run at a time (or many) into the experience store; every call is one transaction."""

    def __init__(
        self,
        store: ExperienceStore,
        screenshots_dir: str | Path = "data/experience/screenshots",
        source: str = "recorder",
    ) -> None:
        self.store = store
        self.screenshots_dir = Path(screenshots_dir)
        self.source = source

    def screenshot_path(self, session_id: str, step: int) -> Path:
        return self.screenshots_dir / session_id / f"{step:03d}.png"

    def start_task(
        self,
        goal: str,
        start_url: str,
        category: str = "unknown",
        session_id: str | None = None,
        max_steps: int | None = None,
        started_at: str | None = None,
    ) -> str:
        if not goal.strip():
            raise StoreError("start_task: the goal is empty")
        sid = session_id or uuid.uuid4().hex
        with self.store.session() as s:
            if s.scalar(select(TaskRow.id).where(TaskRow.session_id == sid)) is not None:
                raise StoreError(f"start_task: session {sid!r} already exists in {self.store.url}")
            s.add(
                TaskRow(
                    session_id=sid,
                    goal=goal,
                    start_url=start_url,
                    category=category,
                    status="running",
                    max_steps=max_steps,
                    source=self.source,
                    started_at=started_at,
                )
            )
        return sid

    def _task(self, s: Any, session_id: str) -> TaskRow:
        task = s.scalar(select(TaskRow).where(TaskRow.session_id == session_id))
        if task is None:
            raise StoreError(f"unknown session {session_id!r} (call start_task first)")
        return task

    def record_step(
        self,
        session_id: str,
        action: str,
        target: str = "",
        success: bool = True,
        page_before: dict[str, Any] | None = None,
        page_after: dict[str, Any] | None = None,
        screenshot_path: str | Path | None = None,
    ) -> int:
        """Append a step; returns its index (0-based)."""
        if not action:
            raise StoreError("record_step: the action is empty")
        with self.store.session() as s:
            task = self._task(s, session_id)
            if task.status != "running":
                raise StoreError(f"record_step: session {session_id!r} is already finished ({task.status})")
            index = s.scalar(select(func.count()).select_from(StepRow).where(StepRow.task_id == task.id)) or 0
            s.add(
                StepRow(
                    task_id=task.id,
                    index=index,
                    action=action,
                    target=target,
                    success=bool(success),
                    page_before=page_before or {},
                    page_after=page_after,
                    screenshot_path=str(screenshot_path) if screenshot_path is not None else None,
                )
            )
        return index

    def record_intervention(self, session_id: str, step: int, reason: str, details: str = "") -> None:
        if reason not in REASONS:
            raise StoreError(f"record_intervention: unknown reason {reason!r}; expected one of {', '.join(REASONS)}")
        with self.store.session() as s:
            task = self._task(s, session_id)
            s.add(InterventionRow(task_id=task.id, step=int(step), reason=reason, details=details))

    def finish(self, session_id: str, status: str) -> None:
        if status not in STATUSES or status == "running":
            raise StoreError(f"finish: status must be complete, intervention or failed, got {status!r}")
        with self.store.session() as s:
            task = self._task(s, session_id)
            if status == "intervention" and not task.interventions:
                raise StoreError(f"finish: session {session_id!r} ends in 'intervention' but none was recorded")
            task.status = status
