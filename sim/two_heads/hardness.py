"""two_heads.lower_bound made concrete: Alman–Song's reduction, run through the worst-case simulation.

The worst-case lower bound (the remark after Thm 1.1) says: an algorithm making T oracle calls answers one
large attention in Õ(T·M²) time, and approximating attention needs N^{2-o(1)} time under SETH
[Alman–Song 2023], so T >= (N/M)^{2-o(1)}. This module makes the *reduction* behind it runnable on
small instances (Alman & Song 2023, Lemma 4.7; the layout and the "practical β" are our reconstruction,
docs/reconstructions.md, "Hardness demo: the Gap-ANN to attention layout"):

* **Source problem** — Gap-ANN per query: sets A, B of n raw vectors in {0,1}^{d0}; row i is
  "close" when some b_j is within Hamming distance r of a_i. Vectors are doubled x ↦ [x, 1 - x]
  (weight d0, distances doubled), so t = 2r and (1+ε)t = t + 2 with ε = 1/r: every integer distance
  is on one side of the gap, and the promise always holds.
* **Attention instance** — N = 2n tokens, AAttC width d̃ = 4·d0: queries √β[a_i, 1], keys √β[b_j, 0]
  (real) and √β[0, 1] (n dummy keys scoring β/2), V = indicator of the real keys; scores QK^T/d̃.
  β = 4·d·ln(4n)/(ε t) with d = 2·d0 opens the gap with margin 4.
* **As a Two Heads model** — one head whose scores are exactly QK^T/d̃ (:func:`encode`; each token
  carries its query and its key part): its output column 0 is the attention's T_{i,1}. This model is
  solved by ``worst_case.simulate`` (Lemma 3.1, counted oracle calls).
* **Decoding** — row i is close iff T_{i,1} >= θ, the midpoint of y(L) and y(U) (docs/reconstructions.md);
  :func:`brute_force` is the truth.

What a demo shows and what it cannot (docs/reconstructions.md): every generated instance is decided
correctly through the counted simulation, at a cost of calls·M² = Θ(N²) oracle work; the time lower
bound itself is conditional and asymptotic and is reported, not proved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.masks import Full
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights

MARGIN = 4.0


@dataclass(frozen=True, eq=False)
class GapInstance:
    """A (n × d0) and B (n × d0) raw 0/1 vectors; rows of A within distance r of B are "close"."""

    A0: np.ndarray
    B0: np.ndarray
    r: int

    @property
    def n(self) -> int:
        """Number of query vectors."""
        return int(self.A0.shape[0])

    @property
    def d(self) -> int:
        """Doubled dimension 2·d0 (half-weight vectors)."""
        return 2 * int(self.A0.shape[1])


def _far(a: np.ndarray, B0: np.ndarray, r: int) -> bool:
    return bool((a[None, :] != B0).sum(axis=1).min() >= r + 1)


def generate(n: int, d0: int, r: int, rng: np.random.Generator, yes: bool) -> GapInstance:
    """A yes instance (each row close with probability 1/2, at least one) or a no instance (all far).

    Far rows are drawn by rejection; when B leaves no room for a far vector, B is drawn again.
    """
    if n < 1 or d0 < 1 or not 1 <= r < d0:
        raise AttnsimError(f"need n >= 1, d0 >= 1 and 1 <= r < d0; got n={n}, d0={d0}, r={r}", param="radius")
    close = rng.random(n) < 0.5 if yes else np.zeros(n, dtype=bool)
    if yes and not close.any():
        close[rng.integers(n)] = True
    for _ in range(200):
        B0 = rng.integers(0, 2, size=(n, d0))
        A0 = np.empty((n, d0), dtype=np.int64)
        for i in range(n):
            if close[i]:
                a = B0[rng.integers(n)].copy()
                a[rng.choice(d0, size=int(rng.integers(0, r + 1)), replace=False)] ^= 1
            else:
                cands = rng.integers(0, 2, size=(64, d0))
                far = [c for c in cands if _far(c, B0, r)]
                if not far:
                    break
                a = far[0]
            A0[i] = a
        else:
            return GapInstance(A0, B0, r)
    raise AttnsimError(f"could not place vectors at distance > r={r} from {n} random vectors "
                       f"in d0={d0} bits; lower r or raise d0", param="radius")


def brute_force(inst: GapInstance) -> np.ndarray:
    """Per row: is some b_j within raw Hamming distance r of a_i? (n²·d0 bit comparisons)."""
    H = (inst.A0[:, None, :] != inst.B0[None, :, :]).sum(axis=-1)
    return H.min(axis=1) <= inst.r


def beta(inst: GapInstance) -> float:
    """The smallest β that separates close and far rows by the factor MARGIN (docs/reconstructions.md)."""
    return beta_for(inst.n, inst.d, inst.r)


def beta_for(n: int, d: int, r: int) -> float:
    """:func:`beta` of every instance with n queries, doubled dimension d and radius r (it depends on no more)."""
    t, eps = 2 * r, 1.0 / r
    return 4 * d * math.log(MARGIN * n) / (eps * t)


def encode(inst: GapInstance, b: float) -> tuple[TransformerSpec, Weights, np.ndarray]:
    """The attention instance as a one-head Two Heads model: (spec, weights, X) with float entries.

    Token j carries both roles: x_j = [ã_j, b̃_j, 1, dummy_j, real_j] (ã, b̃ the doubled vectors; zero
    for the n dummy tokens j >= n). W^Q gives q_j = [(β/d̃)·ã_j, β/2], W^K gives k_j = [b̃_j, dummy_j],
    W^V gives v_j = real_j, so <q_i, k_j> = β<ã_i, b̃_j>/d̃ + (β/2)·dummy_j — exactly the scores
    QK^T/d̃ of the reconstructed layout (√β[a, 1] against √β[b, 0] and √β[0, 1]), in width 2d + 3
    instead of 2d̃ + 1.
    """
    n, d = inst.n, inst.d
    dt = 2 * d                                    # AAttC width d̃
    dbl = lambda Z: np.concatenate([Z, 1 - Z], axis=1).astype(float)  # noqa: E731
    D = 2 * d + 3
    one, dummy, real = 2 * d, 2 * d + 1, 2 * d + 2
    X = np.zeros((2 * n, D))
    X[:n, :d] = dbl(inst.A0)
    X[:n, d:2 * d] = dbl(inst.B0)
    X[:, one] = 1.0
    X[n:, dummy] = 1.0
    X[:n, real] = 1.0
    WQ, WK, WV = np.zeros((D, D)), np.zeros((D, D)), np.zeros((D, D))
    WQ[:d, :d] = np.eye(d) * (b / dt)
    WQ[one, d] = b / 2
    WK[d:2 * d, :d] = np.eye(d)
    WK[dummy, d] = 1.0
    WV[real, 0] = 1.0
    spec = TransformerSpec(2 * n, D, 1, 1, Full())
    obj = lambda a: a.astype(object)  # noqa: E731
    return spec, Weights((LayerWeights((HeadWeights(obj(WQ), obj(WK), obj(WV)),)),)), obj(X)


@dataclass(frozen=True)
class Decision:
    """The decoded answer per row, the threshold and the additive error it tolerates."""
    close: np.ndarray      # per row of A
    theta: float           # threshold on T_{i,1}
    admissible: float      # the additive error the rule tolerates, (y_L - y_U)/2


def decide(T1: np.ndarray, inst: GapInstance, b: float) -> Decision:
    """Threshold the first output column of the top n rows (docs/reconstructions.md)."""
    n, d, t, eps = inst.n, inst.d, 2 * inst.r, 1.0 / inst.r
    logZ = math.log(n) + b / 2
    lL = b * (d - t) / (4 * d)
    lU = math.log(n) + b * (d - (1 + eps) * t) / (4 * d)
    sig = lambda x: 1.0 / (1.0 + math.exp(-x))  # noqa: E731
    yL, yU = sig(lL - logZ), sig(lU - logZ)
    theta = (yL + yU) / 2
    return Decision(np.asarray(T1[:n], dtype=float) >= theta, theta, (yL - yU) / 2)
