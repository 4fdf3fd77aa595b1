"""The model sections: ``model`` (the base, with the tiny model, its pre-training and the marker
rows) and ``lora`` (the adapter every trainer puts on it).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from worldagent.config.base import Section


class TinyModelParams(Section):
    """The embedded default base: a small Gemma-3 architecture, random init, built locally."""

    vocab_size: int = Field(default=4096, ge=512)
    hidden_size: int = Field(default=192, gt=0)
    intermediate_size: int = Field(default=576, gt=0)
    num_hidden_layers: int = Field(default=4, gt=0)
    num_attention_heads: int = Field(default=4, gt=0)
    num_key_value_heads: int = Field(default=1, gt=0)
    head_dim: int = Field(default=48, gt=0)
    max_position_embeddings: int = Field(default=4096, gt=0)
    sliding_window: int = Field(default=512, gt=0)


class PretrainParams(Section):
    """Brief causal-LM pre-training of the tiny base on the training split's source text."""

    # ~4 min on a 2-core CPU; 1.5 epochs left the loss at 2.3 and SFT never learned the task.
    epochs: float = Field(default=10.0, ge=0)
    learning_rate: float = Field(default=3e-3, gt=0)
    batch_size: int = Field(default=8, gt=0)
    max_length: int = Field(default=256, gt=0)


class MarkerRowsParams(Section):
    """Fitting the rows of call markers that a packaged base's tokenizer lacked (lm/marker_rows.py)."""

    conversations: int = Field(default=24, ge=1)  # training conversations the frozen base reads once
    max_length: int = Field(default=2048, gt=0)  # tokens per conversation
    steps: int = Field(default=300, ge=0)  # Adam steps of the linear probe (seconds on a CPU)
    learning_rate: float = Field(default=0.01, gt=0)


class ModelParams(Section):
    base: str = "builtin:tiny"  # or a hub id (google/functiongemma-270m-it) or a local path
    revision: str | None = None  # hub revision to pin
    # auto: bf16 on CUDA, else fp32; prefer-bfloat16: also bf16 on a CPU that multiplies it natively
    dtype: Literal["auto", "prefer-bfloat16", "float32", "bfloat16", "float16"] = "auto"
    tiny: TinyModelParams = TinyModelParams()
    pretrain: PretrainParams = PretrainParams()
    marker_rows: MarkerRowsParams = MarkerRowsParams()


class LoraParams(Section):
    r: int = Field(default=16, gt=0)
    alpha: int = Field(default=16, gt=0)
    dropout: float = Field(default=0.05, ge=0, lt=1)
    target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )
    top_layers: int | None = Field(default=None, gt=0)
    """LoRA on the top N decoder layers only (None: all). Backward then stops below them: ~1.6x faster
    training of a 30-layer base on a CPU, at some loss of capacity."""
