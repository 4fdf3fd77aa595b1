"""Continuous batching: a row that ends is replaced at once, and every answer is the one a static
batch gives (greedy token for token, samples for the same seed), through refills, moves and growth;
``generate_groups`` streams a call's groups of samples."""

from __future__ import annotations

import pytest
from model_fixtures import PROMPTS, tiny_llama_model, tiny_model_and_tokenizer

from worldagent.lm.continuous import Request, answer_with_retries, decode_stream, generate_groups, streamable
from worldagent.lm.rollout import (
    BatchedPolicy,
    GenerationStats,
    PromptCache,
    SamplingConfig,
    encode_prompt,
    generate_batched,
    prompt_occurrences,
    sampling_seed,
)

MANY = [
    [{"role": "system", "content": "You are a UI agent."}, {"role": "user", "content": f"Create a {name}."}]
    for name in (
        "button",
        "badge",
        "card with a title, a body and an image",
        "switch",
        "tabs with three panels",
        "dialog",
        "tooltip that opens on hover and on focus",
        "menu",
    )
]


def llama():
    _, tokenizer = tiny_model_and_tokenizer()
    return tiny_llama_model(), tokenizer


def stream(model, tokenizer, prompts, config, slots, spare=None, processor=None):
    """Each prompt's completion by :func:`decode_stream`, in prompt order, and the call's stats."""
    encoded = [tuple(encode_prompt(tokenizer, p)) for p in prompts]
    occurrence = prompt_occurrences(encoded)
    done: dict[int, object] = {}
    requests = [
        Request(ids, config, sampling_seed(config.seed, ids, occurrence[i], 0), i, processor=processor)
        for i, ids in enumerate(encoded)
    ]
    stats = GenerationStats()
    decode_stream(
        model, tokenizer, requests, lambda r, c: done.setdefault(r.key, c) and [], slots, stats=stats, spare=spare
    )
    return [done[i] for i in range(len(prompts))], stats


@pytest.mark.parametrize("slots,spare", [(3, None), (2, 1), (8, 0)])
def test_greedy_answers_are_a_static_batchs_token_for_token(slots, spare):
    """Fewer rows than prompts (rows refill), and a cache with no spare columns (rows move left
    every step once the budget is reached) give the static decoder's answers."""
    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=12)
    static = [g[0] for g in generate_batched(model, tokenizer, MANY, config, 3)]
    answers, stats = stream(model, tokenizer, MANY, config, slots, spare)
    assert [a.token_ids for a in answers] == [s.token_ids for s in static]
    assert [a.stopped for a in answers] == [s.stopped for s in static]
    assert stats.new_tokens == sum(len(s.token_ids) + s.stopped for s in static)
    assert stats.completions == len(MANY) and stats.batches == 1


def test_seeded_samples_do_not_depend_on_the_rows_beside_them():
    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=10, do_sample=True, temperature=1.3, top_k=50, seed=5)
    static = [g[0].token_ids for g in generate_batched(model, tokenizer, MANY, config, 4)]
    for slots in (1, 3, 8):
        answers, _ = stream(model, tokenizer, MANY, config, slots)
        assert [a.token_ids for a in answers] == static


def test_the_call_grammar_and_the_loop_guard_hold_per_row():
    from worldagent.lm.constrained import tool_call_processor_factory
    from worldagent.tools.registry import tool_schemas

    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=24, no_repeat_ngram=3)
    factory = tool_call_processor_factory(tokenizer, tool_schemas(), 24, model, calls_only=True)
    static = [g[0] for g in generate_batched(model, tokenizer, MANY, config, 3, logits_processor=factory)]
    answers, _ = stream(model, tokenizer, MANY, config, 2, processor=factory)
    assert [a.token_ids for a in answers] == [s.token_ids for s in static]
    assert [a.steered for a in answers] == [s.steered for s in static]
    assert any(a.steered for a in answers)  # the grammar did act: the test would see it misapplied


