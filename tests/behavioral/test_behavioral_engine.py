"""Behaviour of the b-thread engine: selection, blocking, triggers, lifecycle."""

from __future__ import annotations

from typing import Any

import pytest

from worldagent.behavioral import BPEvent, Program, behavioral, bsync, bthread


def record_selected(program: Program) -> list[str]:
    """Collect the type of every selected event, in order."""
    selected: list[str] = []

    def listen(records: list[dict[str, Any]]) -> None:
        selected.extend(r["type"] for r in records if r.get("selected"))

    program.use_snapshot(listen)
    return selected


def requester(event_type: str, times: int = 1, detail: Any = None):
    return bthread([bsync(request={"type": event_type, "detail": detail})] * times)


def test_hot_cold_interleaves_exactly() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set(
        {
            "addHot": requester("hot", 3),
            "addCold": requester("cold", 3),
            "mixHotCold": bthread(
                [bsync(wait_for="hot", block="cold"), bsync(wait_for="cold", block="hot")],
                repeat=True,
            ),
        }
    )
    program.trigger({"type": "start"})
    assert selected == ["start", "hot", "cold", "hot", "cold", "hot", "cold"]


def test_without_interleaving_priority_runs_hot_first() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"addHot": requester("hot", 3), "addCold": requester("cold", 3)})
    program.trigger({"type": "start"})
    assert selected == ["start", "hot", "hot", "hot", "cold", "cold", "cold"]


def test_priority_follows_registration_order() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"b": requester("b"), "a": requester("a")})
    program.trigger({"type": "go"})
    assert selected == ["go", "b", "a"]


def test_trigger_outranks_thread_requests() -> None:
    program = behavioral()
    seen: list[list[dict[str, Any]]] = []
    program.use_snapshot(seen.append)
    program.bthreads.set({"loud": requester("loud")})
    program.trigger({"type": "external", "detail": 1})
    first = seen[0]
    assert [r["type"] for r in first] == ["external", "loud"]
    assert first[0]["source"] == "trigger" and first[0]["selected"] is True
    assert first[1]["source"] == "request" and first[1]["thread"] == {"label": "loud", "id": "bthread:1"}
    assert first[0]["priority"] < first[1]["priority"]
    assert first[1]["selected"] is False
    assert [r["type"] for r in seen[1] if r["selected"]] == ["loud"]


def test_request_callable_is_evaluated_lazily_at_bid_time() -> None:
    counter = {"n": 0}
    calls: list[int] = []

    def next_request() -> BPEvent:
        calls.append(counter["n"])
        return {"type": "tick", "detail": counter["n"]}

    program = behavioral()
    details: list[Any] = []
    program.use_feedback({"tick": details.append, "bump": lambda _d: counter.update(n=counter["n"] + 10)})
    program.bthreads.set({"ticker": bthread([bsync(wait_for="bump"), bsync(request=next_request)])})
    assert calls == []  # building the thread evaluates nothing
    counter["n"] = 5
    program.trigger({"type": "bump"})
    # Evaluated only when bids were collected after "bump" was handled.
    assert details == [15]
    assert calls == [15]


def test_blocked_trigger_is_reported_dropped_and_program_keeps_working() -> None:
    program = behavioral()
    seen: list[list[dict[str, Any]]] = []
    program.use_snapshot(seen.append)
    fed: list[Any] = []
    program.use_feedback({"forbidden": fed.append, "ok": fed.append})
    program.bthreads.set({"guard": bthread([bsync(block="forbidden")])})
    program.trigger({"type": "forbidden", "detail": "x"})
    assert fed == []
    assert len(seen) == 1
    (record,) = seen[0]
    assert record["source"] == "trigger" and not record["selected"]
    assert record["thread"] == {"label": "forbidden", "id": "trigger:1"}
    # Plaited's shape: the blocking thread as a ThreadReference (not a list of names).
    assert record["blockedBy"] == {"label": "guard", "id": "bthread:1"}
    assert record["blockers"] == [{"label": "guard", "id": "bthread:1"}]
    program.trigger({"type": "ok", "detail": "y"})
    assert fed == ["y"]
    assert program.bthreads.has("guard") == {"running": False, "pending": True}


