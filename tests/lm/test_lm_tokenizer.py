"""The tiny base's tokenizer: deterministic byte-level BPE, single-token markers, Gemma chat template with an exact assistant mask."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from worldagent.lm.tokenizer import CONTROL_TOKENS, END_OF_TURN, MARKER_TOKENS, SPECIAL_TOKENS, train_tokenizer
from worldagent.tools.callformat import ToolCall, parse_calls, render_call, render_response

STORIES = Path(__file__).resolve().parents[2] / "data" / "stories"
SYSTEM = "You are a UI agent. Answer with tool calls only, each in the format <start_function_call>call:NAME{argument:<escape>value<escape>}<end_function_call>."


def corpus_conversations() -> list[list[dict]]:
    """Small but realistic conversations built from the bundled story sources (no generated data needed)."""
    conversations = []
    for story in sorted(STORIES.glob("*/*.stories.tsx"))[:6]:
        component = story.parent.name
        styles = story.with_name(f"{component}.css.ts")
        write_styles = render_call(
            ToolCall(
                "writeStyles",
                {
                    "path": f"{component}/{styles.name}",
                    "content": styles.read_text(encoding="utf-8") if styles.exists() else "",
                },
            )
        )
        write_story = render_call(
            ToolCall("writeStory", {"path": f"{component}/{story.name}", "content": story.read_text(encoding="utf-8")})
        )
        conversations.append(
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Create a {component} story.\n\nWork in `{component}/`."},
                {"role": "assistant", "content": write_styles},
                {"role": "tool", "content": render_response("writeStyles", {"success": True, "data": {"bytes": 12}})},
                {
                    "role": "assistant",
                    "content": write_story + render_call(ToolCall("runStory", {"path": f"{component}/{story.name}"})),
                },
                {
                    "role": "tool",
                    "content": render_response("runStory", {"success": True, "data": {"passed": True, "errors": []}}),
                },
                {"role": "assistant", "content": "The story passes."},
            ]
        )
    return conversations


def corpus_texts() -> list[str]:
    return [message["content"] for conversation in corpus_conversations() for message in conversation]


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(corpus_texts(), 1024)


def test_training_is_deterministic_to_the_byte(tmp_path: Path) -> None:
    texts = corpus_texts()
    digests = []
    for run in range(2):
        out = tmp_path / str(run)
        train_tokenizer(texts, 1024).save_pretrained(out)
        digests.append(
            {
                name: hashlib.sha256((out / name).read_bytes()).hexdigest()
                for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
            }
        )
    assert digests[0] == digests[1]
    # Order of the texts does not matter either (counts, not iteration order, drive the merges).
    out = tmp_path / "reversed"
    train_tokenizer(list(reversed(texts)), 1024).save_pretrained(out)
    assert hashlib.sha256((out / "tokenizer.json").read_bytes()).hexdigest() == digests[0]["tokenizer.json"]


def test_vocabulary_is_learnt_from_the_given_texts_only() -> None:
    small = train_tokenizer(["abc abc abc abcabc"] * 3, 600)
    assert len(small) < 600  # nothing to merge beyond these few pairs
    assert len(small.tokenize("abc")) == 1
    assert len(small.tokenize("zebra")) > 1  # never seen: byte-level pieces, no <unk>
    assert small.unk_token_id not in small.encode("zebra ☃", add_special_tokens=False)


def test_special_tokens_are_single_ids_in_gemma_order(tokenizer) -> None:
    for expected_id, token in enumerate(SPECIAL_TOKENS):
        assert tokenizer.encode(token, add_special_tokens=False) == [expected_id], token
    assert (tokenizer.pad_token, tokenizer.pad_token_id) == ("<pad>", 0)
    assert (tokenizer.bos_token, tokenizer.bos_token_id) == ("<bos>", 2)
    assert tokenizer.eos_token == END_OF_TURN
    # Markers inside text stay single tokens (never merged with neighbours).
    ids = tokenizer.encode("x<escape>y<start_function_call>call:f{}<end_function_call>", add_special_tokens=False)
    for marker in ("<escape>", "<start_function_call>", "<end_function_call>"):
        assert tokenizer.convert_tokens_to_ids(marker) in ids


def test_call_markers_survive_skip_special_tokens(tokenizer) -> None:
    call = render_call(ToolCall("runStory", {"path": "a/b.stories.tsx"}))
    ids = tokenizer.encode(f"<start_of_turn>model\n{call}<end_of_turn>", add_special_tokens=False)
    text = tokenizer.decode(ids, skip_special_tokens=True)
    assert text == f"model\n{call}"
    assert parse_calls(text).calls == [ToolCall("runStory", {"path": "a/b.stories.tsx"})]
    assert all(marker not in tokenizer.all_special_tokens for marker in MARKER_TOKENS)
    assert all(token in tokenizer.all_special_tokens for token in CONTROL_TOKENS)


def test_round_trip_of_story_source(tokenizer) -> None:
    source = (STORIES / "button" / "button.stories.tsx").read_text(encoding="utf-8")
    assert tokenizer.decode(tokenizer.encode(source, add_special_tokens=False)) == source
    assert tokenizer.encode("abc", add_special_tokens=False)[0] != tokenizer.bos_token_id  # no implicit <bos>


def test_chat_template_renders_gemma_turns(tokenizer) -> None:
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
        {"role": "assistant", "content": "A"},
        {"role": "tool", "content": "T"},
        {"role": "assistant", "content": "B"},
    ]
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    assert text == (
        "<bos><start_of_turn>developer\nS<end_of_turn>\n"
        "<start_of_turn>user\nU<end_of_turn>\n"
        "<start_of_turn>model\nA<end_of_turn>\n"
        "<start_of_turn>tool\nT<end_of_turn>\n"
        "<start_of_turn>model\nB<end_of_turn>\n"
    )
    prompt = tokenizer.apply_chat_template(messages[:2], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<start_of_turn>user\nU<end_of_turn>\n<start_of_turn>model\n")
    assert not tokenizer.apply_chat_template(messages[:2], tokenize=False).endswith("<start_of_turn>model\n")
    assert "{% generation %}" in tokenizer.chat_template or "{%- generation -%}" in tokenizer.chat_template


@pytest.mark.parametrize("index", range(3))
def test_assistant_mask_covers_exactly_the_assistant_turns(tokenizer, index: int) -> None:
    messages = corpus_conversations()[index]
    out = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    ids, mask = out["input_ids"], out["assistant_masks"]
    assert len(ids) == len(mask)
    masked = tokenizer.decode([t for t, m in zip(ids, mask, strict=False) if m])
    assert masked == "".join(m["content"] + END_OF_TURN for m in messages if m["role"] == "assistant")
    unmasked = tokenizer.decode([t for t, m in zip(ids, mask, strict=False) if not m])
    assert "<start_of_turn>model\n" in unmasked and SYSTEM in unmasked
    # Every assistant span is contiguous and ends with <end_of_turn> (the model learns to stop).
    eot = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    spans = [i for i in range(len(ids)) if mask[i] and (i + 1 == len(ids) or not mask[i + 1])]
    assert len(spans) == sum(m["role"] == "assistant" for m in messages)
    assert all(ids[i] == eot for i in spans)
    # The rendered text tokenizes to the same ids (no drift between text and token paths).
    assert tokenizer.encode(tokenizer.apply_chat_template(messages, tokenize=False), add_special_tokens=False) == ids


def test_hf_tool_calls_render_in_functiongemma_format(tokenizer) -> None:
    arguments = {
        "path": "button/button.stories.tsx",
        "content": "const a = {b: 1}\n",
        "n": 3,
        "x": 1.5,
        "ok": True,
        "none": None,
        "nested": {"k": ["v", 2]},
    }
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"type": "function", "function": {"name": "writeStory", "arguments": arguments}},
                {"type": "function", "function": {"name": "runStory", "arguments": {"path": "p"}}},
            ],
        },
        {"role": "tool", "name": "runStory", "content": {"success": True, "data": {"passed": False}}},
    ]
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    expected_calls = render_call(ToolCall("writeStory", arguments)) + render_call(ToolCall("runStory", {"path": "p"}))
    assert f"<start_of_turn>model\n{expected_calls}<end_of_turn>\n" in text
    assert parse_calls(expected_calls).calls == [ToolCall("writeStory", arguments), ToolCall("runStory", {"path": "p"})]
    assert render_response("runStory", {"success": True, "data": {"passed": False}}) in text
    out = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    masked = tokenizer.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"], strict=False) if m])
    assert masked == expected_calls + END_OF_TURN


def test_tools_argument_is_listed_in_the_developer_turn(tokenizer) -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "runStory", "description": "Run", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    with_system = tokenizer.apply_chat_template(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}], tools=tools, tokenize=False
    )
    assert with_system.startswith("<bos><start_of_turn>developer\nS\n\nTools:\n{") and '"runStory"' in with_system
    without = tokenizer.apply_chat_template([{"role": "user", "content": "U"}], tools=tools, tokenize=False)
    assert without.startswith("<bos><start_of_turn>developer\nTools:\n{") and "<start_of_turn>user\nU" in without


def test_vocab_size_below_the_fixed_tokens_is_refused() -> None:
    with pytest.raises(ValueError, match="vocab_size"):
        train_tokenizer(["abc"], 100)
