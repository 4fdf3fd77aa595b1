"""BM25 retrieval over the training split and the copy-the-nearest-story baseline."""

from __future__ import annotations

import pytest

from worldagent.tools.registry import tool_schemas
from worldagent.world_agent.prompts import prompt_messages
from worldagent.world_agent.retrieval import (
    BM25Index,
    NearestStoryPolicy,
    StoryDocument,
    documents_from_trajectories,
    prompt_component,
    prompt_query,
    render_examples,
    words,
)


def row(story_id: str, intent: str, component: str, answer: str, **extra):
    return {
        "id": story_id,
        "intent": intent,
        "component": component,
        "split": "train",
        "turns": "single",
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": intent},
            {"role": "assistant", "content": answer},
        ],
        **extra,
    }


ROWS = [
    row("accordion/accordion.stories.tsx#collapsed", "An accordion whose sections start collapsed", "accordion", "A1"),
    row("accordion/accordion.stories.tsx#expanded", "An accordion with the first section expanded", "accordion", "A2"),
    row("button/button.stories.tsx#primary", "A primary button with a label", "button", "B1"),
    row(
        "toggle-button/toggle-button.stories.tsx#pressed", "A toggle button that starts pressed", "toggle-button", "T1"
    ),
    row("alert/alert.stories.tsx#warning", "A maintenance warning alert", "alert", "W1"),
    row("alert/alert.stories.tsx#warning", "A maintenance warning alert", "alert", "W1", turns="multi"),
]


def test_words_split_case_and_dashes_and_drop_stopwords():
    assert words("A toggleButton in toggle-button/") == ["toggle", "button", "toggle", "button"]


def test_documents_keep_single_turn_training_rows_and_refuse_eval_rows():
    documents = documents_from_trajectories(ROWS)
    assert [d.id for d in documents] == sorted({r["id"] for r in ROWS})
    with pytest.raises(ValueError, match="training split"):
        documents_from_trajectories([{**ROWS[0], "split": "eval"}])


def test_nearest_finds_the_closest_intent_and_never_the_query_itself():
    index = BM25Index(documents_from_trajectories(ROWS))
    hits = index.nearest("A collapsed FAQ accordion", k=2)
    assert [h.document.id for h in hits] == [
        "accordion/accordion.stories.tsx#collapsed",
        "accordion/accordion.stories.tsx#expanded",
    ]
    assert hits[0].score > hits[1].score > 0
    own = "An accordion whose sections start collapsed"
    assert (
        index.nearest(own, k=1, exclude_intents=[own.upper()])[0].document.id
        == "accordion/accordion.stories.tsx#expanded"
    )
    assert "accordion/accordion.stories.tsx#collapsed" not in [
        h.document.id for h in index.nearest(own, 5, exclude_ids=[ROWS[0]["id"]])
    ]


def test_ranking_is_deterministic_whatever_the_input_order():
    forward = BM25Index(documents_from_trajectories(ROWS)).nearest("button", 3)
    backward = BM25Index(list(reversed(documents_from_trajectories(ROWS)))).nearest("button", 3)
    assert [h.document.id for h in forward] == [h.document.id for h in backward]
    assert forward[0].document.component == "button"  # shorter document wins the tie on "button"


def test_no_common_word_still_answers_by_id():
    hits = BM25Index(documents_from_trajectories(ROWS)).nearest("zzz", 1)
    assert hits[0].score == 0 and hits[0].document.id == "accordion/accordion.stories.tsx#collapsed"


def test_the_baseline_copies_the_nearest_story_for_a_real_prompt():
    index = BM25Index(documents_from_trajectories(ROWS))
    prompt = prompt_messages(
        tool_schemas(), "A toggle button for dark mode", "toggle-button", {}, "dark", "toggle-button/x.stories.tsx"
    )
    assert prompt_query(prompt)[1] == "A toggle button for dark mode"
    policy = NearestStoryPolicy(index)
    assert policy.complete([prompt]) == ["T1"]
    assert policy.chosen == ["toggle-button/toggle-button.stories.tsx#pressed"]
    own = prompt_messages(tool_schemas(), ROWS[2]["intent"], "button", {})
    assert policy.complete([own]) != ["B1"]  # its own intent is never copied


def test_the_query_component_ranks_first_and_others_fill_in():
    index = BM25Index(documents_from_trajectories(ROWS))
    query = "A toggle button that starts pressed, in an alert"
    assert index.nearest(query, 1)[0].document.component == "toggle-button"  # the best words win overall
    first = index.nearest(query, 2, component="alert")
    # the alert story first though it scores lower; then the best of the rest, not nothing
    assert [h.document.id for h in first] == ["alert/alert.stories.tsx#warning", ROWS[3]["id"]]
    assert first[0].score < first[1].score
    assert index.nearest(query, 1, component="no-such-component")[0].document.id == ROWS[3]["id"]


def test_the_baseline_copies_a_story_of_the_prompt_component():
    prompt = prompt_messages(tool_schemas(), "A toggle button that is pressed", "ui/alert", {})
    assert prompt_component(prompt) == "alert"  # discovery names a component by its last folder
    assert prompt_component([{"role": "user", "content": "no folder named"}]) is None
    policy = NearestStoryPolicy(BM25Index(documents_from_trajectories(ROWS)))
    assert policy.complete([prompt]) == ["W1"]


def test_render_examples_is_bounded():
    hits = BM25Index([StoryDocument("a#b", "An intent", "a", "x" * 100)]).nearest("intent", 1)
    assert render_examples(hits, max_chars=50) == render_examples(hits)[:50]
    assert "An intent" in render_examples(hits)
