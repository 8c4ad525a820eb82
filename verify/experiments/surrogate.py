"""The softmax surrogate the paper trains before running ANNA (§6, App. G).

Algorithm 1 is not differentiable, so the paper trains a transformer whose attention is
softmax(beta Q(X) K(X)^T) V(X) with every query and key scaled to unit norm, and then runs the trained
weights with Algorithm 1 in place of the softmax. The paper gives the layer count, one head, the width m
and an MLP of width 4m with GeLU; the rest is our reconstruction (docs/reconstructions.md, "The
experiments' surrogate transformer"): token embeddings (plus learned position embeddings where the task
needs positions), pre-LayerNorm residual blocks, an output projection W_h after the head, a final
LayerNorm and a linear read-out per token. Attention is unmasked, as Algorithm 1 is.

Every layer's attention goes through one ``attend(layer, q, k, v)`` callable, so the same weights run
with the softmax (:func:`softmax_attend`) or with Algorithm 1 (``attnsim.verify.experiments.anna_layer``).
This module imports torch; import it only where torch is wanted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import torch
from torch import nn

Attend = Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
"""(layer index, unit queries B x N x m, unit keys B x N x m, values B x N x m) -> B x N x m."""


@dataclass(frozen=True)
class Shape:
    """What fixes the surrogate's parameters: vocabulary, classes, length, width, depth, temperature."""

    vocab: int
    classes: int
    length: int
    width: int
    layers: int
    beta: float
    positions: bool

    def as_dict(self) -> dict:
        """The shape as plain JSON-able values."""
        return asdict(self)


def softmax_attend(beta: float) -> Attend:
    """The surrogate's own attention: softmax(beta q k^T) v over every key (no mask)."""
    def attend(layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.softmax(beta * q @ k.transpose(-1, -2), dim=-1) @ v
    return attend


class Block(nn.Module):
    """One pre-LayerNorm layer: one attention head with unit-norm queries and keys, then the 4m GeLU MLP."""

    def __init__(self, m: int) -> None:
        """Weights of one layer of width ``m``."""
        super().__init__()
        self.norm_attn, self.norm_mlp = nn.LayerNorm(m), nn.LayerNorm(m)
        self.query, self.key, self.value = (nn.Linear(m, m, bias=False) for _ in range(3))
        self.head_out = nn.Linear(m, m, bias=False)
        self.mlp = nn.Sequential(nn.Linear(m, 4 * m), nn.GELU(), nn.Linear(4 * m, m))

    def qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Unit queries, unit keys and values of the layer input ``x`` (B x N x m)."""
        h = self.norm_attn(x)
        unit = nn.functional.normalize
        return unit(self.query(h), dim=-1), unit(self.key(h), dim=-1), self.value(h)

    def forward(self, x: torch.Tensor, attend: Attend, layer: int) -> torch.Tensor:
        """x + W_h attend(q, k, v), then + MLP."""
        x = x + self.head_out(attend(layer, *self.qkv(x)))
        return x + self.mlp(self.norm_mlp(x))


class Surrogate(nn.Module):
    """Token (and position) embeddings, ``layers`` blocks, a final LayerNorm and a per-token read-out."""

    def __init__(self, shape: Shape) -> None:
        """A freshly initialised surrogate (draws from torch's global generator: seed it first)."""
        super().__init__()
        self.shape = shape
        self.embed = nn.Embedding(shape.vocab, shape.width)
        self.position = nn.Embedding(shape.length, shape.width) if shape.positions else None
        self.blocks = nn.ModuleList(Block(shape.width) for _ in range(shape.layers))
        self.norm_out = nn.LayerNorm(shape.width)
        self.read_out = nn.Linear(shape.width, shape.classes)

    def forward(self, tokens: torch.Tensor, attend: Attend | None = None) -> torch.Tensor:
        """Logits (B x N x classes) of integer ``tokens`` (B x N); ``attend`` defaults to the softmax."""
        attend = attend or softmax_attend(self.shape.beta)
        x = self.embed(tokens)
        if self.position is not None:
            x = x + self.position.weight[: tokens.shape[1]]
        for i, block in enumerate(self.blocks):
            x = block(x, attend, i)
        return self.read_out(self.norm_out(x))
