"""Relabelled training rows: the same story with its quoted labels swapped for other labels.

A held-out intent names its labels in quotes (``A form submit control reading "Create account"``)
and its story test looks for exactly those names. A small model trained on 60 stories copies the
nearest training story's labels instead: it learns the story's shape, not that the quoted words
are the part to carry over. A relabelled row is a training story whose quoted labels are replaced,
in the intent and everywhere they occur in the story's source, by labels of other training
intents: the same structure, other words, so the words must come from the intent.

Only the training split's own labels are drawn on (never an eval intent's), and every relabelled
reference must still pass its story test before it becomes a row (``generate_datasets``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence

# A label in an intent: the text between double quotes, on one line.
_QUOTED = re.compile(r'"([^"\n]{2,60})"')
# Characters that could end or escape the string or JSX text a label sits in.
_UNSAFE = re.compile(r"[\"'`\\{}<>\n]")
RELABEL_SUFFIX = "~relabel-"


def quoted_labels(intent: str) -> list[str]:
    """The intent's quoted labels, in order, each once."""
    return list(dict.fromkeys(_QUOTED.findall(intent)))


# Whole words only, and never part of a path or a name: relabelling "On" must not touch "Only",
# nor "alert" the import './alert.css.ts'.
_BEFORE = r"(?<![\w./-])"
_AFTER = r"(?![\w/-]|\.\w)"


def _occurrences(label: str) -> re.Pattern[str]:
    return re.compile(f"{_BEFORE}{re.escape(label)}{_AFTER}")


def label_pool(intents: Iterable[str]) -> list[str]:
    """Every quoted label of ``intents`` that is safe inside a string or JSX text, sorted, each once."""
    return sorted({label for intent in intents for label in quoted_labels(intent) if not _UNSAFE.search(label)})


def relabel(text: str, mapping: Mapping[str, str]) -> str:
    """``text`` with every whole-word occurrence of each key replaced by its value, in one pass
    (so a new label that contains an old one is never replaced again)."""
    if not mapping:
        return text
    alternatives = sorted(mapping, key=len, reverse=True)
    pattern = re.compile(f"{_BEFORE}(?:{'|'.join(re.escape(label) for label in alternatives)}){_AFTER}")
    return pattern.sub(lambda match: mapping[match.group(0)], text)


def label_mappings(intent: str, source: str, pool: Sequence[str], count: int, seed: str) -> list[dict[str, str]]:
    """Up to ``count`` distinct old → new label mappings for one story, drawn reproducibly from ``pool``.

    A label is relabelled only when it occurs in ``source`` as a whole word; a new label never
    occurs in the source already, and no two old labels get the same new one. A story whose intent
    quotes no label that its source shows gets none.
    """
    labels = [label for label in quoted_labels(intent) if _occurrences(label).search(source)]
    candidates = [label for label in pool if label not in labels and not _occurrences(label).search(source)]
    if not labels or len(candidates) < len(labels) or count <= 0:
        return []
    rng = random.Random(seed)
    mappings: list[dict[str, str]] = []
    seen: set[tuple[str, ...]] = set()
    for _ in range(count * 4):  # a small pool can repeat a draw; a few extra tries, never a loop
        drawn = tuple(rng.sample(candidates, len(labels)))
        if drawn in seen:
            continue
        seen.add(drawn)
        mappings.append(dict(zip(labels, drawn, strict=True)))
        if len(mappings) == count:
            break
    return mappings


def is_relabelled(row: Mapping[str, object]) -> bool:
    """Whether a trajectory row is a relabelled copy (SFT trains on it; prompts and rewards use the
    original stories only, whose story tests know their labels)."""
    return "relabelled" in row


def is_original_single_turn(row: Mapping[str, object]) -> bool:
    """Whether a trajectory row is a story as it was written, in one turn: the rows that prompts,
    rewards and retrieval read (multi-turn rows and relabelled copies are SFT's only)."""
    return row.get("turns", "single") == "single" and not is_relabelled(row)
