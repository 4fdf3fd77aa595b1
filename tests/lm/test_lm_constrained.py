"""Constrained decoding keeps tool calls well formed with known tool and argument names."""

from __future__ import annotations

import pytest
import torch
from model_fixtures import PROMPTS, tiny_model_and_tokenizer

from worldagent.lm.constrained import DEAD, CallAutomaton, ToolGrammar, tool_call_processor_factory
from worldagent.lm.rollout import SamplingConfig, generate_batched
from worldagent.tools.callformat import CALL_END, CALL_START, ESCAPE, ToolCall, parse_calls, render_calls
from worldagent.tools.registry import tool_schemas

GRAMMAR = ToolGrammar.from_schemas(tool_schemas())
KNOWN = {name: set(keys) for name, keys in GRAMMAR.arguments.items()}


def assert_well_formed(text: str) -> list[ToolCall]:
    parsed = parse_calls(text)
    assert parsed.errors == [], (text, parsed.errors)
    for call in parsed.calls:
        assert call.name in KNOWN, call.name
        assert set(call.arguments) <= KNOWN[call.name]
        assert GRAMMAR.required[call.name] <= set(call.arguments)
    return parsed.calls


def test_automaton_accepts_rendered_calls_and_ends_outside():
    automaton = CallAutomaton(GRAMMAR)
    text = "I will write it. " + render_calls(
        [
            ToolCall("writeStory", {"path": "a/a.stories.tsx", "content": "x <b>{y}</b>, <esc"}),
            ToolCall("runStory", {"path": "a/a.stories.tsx"}),
        ]
    )
    state = automaton.run(automaton.start, text)
    assert state != DEAD and automaton.is_outside(state)


@pytest.mark.parametrize(
    "bad",
    [
        f"{CALL_START}call:deleteAll{{",  # unknown tool
        f"{CALL_START}call:runStory{{file:",  # unknown argument
        f"{CALL_START}call:runStory{{}}",  # a required argument is missing
        f"{CALL_START}call:writeStory{{path:{ESCAPE}a{ESCAPE},path:",  # duplicate argument
        f"{CALL_START}call:runStory{{path:{ESCAPE}a{ESCAPE}}}x",  # anything but the end marker after '}'
        f"{CALL_START} call:runStory",  # whitespace in structure
    ],
)
def test_automaton_rejects_malformed_calls(bad: str):
    automaton = CallAutomaton(GRAMMAR)
    assert automaton.run(automaton.start, bad) == DEAD


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "<start_fun",
        CALL_START,
        CALL_START + "call:wri",
        CALL_START + "call:writeStyles{",
        CALL_START + "call:writeStyles{con",
        f"{CALL_START}call:writeStyles{{content:{ESCAPE}a <esc",
        f"{CALL_START}call:runStory{{path:{ESCAPE}p{ESCAPE}}}<end_fu",
    ],
)
def test_closing_text_completes_any_prefix_into_a_valid_call(prefix: str):
    automaton = CallAutomaton(GRAMMAR)
    state = automaton.run(automaton.start, prefix)
    completed = prefix + automaton.closing(state)
    assert automaton.is_outside(automaton.run(automaton.start, completed))
    calls = assert_well_formed(completed)
    assert len(calls) == (0 if CALL_START not in completed else 1)


def _simulate(processor_factory, tokenizer, steps: int, seed: int) -> str:
    """Decode from random logits (biased towards the markers) through the processor: no model needed."""
    generator = torch.Generator().manual_seed(seed)
    vocab = len(tokenizer)
    bias = torch.zeros(vocab)
    for marker in (CALL_START, CALL_END, ESCAPE):
        bias[tokenizer.convert_tokens_to_ids(marker)] = 4.0
    width = 3
    ids = torch.zeros((1, width), dtype=torch.long)
    processor = processor_factory(width)
    for _ in range(steps):
        scores = processor(ids, torch.randn((1, vocab), generator=generator) * 3 + bias)
        token = int(torch.multinomial(torch.softmax(scores[0], -1), 1, generator=generator))
        ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
        if token in processor.constraint.tokens.stop_ids:
            break
    return tokenizer.decode(ids[0, width:].tolist(), skip_special_tokens=False)


@pytest.mark.parametrize("steps", [12, 40, 150])
def test_random_logits_under_the_processor_always_give_parseable_calls(steps: int):
    _, tokenizer = tiny_model_and_tokenizer()
    factory = tool_call_processor_factory(tokenizer, tool_schemas(), max_new_tokens=steps)
    calls = 0
    for seed in range(12):
        text = _simulate(factory, tokenizer, steps, seed)
        for stop in ("<end_of_turn>", "<eos>"):
            text = text.replace(stop, "")
        calls += len(assert_well_formed(text))
    if steps >= 40:
        assert calls > 0  # the bias makes calls likely: the test exercises the call grammar, not only free text


