"""A decode step of a Llama-family model without transformers' per-call machinery, the same numbers.

A decode step of a 30-layer model on a few rows is a few hundred small tensor operations, and on a
CPU the Python around them costs as much again: every module call through ``nn.Module.__call__``,
the decorators that capture outputs and merge config defaults, a causal mask built from the cache
every step, the attention function looked up by name, keyword arguments unpacked at every layer.
At one row that is about half of a step, and a stream's tail runs one to a few rows for hundreds of
steps.

:func:`decode_step` runs the same operations, in the same order and on the same shapes, as
``LlamaForCausalLM.forward`` does for one new token a row over the decoders' caches (the continuous
batch's slot layers, the static batch's preallocated ones): the embedding, per layer the RMS norms,
the projections (each module's own forward, so :func:`~worldagent.lm.lean_linear.lean_linears` and
peft's adapters apply), the rotary embedding through transformers' own function, the cache write,
the decode-attention kernel over a mask of each row's columns, the MLP, the final norm and the LM
head. The logits are bit for bit those of the model's forward (``tests/lm/test_lm_lean_step.py``).

:func:`supports` says which models it serves: a Llama model (peft-wrapped or not) on the CPU whose
modules have their own classes' forward and whose attention is the decode kernel; every other model
keeps its forward. ``WORLDAGENT_LEAN_STEP=off`` keeps the forward for every model (for comparisons).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from worldagent.lm.decode_attention import NAME, SharedColumns, _inner, decode_attention
from worldagent.lm.lean_linear import switched_on

ENV = "WORLDAGENT_LEAN_STEP"


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``WORLDAGENT_LEAN_STEP`` checked: ``on`` (the default) or ``off``."""
    return switched_on(ENV, environ)


def supports(model: Any) -> bool:
    """Whether :func:`decode_step` computes ``model``'s decode step exactly (see the module doc).
    Checked inside :func:`~worldagent.lm.decode_attention.decoding`: the kernel must be switched on."""
    from transformers.models.llama import modeling_llama as llama

    if not enabled():
        return False
    inner = _inner(model)
    if type(inner) is not llama.LlamaForCausalLM or inner.training:
        return False
    config = inner.config
    if config._attn_implementation != NAME or getattr(config, "pretraining_tp", 1) != 1:
        return False
    if next(inner.parameters()).device.type != "cpu":
        return False
    body = inner.model
    if type(body) is not llama.LlamaModel or len(body.layers) != config.num_hidden_layers:
        return False
    expected = {
        llama.LlamaDecoderLayer: llama.LlamaDecoderLayer.forward,
        llama.LlamaAttention: llama.LlamaAttention.forward,
        llama.LlamaMLP: llama.LlamaMLP.forward,
        llama.LlamaRMSNorm: llama.LlamaRMSNorm.forward,
    }
    modules = [body.norm, *body.layers]
    for layer in body.layers:
        modules += [layer.self_attn, layer.mlp, layer.input_layernorm, layer.post_attention_layernorm]
    for module in modules:  # a module with another forward (a hub kernel, a patch) computes otherwise
        own = expected.get(type(module))
        if own is None or type(module).forward is not own or "forward" in vars(module):
            return False
        if module._forward_hooks or module._forward_pre_hooks:
            return False
    return True


def _rms_norm(norm: Any, hidden: torch.Tensor) -> torch.Tensor:
    """``LlamaRMSNorm.forward``, operation for operation."""
    dtype = hidden.dtype
    hidden = hidden.to(torch.float32)
    variance = hidden.pow(2).mean(-1, keepdim=True)
    hidden = hidden * torch.rsqrt(variance + norm.variance_epsilon)
    return norm.weight * hidden.to(dtype)


def decode_step(
    model: Any,
    input_ids: torch.Tensor,
    position_ids: torch.Tensor,
    layers: Sequence[Any],
    mask: torch.Tensor,
    shared: SharedColumns | None = None,
) -> torch.Tensor:
    """One token a row through ``model`` (a model :func:`supports`): ``input_ids`` and
    ``position_ids`` (rows, 1), ``layers`` the cache's layers (each ``update(keys, values)`` takes
    this step's keys and values and returns the layer's whole keys and values), ``mask`` (rows, 1,
    1, columns) bool, true where a row attends; ``shared``: rows whose leading columns are the same
    (a prompt's samples), read once for them by the kernel. Returns the logits (rows, 1, vocabulary)."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    inner = _inner(model)
    body = inner.model
    hidden = body.embed_tokens(input_ids)
    cos, sin = body.rotary_emb(hidden, position_ids=position_ids)
    input_shape = hidden.shape[:-1]
    for layer, cache in zip(body.layers, layers, strict=True):
        attention, mlp = layer.self_attn, layer.mlp
        hidden_shape = (*input_shape, -1, attention.head_dim)
        residual = hidden
        hidden = _rms_norm(layer.input_layernorm, hidden)
        query = attention.q_proj(hidden).view(hidden_shape).transpose(1, 2)
        key = attention.k_proj(hidden).view(hidden_shape).transpose(1, 2)
        value = attention.v_proj(hidden).view(hidden_shape).transpose(1, 2)
        query, key = apply_rotary_pos_emb(query, key, cos, sin)
        key, value = cache.update(key, value)
        output, _ = decode_attention(
            attention, query, key, value, mask, dropout=0.0, scaling=attention.scaling, shared=shared
        )
        output = output.reshape(*input_shape, -1).contiguous()
        hidden = residual + attention.o_proj(output)
        residual = hidden
        hidden = _rms_norm(layer.post_attention_layernorm, hidden)
        hidden = residual + mlp.down_proj(mlp.act_fn(mlp.gate_proj(hidden)) * mlp.up_proj(hidden))
    hidden = _rms_norm(body.norm, hidden)
    return inner.lm_head(hidden)
