"""Property: whatever the mix of requesters and blockers, a blocked event is never selected."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from worldagent.behavioral import behavioral, bsync, bthread

TYPES = ["a", "b", "c", "d", "e"]
types = st.sampled_from(TYPES)


@settings(max_examples=200, deadline=None)
@given(
    requests=st.lists(st.lists(types, min_size=1, max_size=4), min_size=0, max_size=5),
    blocked=st.lists(st.sets(types, max_size=3), min_size=1, max_size=4),
    triggers=st.lists(types, min_size=1, max_size=5),
)
def test_selected_event_is_never_blocked(
    requests: list[list[str]], blocked: list[set[str]], triggers: list[str]
) -> None:
    program = behavioral()
    selected: list[dict[str, Any]] = []
    program.use_snapshot(lambda records: selected.extend(r for r in records if r.get("selected")))
    fed: list[str] = []
    program.use_feedback({t: (lambda _d, t=t: fed.append(t)) for t in TYPES})
    # Blockers first so they outrank requesters; they never advance.
    program.bthreads.set({f"block{i}": bthread([bsync(block=sorted(s))]) for i, s in enumerate(blocked)})
    program.bthreads.set(
        {f"req{i}": bthread([bsync(request={"type": t}) for t in seq]) for i, seq in enumerate(requests)}
    )
    for t in triggers:
        program.trigger({"type": t})

    forbidden = set().union(*blocked)
    assert all(r["type"] not in forbidden and r["blockedBy"] is None and r["blockers"] == [] for r in selected)
    assert all(t not in forbidden for t in fed)
    assert fed == [r["type"] for r in selected]
    # Liveness: every unblocked trigger was selected.
    assert sum(1 for r in selected if r["source"] == "trigger") == sum(1 for t in triggers if t not in forbidden)


@settings(max_examples=100, deadline=None)
@given(requests=st.lists(st.lists(types, min_size=1, max_size=4), min_size=1, max_size=5))
def test_runs_are_deterministic(requests: list[list[str]]) -> None:
    def run() -> list[str]:
        program = behavioral()
        out: list[str] = []
        program.use_snapshot(lambda records: out.extend(r["type"] for r in records if r["selected"]))
        program.bthreads.set(
            {f"r{i}": bthread([bsync(request={"type": t}) for t in seq]) for i, seq in enumerate(requests)}
        )
        program.trigger({"type": "start"})
        return out

    assert run() == run()


@settings(max_examples=200, deadline=None)
@given(
    phases=st.lists(st.tuples(st.sets(types, max_size=2), types, st.sets(types, max_size=2)), min_size=1, max_size=3),
    requests=st.lists(st.lists(types, min_size=1, max_size=4), max_size=4),
    triggers=st.lists(types, min_size=1, max_size=6),
)
def test_blocks_that_change_over_time_are_respected(
    phases: list[tuple[set[str], str, set[str]]], requests: list[list[str]], triggers: list[str]
) -> None:
    """Blocker i blocks ``before`` until it sees ``switch``, then blocks ``after``.

    The oracle replays the selected sequence to know each blocker's phase, so it
    does not trust the engine's own ``blocked_by`` bookkeeping.
    """
    program = behavioral()
    selected: list[str] = []
    program.use_snapshot(lambda records: selected.extend(r["type"] for r in records if r.get("selected")))
    program.bthreads.set(
        {
            f"blocker{i}": bthread([bsync(block=sorted(before), wait_for=switch), bsync(block=sorted(after))])
            for i, (before, switch, after) in enumerate(phases)
        }
    )
    program.bthreads.set(
        {f"req{i}": bthread([bsync(request={"type": t}) for t in seq]) for i, seq in enumerate(requests)}
    )
    for t in triggers:
        program.trigger({"type": t})

    switched = [False] * len(phases)
    for event in selected:
        for i, (before, _switch, after) in enumerate(phases):
            assert event not in (after if switched[i] else before)
        for i, (_before, switch, _after) in enumerate(phases):
            switched[i] = switched[i] or event == switch
