"""Behavioral programming engine: b-threads, sync points and super-steps.

Modelled on Plaited's ``behavioral()`` (learned from, not copied): every b-thread
is a generator that yields sync points; a *super-step* collects the requested
events of all threads parked at a sync point, drops the blocked ones, selects the
highest-priority survivor and wakes every thread that requested or waited for it.

Semantic decisions (where Plaited is silent or differs):

* Priority is registration order (first registered = highest); an external
  ``trigger`` event outranks every thread for the one super-step it takes part in.
* ``bthreads.set`` only registers threads (``running``); they reach their first
  sync point (``pending``) when the program next runs, i.e. on the next
  ``trigger``. Use any event (even one nobody listens to) to start a program.
* Two bids denote the same event when their types are equal and their details
  compare equal; every thread requesting that event advances, not only the one
  whose bid won.
* When the selected event matches a thread's ``interrupt`` the thread is
  terminated even if it also requested or waited for that event.
* A blocked triggered event is reported in the snapshot and dropped; the same
  super-step then selects among the threads' own requests, so the program never
  wedges on an external event.
* Exceptions raised by feedback handlers do not propagate: the super-step is
  already committed, so they are reported to snapshot listeners as a
  ``feedback-error`` record (and logged when nobody listens). Exceptions raised by
  b-thread code (generators, request callables, listener predicates) are bugs in
  the program and do propagate out of ``trigger``; the pending external events are
  discarded so that the next ``trigger`` starts clean.
* ``trigger`` called re-entrantly (from a feedback handler or snapshot listener)
  is queued and takes part in the next super-step.

Snapshot records. Each super-step publishes one ``{"kind": "bid", ...}`` record per candidate
event, in Plaited's ``SelectionBid`` shape (``src/behavioral/behavioral.schemas.ts`` and the
``blockedBy`` entries of its snapshot tests, ``src/behavioral/tests/__snapshots__``)::

    {"kind": "bid",
     "thread": {"label": "addCold", "id": "bthread:2"},   # a ThreadReference
     "source": "request",                                 # or "trigger"
     "selected": False, "type": "cold", "detail": None, "priority": 2,
     "blockedBy": {"label": "mixHotCold", "id": "bthread:3"},  # the first blocker, or None
     "interrupts": None,                                  # the first thread it interrupts, or None
     "blockers": [{"label": "mixHotCold", "id": "bthread:3"}]}

As in Plaited, ``blockedBy`` and ``interrupts`` name one thread (the highest-priority one); a
trigger's ``thread`` is labelled with its event type and has a ``trigger:<n>`` id, a b-thread's
id is ``bthread:<n>`` (one per registration, so a re-registered name gets a new id).
``blockers`` (every blocking thread, by priority) is this engine's addition: the agent's
constraints report every rule a tool call breaks, not only the first.
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

__all__ = [
    "BPEvent",
    "BThread",
    "Listener",
    "Program",
    "SnapshotRecord",
    "SyncPoint",
    "ThreadReference",
    "behavioral",
    "bsync",
    "bthread",
]

_log = logging.getLogger(__name__)


class BPEvent(TypedDict):
    """An event: ``type`` names it, ``detail`` carries its payload."""

    type: str
    detail: Any


Listener = str | Callable[[BPEvent], bool]
Listeners = Listener | Sequence[Listener] | None
RequestSpec = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None
SnapshotRecord = dict[str, Any]
ThreadReference = dict[str, str]  # Plaited's ThreadReference: {"label": ..., "id": ...}
SnapshotListener = Callable[[list[SnapshotRecord]], None]
FeedbackHandler = Callable[[Any], None]

TRIGGER_PRIORITY = 0


@dataclass(frozen=True)
class SyncPoint:
    """What a b-thread declares when it parks: what it requests, awaits, blocks
    and what terminates it. Listener fields are normalised to tuples."""

    request: RequestSpec = None
    wait_for: tuple[Listener, ...] = ()
    block: tuple[Listener, ...] = ()
    interrupt: tuple[Listener, ...] = ()


def bsync(
    request: RequestSpec = None,
    wait_for: Listeners = None,
    block: Listeners = None,
    interrupt: Listeners = None,
) -> SyncPoint:
    """Build a sync point. ``request`` is an event mapping or a zero-argument
    callable returning one (evaluated each time bids are collected)."""
    if request is not None and not callable(request):
        request = _to_event(request)  # copy now: fail at definition, immune to later mutation
    return SyncPoint(
        request=request,
        wait_for=_listeners(wait_for, "wait_for"),
        block=_listeners(block, "block"),
        interrupt=_listeners(interrupt, "interrupt"),
    )


BThread = Callable[[], Iterator[SyncPoint]]
Rule = SyncPoint | BThread


def bthread(rules: Sequence[Rule], repeat: bool | Callable[[], Any] = False) -> BThread:
    """Compose sync points and other b-threads (flattened in order) into a b-thread.

    The result is a zero-argument callable producing a fresh generator, so the same
    b-thread can be registered again after it finished. ``repeat`` is ``True``
    (loop forever) or a callable checked after each pass (loop while truthy).
    """
    steps = tuple(rules)
    for step in steps:
        if not isinstance(step, SyncPoint) and not callable(step):
            raise TypeError(f"bthread rules must be sync points or b-threads, got {step!r}")
    if not isinstance(repeat, bool) and not callable(repeat):
        raise TypeError("repeat must be a bool or a zero-argument callable")

    def again() -> bool:
        return bool(repeat()) if callable(repeat) else repeat

    def run() -> Iterator[SyncPoint]:
        while True:
            yielded = False
            for sync_point in _flatten(steps):
                yielded = True
                yield sync_point
            # A pass without sync points would spin forever under repeat.
            if not yielded or not again():
                return

    return run


def _flatten(steps: Iterable[Rule]) -> Iterator[SyncPoint]:
    for step in steps:
        if isinstance(step, SyncPoint):
            yield step
        else:
            yield from step()


def _listeners(value: Listeners, name: str) -> tuple[Listener, ...]:
    if value is None:
        return ()
    items: tuple[Any, ...] = (value,) if isinstance(value, str) or callable(value) else tuple(value)
    for item in items:
        if not isinstance(item, str) and not callable(item):
            raise TypeError(f"{name} listeners must be type strings or predicates, got {item!r}")
    return items


def _to_event(value: Any) -> BPEvent:
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        raise TypeError(f"an event must be a mapping with a string 'type', got {value!r}")
    return {"type": value["type"], "detail": value.get("detail")}


def _matches(listeners: tuple[Listener, ...], event: BPEvent) -> bool:
    return any(
        listener == event["type"] if isinstance(listener, str) else bool(listener(event)) for listener in listeners
    )


def _same_event(a: BPEvent, b: BPEvent) -> bool:
    if a["type"] != b["type"]:
        return False
    if a["detail"] is b["detail"]:
        return True
    try:
        return bool(a["detail"] == b["detail"])
    except Exception:  # details without a usable __eq__ (e.g. arrays) compare by identity
        return False


@dataclass
class _Thread:
    name: str
    priority: int
    generator: Iterator[SyncPoint]
    bid: SyncPoint | None = None  # None: running (to be advanced); else pending
    id: str = ""

    def reference(self) -> ThreadReference:
        return {"label": self.name, "id": self.id}


@dataclass
class _Candidate:
    thread: ThreadReference
    priority: int
    event: BPEvent
    trigger: bool
    blocked_by: list[ThreadReference] = field(default_factory=list)
    interrupts: list[ThreadReference] = field(default_factory=list)

    def record(self, selected: bool) -> SnapshotRecord:
        return {
            "kind": "bid",
            "thread": dict(self.thread),
            "source": "trigger" if self.trigger else "request",
            "selected": selected,
            "type": self.event["type"],
            "detail": self.event["detail"],
            "priority": self.priority,
            "blockedBy": dict(self.blocked_by[0]) if self.blocked_by else None,
            "interrupts": dict(self.interrupts[0]) if self.interrupts else None,
            "blockers": [dict(ref) for ref in self.blocked_by],
        }


def _close(generator: Iterator[SyncPoint]) -> None:
    close = getattr(generator, "close", None)  # plain iterators have nothing to release
    if close is not None:
        close()


class BThreads:
    """The ``bthreads`` facet of a program: register and inspect b-threads."""

    def __init__(self, program: Program) -> None:
        self._program = program

    def set(self, threads: Mapping[str, BThread]) -> None:
        """Register threads; a name that is already running or pending is ignored."""
        for name, thread in threads.items():
            self._program._add(name, thread)

    def has(self, name: str) -> dict[str, bool]:
        """``running``: registered, not yet at a sync point; ``pending``: parked at one."""
        thread = self._program._threads.get(name)
        return {
            "running": thread is not None and thread.bid is None,
            "pending": thread is not None and thread.bid is not None,
        }


class Program:
    """A behavioral program. Create with :func:`behavioral`."""

    def __init__(self, max_super_steps: int = 100_000) -> None:
        self.bthreads = BThreads(self)
        self._threads: dict[str, _Thread] = {}
        self._priorities = itertools.count(TRIGGER_PRIORITY + 1)
        self._external: deque[BPEvent] = deque()
        self._feedback: dict[int, Mapping[str, FeedbackHandler]] = {}
        self._snapshot: dict[int, SnapshotListener] = {}
        self._ids = itertools.count()
        self._thread_ids = itertools.count(1)
        self._trigger_ids = itertools.count(1)
        self._stepping = False
        self._max_super_steps = max_super_steps

    # -- public API -----------------------------------------------------------------

    def trigger(self, event: Mapping[str, Any]) -> None:
        """Inject an external event and run super-steps until nothing can be selected.

        Raises RuntimeError when more than ``max_super_steps`` super-steps run
        without reaching quiescence (a live-locked program, e.g. an unblocked
        ``repeat=True`` requester).
        """
        self._external.append(_to_event(event))
        if self._stepping:
            return  # re-entrant: the running loop picks it up next super-step
        self._stepping = True
        try:
            self._run()
        except BaseException:
            self._external.clear()
            raise
        finally:
            self._stepping = False

    def use_feedback(self, handlers: Mapping[str, FeedbackHandler]) -> Callable[[], None]:
        """Call ``handlers[type](detail)`` for each selected event; returns disconnect."""
        return self._connect(self._feedback, dict(handlers))

    def use_snapshot(self, listener: SnapshotListener) -> Callable[[], None]:
        """Receive each super-step's bid records; returns disconnect."""
        return self._connect(self._snapshot, listener)

    # -- registration ---------------------------------------------------------------

    def _add(self, name: str, thread: BThread) -> None:
        if name in self._threads:
            return
        if not callable(thread):
            raise TypeError(f"b-thread {name!r} must be a zero-argument callable")
        ident = f"bthread:{next(self._thread_ids)}"
        self._threads[name] = _Thread(name, next(self._priorities), iter(thread()), id=ident)

    def _connect(self, registry: dict[int, Any], value: Any) -> Callable[[], None]:
        key = next(self._ids)
        registry[key] = value

        def disconnect() -> None:
            registry.pop(key, None)

        return disconnect

    # -- super-steps ----------------------------------------------------------------

    def _run(self) -> None:
        for _ in range(self._max_super_steps):
            external = self._external.popleft() if self._external else None
            if not self._super_step(external) and not self._external:
                return
        raise RuntimeError(f"no quiescence after {self._max_super_steps} super-steps")

    def _super_step(self, external: BPEvent | None) -> bool:
        self._advance_running()
        candidates = self._candidates(external)
        selected = next((c for c in candidates if not c.blocked_by), None)
        if selected is not None or external is not None:
            self._publish([c.record(c is selected) for c in candidates])
        if selected is None:
            return False
        self._wake(selected.event, candidates)
        self._feed(selected.event)
        return True

    def _advance_running(self) -> None:
        for thread in [t for t in self._threads.values() if t.bid is None]:
            try:
                bid = next(thread.generator)
            except StopIteration:
                del self._threads[thread.name]
                continue
            except BaseException:
                del self._threads[thread.name]  # its generator is dead either way
                raise
            if not isinstance(bid, SyncPoint):
                del self._threads[thread.name]
                raise TypeError(f"b-thread {thread.name!r} yielded {bid!r}, not a sync point")
            thread.bid = bid

    def _pending(self) -> list[_Thread]:
        return sorted((t for t in self._threads.values() if t.bid is not None), key=lambda t: t.priority)

    def _candidates(self, external: BPEvent | None) -> list[_Candidate]:
        pending = self._pending()
        candidates: list[_Candidate] = []
        if external is not None:
            # Plaited labels an ingress (trigger) bid with its event type.
            ref = {"label": external["type"], "id": f"trigger:{next(self._trigger_ids)}"}
            candidates.append(_Candidate(ref, TRIGGER_PRIORITY, external, True))
        for thread in pending:
            request = thread.bid.request if thread.bid else None
            if request is not None:
                event = _to_event(request() if callable(request) else request)
                candidates.append(_Candidate(thread.reference(), thread.priority, event, False))
        for candidate in candidates:
            for thread in pending:
                assert thread.bid is not None
                if _matches(thread.bid.block, candidate.event):
                    candidate.blocked_by.append(thread.reference())
                if _matches(thread.bid.interrupt, candidate.event):
                    candidate.interrupts.append(thread.reference())
        return candidates

    def _wake(self, event: BPEvent, candidates: list[_Candidate]) -> None:
        requested = {c.thread["label"]: c.event for c in candidates if not c.trigger}
        for thread in self._pending():
            assert thread.bid is not None
            if _matches(thread.bid.interrupt, event):
                del self._threads[thread.name]
                _close(thread.generator)
            elif (
                thread.name in requested
                and _same_event(requested[thread.name], event)
                or _matches(thread.bid.wait_for, event)
            ):
                thread.bid = None

    # -- outputs --------------------------------------------------------------------

    def _feed(self, event: BPEvent) -> None:
        for handlers in list(self._feedback.values()):
            handler = handlers.get(event["type"])
            if handler is None:
                continue
            try:
                handler(event["detail"])
            except Exception as error:  # the step is committed; report, don't unwind
                self._report_feedback_error(event, handler, error)

    def _report_feedback_error(self, event: BPEvent, handler: FeedbackHandler, error: Exception) -> None:
        record: SnapshotRecord = {
            "kind": "feedback-error",
            "type": event["type"],
            "detail": event["detail"],
            "handler": getattr(handler, "__qualname__", repr(handler)),
            "error": f"{type(error).__name__}: {error}",
        }
        if not self._snapshot:
            _log.error("feedback handler for %r failed", event["type"], exc_info=error)
        self._publish([record])

    def _publish(self, records: list[SnapshotRecord]) -> None:
        for listener in list(self._snapshot.values()):
            try:
                listener([dict(r) for r in records])
            except Exception:  # an observer must not corrupt the program it observes
                _log.exception("snapshot listener failed")


def behavioral(max_super_steps: int = 100_000) -> Program:
    """Create an empty behavioral program."""
    return Program(max_super_steps=max_super_steps)