def test_a_request_added_when_an_answer_ends_is_answered_in_the_same_call_even_if_longer():
    """``on_done`` asks for more (a retry), including a prompt longer than any before it: the live
    rows move right to make room, and the answers stay a fresh decoding's."""
    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=8)
    short = [tuple(encode_prompt(tokenizer, p)) for p in MANY[:2]]
    longer = tuple(encode_prompt(tokenizer, MANY[6]))
    assert len(longer) > max(map(len, short))
    answers: dict[object, list[int]] = {}

    def on_done(request, completion):
        answers[request.key] = completion.token_ids
        return [Request(longer, config, key="longer")] if request.key == 0 else []

    decode_stream(model, tokenizer, [Request(ids, config, key=i) for i, ids in enumerate(short)], on_done, 2, spare=0)
    fresh = [g[0].token_ids for g in generate_batched(model, tokenizer, [MANY[0], MANY[1], MANY[6]], config, 1)]
    assert [answers[0], answers[1], answers["longer"]] == fresh


def test_every_prompt_is_prefilled_once_through_the_models_prompt_cache():
    model, tokenizer = llama()
    store = PromptCache()
    config = SamplingConfig(max_new_tokens=4)
    generate_batched(model, tokenizer, MANY, config, 4, prompt_cache=store)
    encoded = [tuple(encode_prompt(tokenizer, p)) for p in MANY]
    stats = GenerationStats()
    decode_stream(model, tokenizer, [Request(ids, config) for ids in encoded], lambda r, c: [], 3, store, stats)
    assert stats.prefilled_tokens == 0 and stats.reused_tokens == sum(map(len, encoded))


@pytest.mark.parametrize("batch_size", [1, 3])
def test_generate_groups_streams_each_groups_samples_as_static_batches_draw_them(batch_size):
    """Groups of seeded samples (the experience loop's, GRPO's probe's) through one stream: the
    same samples, in prompt order, as static batches give, every prompt prefilled once, and the
    call counted as one batch of its prompts' completions."""
    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=9, do_sample=True, temperature=1.2, num_return_sequences=3, seed=4)
    prompts = MANY[:5] + MANY[:1]  # a prompt asked twice draws other samples the second time
    static_stats, stats = GenerationStats(), GenerationStats()
    static = generate_batched(model, tokenizer, prompts, config, batch_size, stats=static_stats)
    groups = generate_groups(model, tokenizer, prompts, config, batch_size, None, stats)
    assert [[c.token_ids for c in g] for g in groups] == [[c.token_ids for c in g] for g in static]
    assert [[c.stopped for c in g] for g in groups] == [[c.stopped for c in g] for g in static]
    assert groups[0][0].token_ids != groups[5][0].token_ids
    assert stats.batches == 1 and stats.prompts == len(prompts) and stats.completions == 3 * len(prompts)
    for name in ("new_tokens", "prompt_tokens", "prefilled_tokens", "unique_prompt_tokens"):
        assert getattr(stats, name) == getattr(static_stats, name), name


def test_samples_started_together_read_their_prompts_columns_once_and_answer_the_same(monkeypatch):
    """A stream's rows placed from one prompt at one column (a group's samples admitted together)
    reach the kernel as one group; the answers are those of the row-by-row kernel."""
    from worldagent.lm import continuous, lean_step

    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=9, do_sample=True, temperature=1.2, num_return_sequences=3, seed=4)
    original = lean_step.decode_attention
    sizes: list[int] = []

    def recorded(*args, shared=None, **kwargs):
        if shared is not None:
            sizes.append(max(b - a for a, b in zip(shared.starts.tolist(), shared.starts.tolist()[1:], strict=False)))
        return original(*args, shared=shared, **kwargs)

    monkeypatch.setattr(lean_step, "decode_attention", recorded)
    grouped = generate_groups(model, tokenizer, MANY[:5], config, 2, None)
    assert sizes and max(sizes) == 3  # a prompt's three samples, started at one column
    monkeypatch.setattr(continuous, "shared_columns", lambda *args: None)
    row_by_row = generate_groups(model, tokenizer, MANY[:5], config, 2, None)
    assert [[c.token_ids for c in g] for g in grouped] == [[c.token_ids for c in g] for g in row_by_row]


