"""A decoding guard against loops: never repeat an n-gram the completion itself has already written.

A small model fine-tuned on few rows falls into loops (the same array item or prop line until the
token budget ends, so the answer never reaches its ``runStory`` call). transformers'
``no_repeat_ngram_size`` cannot be used for this: it counts the prompt too, and the prompt carries the
nearest story and the component's files, which a good answer copies from. This guard looks only at
the tokens generated after the prompt.

The guard lowers a banned token's score by a finite ``penalty`` rather than setting it to ``-inf``:
placed after the call-grammar processor, a token the grammar forces (the only finite score left)
still wins, so the guard can never leave a step with nothing to choose.
"""

from __future__ import annotations

import torch


class GeneratedNgramGuard:
    """A transformers ``LogitsProcessor``; :func:`worldagent.lm.rollout.generate_batched` adds one,
    after any other processor, when ``SamplingConfig.no_repeat_ngram`` is set.

    Created once per batch with the padded prompt width; keeps, per row, the n-grams generated so
    far (``(n-1)``-gram prefix → next tokens), updated by one token a step.
    """

    def __init__(self, prompt_width: int, ngram: int, penalty: float = 1e4) -> None:
        if ngram < 2:
            raise ValueError(f"ngram must be at least 2, got {ngram}")
        self.prompt_width, self.ngram, self.penalty = prompt_width, ngram, penalty
        self._seen: list[dict[tuple[int, ...], set[int]]] = []
        self._indexed = 0  # generated positions already added to ``_seen``

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        length = input_ids.shape[1] - self.prompt_width  # tokens generated so far
        prefix = self.ngram - 1
        start = max(self._indexed, self.ngram)  # the first n-gram end not yet in ``_seen``
        # only the tail this call reads (its new n-grams, the last n - 1 tokens), not the whole answer
        first = max(0, min(start - self.ngram, length - prefix))
        tail = input_ids[:, self.prompt_width + first :].tolist()
        if not self._seen:
            self._seen = [{} for _ in tail]
        for end in range(start - first, length - first + 1):
            for row, seen in zip(tail, self._seen, strict=True):
                seen.setdefault(tuple(row[end - self.ngram : end - 1]), set()).add(row[end - 1])
        self._indexed = max(self._indexed, length + 1)
        if length < prefix:
            return scores
        for index, (row, seen) in enumerate(zip(tail, self._seen, strict=True)):
            banned = seen.get(tuple(row[length - first - prefix :]))
            if banned:
                scores[index, list(banned)] -= self.penalty
        return scores

    def select_rows(self, keep: list[int]) -> None:
        """Follow :func:`worldagent.lm.rollout.decode_batch` when it drops finished rows."""
        self._seen = [self._seen[row] for row in keep]