def test_blocked_trigger_lets_thread_requests_run() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"guard": bthread([bsync(block="nope")]), "worker": requester("work")})
    program.trigger({"type": "nope"})
    assert selected == ["work"]


def test_interrupt_terminates_thread() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set(
        {
            "waiter": bthread([bsync(wait_for="never", interrupt="stop"), bsync(request={"type": "after"})]),
            "other": bthread([bsync(wait_for="stop"), bsync(request={"type": "other-after"})]),
        }
    )
    program.trigger({"type": "ping"})
    assert program.bthreads.has("waiter") == {"running": False, "pending": True}
    program.trigger({"type": "stop"})
    assert program.bthreads.has("waiter") == {"running": False, "pending": False}
    assert "after" not in selected
    assert selected[-1] == "other-after"


def test_interrupt_is_listed_in_snapshot() -> None:
    program = behavioral()
    seen: list[list[dict[str, Any]]] = []
    program.use_snapshot(seen.append)
    program.bthreads.set({"victim": bthread([bsync(interrupt="kill")])})
    program.trigger({"type": "kill"})
    assert seen[0][0]["interrupts"] == {"label": "victim", "id": "bthread:1"}


def test_interrupt_wins_over_wait_for_on_same_event() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"t": bthread([bsync(wait_for="x", interrupt="x"), bsync(request={"type": "next"})])})
    program.trigger({"type": "x"})
    assert "next" not in selected


def test_interrupted_thread_runs_its_cleanup() -> None:
    cleaned: list[bool] = []

    def thread():
        try:
            yield bsync(wait_for="never", interrupt="stop")
        finally:
            cleaned.append(True)

    program = behavioral()
    program.bthreads.set({"t": thread})
    program.trigger({"type": "begin"})
    program.trigger({"type": "stop"})
    assert cleaned == [True]


def test_repeat_true_loops_forever_until_blocked() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set(
        {
            "limit": bthread([bsync(wait_for="tick")] * 4 + [bsync(block="tick")]),
            "ticker": bthread([bsync(request={"type": "tick"})], repeat=True),
        }
    )
    program.trigger({"type": "go"})
    assert selected.count("tick") == 4
    assert program.bthreads.has("ticker")["pending"]


def test_repeat_callable_checked_after_each_pass() -> None:
    passes = {"n": 0}

    def more() -> bool:
        passes["n"] += 1
        return passes["n"] < 3

    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"t": bthread([bsync(request={"type": "a"}), bsync(request={"type": "b"})], repeat=more)})
    program.trigger({"type": "go"})
    assert selected == ["go", "a", "b", "a", "b", "a", "b"]
    assert passes["n"] == 3
    assert program.bthreads.has("t") == {"running": False, "pending": False}


def test_nested_bthreads_are_flattened_in_order() -> None:
    inner = bthread([bsync(request={"type": "i1"}), bsync(request={"type": "i2"})])
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"outer": bthread([bsync(request={"type": "o1"}), inner, bsync(request={"type": "o2"})])})
    program.trigger({"type": "go"})
    assert selected == ["go", "o1", "i1", "i2", "o2"]


def test_bthread_is_restartable() -> None:
    thread = requester("once")
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"t": thread})
    program.trigger({"type": "go"})
    assert program.bthreads.has("t") == {"running": False, "pending": False}
    program.bthreads.set({"t": thread})
    program.trigger({"type": "go"})
    assert selected == ["go", "once", "go", "once"]


def test_has_reports_running_then_pending_then_gone() -> None:
    program = behavioral()
    assert program.bthreads.has("t") == {"running": False, "pending": False}
    program.bthreads.set({"t": bthread([bsync(wait_for="end")])})
    assert program.bthreads.has("t") == {"running": True, "pending": False}
    program.trigger({"type": "begin"})
    assert program.bthreads.has("t") == {"running": False, "pending": True}
    program.trigger({"type": "end"})
    assert program.bthreads.has("t") == {"running": False, "pending": False}