def test_generate_groups_keeps_one_static_batch_when_every_prompt_fits_it(monkeypatch):
    """Prompts that fit one batch start together either way and nobody waits for a finished row:
    the static batch answers, without the stream's row-by-row choice."""
    from worldagent.lm import continuous

    def refuse(*args, **kwargs):
        raise AssertionError("streamed a call that fits one batch")

    monkeypatch.setattr(continuous, "decode_stream", refuse)
    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=6, do_sample=True, num_return_sequences=2, seed=3)
    static = generate_batched(model, tokenizer, MANY[:3], config, 3)
    stats = GenerationStats()
    groups = generate_groups(model, tokenizer, MANY[:3], config, 3, None, stats)
    assert [[c.token_ids for c in g] for g in groups] == [[c.token_ids for c in g] for g in static]
    assert stats.batches == 1 and stats.completions == 6
    with pytest.raises(AssertionError, match="streamed"):  # one prompt more than the batch streams
        generate_groups(model, tokenizer, MANY[:4], config, 3, None)


def test_generate_groups_keeps_static_batches_for_a_sliding_window_model_or_when_asked():
    gemma, tokenizer = tiny_model_and_tokenizer()
    config = SamplingConfig(max_new_tokens=5)
    stats = GenerationStats()
    groups = generate_groups(gemma, tokenizer, MANY[:4], config, 2, None, stats)
    assert stats.batches == 2 and [len(g) for g in groups] == [1] * 4
    model, tokenizer = llama()
    stats = GenerationStats()
    groups = generate_groups(model, tokenizer, MANY[:4], config, 2, None, stats, continuous=False)
    assert stats.batches == 2 and [len(g) for g in groups] == [1] * 4


def test_a_sliding_window_model_is_refused_with_a_reason():
    gemma, tokenizer = tiny_model_and_tokenizer()
    ids = tuple(encode_prompt(tokenizer, PROMPTS[0]))
    with pytest.raises(ValueError, match="whole prompt"):
        decode_stream(gemma, tokenizer, [Request(ids, SamplingConfig(max_new_tokens=2))], lambda r, c: [], 2)
    assert not streamable(BatchedPolicy(gemma, tokenizer), [])


def test_answer_with_retries_gives_each_attempt_the_answer_its_own_call_gives():
    """The stream's retries are the rounds' retries: each prompt's k-th answer is what the k-th retry
    policy, called on that prompt alone, answers."""
    model, tokenizer = llama()
    store = PromptCache()
    first = BatchedPolicy(model, tokenizer, SamplingConfig(max_new_tokens=6), 3, prompt_cache=store)
    retries = [
        BatchedPolicy(model, tokenizer, SamplingConfig(max_new_tokens=6, do_sample=True, seed=k), 3, prompt_cache=store)
        for k in (1, 2)
    ]
    assert streamable(first, retries)
    seen: list[tuple[int, int, str]] = []

    def again(i: int, attempt: int, answer: str) -> bool:
        seen.append((i, attempt, answer))
        return i % 2 == 0  # even prompts always fail their check

    answer_with_retries(first, retries, MANY, again)
    by_attempt = {(i, attempt): answer for i, attempt, answer in seen}
    assert sorted(by_attempt) == sorted(
        [(i, 0) for i in range(len(MANY))] + [(i, k) for i in range(0, 8, 2) for k in (1, 2)]
    )
    for attempt, policy in enumerate([first, *retries]):
        for i in range(len(MANY)):
            if (i, attempt) in by_attempt:
                alone = BatchedPolicy(model, tokenizer, policy.config, 1).complete([MANY[i]])[0]
                assert by_attempt[(i, attempt)] == alone
    assert [c.text for c in first.last] == [by_attempt[(i, 0)] for i in range(len(MANY))]
    assert first.stats.prefilled_tokens > 0
    assert all(r.stats.prefilled_tokens == 0 and r.stats.completions == 4 for r in retries)


def test_the_self_checking_policy_streams_and_answers_as_in_rounds():
    from worldagent.world_agent.self_check import SelfCheckingPolicy

    class InRounds(BatchedPolicy):  # not a plain BatchedPolicy: the policy falls back to rounds
        pass

    model, tokenizer = llama()

    def run(kind):
        store = PromptCache()
        first = kind(model, tokenizer, SamplingConfig(max_new_tokens=6), 3, prompt_cache=store)
        retry = lambda k: kind(  # noqa: E731
            model, tokenizer, SamplingConfig(max_new_tokens=6, do_sample=True, seed=k), 3, prompt_cache=store
        )
        policy = SelfCheckingPolicy(first, retry, lambda i, answer: i % 3 == 0 or len(answer) % 2 == 0, 2)
        return policy.complete([list(p) for p in MANY]), policy.counts, policy.answered_by, first.stats.batches

    streamed, rounds = run(BatchedPolicy), run(InRounds)
    assert streamed[:3] == rounds[:3]
    assert streamed[1].retried_answers > 0  # retries did happen
    assert streamed[3] == 1 and rounds[3] > 1  # one stream against a batch per round


