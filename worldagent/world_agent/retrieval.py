"""Lexical retrieval over the training split: the nearest existing stories for an intent.

A deterministic Okapi BM25 over each training story's intent, component and export name (split
into lower-case words, camelCase and ``kebab-case`` broken up). It serves two purposes:

- the prompt can carry the nearest existing stories (what a real agent would look at), and
- :class:`NearestStoryPolicy` answers an intent with the nearest training story's answer copied
  unchanged: the baseline every trained policy must beat.

A query never retrieves itself: documents with the query's id, or with the same intent text
(normalised), are excluded, so an eval intent can never see its own reference. Ties are broken by
document id, so results do not depend on input order.

A query that names its component (the prompt's ``Work in `dir/``` line) retrieves that component's
stories first and other components' only when it has too few: a story of another component shows
other templates and arguments. On the 67 held-out intents the SmolLM2 candidate of ``cbbdccf``
scored a mean reward of 0.251 on the 50 prompts whose example was of their own component and 0.096
on the 17 whose example was not (the copy baseline: 0.292 and 0.153).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worldagent.world_agent.relabel import is_original_single_turn

_WORD = re.compile(r"[A-Za-z][a-z]*|[0-9]+|[A-Z]+(?![a-z])")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "that",
        "this",
        "is",
        "it",
        "as",
        "by",
        "or",
        "be",
        "its",
        "at",
        "from",
    ]
)


def words(text: str) -> list[str]:
    """Lower-case words; ``toggleButton``/``toggle-button`` both give ``toggle``, ``button``."""
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS]


def normalise_intent(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class StoryDocument:
    """One retrievable training story: the fields searched and the answer a baseline copies."""

    id: str
    intent: str
    component: str
    answer: str  # the assistant's reply in the single-turn trajectory (the tool calls)

    @property
    def text(self) -> str:
        export = self.id.rsplit("#", 1)[-1] if "#" in self.id else ""
        return f"{self.intent} {self.component} {export}"


@dataclass(frozen=True)
class Hit:
    document: StoryDocument
    score: float


def documents_from_trajectories(rows: Iterable[Mapping[str, Any]]) -> list[StoryDocument]:
    """One document per single-turn training trajectory (``split`` other than ``train`` is refused);
    relabelled copies are left out: the baseline copies a story as it was written."""
    documents: dict[str, StoryDocument] = {}
    for number, row in enumerate(rows, start=1):
        if row.get("split", "train") != "train":
            raise ValueError(
                f"row {number} ({row.get('id')!r}) is from split {row.get('split')!r}: "
                "retrieval indexes the training split only"
            )
        if not is_original_single_turn(row):
            continue
        answers = [m for m in row.get("messages") or [] if m.get("role") == "assistant"]
        if not answers or "id" not in row:
            continue
        document = StoryDocument(
            str(row["id"]), str(row.get("intent", "")), str(row.get("component", "")), str(answers[0]["content"])
        )
        documents.setdefault(document.id, document)
    return sorted(documents.values(), key=lambda d: d.id)


class BM25Index:
    """Okapi BM25 (k1, b) over :class:`StoryDocument` texts."""

    def __init__(self, documents: Sequence[StoryDocument], k1: float = 1.5, b: float = 0.75) -> None:
        if not documents:
            raise ValueError("no training stories to retrieve from")
        self.documents = sorted(documents, key=lambda d: d.id)
        self.k1, self.b = k1, b
        self.term_counts = [Counter(words(d.text)) for d in self.documents]
        self.lengths = [sum(c.values()) for c in self.term_counts]
        self.average_length = sum(self.lengths) / len(self.lengths) or 1.0
        frequency = Counter(term for counts in self.term_counts for term in counts)
        n = len(self.documents)
        self.idf = {term: math.log(1 + (n - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}

    def scores(self, query: str) -> list[float]:
        terms = words(query)
        result = []
        for counts, length in zip(self.term_counts, self.lengths, strict=False):
            norm = self.k1 * (1 - self.b + self.b * length / self.average_length)
            result.append(
                sum(self.idf.get(t, 0.0) * counts[t] * (self.k1 + 1) / (counts[t] + norm) for t in terms if t in counts)
            )
        return result

    def nearest(
        self,
        query: str,
        k: int = 1,
        exclude_ids: Iterable[str] = (),
        exclude_intents: Iterable[str] = (),
        component: str | None = None,
    ) -> list[Hit]:
        """The ``k`` best documents (score descending, then id); excluded ids and intents never appear.
        ``component``: its documents rank before every other component's (see the module doc).

        With no word in common, documents still rank (score 0, by id), so a baseline always answers.
        """
        skip_ids = set(exclude_ids)
        skip_intents = {normalise_intent(i) for i in exclude_intents}
        ranked = sorted(
            (
                (component is not None and document.component != component, -score, document.id, document)
                for score, document in zip(self.scores(query), self.documents, strict=False)
                if document.id not in skip_ids and normalise_intent(document.intent) not in skip_intents
            ),
            key=lambda item: (item[0], item[1], item[2]),
        )
        return [Hit(document, -negative) for _, negative, _, document in ranked[:k]]


_WORK_IN = re.compile(r"^Work in `([^`]+?)/?`")


def _user_turn(prompt: Sequence[Mapping[str, Any]]) -> str:
    return next((str(m.get("content", "")) for m in prompt if m.get("role") == "user"), "")


def prompt_query(prompt: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(query text, intent) from a chat prompt: the user turn's first line is the intent, and the
    ``Work in `dir/``` line names the component (see :func:`worldagent.world_agent.prompts.user_prompt`)."""
    lines = _user_turn(prompt).splitlines()
    intent = lines[0].strip() if lines else ""
    directory = next((line for line in lines if line.startswith("Work in ")), "")
    return f"{intent} {directory}", intent


