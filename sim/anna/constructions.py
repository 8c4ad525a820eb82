"""Task constructions with one ANNA layer: Match2 (anna.thm_5_2) and SUM (anna.prop_e_3).

Match2 (Theorem 5.2 / F.1): embed x as (x, 1); the single head has query
q_i = x_i mod M, key k_j = (M - x_j) mod M and value v_j = 1, all of dimension 1. Then q_i = k_j
iff x_i + x_j = 0 (mod M), so exact-match attention averages 1 over the matches (output 1) or
retrieves nothing (output 0). [Reconstruction: docs/reconstructions.md, "Match2 inputs 0 and M"] Reducing both sides
mod M handles inputs 0 and M (residue 0 matches itself) without a second head.

With Algorithm 1 instead of EMA (Cor. F.2): r = 0 and a p-stable family whose width is far below
the gap 1 between distinct integers, so distinct residues collide only with probability
``p(1)^z`` per table while equal residues always collide.

SUM (Prop. E.3, "one ANNA layer suffices"): v_i = N x_i, every key equals the last token's query,
so the last position averages N x_i over all N tokens: exactly sum_i x_i.
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.lsh import PStableLSH
from attnsim.sim.anna.transformer import EMA, AnnaTransformer, Head, Layer, LSHAttention, Mechanism


def match2_mechanism(kind: str, *, seed: int = 0, ell: int = 1, z: int = 4, width: float = 1e-3) -> Mechanism:
    """``"ema"`` or ``"alg1"`` (Algorithm 1 at r = 0 on the 1-dimensional embeddings)."""
    require(kind in ("ema", "alg1"), "mechanism", f"must be 'ema' or 'alg1', got {kind!r}")
    if kind == "ema":
        return EMA()
    return LSHAttention.draw(PStableLSH(1, width), ell, z, seed)


def match2_transformer(modulus: int, mechanism: Mechanism) -> AnnaTransformer:
    """The 1-layer, 1-head, dimension-1 ANNA-transformer of Theorem 5.2."""
    require(modulus >= 2, "modulus", f"must be >= 2, got {modulus}")
    M = int(modulus)
    head = Head(
        query=lambda x: np.mod(x[:, :1], M),
        key=lambda x: np.mod(M - x[:, :1], M),
        value=lambda x: x[:, 1:2],
        mechanism=mechanism,
    )
    return AnnaTransformer(
        embed=lambda t: np.column_stack([np.asarray(t, dtype=np.int64), np.ones(len(t), dtype=np.int64)]),
        layers=(Layer((head,), mix=lambda x, outs: outs[0]),),
        readout=lambda x: np.array([int(v) for v in x[:, 0]], dtype=np.int64),
    )


def sum_transformer(N: int) -> AnnaTransformer:
    """One EMA layer whose last output is sum_i x_i (tokens carry their position)."""
    require(N >= 1, "N", f"must be >= 1, got {N}")
    last = N - 1
    head = Head(
        query=lambda x: (x[:, 1:2] == last).astype(np.int64),
        key=lambda x: np.ones((len(x), 1), dtype=np.int64),
        value=lambda x: N * x[:, :1],
        mechanism=EMA(),
    )
    return AnnaTransformer(
        embed=lambda t: np.column_stack([np.asarray(t, dtype=np.int64), np.arange(len(t))]),
        layers=(Layer((head,), mix=lambda x, outs: outs[0]),),
        readout=lambda x: x[:, 0],
    )
