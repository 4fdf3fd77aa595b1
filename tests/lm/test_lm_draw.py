"""The decoders' draw of a sampled token (``rollout.draw``): torch.multinomial's distribution, one
random number a row, never a token of probability 0."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from worldagent.lm.rollout import draw

# a row of weights: mostly zeros and ordinary sizes, some tiny, some huge, at least one positive
weights = st.lists(
    st.one_of(st.just(0.0), st.floats(1e-30, 1e-20), st.floats(1e-6, 1.0), st.floats(1e10, 1e30)),
    min_size=1,
    max_size=40,
).filter(lambda row: any(w > 0 for w in row))


def chi_square(counts: torch.Tensor, expected: torch.Tensor) -> float:
    kept = expected > 0
    return float(((counts[kept] - expected[kept]) ** 2 / expected[kept]).sum())


def test_draws_follow_the_distribution_as_torch_multinomial_does():
    p = torch.tensor([0.0, 0.05, 0.0, 0.15, 0.3, 0.5, 0.0])
    n, rows = 120_000, 1_000
    generator = torch.Generator().manual_seed(0)
    ours = torch.cat([draw(p.expand(rows, -1), [generator] * rows) for _ in range(n // rows)])
    theirs = torch.multinomial(p.expand(n, -1), 1, generator=torch.Generator().manual_seed(1))[:, 0]
    counts = torch.bincount(ours, minlength=len(p)).double()
    reference = torch.bincount(theirs, minlength=len(p)).double()
    assert counts[p == 0].sum() == 0
    # 4 degrees of freedom: 18.47 is the 0.999 quantile (a fixed seed: the test cannot flicker)
    assert chi_square(counts, p.double() * n) < 18.47
    assert chi_square(reference, p.double() * n) < 18.47  # the reference itself, by the same yardstick
    pooled = (counts + reference) / 2  # two samples of one distribution
    assert chi_square(counts, pooled) + chi_square(reference, pooled) < 18.47


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(weights, min_size=1, max_size=6), seed=st.integers(0, 2**31))
def test_a_drawn_token_has_positive_probability_and_a_rows_draw_is_its_own(rows, seed):
    width = max(map(len, rows))
    probabilities = torch.tensor([row + [0.0] * (width - len(row)) for row in rows], dtype=torch.float32)
    probabilities = probabilities / probabilities.sum(-1, keepdim=True).clamp(min=1e-38)
    if not bool((probabilities.double().sum(-1) > 0).all()):  # a row that vanished in float32
        return
    seeds = [seed + index for index in range(len(rows))]
    together = draw(probabilities, [torch.Generator().manual_seed(s) for s in seeds])
    assert all(probabilities[index, token] > 0 for index, token in enumerate(together.tolist()))
    for index, s in enumerate(seeds):  # the same token drawn alone: no row's draw depends on another
        alone = draw(probabilities[index : index + 1], [torch.Generator().manual_seed(s)])
        assert alone.tolist() == [int(together[index])]


@pytest.mark.parametrize("uniform", [0.0, 0.5, 1 - 2**-53])
def test_the_ends_of_the_uniform_land_on_tokens_of_positive_probability(monkeypatch, uniform):
    probabilities = torch.tensor([[0.0, 0.0, 0.25, 0.0, 0.75, 0.0], [0.0, 1e-45, 0.0, 0.0, 0.0, 1e-45]])
    monkeypatch.setattr(torch, "rand", lambda *args, **kwargs: torch.full((1,), uniform, dtype=torch.float64))
    chosen = draw(probabilities, [torch.Generator(), torch.Generator()]).tolist()
    expected = {0.0: [2, 1], 0.5: [4, 5], 1 - 2**-53: [4, 5]}[uniform]  # 0.5: 0.5 * total of row 2 lies at its cut
    assert chosen == expected


def test_one_random_number_a_row_from_its_own_generator():
    probabilities = torch.softmax(torch.randn(3, 49_152, generator=torch.Generator().manual_seed(0)), -1)
    generators = [torch.Generator().manual_seed(s) for s in (1, 2, 3)]
    draw(probabilities, generators)
    for s, generator in zip((1, 2, 3), generators, strict=True):
        advanced = torch.Generator().manual_seed(s)
        torch.rand(1, dtype=torch.float64, generator=advanced)
        assert torch.equal(generator.get_state(), advanced.get_state())
    state = torch.get_rng_state()
    draw(probabilities)  # without generators: torch's global one, one number a row
    after = torch.get_rng_state()
    torch.set_rng_state(state)
    torch.rand(3, dtype=torch.float64)
    assert torch.equal(torch.get_rng_state(), after)


@pytest.mark.parametrize(
    "row",
    [[0.0, 0.0], [float("nan"), 1.0], [float("inf"), 1.0], [1.0, float("inf")]],
    ids=["zero", "nan", "inf", "inf-last"],
)
def test_a_row_without_finite_positive_mass_is_refused(row):
    with pytest.raises(ValueError, match="no positive, finite probability mass"):
        draw(torch.tensor([[0.5, 0.5], row]), [torch.Generator(), torch.Generator()])


def test_as_many_generators_as_rows():
    with pytest.raises(ValueError, match="1 generators for 2 rows"):
        draw(torch.ones(2, 3), [torch.Generator()])
