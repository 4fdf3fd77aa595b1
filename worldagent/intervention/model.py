"""The experience encoder and the predictor head.

Encoder inputs (one row per step): the frozen tower's screenshot embedding (+ a mask: 0 means no
usable screenshot, then a learned vector stands in), the last ``history`` actions as tokens of an
action vocabulary with an unknown token (+ success flags), the nested page-state features and a
stable URL hash bucket. Visual (standardised per dimension) → 512-d projection; actions → a small transformer whose
tokens carry the action, its success and how often it already occurred in the window; page state → an
MLP; fused to ``dim`` (512) and L2-normalised.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class EncoderConfig:
    visual_in: int
    vocab_size: int
    page_in: int
    history: int = 8
    dim: int = 512
    visual_dim: int = 512
    action_dim: int = 64
    action_layers: int = 2
    action_heads: int = 4
    page_hidden: int = 128
    url_buckets: int = 64
    dropout: float = 0.1

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


class ExperienceEncoder(nn.Module):
    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        self.cfg = cfg
        # per-dimension standardisation of the frozen tower's features (set from the training split)
        self.register_buffer("visual_mean", torch.zeros(cfg.visual_in))
        self.register_buffer("visual_std", torch.ones(cfg.visual_in))
        self.visual_proj = nn.Sequential(
            nn.Linear(cfg.visual_in, cfg.visual_dim), nn.GELU(), nn.Linear(cfg.visual_dim, cfg.visual_dim)
        )
        self.no_screenshot = nn.Parameter(torch.zeros(cfg.visual_dim))
        self.action_emb = nn.Embedding(cfg.vocab_size, cfg.action_dim, padding_idx=0)
        self.success_emb = nn.Embedding(3, cfg.action_dim, padding_idx=0)
        self.repeat_emb = nn.Embedding(4, cfg.action_dim)  # how often this token occurred earlier in the window (0-3+)
        self.position = nn.Parameter(torch.randn(cfg.history, cfg.action_dim) * 0.02)
        layer = nn.TransformerEncoderLayer(
            cfg.action_dim, cfg.action_heads, cfg.action_dim * 2, cfg.dropout, batch_first=True, norm_first=True
        )
        self.actions = nn.TransformerEncoder(layer, cfg.action_layers, enable_nested_tensor=False)
        self.url_emb = nn.Embedding(cfg.url_buckets, 16)
        self.page_mlp = nn.Sequential(
            nn.Linear(cfg.page_in + 16, cfg.page_hidden), nn.GELU(), nn.Linear(cfg.page_hidden, cfg.page_hidden)
        )
        fused = cfg.visual_dim + cfg.action_dim + cfg.page_hidden
        self.fusion = nn.Sequential(
            nn.LayerNorm(fused),
            nn.Linear(fused, cfg.dim),
            nn.GELU(),
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.dim, cfg.dim),
        )

    def forward(
        self,
        visual: torch.Tensor,  # (B, visual_in)
        visual_mask: torch.Tensor,  # (B,) 1 = real screenshot
        actions: torch.Tensor,  # (B, history) token ids, 0 = pad
        success: torch.Tensor,  # (B, history) 0 pad, 1 failed, 2 ok
        page: torch.Tensor,  # (B, page_in)
        url: torch.Tensor,  # (B,)
    ) -> torch.Tensor:
        if visual.shape[-1] != self.cfg.visual_in:
            raise ValueError(
                f"visual features have {visual.shape[-1]} dims, the encoder expects {self.cfg.visual_in} (was it trained with another clip model?)"
            )
        m = visual_mask.unsqueeze(-1).to(visual.dtype)
        v = self.visual_proj((visual - self.visual_mean) / self.visual_std) * m + self.no_screenshot * (1 - m)
        pad = actions == 0
        same = (actions.unsqueeze(2) == actions.unsqueeze(1)) & ~pad.unsqueeze(1) & ~pad.unsqueeze(2)
        repeats = torch.tril(same, diagonal=-1).sum(-1).clamp(max=3)
        all_pad = pad.all(dim=1, keepdim=True)
        pad = pad & ~all_pad  # a row with no actions attends to its padding instead of producing NaNs
        h = self.action_emb(actions) + self.success_emb(success) + self.repeat_emb(repeats) + self.position
        h = self.actions(h, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        a = (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        p = self.page_mlp(torch.cat([page, self.url_emb(url)], dim=-1))
        return F.normalize(self.fusion(torch.cat([v, a, p], dim=-1)), dim=-1)


class PredictorHead(nn.Module):
    def __init__(self, dim: int = 512, hidden: int = 128, dropout: float = 0.1) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, 1))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z).squeeze(-1)


def supcon_loss(z: torch.Tensor, labels: torch.Tensor, temperature: float = 0.07) -> torch.Tensor:
    """Supervised contrastive loss (Khosla et al. 2020) over one batch of L2-normalised embeddings.

    Anchors without another sample of their class in the batch are skipped; a batch where no anchor
    has a positive returns a zero that still carries the graph.
    """
    n = z.shape[0]
    eye = torch.eye(n, dtype=torch.bool, device=z.device)
    logits = z @ z.T / temperature
    logits = logits - logits.max(dim=1, keepdim=True).values.detach()
    logits = logits.masked_fill(eye, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    positives = (labels.unsqueeze(0) == labels.unsqueeze(1)) & ~eye
    count = positives.sum(1)
    valid = count > 0
    if not valid.any():
        return (z * 0).sum()
    mean_pos = log_prob.masked_fill(~positives, 0.0).sum(1)[valid] / count[valid]
    return -mean_pos.mean()
