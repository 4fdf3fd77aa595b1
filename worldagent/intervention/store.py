"""The experience store: tasks, steps and interventions in any SQLAlchemy database (SQLite default).

    store = open_store("sqlite:///data/experience/experience.db")
    with store.session() as s: ...
    store.stats()

Screenshots live on disk; a step keeps the path. Page states are stored as recorded (JSON), with
the reference layout ``{url, title, state: {scroll_y, scroll_height, viewport_width,
viewport_height, interactive_elements, accessibility_summary}}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, Boolean, Engine, ForeignKey, Integer, String, Text, func, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from worldagent.errors import InputError
from worldagent.registry.db import create_tables, database_errors, location_of, make_engine, open_failure, sqlite_path

STATUSES: tuple[str, ...] = ("running", "complete", "intervention", "failed")
REASONS: tuple[str, ...] = (
    "agent_stuck",
    "repeated_failures",
    "blocking_overlay",
    "login_wall",
    "captcha",
    "max_steps",
    "other",
)


class StoreError(InputError):
    """The store cannot be opened or an operation on it is invalid; the message names the database."""


class Base(DeclarativeBase):
    pass


class TaskRow(Base):
    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[str] = mapped_column(String(128), unique=True, index=True)
    goal: Mapped[str] = mapped_column(Text)
    start_url: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(String(64), default="unknown")
    status: Mapped[str] = mapped_column(String(16), default="running")
    max_steps: Mapped[int | None] = mapped_column(Integer, nullable=True)
    source: Mapped[str] = mapped_column(String(32), default="recorder")
    started_at: Mapped[str | None] = mapped_column(String(40), nullable=True)
    steps: Mapped[list[StepRow]] = relationship(
        back_populates="task", order_by="StepRow.index", cascade="all, delete-orphan"
    )
    interventions: Mapped[list[InterventionRow]] = relationship(
        back_populates="task", order_by="InterventionRow.step", cascade="all, delete-orphan"
    )


class StepRow(Base):
    __tablename__ = "steps"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(Text, default="")
    success: Mapped[bool] = mapped_column(Boolean, default=True)
    page_before: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    page_after: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    screenshot_path: Mapped[str | None] = mapped_column(Text, nullable=True)
    task: Mapped[TaskRow] = relationship(back_populates="steps")


class InterventionRow(Base):
    __tablename__ = "interventions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id"), index=True)
    step: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(64))
    details: Mapped[str] = mapped_column(Text, default="")
    task: Mapped[TaskRow] = relationship(back_populates="interventions")


@dataclass
class ExperienceStore:
    engine: Engine
    url: str

    @contextmanager
    def session(self) -> Iterator[Session]:
        with (
            database_errors("experience store", location_of(self.url)),
            Session(self.engine, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> ExperienceStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def stats(self) -> dict[str, Any]:
        with self.session() as s:
            by_status = dict(s.execute(select(TaskRow.status, func.count()).group_by(TaskRow.status)).all())
            by_reason = dict(
                s.execute(select(InterventionRow.reason, func.count()).group_by(InterventionRow.reason)).all()
            )
            by_category = dict(s.execute(select(TaskRow.category, func.count()).group_by(TaskRow.category)).all())
            steps = s.scalar(select(func.count()).select_from(StepRow)) or 0
            missing = s.scalar(select(func.count()).select_from(StepRow).where(StepRow.screenshot_path.is_(None))) or 0
        tasks = sum(by_status.values())
        return {
            "tasks": tasks,
            "steps": steps,
            "steps_without_screenshot": missing,
            "by_status": {k: by_status[k] for k in sorted(by_status)},
            "by_category": {k: by_category[k] for k in sorted(by_category)},
            "interventions_by_reason": {k: by_reason[k] for k in sorted(by_reason)},
            "intervention_rate": (by_status.get("intervention", 0) / tasks) if tasks else 0.0,
        }


def open_store(url: str, create: bool = True) -> ExperienceStore:
    """Open (and with ``create`` initialise) the store. A missing SQLite file without ``create`` is an error."""
    try:
        path = sqlite_path(url)
    except InputError as error:
        raise StoreError(f"invalid experience store URL: {error}") from None
    if path is not None and not create and not path.is_file():
        raise StoreError(f"{path}: experience store not found (run `worldagent experience init` or the simulate stage)")
    engine = make_engine(url)  # the SQLite file's directory, busy timeout and foreign keys
    if create:
        create_tables(engine, Base.metadata, "experience store", url)
    else:
        try:
            with engine.connect() as conn:
                if not engine.dialect.has_table(conn, "tasks"):
                    raise StoreError(
                        f"{url}: not an experience store (no 'tasks' table; run `worldagent experience init`)"
                    )
        except DBAPIError as error:
            engine.dispose()
            raise open_failure(error, "experience store", location_of(url)) from None
    return ExperienceStore(engine=engine, url=url)


def task_to_dict(task: TaskRow) -> dict[str, Any]:
    return {
        "session_id": task.session_id,
        "goal": task.goal,
        "start_url": task.start_url,
        "category": task.category,
        "status": task.status,
        "max_steps": task.max_steps,
        "total_steps": len(task.steps),
        "steps": [
            {
                "index": st.index,
                "action": st.action,
                "target": st.target,
                "success": st.success,
                "page_before": st.page_before,
                "page_after": st.page_after,
                "screenshot_path": st.screenshot_path,
            }
            for st in task.steps
        ],
        "interventions": [{"step": iv.step, "reason": iv.reason, "details": iv.details} for iv in task.interventions],
    }


def load_tasks(store: ExperienceStore) -> list[dict[str, Any]]:
    """Every finished task with its steps and interventions, ordered by session id."""
    with store.session() as s:
        rows = s.scalars(select(TaskRow).where(TaskRow.status != "running").order_by(TaskRow.session_id)).all()
        return [task_to_dict(row) for row in rows]


def add_task(session: Session, task: dict[str, Any], source: str = "import") -> TaskRow:
    """Insert one finished task in :func:`task_to_dict`'s layout (steps and interventions included)."""
    status = task.get("status", "complete")
    if status not in STATUSES:
        raise StoreError(
            f"task {task.get('session_id')!r}: unknown status {status!r}; expected one of {', '.join(STATUSES)}"
        )
    if session.scalar(select(TaskRow.id).where(TaskRow.session_id == task["session_id"])) is not None:
        raise StoreError(f"task {task['session_id']!r} is already in the store")
    row = TaskRow(
        session_id=str(task["session_id"]),
        goal=str(task.get("goal", "")),
        start_url=str(task.get("start_url", "")),
        category=str(task.get("category") or "unknown"),
        status=status,
        max_steps=task.get("max_steps"),
        source=source,
        started_at=task.get("started_at"),
    )
    for i, step in enumerate(task.get("steps", [])):
        row.steps.append(
            StepRow(
                index=int(step.get("index", i)),
                action=str(step["action"]),
                target=str(step.get("target") or ""),
                success=bool(step.get("success", True)),
                page_before=step.get("page_before") or {},
                page_after=step.get("page_after"),
                screenshot_path=step.get("screenshot_path"),
            )
        )
    for iv in task.get("interventions", []):
        row.interventions.append(
            InterventionRow(
                step=int(iv["step"]), reason=str(iv.get("reason") or "other"), details=str(iv.get("details") or "")
            )
        )
    session.add(row)
    return row