def test_setting_a_live_name_again_is_ignored() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"t": bthread([bsync(wait_for="end"), bsync(request={"type": "first"})])})
    program.trigger({"type": "begin"})
    program.bthreads.set({"t": requester("second")})
    program.trigger({"type": "end"})
    assert "second" not in selected and "first" in selected


def test_feedback_receives_detail_and_disconnect_stops_calls() -> None:
    program = behavioral()
    got: list[Any] = []
    disconnect = program.use_feedback({"ping": got.append})
    program.trigger({"type": "ping", "detail": 1})
    disconnect()
    program.trigger({"type": "ping", "detail": 2})
    disconnect()  # idempotent
    assert got == [1]


def test_snapshot_disconnect_stops_calls() -> None:
    program = behavioral()
    seen: list[Any] = []
    disconnect = program.use_snapshot(seen.append)
    program.trigger({"type": "a"})
    disconnect()
    program.trigger({"type": "b"})
    assert len(seen) == 1


@pytest.mark.parametrize(
    "listener",
    [
        "go",
        lambda event: event["type"] == "go",
        ["other", "go"],
        ["other", lambda event: event["detail"] == 7],
    ],
    ids=["string", "predicate", "list-of-strings", "list-mixed"],
)
def test_listener_forms_match(listener: Any) -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"t": bthread([bsync(wait_for=listener), bsync(request={"type": "woke"})])})
    program.trigger({"type": "go", "detail": 7})
    assert selected == ["go", "woke"]


@pytest.mark.parametrize("listener", ["nope", lambda e: False, ["a", "b"]])
def test_non_matching_listeners_do_not_wake(listener: Any) -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"t": bthread([bsync(wait_for=listener), bsync(request={"type": "woke"})])})
    program.trigger({"type": "go", "detail": 7})
    assert selected == ["go"]


def test_block_listener_forms() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set(
        {
            "g1": bthread([bsync(block=["a", lambda e: e["detail"] == "bad"])]),
            "r": bthread([bsync(request={"type": "a"})]),
        }
    )
    program.trigger({"type": "b", "detail": "bad"})
    program.trigger({"type": "b", "detail": "good"})
    assert selected == ["b"]
    assert program.bthreads.has("r")["pending"]


def test_equal_requests_are_one_event() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.bthreads.set({"x": requester("e", detail={"k": 1}), "y": requester("e", detail={"k": 1})})
    program.trigger({"type": "go"})
    assert selected == ["go", "e"]


def test_same_type_different_detail_are_different_events() -> None:
    program = behavioral()
    details: list[Any] = []
    program.use_feedback({"e": details.append})
    program.bthreads.set({"x": requester("e", detail=1), "y": requester("e", detail=2)})
    program.trigger({"type": "go"})
    assert details == [1, 2]


def test_feedback_error_is_reported_and_program_stays_consistent() -> None:
    program = behavioral()
    seen: list[list[dict[str, Any]]] = []
    program.use_snapshot(seen.append)
    later: list[Any] = []

    def explode(_detail: Any) -> None:
        raise ValueError("boom")

    program.use_feedback({"a": explode, "b": later.append})
    program.bthreads.set({"t": bthread([bsync(request={"type": "a"}), bsync(request={"type": "b", "detail": 2})])})
    program.trigger({"type": "go"})
    errors = [r for batch in seen for r in batch if r["kind"] == "feedback-error"]
    assert len(errors) == 1
    assert errors[0]["type"] == "a" and "boom" in errors[0]["error"]
    assert later == [2]


def test_trigger_from_feedback_is_queued_not_lost() -> None:
    program = behavioral()
    selected = record_selected(program)
    program.use_feedback({"first": lambda _d: program.trigger({"type": "second"})})
    program.trigger({"type": "first"})
    assert selected == ["first", "second"]


