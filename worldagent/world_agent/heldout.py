"""The held-out rule: a hidden test may only assert names and descriptions its task gives the agent.

A held-out story is scored by assertions derived from its reference render (role, accessible name,
states). An agent can write a name only if the intent states it or the component it is told to use
produces it (a template's fixed text: a chevron ``v``, ``(required)``, ``unread messages``). A name
that neither gives (``searchbox "Search the documentation"`` for "a site search form") can be
matched only by luck, so it measures nothing. :func:`unstated_names` finds them word by word:
each word of an asserted name must be a word of the intent or of the given files, or two such words
written together (accessible names join a label and an icon's text without a space: ``Keynotev``).
A range the intent writes (``from 1 to 5``, ``01 to 12``) gives every number in it, at its width.
Case is ignored here (the assertion itself is case-sensitive; a capital is not what an intent hides).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from worldagent.storytest.assertions import Assertion

__all__ = ["TEXT_STATES", "asserted_texts", "name_words", "range_words", "unstated_names", "unstated_words"]

# Letter runs split at a lower-to-upper case change (``LoadingExporting``), and digit runs.
_RUNS = re.compile(r"[^\W\d_]+|\d+")
_CAMEL = re.compile(r"[^\W\d_][^\W\d_A-Z]*")
_RANGE = re.compile(r"\b(\d+)\s*(?:to|-|–)\s*(\d+)\b")
# States whose value is text the agent writes (an accessible description, a progress bar's value
# text), checked like names; the others are booleans or numbers the intent says in words.
TEXT_STATES: tuple[str, ...] = ("description", "valuetext")
MAX_RANGE = 1000  # a longer range is a figure ("1 to 5000 characters"), not a list of choices


def name_words(text: str) -> list[str]:
    """The lower-case words of ``text``: letter runs split where a capital follows a lower-case
    letter, and digit runs (``Inbox99+ unread`` → ``inbox``, ``99``, ``unread``)."""
    found: list[str] = []
    for run in _RUNS.findall(text):
        parts = _CAMEL.findall(run) if not run.isdigit() and not run.isupper() else [run]
        found.extend(part.lower() for part in parts or [run])
    return found


def range_words(text: str) -> set[str]:
    """Every number of each ``a to b`` range in ``text``, unpadded and padded to ``b``'s width."""
    numbers: set[str] = set()
    for low, high in _RANGE.findall(text):
        width = max(len(low), len(high))
        if 0 <= int(high) - int(low) <= MAX_RANGE:
            for n in range(int(low), int(high) + 1):
                numbers.update((str(n), str(n).zfill(width)))
    return numbers


def _derivable(word: str, vocabulary: frozenset[str]) -> bool:
    if word in vocabulary:
        return True
    return any(word[:i] in vocabulary and word[i:] in vocabulary for i in range(1, len(word)))


def unstated_words(name: str, intent: str, given: Iterable[str] = ()) -> list[str]:
    """The words of ``name`` that neither ``intent`` nor any text of ``given`` contains, in order."""
    vocabulary = frozenset(name_words(intent)).union(range_words(intent), *(name_words(text) for text in given))
    return [word for word in name_words(name) if not _derivable(word, vocabulary)]


def asserted_texts(assertion: Assertion) -> list[str]:
    """The text an assertion compares: the accessible name and the text-valued states."""
    return [text for text in (assertion.name, *(assertion.states.get(key, "") for key in TEXT_STATES)) if text]


def unstated_names(assertions: Sequence[Assertion], intent: str, given: Iterable[str] = ()) -> dict[str, list[str]]:
    """Each asserted name or description with words the task does not give, mapped to those words
    (none: ``{}``)."""
    texts = list(given)
    unstated: dict[str, list[str]] = {}
    for assertion in assertions:
        for text in asserted_texts(assertion):
            if text not in unstated:
                words = unstated_words(text, intent, texts)
                if text != assertion.name:  # a template's counter (`28 of 2000 characters used`) is computed
                    words = [word for word in words if not word.isdigit()]
                if words:
                    unstated[text] = words
    return unstated
