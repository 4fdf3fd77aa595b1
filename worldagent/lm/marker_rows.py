"""Fit the embedding rows of added call markers to the base's own hidden states.

A tokenizer without FunctionGemma's call markers gets them as new special tokens
(:func:`worldagent.lm.pretrained.add_call_markers`). Their rows (input embedding and, tied or
not, output layer) were never trained, and the training stages cannot train them: trl's SFT
computes log-probabilities by multiplying the hidden states with ``lm_head.weight`` directly, so
peft's trainable tokens never reach the output side. A model whose LoRA learned where a marker
goes then still writes ``<`` instead of ``<escape>`` (measured on SmolLM2: docs/profiles.md).

So the base stage fits those rows once, as a linear probe: the frozen base reads the training
split's single-turn conversations, and for every assistant position the marker rows are trained
to give the next token its probability under the full softmax, the rest of the vocabulary held
fixed. The hidden states do not depend on the rows being fitted (the markers' input rows only
matter where a marker was already read), so one forward pass is all the base costs; the fit
itself is a few hundred Adam steps on an ``N x K`` problem and takes seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from worldagent.config import MarkerRowsParams

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Positions:
    """Final hidden states (``N x d``, float32) of assistant positions and the token that follows each."""

    hidden: torch.Tensor
    targets: torch.Tensor


def assistant_positions(
    model: Any, tokenizer: Any, conversations: Sequence[Sequence[Mapping[str, str]]], max_length: int
) -> Positions:
    """Hidden states of every position whose next token belongs to the assistant's reply.

    Each conversation is ``[system, user, assistant]`` messages (a single-turn trajectory); the
    prompt is the chat template of the first two with the generation prompt, the reply what follows.
    """
    hidden, targets = [], []
    backbone = model.get_decoder() if hasattr(model, "get_decoder") else model.model
    with torch.no_grad():
        for messages in conversations:
            prompt = tokenizer.apply_chat_template(list(messages[:-1]), add_generation_prompt=True, tokenize=True)
            full = tokenizer.apply_chat_template(list(messages), tokenize=True)
            prompt_ids = list(prompt["input_ids"] if isinstance(prompt, Mapping) else prompt)
            ids = list(full["input_ids"] if isinstance(full, Mapping) else full)[:max_length]
            if len(ids) <= len(prompt_ids) or ids[: len(prompt_ids)] != prompt_ids:
                continue  # no reply within max_length, or a template whose prompt is not the reply's prefix
            states = backbone(input_ids=torch.tensor([ids], device=model.device)).last_hidden_state[0]
            start = len(prompt_ids) - 1  # the state that predicts the reply's first token
            hidden.append(states[start:-1].float().cpu())
            targets.append(torch.tensor(ids[start + 1 :]))
    if not hidden:
        raise ValueError("no assistant reply to fit the marker rows on")
    return Positions(torch.cat(hidden), torch.cat(targets))


def _soft_cap(logits: torch.Tensor, cap: float | None) -> torch.Tensor:
    return logits if not cap else cap * torch.tanh(logits / cap)


def fit_marker_rows(
    model: Any,
    tokenizer: Any,
    conversations: Sequence[Sequence[Mapping[str, str]]],
    markers: Sequence[str],
    params: MarkerRowsParams,
    seed: int,
) -> dict[str, Any]:
    """Fit the output rows of ``markers`` (the input rows too where they are tied); returns the figures.

    ``logprob_*`` are mean log-probabilities of the next token at assistant positions, split into
    positions where it is a marker and where it is not: the second must not drop while the first rises.
    """
    marker_ids = torch.tensor(tokenizer.convert_tokens_to_ids(list(markers)))
    used = list(conversations[: params.conversations])
    positions = assistant_positions(model, tokenizer, used, params.max_length)
    output = model.get_output_embeddings()
    weight = output.weight.detach().float().cpu()
    cap = getattr(model.config, "final_logit_softcapping", None)

    is_marker = torch.zeros(weight.shape[0], dtype=torch.bool)
    is_marker[marker_ids] = True
    others = weight[~is_marker]
    other_index = torch.full((weight.shape[0],), -1, dtype=torch.long)
    other_index[~is_marker] = torch.arange(others.shape[0])
    target_is_marker = is_marker[positions.targets]
    # The rest of the vocabulary is fixed: its log-sum-exp and each non-marker target's logit, once.
    other_lse, target_logit = [], []
    for start in range(0, positions.hidden.shape[0], 2048):
        chunk = positions.hidden[start : start + 2048]
        logits = _soft_cap(chunk @ others.T, cap)
        other_lse.append(torch.logsumexp(logits, dim=1))
        index = other_index[positions.targets[start : start + 2048]].clamp(min=0)
        target_logit.append(logits.gather(1, index[:, None])[:, 0])
    lse, fixed = torch.cat(other_lse), torch.cat(target_logit)
    slot = torch.zeros(weight.shape[0], dtype=torch.long)
    slot[marker_ids] = torch.arange(len(marker_ids))
    target_slot = slot[positions.targets]

    def logprobs(rows_: torch.Tensor) -> torch.Tensor:
        marker_logits = _soft_cap(positions.hidden @ rows_.T, cap)  # N x K, columns in marker_ids order
        denominator = torch.logsumexp(torch.cat([lse[:, None], marker_logits], dim=1), dim=1)
        own = marker_logits.gather(1, target_slot[:, None])[:, 0]
        return torch.where(target_is_marker, own, fixed) - denominator

    def figures(lp: torch.Tensor) -> dict[str, float]:
        return {
            "markers": round(float(lp[target_is_marker].mean()), 4) if target_is_marker.any() else float("nan"),
            "other_tokens": round(float(lp[~target_is_marker].mean()), 4),
        }

    torch.manual_seed(seed)
    fitted = torch.nn.Parameter(weight[marker_ids].clone())
    before = figures(logprobs(fitted.detach()))
    optimizer = torch.optim.Adam([fitted], lr=params.learning_rate)
    for _ in range(params.steps):
        optimizer.zero_grad()
        loss = -logprobs(fitted).mean()
        loss.backward()
        optimizer.step()
    after = figures(logprobs(fitted.detach()))
    with torch.no_grad():  # tied: the input rows are the same tensor; untied: the input rows keep their init
        output.weight[marker_ids] = fitted.detach().to(output.weight.dtype).to(output.weight.device)
    result = {
        "conversations": len(used),
        "positions": int(positions.targets.numel()),
        "marker_positions": int(target_is_marker.sum()),
        "steps": params.steps,
        "logprob_before": before,
        "logprob_after": after,
    }
    log.info("marker rows fitted: %s", result)
    return result
