"""Policies the evaluate stage scores: anything that turns chat prompts into assistant text.

``ReferencePolicy`` answers with the reference solution (the upper bound); ``HFPolicy`` decodes
greedily with a transformers causal LM. Loading models is the caller's job
(``worldagent.policy.load.load_policy``), so this module never touches the disk or the Hub.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from tqdm import tqdm

log = logging.getLogger(__name__)

Prompt = list[dict[str, Any]]

# Gemma's end-of-turn marker; FunctionGemma's call markers are special tokens that must survive.
END_OF_TURN = "<end_of_turn>"


@runtime_checkable
class Policy(Protocol):
    def complete(self, prompts: list[Prompt]) -> list[str]:
        """One assistant reply per prompt, in order."""
        ...


def prompt_key(prompt: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(str(message.get("content", "")) for message in prompt)


class ReferencePolicy:
    """Answers each prompt with its reference output (``messages[2]`` of the eval row)."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self._answers: dict[tuple[str, ...], str] = {}
        for row in rows:
            messages = row["messages"]
            self._answers[prompt_key(messages[:2])] = str(messages[2]["content"])

    def complete(self, prompts: list[Prompt]) -> list[str]:
        missing = [i for i, prompt in enumerate(prompts) if prompt_key(prompt) not in self._answers]
        if missing:
            raise KeyError(f"no reference output for prompt(s) {missing[:5]} (the prompts are not from these rows)")
        return [self._answers[prompt_key(prompt)] for prompt in prompts]


class StaticPolicy:
    """Fixed outputs in prompt order (tests and replays of saved generations)."""

    def __init__(self, outputs: Sequence[str]) -> None:
        self.outputs = list(outputs)

    def complete(self, prompts: list[Prompt]) -> list[str]:
        if len(prompts) != len(self.outputs):
            raise ValueError(f"StaticPolicy has {len(self.outputs)} outputs for {len(prompts)} prompts")
        return list(self.outputs)


def _select_device() -> str:
    from worldagent.policy.device import select_device

    return select_device()


class HFPolicy:
    """Greedy decoding with a causal LM: chat template, left-padded batches, stop at eos/end-of-turn.

    Only the new tokens are decoded, with ``skip_special_tokens=False`` so FunctionGemma's
    call markers (special tokens) survive; pad, bos, eos and end-of-turn tokens are dropped.
    Prompts are batched by length (fewer pad tokens) and answers returned in prompt order.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        max_new_tokens: int = 1536,
        batch_size: int = 8,
        device: str | None = None,
        progress: bool | None = None,
        desc: str = "generate",
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.device = device or _select_device()
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.desc = desc
        if hasattr(model, "to"):
            self.model = model.to(self.device)
        if hasattr(self.model, "eval"):
            self.model.eval()

    # -- token bookkeeping -----------------------------------------------------------------
    def _token_id(self, token: str) -> int | None:
        vocab = self.tokenizer.get_vocab() if hasattr(self.tokenizer, "get_vocab") else {}
        return vocab.get(token)

    def stop_ids(self) -> list[int]:
        ids: list[int] = []
        eos = getattr(self.tokenizer, "eos_token_id", None)
        for candidate in ([*eos] if isinstance(eos, (list, tuple)) else [eos]) + [self._token_id(END_OF_TURN)]:
            if candidate is not None and candidate not in ids:
                ids.append(int(candidate))
        return ids

    def _pad_id(self) -> int:
        pad = getattr(self.tokenizer, "pad_token_id", None)
        if pad is not None:
            return int(pad)
        stops = self.stop_ids()
        if not stops:
            raise ValueError("the tokenizer has neither a pad nor an eos token")
        return stops[0]

    def _drop_ids(self) -> set[int]:
        drop = set(self.stop_ids()) | {self._pad_id()}
        bos = getattr(self.tokenizer, "bos_token_id", None)
        if bos is not None:
            drop.add(int(bos))
        return drop

    def encode(self, prompt: Prompt) -> list[int]:
        text = self.tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
        # The template already writes <bos>; adding special tokens again would double it.
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode_new(self, new_ids: Sequence[int]) -> str:
        """Cut at the first stop token, drop pad/bos, decode keeping the call markers."""
        stops = set(self.stop_ids())
        drop = self._drop_ids()
        kept: list[int] = []
        for token in new_ids:
            token = int(token)
            if token in stops:
                break
            if token not in drop:
                kept.append(token)
        return self.tokenizer.decode(kept, skip_special_tokens=False)

    # -- generation --------------------------------------------------------------------------
    def _generate_batch(self, encoded: list[list[int]]) -> list[list[int]]:
        import torch

        pad = self._pad_id()
        width = max(len(ids) for ids in encoded)
        input_ids = torch.full((len(encoded), width), pad, dtype=torch.long)
        attention = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, ids in enumerate(encoded):  # left padding: the prompts end where generation starts
            if ids:
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention[row, width - len(ids) :] = 1
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                do_sample=False,
                max_new_tokens=self.max_new_tokens,
                eos_token_id=self.stop_ids() or None,
                pad_token_id=pad,
            )
        return [list(map(int, sequence[width:].tolist())) for sequence in output]

    def complete(self, prompts: list[Prompt]) -> list[str]:
        encoded = [self.encode(prompt) for prompt in prompts]
        order = sorted(range(len(prompts)), key=lambda i: (len(encoded[i]), i))
        answers: list[str] = [""] * len(prompts)
        with tqdm(total=len(prompts), desc=self.desc, unit="intent", disable=not self.progress) as bar:
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                for index, new_ids in zip(batch, self._generate_batch([encoded[i] for i in batch]), strict=False):
                    answers[index] = self.decode_new(new_ids)
                bar.update(len(batch))
        return answers
