"""The held-out rule: which words of an asserted name the task never gives."""

from __future__ import annotations

from worldagent.storytest.assertions import Assertion
from worldagent.world_agent.heldout import name_words, range_words, unstated_names, unstated_words


def test_name_words_split_letters_at_capitals_and_digits() -> None:
    assert name_words("LoadingExporting CSV") == ["loading", "exporting", "csv"]
    assert name_words("Inbox99+ unread messages") == ["inbox", "99", "unread", "messages"]
    assert name_words("Español, Français") == ["español", "français"]
    assert name_words("") == []


def test_a_range_gives_every_number_at_its_width() -> None:
    assert range_words("from 1 to 3") == {"1", "2", "3"}
    assert {"01", "09", "12", "9"} <= range_words("months 01 to 12")
    assert range_words("up to 1 of 5000 characters") == set()  # "1 of": not a range
    assert range_words("1 to 5000 characters") == set()  # longer than a list of choices


def test_a_name_the_intent_states_is_derivable_whatever_its_case() -> None:
    assert unstated_words("Delivery instructions", 'a required "delivery instructions" textarea') == []


def test_words_the_intent_never_states_are_named_in_order() -> None:
    intent = "Create a site search form with a visually hidden label"
    assert unstated_words("Search the documentation", intent) == ["the", "documentation"]


def test_a_given_files_fixed_text_counts_and_may_be_glued_to_an_intent_word() -> None:
    template = "<span aria-hidden='true'>v</span> <span>(required)</span> unread messages"
    assert unstated_words("Keynotev", "Keynote is open", [template]) == []
    assert unstated_words("Keynotev", "Keynote is open") == ["keynotev"]
    assert unstated_words("Cabin class (required)", 'a "Cabin class" choice', [template]) == []
    assert unstated_words("Inbox99+ unread messages", 'an Inbox counter that caps at "99+"', [template]) == []


def test_unstated_names_maps_each_name_once_and_skips_unnamed_nodes() -> None:
    assertions = [
        Assertion(role="tab", name="Overview", states={"selected": "true"}),
        Assertion(role="tabpanel", name="Overview"),
        Assertion(role="tab", name="Reviews", states={"disabled": "true"}),
        Assertion(role="group"),
    ]
    assert unstated_names(assertions, 'tabs where the "Reviews" tab is disabled') == {"Overview": ["overview"]}
    assert unstated_names(assertions, "tabs Overview and Reviews, Reviews disabled") == {}


def test_a_description_is_checked_like_a_name_but_its_counted_figures_are_not() -> None:
    hint = Assertion(
        role="switch", name="Auto-save", states={"checked": "true", "description": "Saved every 30 seconds"}
    )
    assert unstated_names([hint], 'an "Auto-save" switch with help text') == {
        "Saved every 30 seconds": ["saved", "every", "seconds"]
    }
    assert unstated_names([hint], 'an "Auto-save" switch, "Saved every 30 seconds"') == {}
    counter = Assertion(role="textbox", name="Terms", states={"description": "28 of 2000 characters used"})
    assert unstated_names([counter], '"Terms", 2000 characters', ["of characters used"]) == {}
    assert unstated_names([counter], '"Terms"') == {"28 of 2000 characters used": ["of", "characters", "used"]}
