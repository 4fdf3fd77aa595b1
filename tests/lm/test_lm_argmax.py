"""The decoders' greedy choice (``lm.argmax``) and their sampling warpers (``rollout.sampling_warpers``):
the same indices and scores as torch's and transformers' own, by other means."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from worldagent.lm.argmax import argmax
from worldagent.lm.rollout import SamplingConfig, sampling_warpers

# few distinct values, so that rows tie; the specials where argmaxes part ways: NaN, both infinities, -0.0
values = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, 1e30, -1e30, math.inf, -math.inf, math.nan])
dtypes = st.sampled_from([torch.float32, torch.float64, torch.bfloat16, torch.float16])


@st.composite
def score_tensors(draw: st.DrawFn) -> torch.Tensor:
    rows = draw(st.integers(0, 4))
    width = draw(st.integers(1, 12))
    cells = draw(st.lists(values, min_size=max(rows, 1) * width, max_size=max(rows, 1) * width))
    tensor = torch.tensor(cells, dtype=torch.float64).to(draw(dtypes))
    tensor = tensor.view(max(rows, 1), width) if rows else tensor.view(width)
    if rows and draw(st.booleans()):  # strided, not contiguous: a column slice of a wider tensor
        wide = torch.cat([tensor, tensor.flip(-1)], dim=-1)
        tensor = wide[:, ::2]
    return tensor


@settings(max_examples=400, deadline=None)
@given(score_tensors(), st.booleans())
def test_argmax_is_torch_argmax_on_ties_nans_and_infinities(scores: torch.Tensor, keepdim: bool):
    ours = argmax(scores, keepdim=keepdim)
    theirs = scores.argmax(dim=-1, keepdim=keepdim)
    assert ours.dtype == torch.int64 and ours.shape == theirs.shape
    assert torch.equal(ours, theirs), (scores, ours, theirs)


def test_argmax_takes_the_first_of_equal_maxima_and_the_first_nan():
    assert argmax(torch.tensor([1.0, 3.0, 3.0, 1.0])).item() == 1
    assert argmax(torch.tensor([1.0, math.nan, 3.0, math.nan])).item() == 1
    assert argmax(torch.tensor([-math.inf, -math.inf])).item() == 0
    assert argmax(torch.tensor([[0.0, 2.0], [5.0, 5.0]]), keepdim=True).tolist() == [[1], [0]]


def test_argmax_reads_inference_tensors_and_leaves_grad_ones_to_torch():
    with torch.inference_mode():
        made = torch.tensor([[0.5, 0.25, 0.75]])
    assert argmax(made).tolist() == [2]
    tracked = torch.tensor([0.5, 0.75, 0.25], requires_grad=True)
    assert argmax(tracked).item() == 1


def test_argmax_of_an_empty_row_raises_as_torch_does():
    with pytest.raises((IndexError, RuntimeError)):
        argmax(torch.empty(2, 0))


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([1.0, 0.7, 1.3]),
    st.sampled_from([0, 1, 3]),
    st.sampled_from([1.0, 0.9, 0.5]),
    st.integers(0, 2**31 - 1),
)
def test_warpers_score_as_transformers_processor_list(temperature: float, top_k: int, top_p: float, seed: int):
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    config = SamplingConfig(do_sample=True, temperature=temperature, top_k=top_k, top_p=top_p)
    reference = LogitsProcessorList()
    if temperature != 1.0:
        reference.append(TemperatureLogitsWarper(temperature))
    if top_k:
        reference.append(TopKLogitsWarper(top_k))
    if top_p < 1.0:
        reference.append(TopPLogitsWarper(top_p))
    scores = torch.randn(3, 50, generator=torch.Generator().manual_seed(seed))
    ids = torch.zeros(3, 4, dtype=torch.long)
    assert torch.equal(sampling_warpers(config)(ids, scores.clone()), reference(ids, scores.clone()))
