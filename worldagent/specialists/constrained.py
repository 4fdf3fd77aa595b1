"""Constrained decoding for browser decisions: the answer names a known action and an element of the page.

The specialist answers ``{"action": "…", "selectorOrRef": "[ref=…]", "value": …}``
(:func:`worldagent.specialists.decisions.render_action`). For one page, every allowed opening
``{"action": A, "selectorOrRef": R, "value":`` (R one of the page's refs, A an action its role
allows: :data:`ROLE_ACTIONS`; or navigating the page) is tokenised once and put in a token trie;
while the answer is inside the trie, only the tokens that continue some allowed opening keep their
logits, so the model can only choose a real element with an action that fits it, and the choice is
the model's own (greedy over its logits). After the opening the value is
free text, and the answer is cut at its closing ``}`` (the processor then allows only the stop token),
so a rambling base model does not spend the token budget after its choice.

Rows of a batch have different pages: the processor holds one trie per row. Prompts are
left-padded, so every row's answer starts at the same column.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from worldagent.specialists.browser_set import snapshot_refs
from worldagent.specialists.decisions import ACTIONS, MAX_SNAPSHOT_CHARS, as_browser_input, prompt_messages

# What each ARIA role can be acted on with (a role not listed: any action). Typing into a button or
# selecting in a link is never a valid decision, so decoding never offers it.
ROLE_ACTIONS: dict[str, tuple[str, ...]] = {
    **{role: ("click",) for role in ("button", "link", "checkbox", "radio", "tab", "menuitem", "switch", "option")},
    **{role: ("fill", "click") for role in ("textbox", "searchbox", "spinbutton")},
    **{role: ("select", "click") for role in ("combobox", "listbox")},
}
PAGE = "page"  # a navigation's selectorOrRef (record mode: a typed URL, back/forward)
_ELEMENT = re.compile(r"^\s*-\s*([a-z]+)\b[^\n]*?\[ref=([^\]\s]{1,60})\]", re.MULTILINE)

# greedy: token by token inside the allowed openings (measured best, docs/decisions.md); joint: the opening
# with the highest joint log-probability (0.517 against greedy's 0.567 held out, and slower).
DEFAULT_CHOICE = "greedy"


def opening(selector: str, action: str) -> str:
    """The start of a rendered action (:func:`render_action`'s key order) up to ``"value":``: the action
    and the element are constrained, the value is the model's. Ending after ``"value":`` keeps the
    opening's tokens a prefix of the whole answer's tokens (a cut after ``]"`` would not be: BPE merges
    ``]",``)."""
    return f'{{"action": {json.dumps(action)}, "selectorOrRef": {json.dumps(selector, ensure_ascii=False)}, "value":'


def element_actions(page_snapshot: str, actions: Sequence[str] = ACTIONS) -> dict[str, tuple[str, ...]]:
    """``[ref=…]`` selector → the actions its role allows (every action for a ref on a line without a role)."""
    out: dict[str, tuple[str, ...]] = {}
    roles = {f"[ref={ref}]": role for role, ref in _ELEMENT.findall(page_snapshot)}
    for ref in snapshot_refs(page_snapshot):
        allowed = ROLE_ACTIONS.get(roles.get(ref, ""), tuple(a for a in actions if a != "navigate"))
        out[ref] = tuple(a for a in allowed if a in actions)
    return out


def allowed_openings(input_value: Any, actions: Sequence[str] = ACTIONS) -> list[str]:
    """Every (element, action) opening of a browser input's page, plus navigating the page; empty without refs."""
    browser = as_browser_input(input_value)
    if browser is None:
        return []
    pairs = element_actions(browser.pageSnapshot[:MAX_SNAPSHOT_CHARS], actions)  # the refs the prompt shows
    if not pairs:
        return []
    openings = [opening(ref, action) for ref, allowed in pairs.items() for action in allowed]
    return openings + ([opening(PAGE, "navigate")] if "navigate" in actions else [])


