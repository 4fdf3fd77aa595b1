"""The tokens that end an answer: what the decoder stops on and the call grammar allows at the end.

Its own module because both the decoder (``rollout``) and the call grammar (``constrained``) need it
and neither may import the other.
"""

from __future__ import annotations

from typing import Any

END_OF_TURN = "<end_of_turn>"


def stop_token_ids(tokenizer: Any, model: Any = None) -> list[int]:
    """eos, ``<end_of_turn>`` where the vocabulary has it, then the model's generation-config eos ids."""
    ids: list[int] = []
    eos = getattr(tokenizer, "eos_token_id", None)
    candidates = [*eos] if isinstance(eos, (list, tuple)) else [eos]
    candidates.append(tokenizer.get_vocab().get(END_OF_TURN))
    config_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    candidates += [*config_eos] if isinstance(config_eos, (list, tuple)) else [config_eos]
    for candidate in candidates:
        if candidate is not None and int(candidate) not in ids:
            ids.append(int(candidate))
    return ids
