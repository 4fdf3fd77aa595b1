"""Prompt-lookup drafts: an answer's next tokens guessed from its own context, checked in one step.

A decode step on a CPU is bound by reading memory: every weight once a step, and each row's whole KV
cache once a row. One token a row a step pays both for one token. The project's answers copy long
runs from their prompt (the example story, the component's files, the names of its intent), so the
tokens after the latest earlier occurrence of a row's last one to three tokens are often its next
ones: with four drafted tokens a step, the SFT evaluation's rows (retries sampled at 0.7 included)
made 2.7 tokens a step and kept 52% of their drafts (after a three-token match, 85-89% a position).
A row's drafted tokens go through the model beside its last token as query rows of their own
over the row's one cache (:class:`~worldagent.lm.decode_attention.SharedColumns`' ``kv``): the
kernel reads the row's columns once for all of them (on AMX tiles, up to 16 / G queries a pass).

Checking is decoding itself: the row's processors, then its argmax or its own draw, choose a token
from each query's logits in order; while the chosen token is the drafted one, the next query's
logits are the ones a one-token step would have computed after it, so the next choice is made too.
The first choice that differs is kept (it is what a one-token step would have chosen) and the rest
of the draft is dropped (the next step writes over their columns). A sampled row draws once a token
as a one-token step does (a draft is a single guess, so "draw, then compare" is speculative
sampling's acceptance rule for it, with the same draws), so an answer is the one-token decoder's
answer, greedy or sampled, up to the rounding of the products' shapes (a step's matrices have more
rows), never another decoding rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

NGRAM = 3  # the longest tail looked up, then shorter ones (a three-token match's drafts are the likeliest kept)


@dataclass
class PromptLookup:
    """One answer's context (its prompt, then what it wrote) and an index of its n-grams: each 1- to
    :data:`NGRAM`-gram → where its latest occurrence ends, over every occurrence but the tail's own."""

    tokens: list[int]
    ngram: int = NGRAM
    _index: dict[tuple[int, ...], int] = field(default_factory=dict)
    _indexed: int = 0  # occurrences ending before this position are in ``_index``

    def extend(self, tokens: Sequence[int]) -> None:
        self.tokens.extend(tokens)

    def draft(self, limit: int) -> list[int]:
        """Up to ``limit`` tokens that followed the latest earlier occurrence of the context's longest
        tail found (:data:`NGRAM` tokens, then fewer); none when no tail occurred before."""
        tokens, end = self.tokens, len(self.tokens)
        if limit < 1 or end < 2:
            return []
        index = self._index
        for stop in range(max(self._indexed, 1), end):  # occurrences ending before the tail's own end
            for n in range(1, min(self.ngram, stop) + 1):
                index[tuple(tokens[stop - n : stop])] = stop
        self._indexed = end
        for n in range(min(self.ngram, end - 1), 0, -1):
            found = index.get(tuple(tokens[end - n :]))
            if found is not None:
                return tokens[found : min(found + limit, end)]
        return []