def test_the_cache_holds_the_longest_prompt_and_budget_however_long_the_stream(monkeypatch):
    """A long stream in a cache with no spare columns: every row from column 0, so its buffer stays
    within the longest prompt plus the token budget and one column."""
    from worldagent.lm import continuous

    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=10)
    seen: list[int] = []
    original = continuous._Batch.step

    def step(self):
        seen.append(self.state.capacity)
        return original(self)

    monkeypatch.setattr(continuous._Batch, "step", step)
    answers, _ = stream(model, tokenizer, MANY * 3, config, 2, spare=0)
    longest = max(len(encode_prompt(tokenizer, p)) for p in MANY)
    assert max(seen) <= longest + 10 + 1
    assert [a.token_ids for a in answers] == [
        g[0].token_ids for g in generate_batched(model, tokenizer, MANY * 3, config, 4)
    ]


@pytest.mark.parametrize("spare", [0, None])
def test_rows_that_end_at_different_steps_leave_and_the_rest_answer_unchanged(spare):
    """Budgets of 2 to 13 tokens: rows end at different steps, the last row moves into a retired
    row's place and new prompts join mid-answer of the others."""
    model, tokenizer = llama()
    prompts = MANY * 2
    configs = [SamplingConfig(max_new_tokens=2 + (5 * i) % 12) for i in range(len(prompts))]
    encoded = [tuple(encode_prompt(tokenizer, p)) for p in prompts]
    answers: dict[int, list[int]] = {}
    requests = [Request(ids, config, key=i) for i, (ids, config) in enumerate(zip(encoded, configs, strict=True))]
    decode_stream(
        model, tokenizer, requests, lambda r, c: answers.setdefault(r.key, c.token_ids) and [], 3, spare=spare
    )
    for i, (prompt, config) in enumerate(zip(prompts, configs, strict=True)):
        assert answers[i] == generate_batched(model, tokenizer, [prompt], config, 1)[0][0].token_ids


def test_a_retry_is_decoded_before_the_requests_still_waiting():
    """A prompt's retries are a chain that sets how long the call takes: ``on_done``'s requests go
    ahead of the queue."""
    model, tokenizer = llama()
    config = SamplingConfig(max_new_tokens=2)
    encoded = [tuple(encode_prompt(tokenizer, p)) for p in MANY[:3]]
    order: list[object] = []

    def on_done(request, completion):
        order.append(request.key)
        return [Request(request.ids, config, key=f"{request.key} again")] if request.key == 0 else []

    decode_stream(model, tokenizer, [Request(ids, config, key=i) for i, ids in enumerate(encoded)], on_done, 1)
    assert order == [0, "0 again", 1, 2]


def test_a_cancelled_request_leaves_unfinished_and_is_never_answered():
    model, tokenizer = llama()
    encoded = [tuple(encode_prompt(tokenizer, p)) for p in MANY[:4]]
    long, short = SamplingConfig(max_new_tokens=12), SamplingConfig(max_new_tokens=2)
    answered: list[object] = []
    stats = GenerationStats()
    requests = [Request(encoded[0], long, key=0), Request(encoded[1], short, key=1)]
    requests += [Request(ids, short, key=i) for i, ids in enumerate(encoded[2:], start=2)]
    decode_stream(
        model,
        tokenizer,
        requests,
        lambda r, c: answered.append(r.key) or [],
        2,
        stats=stats,
        cancelled=lambda r: r.key in (0, 3) and 1 in answered,  # 0 is decoding when 1 ends; 3 waits
    )
    assert sorted(answered) == [1, 2]
    assert stats.completions == 2 and stats.new_tokens == 4
    assert stats.decoded_tokens > 2  # the cancelled row's steps were spent


