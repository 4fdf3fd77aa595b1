"""Fitting added call markers' rows: the markers become likely where the replies put them, nothing else moves."""

from __future__ import annotations

import torch
from test_lm_pretrained import _plain_model_and_tokenizer

from worldagent.config import MarkerRowsParams
from worldagent.lm.marker_rows import assistant_positions, fit_marker_rows
from worldagent.lm.pretrained import add_call_markers
from worldagent.tools.callformat import ESCAPE, ToolCall, render_call

TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:\n{% endif %}"
)


def _conversations(count: int) -> list[list[dict[str, str]]]:
    return [
        [
            {"role": "system", "content": "Answer with tool calls."},
            {"role": "user", "content": f"Write story {number}."},
            {"role": "assistant", "content": render_call(ToolCall("writeStory", {"path": f"s{number}.tsx"}))},
        ]
        for number in range(count)
    ]


def _marked_model():
    model, tokenizer = _plain_model_and_tokenizer()
    added = add_call_markers(model, tokenizer)
    tokenizer.chat_template = TEMPLATE
    return model, tokenizer, added


def test_assistant_positions_predict_exactly_the_reply_tokens():
    model, tokenizer, _ = _marked_model()
    conversation = _conversations(1)[0]
    positions = assistant_positions(model, tokenizer, [conversation], max_length=512)
    reply = tokenizer.apply_chat_template(conversation, tokenize=False).split("assistant:\n", 1)[1]
    assert positions.targets.tolist() == tokenizer(reply, add_special_tokens=False)["input_ids"]
    assert positions.hidden.shape == (len(positions.targets), model.config.hidden_size)
    assert ESCAPE in tokenizer.convert_ids_to_tokens(positions.targets.tolist())


def test_fitting_makes_the_markers_likely_and_changes_only_their_rows():
    model, tokenizer, added = _marked_model()
    before = model.get_input_embeddings().weight.detach().clone()
    result = fit_marker_rows(
        model, tokenizer, _conversations(6), added, MarkerRowsParams(steps=200, learning_rate=0.05), seed=0
    )
    assert result["conversations"] == 6 and result["marker_positions"] > 0
    assert result["logprob_after"]["markers"] > result["logprob_before"]["markers"] + 1.0, result
    # the other tokens keep their probability (up to the little mass the markers now take)
    assert result["logprob_after"]["other_tokens"] >= result["logprob_before"]["other_tokens"] - 0.05, result
    after = model.get_input_embeddings().weight.detach()
    changed = (before != after).any(dim=1).nonzero().flatten().tolist()
    marker_ids = sorted(tokenizer.convert_tokens_to_ids(added))
    assert changed and set(changed) <= set(marker_ids)
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight  # still tied


def test_no_steps_leaves_the_rows_as_they_were():
    model, tokenizer, added = _marked_model()
    before = model.get_input_embeddings().weight.detach().clone()
    result = fit_marker_rows(model, tokenizer, _conversations(2), added, MarkerRowsParams(steps=0), seed=0)
    assert torch.equal(before, model.get_input_embeddings().weight.detach())
    assert result["logprob_after"] == result["logprob_before"]
