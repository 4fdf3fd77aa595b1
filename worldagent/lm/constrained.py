"""Constrained decoding: generated tool calls stay well formed, with known tool and argument names.

A character-level automaton over FunctionGemma's call grammar (see
:mod:`worldagent.tools.callformat`), with the tool names and argument names of the registry's
schemas::

    text* ( <start_function_call> call:NAME{KEY:<escape>VALUE<escape>(,KEY:<escape>VALUE<escape>)*}
            <end_function_call> text* )*

Outside a call anything goes (the automaton only watches for the start marker, also when it is
written in pieces); with ``calls_only`` nothing but calls (and whitespace between them) is allowed,
and the answer cannot stop before its first call. Inside one, only ``call:`` + a known tool, then
its argument names (each at most once; ``}`` only once every required argument is there), string
values between ``<escape>`` markers (anything but the marker itself) and the end marker. Stop tokens
are allowed only outside a call, and pad/bos (which decoding drops) never, so a finished answer
always parses. When the token budget would run out inside a call, the processor forces the shortest
way out (close the value, fill missing required arguments with empty strings, close the call) and,
near the end, refuses tokens that would open (or extend) a call that can no longer be closed in
time, so answers cut by ``max_new_tokens`` parse too.

Efficiency: every token's text is computed
once per tokenizer (:class:`TokenTable`); the automaton's states are interned and, per state, the
allowed-token mask and the successor of every allowed token are computed once (lazily, on first
visit) and cached across batches. A decoding step then costs one table lookup and one masked fill
per row; nothing is ever decoded during generation. Only string-valued arguments are supported
(every registry tool takes strings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from worldagent.lm.argmax import argmax
from worldagent.tools.callformat import CALL_END, CALL_START, ESCAPE

DEAD = -1
_EMPTY = np.array([], dtype=np.int64)
_WHITESPACE = frozenset(" \n")
HEAD = "call:"
CLOSE = "}" + CALL_END


@dataclass(frozen=True)
class ToolGrammar:
    """Argument names (in schema order) and the required ones, per tool name."""

    arguments: dict[str, tuple[str, ...]]
    required: dict[str, frozenset[str]]

    @classmethod
    def from_schemas(cls, schemas: Sequence[Mapping[str, Any]]) -> ToolGrammar:
        """From OpenAI-style schemas (``worldagent.tools.registry.tool_schemas()``)."""
        arguments: dict[str, tuple[str, ...]] = {}
        required: dict[str, frozenset[str]] = {}
        for schema in schemas:
            function = schema.get("function", schema)
            name = str(function["name"])
            parameters = function.get("parameters") or {}
            properties = parameters.get("properties") or {}
            for key, spec in properties.items():
                if spec.get("type", "string") != "string":
                    raise ValueError(
                        f"tool {name!r}: argument {key!r} is not a string; only string arguments are supported"
                    )
            arguments[name] = tuple(properties)
            required[name] = frozenset(parameters.get("required") or ())
        if not arguments:
            raise ValueError("no tools to constrain calls to")
        return cls(arguments, required)


def _kmp_step(pattern: str, matched: int, char: str) -> int:
    """Length of the longest prefix of ``pattern`` that ends the text ``pattern[:matched] + char``."""
    text = pattern[:matched] + char
    for length in range(min(len(text), len(pattern)), 0, -1):
        if text.endswith(pattern[:length]):
            return length
    return 0


# States (interned to ints by CallAutomaton):
#   ("out", k)                    outside a call; k chars of CALL_START matched
#   ("begin", k)                  calls-only mode, before the first call (no stop yet)
#   ("head", prefix)              after CALL_START; prefix of "call:NAME{"
#   ("key", tool, used, prefix)   at an argument; prefix of "KEY:<escape>"
#   ("val", tool, used, k)        inside a string value; k chars of ESCAPE matched
#   ("after", tool, used, prefix) after a value; prefix of "}<end_function_call>" ("," moves to "key")


class CallAutomaton:
    """The character automaton; states are interned to small ints (``state_id``/``state_of``)."""

    def __init__(self, grammar: ToolGrammar, calls_only: bool = False) -> None:
        self.grammar = grammar
        self.calls_only = calls_only  # the answer is calls only: no text outside them (whitespace aside)
        self.heads = [f"{HEAD}{name}{{" for name in grammar.arguments]
        self._ids: dict[tuple[Any, ...], int] = {}
        self._states: list[tuple[Any, ...]] = []
        self.start = self.state_id(("begin" if calls_only else "out", 0))
        self._memo: dict[tuple[int, str], int] = {}
        self._kmp: dict[tuple[str, int, str], int] = {}

    def state_id(self, state: tuple[Any, ...]) -> int:
        if state not in self._ids:
            self._ids[state] = len(self._states)
            self._states.append(state)
        return self._ids[state]

    def state_of(self, state_id: int) -> tuple[Any, ...]:
        return self._states[state_id]

    def is_outside(self, state_id: int) -> bool:
        return self._states[state_id][0] in ("out", "begin")

    def may_stop(self, state_id: int) -> bool:
        state = self._states[state_id]
        return state[0] == "out" and not (self.calls_only and state[1])

    def _match(self, pattern: str, matched: int, char: str) -> int:
        key = (pattern, matched, char)
        if key not in self._kmp:
            self._kmp[key] = _kmp_step(pattern, matched, char)
        return self._kmp[key]

    def step(self, state_id: int, char: str) -> int:
        key = (state_id, char)
        found = self._memo.get(key)
        if found is None:
            nxt = self._step(self._states[state_id], char)
            found = DEAD if nxt is None else self.state_id(nxt)
            self._memo[key] = found
        return found

    def run(self, state_id: int, text: str) -> int:
        for char in text:
            state_id = self.step(state_id, char)
            if state_id == DEAD:
                return DEAD
        return state_id

    def _keys_left(self, tool: str, used: frozenset[str]) -> list[str]:
        return [k for k in self.grammar.arguments[tool] if k not in used]

    def _step(self, state: tuple[Any, ...], char: str) -> tuple[Any, ...] | None:
        kind = state[0]
        if kind in ("out", "begin"):
            if self.calls_only:
                if state[1] == 0 and char in _WHITESPACE:
                    return state
                if char != CALL_START[state[1]]:
                    return None
                matched = state[1] + 1
            else:
                matched = self._match(CALL_START, state[1], char)
            return ("head", "") if matched == len(CALL_START) else (kind, matched)
        if kind == "head":
            prefix = state[1] + char
            for head, tool in zip(self.heads, self.grammar.arguments, strict=False):
                if head == prefix:
                    if not self.grammar.arguments[tool]:
                        return ("after", tool, frozenset(), "")
                    return ("key", tool, frozenset(), "")
            return ("head", prefix) if any(h.startswith(prefix) for h in self.heads) else None
        if kind == "key":
            _, tool, used, prefix = state
            text = prefix + char
            if text == "}" and not used and not self.grammar.required[tool]:
                return ("after", tool, used, "}")
            for key in self._keys_left(tool, used):
                full = f"{key}:{ESCAPE}"
                if full == text:
                    return ("val", tool, used | {key}, 0)
                if full.startswith(text):
                    return ("key", tool, used, text)
            return None
        if kind == "val":
            _, tool, used, matched = state
            matched = self._match(ESCAPE, matched, char)
            return ("after", tool, used, "") if matched == len(ESCAPE) else ("val", tool, used, matched)
        # after a value
        _, tool, used, prefix = state
        if prefix == "" and char == ",":
            return ("key", tool, used, "") if self._keys_left(tool, used) else None
        text = prefix + char
        if not CLOSE.startswith(text) or not self.grammar.required[tool] <= used:
            return None
        return ("out", 0) if text == CLOSE else ("after", tool, used, text)

    def closing(self, state_id: int) -> str:
        """The shortest text that ends the current call (empty outside one; before the first call in
        calls-only mode, the shortest whole call)."""
        state = self._states[state_id]
        kind = state[0]
        if kind == "begin" or (kind == "out" and self.calls_only and state[1]):  # a call is owed
            return CALL_START[state[1] :] + self.closing(self.state_id(("head", "")))
        if kind == "out":
            return ""
        if kind == "head":  # the shortest of the calls this prefix can still become
            options = []
            for head, tool in zip(self.heads, self.grammar.arguments, strict=False):
                if head.startswith(state[1]):
                    inner = (
                        self.closing(self.state_id(("key", tool, frozenset(), "")))
                        if self.grammar.arguments[tool]
                        else CLOSE
                    )
                    options.append(head[len(state[1]) :] + inner)
            return min(options, key=len)
        if kind == "key":
            _, tool, used, prefix = state
            if prefix == "" and not self._missing(tool, used) and not used:
                return CLOSE
            keys = sorted(self._keys_left(tool, used), key=lambda k: k not in self.grammar.required[tool])
            key = next(k for k in keys if f"{k}:{ESCAPE}".startswith(prefix)) if prefix else keys[0]
            return f"{key}:{ESCAPE}"[len(prefix) :] + ESCAPE + self._finish(tool, used | {key})
        if kind == "val":
            _, tool, used, matched = state
            return ESCAPE[matched:] + self._finish(tool, used)
        _, tool, used, prefix = state
        if prefix:
            return CLOSE[len(prefix) :]
        return self._finish(tool, used)

    def _missing(self, tool: str, used: frozenset[str]) -> list[str]:
        return [k for k in self.grammar.arguments[tool] if k in self.grammar.required[tool] and k not in used]

    def _finish(self, tool: str, used: frozenset[str]) -> str:
        """From just after a value: the missing required arguments (empty strings), then the close."""
        return "".join(f",{k}:{ESCAPE}{ESCAPE}" for k in self._missing(tool, used)) + CLOSE


class TokenTable:
    """Every token's text as it appears in decoded output, computed once per tokenizer.

    A token's text is ``decode([anchor, id])`` minus ``decode([anchor])``, so SentencePiece's
    leading-space marker and byte-level BPE's byte mapping come out as in a real decode.
    """

    def __init__(self, tokenizer: Any, stop_ids: Sequence[int], forbidden_ids: Sequence[int] = ()) -> None:
        vocab_size = len(tokenizer)
        anchor = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("a"))[-1]
        prefix = tokenizer.decode([anchor], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        texts: list[str] = []
        for token in range(vocab_size):
            both = tokenizer.decode([anchor, token], skip_special_tokens=False, clean_up_tokenization_spaces=False)
            texts.append(both[len(prefix) :] if both.startswith(prefix) else both)
        self.texts = texts
        self.vocab_size = vocab_size
        self.stop_ids = sorted({int(t) for t in stop_ids})
        self.forbidden = {int(t) for t in forbidden_ids} - set(self.stop_ids)
        self.has_lt = np.array(["<" in t for t in texts], dtype=bool)
        by_first: dict[str, list[int]] = {}
        for token, text in enumerate(texts):
            if text and token not in self.forbidden and token not in self.stop_ids:
                by_first.setdefault(text[0], []).append(token)
        self.by_first = {char: np.array(ids, dtype=np.int64) for char, ids in by_first.items()}
        self.candidates = np.sort(np.concatenate(list(self.by_first.values())))  # every token that may be generated


@dataclass
class _StateTable:
    allowed: torch.Tensor  # bool mask over the vocabulary (on the scores' device)
    successor: dict[int, int] | None  # token -> next state (sparse states)
    dense_next: np.ndarray | None  # next state per token (dense states), DEAD where not allowed


class ToolCallConstraint:
    """Per-tokenizer constraint data shared by every batch: the automaton and per-state token tables."""

    def __init__(
        self,
        tokenizer: Any,
        schemas: Sequence[Mapping[str, Any]],
        stop_ids: Sequence[int],
        forbidden_ids: Sequence[int] = (),
        calls_only: bool = False,
    ):
        self.automaton = CallAutomaton(ToolGrammar.from_schemas(schemas), calls_only)
        self.tokens = TokenTable(tokenizer, stop_ids, forbidden_ids)
        self._tables: dict[tuple[int, str], _StateTable] = {}
        self._closing: dict[int, tuple[int, int]] = {}
        self._changers: dict[int, list[tuple[int, int]]] = {}
        # Budget checks start this many tokens before the end: enough to write and close any call.
        # An upper bound: the longest argument list, plus the start marker and a head written one
        # character at a time (every token holds at least one character).
        automaton = self.automaton
        arguments = max(
            self.closing_plan(automaton.state_id(("key", tool, frozenset(), "")))[0]
            for tool in automaton.grammar.arguments
        )
        self.budget_window = arguments + max(len(head) for head in automaton.heads) + len(CALL_START) + 2

    def _successors(self, state: int) -> tuple[np.ndarray, np.ndarray]:
        """(allowed token ids, their next states) for ``state``, stop tokens excluded."""
        automaton, tokens = self.automaton, self.tokens
        described = automaton.state_of(state)
        if (described == ("out", 0) and not automaton.calls_only) or (described[0] == "val" and described[3] == 0):
            # A token without '<' cannot touch a marker: it leaves such a plain state where it was.
            ids_array = tokens.candidates
            next_array = np.full(len(ids_array), state, dtype=np.int64)
            for position in np.flatnonzero(tokens.has_lt[ids_array]).tolist():
                next_array[position] = automaton.run(state, tokens.texts[int(ids_array[position])])
            keep = next_array != DEAD
            return ids_array[keep], next_array[keep]
        ids: list[int] = []
        nexts: list[int] = []
        for char, group in tokens.by_first.items():
            if automaton.step(state, char) == DEAD:
                continue
            for token in group.tolist():
                nxt = automaton.run(state, tokens.texts[token])
                if nxt != DEAD:
                    ids.append(token)
                    nexts.append(nxt)
        return np.array(ids, dtype=np.int64), np.array(nexts, dtype=np.int64)

    def table(self, state: int, device: torch.device) -> _StateTable:
        key = (state, str(device))
        found = self._tables.get(key)
        if found is not None:
            return found
        ids, nexts = self._successors(state)
        allowed = np.zeros(self.tokens.vocab_size, dtype=bool)
        allowed[ids] = True
        if self.automaton.may_stop(state) or not ids.size:  # never leave a row with nothing to pick
            allowed[self.tokens.stop_ids] = True
        if len(ids) > self.tokens.vocab_size // 4:
            dense = np.full(self.tokens.vocab_size, DEAD, dtype=np.int64)
            dense[ids] = nexts
            found = _StateTable(torch.from_numpy(allowed).to(device), None, dense)
        else:
            found = _StateTable(
                torch.from_numpy(allowed).to(device), dict(zip(ids.tolist(), nexts.tolist(), strict=False)), None
            )
        self._tables[key] = found
        return found

    def closing_plan(self, state: int) -> tuple[int, int]:
        """(tokens needed to close the current call, the first of them), greedily taking the longest
        token that fits the closing text; ``(0, -1)`` outside a call, a huge count when it cannot close."""
        found = self._closing.get(state)
        if found is not None:
            return found
        texts, automaton = self.tokens.texts, self.automaton
        closing, current, count, first = automaton.closing(state), state, 0, -1
        while closing:
            best = -1
            for token in self.tokens.by_first.get(closing[0], _EMPTY).tolist():
                text = texts[token]
                if closing.startswith(text) and (best < 0 or len(text) > len(texts[best])):
                    best = token
            if best < 0:
                count = 1 << 30
                break
            first = best if first < 0 else first
            current = automaton.run(current, texts[best])
            closing, count = closing[len(texts[best]) :], count + 1
        self._closing[state] = (count, first)
        return count, first

    def changers(self, state: int, device: torch.device) -> list[tuple[int, int]]:
        """(token, next state) for the allowed tokens that leave ``state`` for one that owes a closing."""
        found = self._changers.get(state)
        if found is None:
            table = self.table(state, device)
            if table.dense_next is not None:
                lt = np.flatnonzero(self.tokens.has_lt & (table.dense_next != DEAD) & (table.dense_next != state))
                pairs = [(int(t), int(table.dense_next[t])) for t in lt]
            else:
                pairs = [(t, n) for t, n in (table.successor or {}).items() if n != state]
            found = [(t, n) for t, n in pairs if self.automaton.closing(n)]
            self._changers[state] = found
        return found

    def budget_mask(self, state: int, remaining: int, device: torch.device) -> torch.Tensor:
        """The allowed tokens when only ``remaining`` tokens are left: every call can still be closed."""
        allowed = self.table(state, device).allowed
        needed, first = self.closing_plan(state)
        if needed and needed >= remaining and first >= 0:
            only = torch.zeros_like(allowed)
            only[first] = True
            return only
        blocked = [t for t, n in self.changers(state, device) if self.closing_plan(n)[0] > remaining - 1]
        if blocked:
            allowed = allowed.clone()
            allowed[blocked] = False
            if not bool(allowed.any()):  # too little budget left for even one call: stop
                allowed[self.tokens.stop_ids] = True
        return allowed

    def next_state(self, state: int, token: int, device: torch.device) -> int:
        if token in self.tokens.stop_ids:
            return state
        table = self.table(state, device)
        if table.dense_next is not None:
            nxt = int(table.dense_next[token])
        else:
            nxt = table.successor.get(token, DEAD) if table.successor is not None else DEAD
        return nxt

    def processor(self, prompt_width: int, max_new_tokens: int | None = None) -> ToolCallProcessor:
        return ToolCallProcessor(self, prompt_width, max_new_tokens)


class ToolCallProcessor:
    """A transformers ``LogitsProcessor`` for one ``generate`` call (fresh per batch: it keeps row state)."""

    def __init__(self, constraint: ToolCallConstraint, prompt_width: int, max_new_tokens: int | None = None) -> None:
        self.constraint = constraint
        self.prompt_width = prompt_width
        self.max_new_tokens = max_new_tokens
        self.states: list[int] = []
        self.finished: list[bool] = []
        self.seen = prompt_width
        self.rows: list[int] = []  # the batch row each row still here started as (rows leave: select_rows)
        self.steered: list[bool] = []
        """Per batch row: the grammar changed the highest-scoring token at some step, so a greedy
        decoding without it would have answered differently (given the same scores before it)."""

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        constraint = self.constraint
        rows, length = input_ids.shape
        if not self.states:
            self.states = [constraint.automaton.start] * rows
            self.finished = [False] * rows
            self.rows, self.steered = list(range(rows)), [False] * rows
        stops = set(constraint.tokens.stop_ids)
        if length > self.seen:  # one new token per row since the last call
            last = input_ids[:, -1].tolist()
            for row, token in enumerate(last):
                if self.finished[row]:
                    continue
                if token in stops:
                    self.finished[row] = True
                    continue
                self.states[row] = constraint.next_state(self.states[row], token, scores.device)
            self.seen = length
        remaining = None if self.max_new_tokens is None else self.max_new_tokens - (length - self.prompt_width)
        masks = []
        for row in range(rows):
            state = self.states[row]
            if self.finished[row]:  # generate pads finished rows itself; leave their scores alone
                masks.append(self._everything(scores))
            elif remaining is not None and remaining <= constraint.budget_window:
                masks.append(constraint.budget_mask(state, remaining, scores.device))
            else:
                masks.append(constraint.table(state, scores.device).allowed)
        allowed = torch.stack(masks)
        if allowed.shape[1] < scores.shape[1]:  # the model pads its vocabulary beyond the tokenizer's
            allowed = torch.nn.functional.pad(allowed, (0, scores.shape[1] - allowed.shape[1]), value=False)
        constrained = scores.masked_fill(~allowed[:, : scores.shape[1]], float("-inf"))
        chosen, wanted = argmax(constrained).tolist(), argmax(scores).tolist()
        for row, (token, greedy) in enumerate(zip(chosen, wanted, strict=True)):
            # one stop token for another (eos forbidden as the pad token, say) ends the answer alike
            if token != greedy and not self.finished[row] and not (token in stops and greedy in stops):
                self.steered[self.rows[row]] = True
        return constrained

    def select_rows(self, keep: Sequence[int]) -> None:
        """Follow :func:`worldagent.lm.rollout.decode_batch` when it drops finished rows."""
        self.states = [self.states[row] for row in keep]
        self.finished = [self.finished[row] for row in keep]
        self.rows = [self.rows[row] for row in keep]

    def _everything(self, scores: torch.Tensor) -> torch.Tensor:
        return torch.ones(self.constraint.tokens.vocab_size, dtype=torch.bool, device=scores.device)


def tool_call_processor_factory(
    tokenizer: Any,
    schemas: Sequence[Mapping[str, Any]],
    max_new_tokens: int | None = None,
    model: Any = None,
    calls_only: bool = False,
) -> Any:
    """A ``prompt width -> LogitsProcessor`` factory for :func:`worldagent.lm.rollout.generate_batched`.

    Stop tokens as :func:`worldagent.lm.stops.stop_token_ids` (pass ``model`` for its generation
    config's eos ids); pad and bos (dropped when decoding) are never allowed. ``calls_only``: the
    answer is one or more calls and nothing else (whitespace between them aside): what the system
    prompt asks for, and what makes a zero-shot base answer with calls at all.
    """
    from worldagent.lm.stops import stop_token_ids

    stops = stop_token_ids(tokenizer, model)
    forbidden = [t for t in (tokenizer.pad_token_id, tokenizer.bos_token_id) if t is not None]
    constraint = ToolCallConstraint(tokenizer, schemas, stops, forbidden, calls_only)

    def factory(prompt_width: int) -> ToolCallProcessor:
        return constraint.processor(prompt_width, max_new_tokens)

    factory.constraint = constraint  # type: ignore[attr-defined]
    return factory


def call_grammar_gbnf(schemas: Sequence[Mapping[str, Any]], max_orders: int = 256) -> str:
    """The calls-only language of :class:`CallAutomaton` as a GBNF grammar, for grammar engines that
    run natively (llama.cpp's GBNF, vLLM's guided decoding through xgrammar or llguidance):

    whitespace, then one or more ``<start_function_call>call:NAME{...}<end_function_call>`` with
    whitespace between them; inside, a known tool's arguments, each at most once, every required
    one, in any order (each order an alternative: ``max_orders`` bounds them), each a string value
    between ``<escape>`` markers that does not contain the marker. One difference: a value may not
    end in the start of the marker (``...<`` then ``<escape>``), which the automaton allows; no
    answer of the dataset does. ``tests/lm/test_lm_call_grammar.py`` checks both agree.
    """
    import itertools

    def literal(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    grammar = ToolGrammar.from_schemas(schemas)
    rules, tools = [], []
    for index, (name, arguments) in enumerate(grammar.arguments.items()):
        required = grammar.required[name]
        orders = [
            order
            for size in range(len(required), len(arguments) + 1)
            for chosen in itertools.combinations(arguments, size)
            if required <= set(chosen)
            for order in itertools.permutations(chosen)
        ]
        if len(orders) > max_orders:
            raise ValueError(f"tool {name!r}: {len(orders)} argument orders, more than {max_orders}")
        bodies = [' "," '.join(f"{literal(key + ':')} value" for key in order) or '""' for order in orders]
        rules.append(f"tool{index} ::= {literal(HEAD + name + '{')} ({' | '.join(bodies)}) {literal('}')}")
        tools.append(f"tool{index}")
    # a value is text without the escape marker: any character but "<", or "<" not starting it
    marker = ESCAPE[1:]
    avoid = " | ".join(f"{literal('<' + marker[:k])} [^{_gbnf_class(marker[k])}]" for k in range(len(marker)))
    return "\n".join(
        [
            "root ::= ws call (ws call)* ws",
            "ws ::= [ \\n]*",
            f"call ::= {literal(CALL_START)} ({' | '.join(tools)}) {literal(CALL_END)}",
            f"value ::= {literal(ESCAPE)} char* {literal(ESCAPE)}",
            f"char ::= [^<] | {avoid}",
            *rules,
        ]
    )


def _gbnf_class(char: str) -> str:
    """``char`` escaped for a GBNF character class."""
    return "\\" + char if char in "]^-\\" else char