def test_retries_run_side_by_side_and_the_check_sees_them_in_order():
    """A failing first answer gets every retry at once; the check sees attempt 1 before 2, and once
    it accepts one, the later ones are never shown to it."""
    model, tokenizer = llama()
    store = PromptCache()
    first = BatchedPolicy(model, tokenizer, SamplingConfig(max_new_tokens=3), 4, prompt_cache=store)
    retries = [
        BatchedPolicy(
            model, tokenizer, SamplingConfig(max_new_tokens=8 - 2 * k, do_sample=True, seed=k), 4, prompt_cache=store
        )
        for k in (1, 2, 3)
    ]
    seen: list[tuple[int, int]] = []

    def again(i: int, attempt: int, answer: str) -> bool:
        seen.append((i, attempt))
        return attempt < 2  # every prompt passes at its second retry

    answer_with_retries(first, retries, MANY[:3], again)
    for i in range(3):
        assert [attempt for j, attempt in seen if j == i] == [0, 1, 2]
    assert retries[2].stats.prompt_tokens > 0  # the third retry was started beside the others
    assert retries[0].stats.completions == retries[1].stats.completions == 3


def test_a_request_started_ahead_joins_before_any_answer_asks_for_it():
    """``ahead`` sees each live row's progress every step; what it returns is admitted then, ahead
    of those waiting: a short request started when the long one has written 4 tokens ends first."""
    model, tokenizer = llama()
    encoded = [tuple(encode_prompt(tokenizer, p)) for p in MANY[:3]]
    long, short = SamplingConfig(max_new_tokens=10), SamplingConfig(max_new_tokens=2)
    order: list[object] = []
    seen: list[int] = []

    def ahead(running):
        seen.extend(written for request, written in running if request.key == "long")
        return [Request(encoded[1], short, key="ahead")] if seen[-1:] == [4] else []

    requests = [Request(encoded[0], long, key="long"), Request(encoded[2], short, key="waiting")]
    decode_stream(model, tokenizer, requests, lambda r, c: order.append(r.key) or [], 2, ahead=ahead)
    assert seen[:4] == [1, 2, 3, 4]  # asked before each step (a row joins with its first token)
    assert order.index("ahead") < order.index("long")
    assert order.index("waiting") < order.index("ahead")  # the rows were full when it was asked for


@pytest.mark.parametrize("passing", ["none", "odd", "all"])
def test_retries_ahead_are_the_retries_after_and_unread_answers_are_not_counted(passing):
    """Retries started beside a first answer still being written (``ahead_after=0``: from its first
    token) give the check the same answers in the same order as retries started after it ends, the
    same first answers and the same answer counts; a passing first answer cancels them, and a retry
    decoded but never read counts as work, not as an answer."""
    model, tokenizer = llama()

    def run(ahead_after):
        store = PromptCache()
        # rows to spare: every retry started ahead finds one
        first = BatchedPolicy(model, tokenizer, SamplingConfig(max_new_tokens=8), 32, prompt_cache=store)
        retries = [
            BatchedPolicy(
                model, tokenizer, SamplingConfig(max_new_tokens=3 * k, do_sample=True, seed=k), 32, prompt_cache=store
            )
            for k in (1, 2, 3)
        ]
        seen: list[tuple[int, int, str]] = []

        def again(i: int, attempt: int, answer: str) -> bool:
            seen.append((i, attempt, answer))
            fails = {"none": True, "odd": i % 2 == 0, "all": False}[passing]
            return fails and attempt < 2  # a failing prompt passes at its second retry

        answer_with_retries(first, retries, MANY, again, ahead_after=ahead_after)
        counts = [(p.stats.completions, p.stats.new_tokens, p.stats.prompts) for p in [first, *retries]]
        started = [p.stats.prompt_tokens for p in retries]
        return sorted(seen), [c.text for c in first.last], counts, started

    after, ahead = run(None), run(0.0)
    assert ahead[:3] == after[:3]
    if passing == "all":
        assert after[2][1:] == [(0, 0, 0)] * 3  # no retry read
        assert after[3] == [0, 0, 0] and all(started > 0 for started in ahead[3])  # but started ahead
    if passing == "none":
        assert after[2][3] == (0, 0, 0) and ahead[3][2] > 0  # the third retry decoded, never read
