"""The embedded browser-decision set: deterministic, varied, a held-out split disjoint from training."""

from __future__ import annotations

import re
from collections import Counter

from worldagent.config import Params
from worldagent.specialists.browser_set import (
    HELDOUT_KINDS,
    default_set,
    embedded_rows,
    feedback_row,
    generate_decisions,
    render_page,
    row_key,
    snapshot_refs,
)
from worldagent.specialists.decisions import as_browser_action, as_browser_input, conversation
from worldagent.specialists.strategies import sft_rows


def test_the_generator_is_deterministic_for_a_seed_and_differs_across_seeds() -> None:
    a = [feedback_row(d) for d in generate_decisions(7, 40, "train")]
    b = [feedback_row(d) for d in generate_decisions(7, 40, "train")]
    c = [feedback_row(d) for d in generate_decisions(8, 40, "train")]
    assert a == b
    assert a != c
    # A longer set starts with the shorter one: asking for more rows does not reshuffle the first ones.
    assert [feedback_row(d) for d in generate_decisions(7, 60, "train")][:40] == a


def test_held_out_split_shares_no_decision_phrasing_or_held_out_page_kind_with_training() -> None:
    train, heldout = default_set(3, 400, 200)
    assert {row_key(feedback_row(d)) for d in train}.isdisjoint({row_key(feedback_row(d)) for d in heldout})
    assert {d.template for d in train}.isdisjoint({d.template for d in heldout})
    assert {d.page.kind for d in train}.isdisjoint(HELDOUT_KINDS)
    assert set(HELDOUT_KINDS) <= {d.page.kind for d in heldout}
    train_tasks = {d.task for d in train}
    assert not any(d.task in train_tasks for d in heldout)


def test_the_set_is_varied_and_the_answer_needs_reading_the_names() -> None:
    train, heldout = default_set(7, 160, 60)
    for split in (train, heldout):
        assert len({d.page.kind for d in split}) >= 8
        assert set(Counter(d.action for d in split)) == {"click", "fill", "select"}
    for decision in train + heldout:
        page = decision.page
        refs = [e.ref for e in page.elements]
        assert len(refs) == len(set(refs)) and len(refs) >= 5  # distractors on every page
        target = next(e for e in page.elements if e.ref == decision.target)
        assert target.name in decision.task  # the task names its element...
        assert decision.target not in decision.task  # ...but never its ref
        if decision.action == "select":
            assert decision.value in target.options
        else:
            assert (decision.value is None) == (decision.action == "click")
    # The target is not at a fixed position: position alone cannot answer.
    positions = Counter([e.ref for e in d.page.elements].index(d.target) for d in train)
    assert max(positions.values()) < 0.3 * len(train)


def test_rows_use_the_feedback_format_and_train_like_feedback() -> None:
    train, heldout = embedded_rows(Params().specialists.browser_set)
    assert (len(train), len(heldout)) == (160, 60)
    row = heldout[0]
    assert as_browser_input(row["input"]) is not None and as_browser_action(row["output"]) is not None
    assert row["label"] == "good"
    snapshot = row["input"]["pageSnapshot"]
    assert snapshot.startswith("url: https://") and "\ntitle: " in snapshot
    assert row["output"]["selectorOrRef"] in snapshot_refs(snapshot)
    # The same conversion as a feedback row (system prompt, task, snapshot, canonical JSON answer).
    assert sft_rows([row]) == [{"messages": conversation(row["input"], row["output"])}]


def test_snapshot_refs_lists_each_ref_once_in_order() -> None:
    decision = generate_decisions(1, 1, "heldout")[0]
    text = render_page(decision.page)
    assert snapshot_refs(text) == [f"[ref={e.ref}]" for e in decision.page.elements]
    assert snapshot_refs('- button "A" [ref=e1]\n- link "B" [ref=e1]\n[ref=') == ["[ref=e1]"]
    assert all(re.fullmatch(r"\[ref=e\d+\]", ref) for ref in snapshot_refs(text))
