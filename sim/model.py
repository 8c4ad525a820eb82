"""The large transformer of two_heads Defs 2.1–2.2, evaluated directly in any numerics.

``reference(spec, weights, X, nm)`` is the ground truth every construction is compared with:

* φ (input MLP) token-wise, then L layers;
* layer ℓ splits its input by columns into H blocks of width m = d/H (block h is head h), computes
  softmax((X_h W^Q_h)(X_h W^K_h)^T)(X_h W^V_h) under the mask — no 1/sqrt(d) scaling — concatenates
  the heads and applies the layer MLP ψ_ℓ once (Def 2.2 lists ψ_ℓ both
  inside f_ℓ and outside it; once per layer is the consistent reading);
* with ``residual=True`` the layer output is ψ_ℓ(X + heads) (a residual stream; not in the paper);
* a layer may apply a token-wise ``pre`` map (e.g. pre-LN) to its input before the heads; with a
  residual stream the un-normalised X is what is added back;
* with ``rope`` set, queries and keys are rotated by their position (``sim/rope.py``) before the
  scores (not in the paper; the authors' rebuttal claims the simulations stay exact).

Weights are held as Fractions and converted into the numerics at evaluation time, so the same
model runs in exact, symbolic, mp and float64 arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.masks import Full, Mask
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.rope import RoPE
from attnsim.sim.token_maps import Identity, TokenMap


@dataclass(frozen=True)
class TransformerSpec:
    """Shape of the large model: length N, width d, H heads, L layers, a mask, a residual stream."""

    N: int
    d: int
    H: int = 1
    L: int = 1
    mask: Mask = field(default_factory=Full)
    residual: bool = False
    rope: RoPE | None = None

    def __post_init__(self) -> None:
        for name, v, lo in (("N", self.N, 1), ("d", self.d, 1), ("H", self.H, 1), ("L", self.L, 1)):
            if not isinstance(v, (int, np.integer)) or v < lo:
                raise AttnsimError(f"must be an integer >= {lo}, got {v!r}", param=name)
        if self.d % self.H:
            raise AttnsimError(f"the number of heads H={self.H} must divide d={self.d}", param="H")

    @property
    def m(self) -> int:
        """Head width d/H."""
        return self.d // self.H


@dataclass(frozen=True, eq=False)
class HeadWeights:
    """W^Q, W^K, W^V of one head (m × m arrays of Fractions)."""

    WQ: np.ndarray
    WK: np.ndarray
    WV: np.ndarray


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One layer's heads, its layer MLP ψ and an optional token-wise map applied before the heads."""
    heads: tuple[HeadWeights, ...]
    psi: TokenMap = field(default_factory=Identity)
    pre: TokenMap = field(default_factory=Identity)


@dataclass(frozen=True, eq=False)
class Weights:
    """All parameters of a model: the input MLP φ and the layers."""
    layers: tuple[LayerWeights, ...]
    phi: TokenMap = field(default_factory=Identity)

    def validate(self, spec: TransformerSpec) -> None:
        """Raise an error naming the first layer or head whose shapes do not fit ``spec``."""
        if len(self.layers) != spec.L:
            raise AttnsimError(f"weights: {len(self.layers)} layers given, spec has L={spec.L}")
        for li, layer in enumerate(self.layers):
            if len(layer.heads) != spec.H:
                raise AttnsimError(f"weights: layer {li} has {len(layer.heads)} heads, spec has H={spec.H}")
            for hi, h in enumerate(layer.heads):
                for nm_, w in (("WQ", h.WQ), ("WK", h.WK), ("WV", h.WV)):
                    if w.shape != (spec.m, spec.m):
                        raise AttnsimError(f"weights: layer {li} head {hi} {nm_} has shape {w.shape}, "
                                           f"expected ({spec.m}, {spec.m})")


def head_columns(spec: TransformerSpec, h: int) -> slice:
    """Columns D_h of head h (0-based)."""
    return slice(h * spec.m, (h + 1) * spec.m)


def head_projections(spec: TransformerSpec, hw: HeadWeights, Xh: Array, nm: Numerics) -> tuple[Array, Array, Array]:
    """One head's queries, keys and values from its columns ``Xh`` of the layer input (rotated under RoPE)."""
    q = nm.matmul(Xh, nm.array(hw.WQ, "W^Q"))
    k = nm.matmul(Xh, nm.array(hw.WK, "W^K"))
    v = nm.matmul(Xh, nm.array(hw.WV, "W^V"))
    if spec.rope is not None:
        positions = list(range(Xh.shape[0]))
        q, k = spec.rope.apply(nm, q, positions), spec.rope.apply(nm, k, positions)
    return q, k, v


def attention_layer(spec: TransformerSpec, layer: LayerWeights, X: Array, nm: Numerics) -> Array:
    """One layer f_ℓ before its MLP: the H heads, concatenated (N × d)."""
    allowed = None if isinstance(spec.mask, Full) else spec.mask.materialize(X.shape[0])
    X = layer.pre(nm, X)
    outs = []
    for h, hw in enumerate(layer.heads):
        q, k, v = head_projections(spec, hw, X[:, head_columns(spec, h)], nm)
        outs.append(nm.attention(q, k, v, allowed))
    return np.concatenate(outs, axis=1)


def apply_layer(spec: TransformerSpec, layer: LayerWeights, X: Array, nm: Numerics) -> Array:
    """X_{ℓ+1} = ψ_ℓ(X_ℓ + f_ℓ(X_ℓ)) with a residual stream, else ψ_ℓ(f_ℓ(X_ℓ)) (two_heads Def 2.2)."""
    heads = attention_layer(spec, layer, X, nm)
    return layer.psi(nm, nm.add(X, heads) if spec.residual else heads)


def stream(spec: TransformerSpec, weights: Weights, X: Array, nm: Numerics) -> Iterator[Array]:
    """The residual stream as :func:`reference` computes it: X_0 = φ(X), then X_ℓ after each layer ℓ = 1 .. L.

    Lazy: zipped with ``weights.layers`` it gives each layer its input without computing the last output."""
    weights.validate(spec)
    if X.shape != (spec.N, spec.d):
        raise AttnsimError(f"input: X has shape {X.shape}, expected (N, d) = ({spec.N}, {spec.d})")
    X = weights.phi(nm, X)
    yield X
    for layer in weights.layers:
        X = apply_layer(spec, layer, X, nm)
        yield X


def reference(spec: TransformerSpec, weights: Weights, X: Array, nm: Numerics) -> Array:
    """T(X) computed directly (two_heads Def 2.2)."""
    *_, out = stream(spec, weights, X, nm)
    return out
