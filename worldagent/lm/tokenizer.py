"""The tiny base's tokenizer: byte-level BPE trained on the training split, with a Gemma-style chat template.

Decisions
---------
- **Byte-level BPE** (``tokenizers``): every string is encodable (no ``<unk>`` in practice), and the
  vocabulary is learnt from the texts the caller passes (the training split only, never eval data).
- **Special tokens** have fixed ids in Gemma's order: ``<pad>`` 0, ``<eos>`` 1, ``<bos>`` 2, ``<unk>`` 3,
  then ``<start_of_turn>``, ``<end_of_turn>`` and the FunctionGemma markers. Each is one token and
  never takes part in a BPE merge (training texts are split on them first).
- The FunctionGemma markers (``<start_function_call>``, ``<end_function_call>``,
  ``<start_function_response>``, ``<end_function_response>``, ``<escape>``) are *added tokens that are
  not special*: ``decode(..., skip_special_tokens=True)`` keeps them, so a generated answer can be
  parsed with :func:`worldagent.tools.callformat.parse_calls` after the turn markers were dropped.
- **eos_token = ``<end_of_turn>``**: a model turn ends with it, so ``generate()`` stops at the end of
  the assistant's turn. ``<eos>`` stays in the vocabulary (document separator in pre-training, second
  stop id in the generation config). ``pad_token = <pad>``, ``bos_token = <bos>``.
- **No automatic special tokens** on ``encode``: the chat template writes ``<bos>`` itself, exactly once.
- **Chat template** (Gemma turns)::

      <bos><start_of_turn>developer\\n{system}<end_of_turn>\\n
      <start_of_turn>user\\n{user}<end_of_turn>\\n
      <start_of_turn>model\\n{% generation %}{assistant}<end_of_turn>{% endgeneration %}\\n
      <start_of_turn>tool\\n{tool}<end_of_turn>\\n

  Roles: system → ``developer``, user → ``user``, assistant → ``model``, tool → ``tool``. The
  assistant content *and its* ``<end_of_turn>`` sit inside the generation block, so trl's
  ``assistant_only_loss=True`` trains the model to write its calls and then stop.
  ``add_generation_prompt`` appends ``<start_of_turn>model\\n``. HF-style ``tool_calls`` on an
  assistant message are rendered in FunctionGemma format after its text content (strings wrapped in
  ``<escape>``, numbers/booleans bare, ``null``, nested ``{k:v}``/``[v]``; the same wire format as
  :mod:`worldagent.tools.callformat`). A tool message whose content is a mapping is rendered as a
  ``<start_function_response>response:NAME{...}<end_function_response>`` block (NAME from the
  message's ``name``); string content is written as is (our dataset already carries the blocks).
  ``tools=[...]`` given to ``apply_chat_template`` are listed as JSON lines under ``Tools:`` in the
  developer turn (the format of our system prompt).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

from worldagent.tools.callformat import CALL_END, CALL_START, ESCAPE, RESPONSE_END, RESPONSE_START

PAD, EOS, BOS, UNK = "<pad>", "<eos>", "<bos>", "<unk>"
START_OF_TURN, END_OF_TURN = "<start_of_turn>", "<end_of_turn>"
MARKER_TOKENS: tuple[str, ...] = (CALL_START, CALL_END, RESPONSE_START, RESPONSE_END, ESCAPE)
CONTROL_TOKENS: tuple[str, ...] = (PAD, EOS, BOS, UNK, START_OF_TURN, END_OF_TURN)
SPECIAL_TOKENS: tuple[str, ...] = CONTROL_TOKENS + MARKER_TOKENS
ROLE_NAMES = {
    "system": "developer",
    "developer": "developer",
    "user": "user",
    "assistant": "model",
    "model": "model",
    "tool": "tool",
}

CHAT_TEMPLATE = (
    # FunctionGemma value encoding (mirrors callformat.render_value).
    "{%- macro fg_value(v) -%}"
    "{%- if v is string -%}<escape>{{ v }}<escape>"
    "{%- elif v is boolean -%}{{ 'true' if v else 'false' }}"
    "{%- elif v is none -%}null"
    "{%- elif v is mapping -%}{{ '{' }}{%- for k, x in v.items() -%}{{ k }}:{{ fg_value(x) }}{{ ',' if not loop.last }}{%- endfor -%}{{ '}' }}"
    "{%- elif v is iterable -%}[{%- for x in v -%}{{ fg_value(x) }}{{ ',' if not loop.last }}{%- endfor -%}]"
    "{%- else -%}{{ v }}"
    "{%- endif -%}"
    "{%- endmacro -%}"
    "{%- macro text_of(content) -%}"
    "{%- if content is none -%}"
    "{%- elif content is string -%}{{ content }}"
    "{%- else -%}{%- for part in content -%}{%- if part['type'] == 'text' -%}{{ part['text'] }}{%- endif -%}{%- endfor -%}"
    "{%- endif -%}"
    "{%- endmacro -%}"
    "{%- set roles = " + json.dumps(ROLE_NAMES) + " -%}"
    "{{- bos_token -}}"
    # Tools passed to apply_chat_template: listed in the developer turn (merged with the system message).
    "{%- set tool_lines = namespace(text='') -%}"
    "{%- if tools is defined and tools -%}"
    "{%- for tool in tools -%}{%- set tool_lines.text = tool_lines.text + '\\n' + (tool | tojson) -%}{%- endfor -%}"
    "{%- set tool_lines.text = 'Tools:' + tool_lines.text -%}"
    "{%- if messages[0]['role'] not in ['system', 'developer'] -%}"
    "{{- '<start_of_turn>developer\\n' + tool_lines.text + '<end_of_turn>\\n' -}}"
    "{%- endif -%}"
    "{%- endif -%}"
    "{%- for message in messages -%}"
    "{%- set role = roles[message['role']] if message['role'] in roles else message['role'] -%}"
    "{{- '<start_of_turn>' + role + '\\n' -}}"
    "{%- if role == 'model' -%}"
    "{%- generation -%}"
    "{{- text_of(message['content']) -}}"
    "{%- if message['tool_calls'] is defined and message['tool_calls'] -%}"
    "{%- for tc in message['tool_calls'] -%}"
    "{%- set fn = tc['function'] if tc['function'] is defined else tc -%}"
    "{%- set args = fn['arguments'] -%}"
    "<start_function_call>call:{{ fn['name'] }}"
    "{%- if args is mapping -%}{{ fg_value(args) }}{%- else -%}{{ args }}{%- endif -%}"
    "<end_function_call>"
    "{%- endfor -%}"
    "{%- endif -%}"
    "<end_of_turn>"
    "{%- endgeneration -%}"
    "{{- '\\n' -}}"
    "{%- elif role == 'tool' and message['content'] is mapping -%}"
    "<start_function_response>response:{{ message['name'] if message['name'] is defined else 'tool' }}{{ fg_value(message['content']) }}<end_function_response>"
    "{{- '<end_of_turn>\\n' -}}"
    "{%- else -%}"
    "{{- text_of(message['content']) -}}"
    "{%- if loop.first and role == 'developer' and tool_lines.text -%}{{- '\\n\\n' + tool_lines.text -}}{%- endif -%}"
    "{{- '<end_of_turn>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<start_of_turn>model\\n' -}}{%- endif -%}"
)


def _split_on_specials(texts: Iterable[str]) -> Iterator[str]:
    """Yield the pieces of each text between special tokens, so BPE never learns merges across them."""
    for text in texts:
        pieces = [text]
        for token in SPECIAL_TOKENS:
            pieces = [part for piece in pieces for part in piece.split(token)]
        yield from (piece for piece in pieces if piece)


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer on ``texts`` (the training split only); deterministic.

    The same texts give byte-identical ``tokenizer.json`` files. ``vocab_size`` counts the special
    tokens and the 256 byte symbols; BPE may stop earlier when the texts have no more pairs to merge.
    """
    minimum = len(SPECIAL_TOKENS) + 256
    if vocab_size <= minimum:
        raise ValueError(f"vocab_size must exceed {minimum} (special tokens + 256 byte symbols), got {vocab_size}")
    texts = list(texts)
    if not any(texts):
        raise ValueError("cannot train a tokenizer on no text")
    backend = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    backend.decoder = decoders.ByteLevel()
    # trim_offsets=False keeps character offsets exact, which the assistant-token mask relies on.
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    pieces = list(_split_on_specials(texts))
    backend.train_from_iterator(pieces, trainer=trainer, length=len(pieces))
    # The FunctionGemma markers stay single tokens but are not "special": skip_special_tokens keeps them.
    data = json.loads(backend.to_str())
    for added in data["added_tokens"]:
        if added["content"] in MARKER_TOKENS:
            added["special"] = False
    backend = Tokenizer.from_str(json.dumps(data, ensure_ascii=False))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=BOS,
        eos_token=END_OF_TURN,
        unk_token=UNK,
        pad_token=PAD,
        extra_special_tokens=[EOS, START_OF_TURN],
        padding_side="right",
        model_max_length=1_000_000,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def token_id(tokenizer: PreTrainedTokenizerFast, token: str) -> int:
    """The id of a single-token string; KeyError when the tokenizer lacks it."""
    vocab = tokenizer.get_vocab()
    if token not in vocab:
        raise KeyError(f"{token!r} is not a token of this tokenizer")
    return vocab[token]