def test_without_the_processor_the_same_logits_give_malformed_calls():
    """The check above can fail: unconstrained, the same biased random logits break the grammar."""
    _, tokenizer = tiny_model_and_tokenizer()

    def identity(width):
        class Passthrough:
            constraint = type("C", (), {"tokens": type("T", (), {"stop_ids": []})()})()

            def __call__(self, ids, scores):
                return scores

        return Passthrough()

    texts = [_simulate(identity, tokenizer, 60, seed) for seed in range(12)]
    assert any(parse_calls(text).errors for text in texts)


def test_tiny_model_sampling_under_the_processor_gives_parseable_calls():
    model, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=48, do_sample=True, temperature=1.5, num_return_sequences=3, seed=3)
    factory = tool_call_processor_factory(tokenizer, tool_schemas(), config.max_new_tokens, model)
    groups = generate_batched(model, tokenizer, PROMPTS, config, batch_size=4, logits_processor=factory)
    assert [len(group) for group in groups] == [3] * len(PROMPTS)
    for group in groups:
        for completion in group:
            assert_well_formed(completion.text)


def test_calls_only_refuses_text_outside_calls_and_an_empty_answer():
    automaton = CallAutomaton(GRAMMAR, calls_only=True)
    assert automaton.run(automaton.start, "Sure! " + CALL_START) == DEAD
    call = render_calls([ToolCall("runStory", {"path": "a.stories.tsx"})])
    assert not automaton.may_stop(automaton.start)
    assert automaton.may_stop(automaton.run(automaton.start, "\n" + call + "\n" + call))


@pytest.mark.parametrize("steps", [30, 150])
def test_calls_only_answers_are_calls_and_always_hold_one(steps: int):
    _, tokenizer = tiny_model_and_tokenizer()
    factory = tool_call_processor_factory(tokenizer, tool_schemas(), max_new_tokens=steps, calls_only=True)
    for seed in range(8):
        text = _simulate(factory, tokenizer, steps, seed)
        for stop in ("<end_of_turn>", "<eos>"):
            text = text.replace(stop, "")
        calls = assert_well_formed(text)
        assert calls, text
        assert parse_calls(text).text.strip() == ""  # nothing but calls


def test_the_processor_records_which_rows_it_steered_away_from_their_greedy_choice():
    _, tokenizer = tiny_model_and_tokenizer()
    processor = tool_call_processor_factory(tokenizer, tool_schemas())(2)
    vocab = processor.constraint.tokens.vocab_size
    allowed = int(
        processor.constraint.table(processor.constraint.automaton.start, torch.device("cpu")).allowed.nonzero()[0]
    )
    pad = tokenizer.pad_token_id  # never allowed

    def scores(*best: int) -> torch.Tensor:
        out = torch.zeros((len(best), vocab))
        for row, token in enumerate(best):
            out[row, token] = 10.0
        return out

    ids = torch.zeros((3, 2), dtype=torch.long)
    processor(ids, scores(allowed, pad, allowed))
    assert processor.steered == [False, True, False]
    processor.select_rows([0, 2])  # the second row left the batch: its flag stays with it
    ids = torch.full((2, 3), allowed)
    processor(ids, scores(allowed, pad))
    assert processor.steered == [False, True, True]  # the third row, now second, was steered


@pytest.mark.parametrize(("calls_only", "steered"), [(False, False), (True, True)])
def test_an_unsteered_greedy_answer_is_what_decoding_without_the_grammar_gives(calls_only: bool, steered: bool):
    model, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=32, no_repeat_ngram=3)
    factory = tool_call_processor_factory(tokenizer, tool_schemas(), config.max_new_tokens, model, calls_only)
    constrained = generate_batched(model, tokenizer, PROMPTS, config, batch_size=2, logits_processor=factory)
    free = generate_batched(model, tokenizer, PROMPTS, config, batch_size=2)
    # free text with no call: the grammar never steers, and the answers agree; calls only: it
    # steers every row of an untrained model, and each steered answer differs
    assert [group[0].steered for group in constrained] == [steered] * len(PROMPTS)
    assert all((c[0].text == f[0].text) != c[0].steered for c, f in zip(constrained, free, strict=True))


def test_one_stop_token_for_another_is_not_steering():
    from types import SimpleNamespace

    from worldagent.lm.constrained import ToolCallProcessor

    vocab, stops = 8, [1, 5]
    allowed = torch.ones(vocab, dtype=torch.bool)
    allowed[[1, 3]] = False  # a stop token and a word the grammar refuses here
    constraint = SimpleNamespace(
        tokens=SimpleNamespace(stop_ids=stops, vocab_size=vocab),
        automaton=SimpleNamespace(start=0),
        budget_window=0,
        table=lambda state, device: SimpleNamespace(allowed=allowed),
    )
    processor = ToolCallProcessor(constraint, prompt_width=1)  # type: ignore[arg-type]
    scores = torch.zeros((2, vocab))
    scores[0, 1], scores[0, 5] = 9.0, 8.0  # wants stop 1, gets stop 5: the answer ends the same
    scores[1, 3], scores[1, 4] = 9.0, 8.0  # wants word 3, gets word 4
    out = processor(torch.zeros((2, 1), dtype=torch.long), scores)
    assert out.argmax(-1).tolist() == [5, 4]
    assert processor.steered == [False, True]