def prompt_component(prompt: Sequence[Mapping[str, Any]]) -> str | None:
    """The component a chat prompt works in (the last folder of its ``Work in `dir/``` line, as
    discovery names components), or None without one."""
    for line in _user_turn(prompt).splitlines():
        if match := _WORK_IN.match(line):
            return match.group(1).rsplit("/", 1)[-1]
    return None


def render_examples(hits: Sequence[Hit], max_chars: int = 4000) -> str:
    """The nearest stories as a prompt section (intent, then the answer), cut to ``max_chars``."""
    parts = []
    for hit in hits:
        parts.append(f"Existing story for “{hit.document.intent}” ({hit.document.component}):\n{hit.document.answer}")
    return "\n\n".join(parts)[:max_chars]


class NearestStoryPolicy:
    """The copy-the-nearest-story baseline: answers each prompt with the nearest training story's answer.

    The prompt's own intent is excluded, so an eval prompt never gets its reference back even if the
    same intent were in the index. ``rank`` 1 copies the runner-up instead (a retry, when the first
    copy fails the agent's own check), and so on; past the last candidate, the last one.
    """

    def __init__(self, index: BM25Index, rank: int = 0) -> None:
        self.index, self.rank = index, rank
        self.chosen: list[str] = []  # the id copied for each prompt of the last call, for reports

    def choose(self, prompt: Sequence[Mapping[str, Any]]) -> StoryDocument:
        query, intent = prompt_query(prompt)
        hits = self.index.nearest(query, self.rank + 1, exclude_intents=[intent], component=prompt_component(prompt))
        if not hits:
            raise ValueError(f"no training story other than the prompt's own intent {intent!r} to copy")
        return hits[-1].document

    def complete(self, prompts: list[list[dict[str, Any]]]) -> list[str]:
        documents = [self.choose(prompt) for prompt in prompts]
        self.chosen = [document.id for document in documents]
        return [document.answer for document in documents]