def test_livelock_raises_and_next_trigger_is_clean() -> None:
    program = behavioral(max_super_steps=50)
    program.bthreads.set({"spin": bthread([bsync(request={"type": "spin"})], repeat=True)})
    with pytest.raises(RuntimeError, match="quiescence"):
        program.trigger({"type": "go"})
    program.bthreads.set({"guard": bthread([bsync(block="spin")])})
    selected = record_selected(program)
    program.trigger({"type": "again"})
    assert selected[0] == "again"


def test_bad_yield_raises_type_error() -> None:
    def broken():
        yield "not a sync point"

    program = behavioral()
    program.bthreads.set({"broken": broken})
    with pytest.raises(TypeError, match="broken"):
        program.trigger({"type": "go"})
    assert program.bthreads.has("broken") == {"running": False, "pending": False}


@pytest.mark.parametrize("bad", [{"detail": 1}, {"type": 3}, "go"])
def test_malformed_events_are_rejected(bad: Any) -> None:
    with pytest.raises(TypeError):
        behavioral().trigger(bad)
    with pytest.raises(TypeError):
        bsync(request=bad)


def test_bsync_is_frozen() -> None:
    point = bsync(request={"type": "a"}, wait_for="b")
    with pytest.raises(AttributeError):
        point.request = None  # type: ignore[misc]
    assert point.wait_for == ("b",)


def test_snapshot_names_the_blocking_thread_in_plaiteds_shape() -> None:
    # Plaited's water snapshot (src/behavioral/tests/__snapshots__/water.spec.ts.snap): while
    # mixHotCold waits for "hot" it blocks "cold", and the cold bid's blockedBy names it.
    program = behavioral()
    seen: list[list[dict[str, Any]]] = []
    program.use_snapshot(seen.append)
    program.bthreads.set(
        {
            "addHot": requester("hot", times=2),
            "addCold": requester("cold", times=2),
            "mixHotCold": bthread([bsync(wait_for="hot", block="cold"), bsync(wait_for="cold", block="hot")], True),
        }
    )
    program.trigger({"type": "start"})
    order = [r["type"] for step in seen for r in step if r["selected"]]
    assert order == ["start", "hot", "cold", "hot", "cold"]
    hot_step = next(step for step in seen if any(r["selected"] and r["type"] == "hot" for r in step))
    cold = next(r for r in hot_step if r["type"] == "cold")
    assert cold == {
        "kind": "bid",
        "thread": {"label": "addCold", "id": "bthread:2"},
        "source": "request",
        "selected": False,
        "type": "cold",
        "detail": None,
        "priority": 2,
        "blockedBy": {"label": "mixHotCold", "id": "bthread:3"},
        "interrupts": None,
        "blockers": [{"label": "mixHotCold", "id": "bthread:3"}],
    }


def test_blocked_by_is_the_highest_priority_blocker_and_blockers_lists_all() -> None:
    program = behavioral()
    seen: list[list[dict[str, Any]]] = []
    program.use_snapshot(seen.append)
    program.bthreads.set({"first": bthread([bsync(block="x")]), "second": bthread([bsync(block="x")])})
    program.trigger({"type": "x"})
    (record,) = seen[0]
    assert record["blockedBy"] == {"label": "first", "id": "bthread:1"}
    assert [ref["label"] for ref in record["blockers"]] == ["first", "second"]


def test_a_re_registered_thread_gets_a_new_id() -> None:
    program = behavioral()
    seen: list[list[dict[str, Any]]] = []
    program.use_snapshot(seen.append)
    program.bthreads.set({"once": requester("ping")})
    program.trigger({"type": "go"})
    program.bthreads.set({"once": requester("ping")})
    program.trigger({"type": "go"})
    ids = [r["thread"]["id"] for step in seen for r in step if r["type"] == "ping" and r["selected"]]
    assert ids == ["bthread:1", "bthread:2"]