@dataclass
class TokenTrie:
    children: dict[int, TokenTrie] = field(default_factory=dict)
    end: bool = False

    @classmethod
    def of(cls, sequences: Sequence[Sequence[int]]) -> TokenTrie:
        root = cls()
        for sequence in sequences:
            node = root
            for token in sequence:
                node = node.children.setdefault(int(token), cls())
            node.end = True
        return root

    def walk(self, tokens: Sequence[int]) -> TokenTrie | None:
        """The node after ``tokens``; None once they leave the trie (or pass a complete opening)."""
        node = self
        for token in tokens:
            if node.end:
                return None
            node = node.children.get(int(token))  # type: ignore[assignment]
            if node is None:
                return None
        return node


class OpeningProcessor:
    """A transformers logits processor: row ``b`` stays inside ``tries[b]``, then stops after ``}``."""

    def __init__(self, tries: Sequence[TokenTrie | None], prompt_width: int, closing: set[int], stop: int) -> None:
        self.tries, self.width, self.closing, self.stop = list(tries), prompt_width, closing, stop

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for row, trie in enumerate(self.tries):
            if trie is None:
                continue
            generated = input_ids[row, self.width :].tolist()
            node = trie.walk(generated)
            allowed: list[int] | None = None
            if node is not None and not node.end:
                allowed = list(node.children)
            elif generated and generated[-1] in self.closing and self._past_opening(trie, generated):
                allowed = [self.stop]  # the answer's object is closed: stop here
            if allowed:
                keep = scores[row, allowed].clone()
                scores[row, :] = float("-inf")
                scores[row, allowed] = keep
        return scores

    def select_rows(self, keep: Sequence[int]) -> None:
        """Follow :func:`worldagent.lm.rollout.decode_batch` when it drops finished rows."""
        self.tries = [self.tries[row] for row in keep]

    @staticmethod
    def _past_opening(trie: TokenTrie, generated: Sequence[int]) -> bool:
        node = trie
        for token in generated:
            if node.end:
                return True
            node = node.children.get(int(token))  # type: ignore[assignment]
            if node is None:
                return False
        return node.end


def closing_tokens(tokenizer: Any) -> set[int]:
    """Ids of the tokens whose text contains ``}`` (an answer is complete at the first one)."""
    vocab = tokenizer.get_vocab()
    out = set()
    for token_id in vocab.values():
        if "}" in tokenizer.decode([token_id]):
            out.add(int(token_id))
    return out


@dataclass
class AnswerStats:
    prompts: int = 0
    new_tokens: int = 0
    prompt_tokens: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.new_tokens / self.seconds if self.seconds > 0 else 0.0


SCORE_CHUNK = 16  # candidates scored per batched pass (each holds a copy of the prompt's KV cache)


def score_openings(model: Any, prompt_ids: Sequence[int], candidates: Sequence[Sequence[int]], pad: int) -> list[float]:
    """log P(candidate | prompt) of each candidate token sequence: one forward pass over the prompt, then,
    per chunk of :data:`SCORE_CHUNK` candidates, the prompt's KV cache repeated for them and one batched
    pass (right-padded; causal, so pads after a candidate's end change nothing before it)."""
    device = next(model.parameters()).device
    length = len(prompt_ids)
    scores: list[float] = []
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([list(prompt_ids)], device=device), use_cache=True)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        for start in range(0, len(candidates), SCORE_CHUNK):
            chunk = candidates[start : start + SCORE_CHUNK]
            cache = copy.deepcopy(out.past_key_values)
            cache.batch_repeat_interleave(len(chunk))
            width = max(len(c) for c in chunk)
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), length + width), dtype=torch.long)
            mask[:, :length] = 1
            for row, candidate in enumerate(chunk):
                ids[row, : len(candidate)] = torch.tensor(list(candidate), dtype=torch.long)
                mask[row, length : length + len(candidate)] = 1
            logits = model(
                input_ids=ids.to(device), attention_mask=mask.to(device), past_key_values=cache, use_cache=False
            ).logits
            logp = torch.log_softmax(logits.float(), dim=-1)
            for row, candidate in enumerate(chunk):
                total = first[candidate[0]].item()
                for position in range(1, len(candidate)):
                    total += logp[row, position - 1, candidate[position]].item()
                scores.append(total)
    return scores


def best_openings(
    model: Any, tokenizer: Any, inputs: Sequence[Any], actions: Sequence[str] = ACTIONS
) -> list[list[str]]:
    """Per input, the allowed opening with the highest joint log-probability (as a one-item list; empty
    when the input allows none): the exact argmax over the page's (action, element) pairs, where greedy
    decoding commits to the action before it has looked at the elements."""
    from worldagent.lm.rollout import encode_prompt, pad_token_id

    pad = pad_token_id(tokenizer)
    chosen: list[list[str]] = []
    for value in inputs:
        openings = allowed_openings(value, actions)
        if len(openings) <= 1:
            chosen.append(openings)
            continue
        tokens = [tokenizer(o, add_special_tokens=False)["input_ids"] for o in openings]
        scores = score_openings(model, encode_prompt(tokenizer, prompt_messages(value)), tokens, pad)
        chosen.append([openings[max(range(len(scores)), key=scores.__getitem__)]])
    return chosen


def generate_answers(
    model: Any,
    tokenizer: Any,
    inputs: Sequence[Any],
    max_new_tokens: int = 48,
    *,
    constrained: bool = True,
    batch_size: int = 4,
    stats: AnswerStats | None = None,
    actions: Sequence[str] = ACTIONS,
    choice: str = "greedy",
) -> list[str]:
    """Greedy answers for browser (or generic) inputs, batched with a KV cache, in input order.

    ``constrained``: browser inputs with refs answer with one of their page's refs and an action of
    ``actions`` that its role allows; ``choice``: ``greedy`` (token by token inside the trie) or ``joint``
    (the allowed opening with the highest joint log-probability, :func:`best_openings`, then the value).
    """
    from transformers import GenerationConfig, LogitsProcessorList

    from worldagent.lm.rollout import (
        cut_at_stop,
        decode_completion,
        encode_prompt,
        generate_tensor,
        left_pad,
        pad_token_id,
        stop_token_ids,
    )

    device = next(model.parameters()).device
    stops = stop_token_ids(tokenizer, model)
    pad = pad_token_id(tokenizer)
    drop = set(stops) | {pad}
    encoded = [encode_prompt(tokenizer, prompt_messages(value)) for value in inputs]
    started = time.perf_counter()
    chosen = best_openings(model, tokenizer, inputs, actions) if constrained and choice == "joint" else None
    scoring_s = time.perf_counter() - started
    tries: list[TokenTrie | None] = []
    for number, value in enumerate(inputs):
        openings = (chosen[number] if chosen is not None else allowed_openings(value, actions)) if constrained else []
        tries.append(
            TokenTrie.of([tokenizer(o, add_special_tokens=False)["input_ids"] for o in openings]) if openings else None
        )
    closing = closing_tokens(tokenizer) if constrained else set()
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))
    answers = [""] * len(encoded)
    model.eval()
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        input_ids, attention = left_pad([encoded[i] for i in batch], pad)
        width = input_ids.shape[1]
        processors = LogitsProcessorList(
            [OpeningProcessor([tries[i] for i in batch], width, closing, stops[0])] if constrained and stops else []
        )
        started = time.perf_counter()
        config = GenerationConfig(
            max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=stops or None, pad_token_id=pad
        )
        with torch.inference_mode():
            # the project's decoder: each distinct prompt prefilled once, finished rows leave the batch
            output = generate_tensor(model, input_ids.to(device), attention.to(device), config, processors)
        assert output is not None  # greedy with no setting the decoder lacks
        elapsed = time.perf_counter() - started
        for row, new_ids in enumerate(output[:, width:].tolist()):
            kept, stopped = cut_at_stop(new_ids, set(stops))
            answers[batch[row]] = decode_completion(tokenizer, kept, drop)
            if stats is not None:
                stats.new_tokens += len(kept) + int(stopped)
                stats.prompt_tokens += len(encoded[batch[row]])
        if stats is not None:
            stats.seconds += elapsed
    if stats is not None:
        stats.prompts += len(encoded)
        stats.seconds += scoring_s
    return answers
