"""TinT's linear-layer modules (forward, backward, descent; §2.4) as actual attention layers, and the geometry.

Every module acts on the rows [K prefix rows; n token rows] of width H = (S+1) D. For a D x D aux
linear layer y = W x + b the prefix rows hold the weights stacked S rows at a time (Def 2.1, §2.4):
prefix j, block r < S (coordinates [rD, rD + D)) = row w_{Sj+r}; block S of prefix 0 = b (we write b
into prefix 0 only: the code writes it into every prefix but reads prefix 0 only). K-chunk (r, s) =
coordinates rD + sK + [0, K) is the chunk linear head (r, s) works on; heads r = S are the "bias heads".

* tint.linear_forward  (:func:`linear_forward`):  token rows x -> W x + b         (exact)
* tint.linear_backward (:func:`linear_backward`): token rows dy -> W^T dy         (exact)
* tint.linear_descent  (:func:`linear_descent`):  prefix rows W -> W - eta sum_t dy_t x_t^T,
  b -> b - eta sum_t dy_t, with x_t read from the linear memory [H - D, H)       (exact, one step)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.configs import AuxConfig, TinTConfig, check
from attnsim.sim.tint.layers import BlockDiag, Gate, Mixer, Module, Parallel, PosProj, TinTAttention

# gate presets (old, new) on prefix rows / token rows
KEEP, TAKE, ADD, DROP = (1, 0), (0, 1), (1, 1), (0, 0)


@dataclass(frozen=True)
class Geometry:
    """Sizes and numerical settings every module needs (§2.4)."""

    D: int
    K: int
    T: int
    H_sim: int
    aux_heads: int
    activation: str
    eta: Any
    fd_scale: int = 1000          # N = scale_embeddings; finite-difference step 1/N
    gate_scale: float | None = None  # None: hard 0/1 gates (exact); 10.0: the code's tanh gates

    @staticmethod
    def of(aux: AuxConfig, tint: TinTConfig, fd_scale: int = 1000, gate_scale: float | None = None,
           eta: Any = None) -> "Geometry":
        """The geometry of a validated (auxiliary, TinT) pair."""
        check(aux, tint)
        return Geometry(aux.D, tint.K, aux.positions, tint.H_sim, aux.heads, aux.activation,
                        tint.inner_lr if eta is None else eta, fd_scale, gate_scale)

    @property
    def S(self) -> int:
        """Weight rows stacked per prefix, S = D/K."""
        return self.D // self.K

    @property
    def H(self) -> int:
        """TinT's width (S + 1)·D."""
        return (self.S + 1) * self.D

    @property
    def P(self) -> int:
        """Positions: T token positions plus K prefixes."""
        return self.T + self.K

    @property
    def d(self) -> int:
        """Width of one TinT head."""
        return self.H // self.H_sim

    @property
    def d_a(self) -> int:
        """Width of one auxiliary head."""
        return self.D // self.aux_heads

    def chunk(self, r: int, s: int) -> int:
        """Index of K-chunk (r, s) among the H/K chunks of size K."""
        return r * (self.D // self.K) + s

    def gate(self, ar: Arith, prefix: tuple[int, int], token: tuple[int, int]) -> Gate:
        """A gate that switches on the given prefix and token position ranges."""
        return Gate.keyed(ar, self.P, self.T, prefix, token, self.gate_scale)


def _identity_bd(ar: Arith, H: int, c: int, blocks: range | None = None) -> BlockDiag:
    bd = BlockDiag.zeros(ar, H, c)
    for i in (range(H // c) if blocks is None else blocks):
        bd.W[i] = ar.array(np.eye(c))
    return bd


def _linear_heads(geo: Geometry) -> tuple[list[tuple[int, int]], list[int]]:
    """(r, s) of the weight heads (r < S) and the indices of the bias heads (r = S)."""
    shards = geo.D // geo.K
    weight = [(r, s) for r in range(geo.S) for s in range(shards)]
    return weight, [geo.chunk(geo.S, s) for s in range(shards)]


def _dy_by_slot(ar: Arith, geo: Geometry) -> tuple[Mixer, BlockDiag]:
    """MX(D) then BD(D): chunk (r, s) of the result = ((dy)_{Sj+r})_{j<K}, dy read from [0, D)."""
    mx = Mixer.zeros(ar, geo.H, geo.D)
    bd = BlockDiag.zeros(ar, geo.H, geo.D)
    one = ar.scalar(1)
    for r in range(geo.S):
        mx.route(0, r, one)
        for s in range(geo.D // geo.K):
            for j in range(geo.K):
                bd.W[r][geo.S * j + r, s * geo.K + j] = one
    return mx, bd


def linear_forward(ar: Arith, geo: Geometry) -> Module:
    """tint.linear_forward: LinFwd = GATE + ATT(H/K; K,K,K; K) + BD(D) + MX(D)."""
    H, K, S, D = geo.H, geo.K, geo.S, geo.D
    one = ar.scalar(1)
    weight, bias = _linear_heads(geo)
    q_mx, k_mx, v_mx = (Mixer.zeros(ar, H, K) for _ in range(3))
    for r, s in weight:
        q_mx.route(geo.chunk(0, s), geo.chunk(r, s), one)   # query: shard s of x, copied to every slot r
        k_mx.route(geo.chunk(r, s), geo.chunk(r, s), one)   # key: shard s of the stored row w_{Sj+r}
    for c in bias:
        v_mx.route(c, c, one)                               # bias heads: value = the stored bias shard
    pos = PosProj.zeros(ar, geo.P, K, H // K)
    pos.W[:geo.T, 0] = one              # q_p = e_0 on every token
    pos.W[geo.T, K] = one               # k_p = e_0 on prefix 0 only
    for j in range(K):
        pos.W[geo.T + j, 2 * K + j] = one  # v_p = e_j on prefix j
    for r, s in weight:
        pos.s[2, geo.chunk(r, s)] = one
    for c in bias:
        pos.s[0, c] = pos.s[1, c] = one
    out = Mixer.zeros(ar, H, K)
    for r, s in weight:
        out.route(geo.chunk(r, s), D // K + r, one)         # sum shards; (r, j) lands at D + rK + j
    for s, c in enumerate(bias):
        out.route(c, s, one)                                # bias shard s lands at sK + [0, K)
    att = TinTAttention(H // K, {"q": (q_mx, _identity_bd(ar, H, K)), "k": (k_mx, _identity_bd(ar, H, K)),
                                 "v": (v_mx, _identity_bd(ar, H, K))}, pos, out, "linear", "lin")
    perm = _identity_bd(ar, H, D, range(1))
    for r in range(S):
        for j in range(K):
            perm.W[1][r * K + j, S * j + r] = one           # (r, j) -> output unit S j + r
    add = Mixer.zeros(ar, H, D)
    add.route(0, 0, one)
    add.route(1, 0, one)
    return Module("LinFwd", [att, perm, add], geo.gate(ar, KEEP, TAKE))


def linear_backward(ar: Arith, geo: Geometry, prefix_gate: tuple[int, int] = KEEP) -> Module:
    """tint.linear_backward: LinBwd = GATE + ATT(H/K; D,K,K; K); dx_t = sum_i (dy_t)_i w_i."""
    H, K = geo.H, geo.K
    one = ar.scalar(1)
    weight, _ = _linear_heads(geo)
    q = _dy_by_slot(ar, geo)
    v_mx = Mixer.zeros(ar, H, K)
    out = Mixer.zeros(ar, H, K)
    pos = PosProj.zeros(ar, geo.P, K, H // K)
    for j in range(K):
        pos.W[geo.T + j, K + j] = one      # k_p = e_j on prefix j
    for r, s in weight:
        v_mx.route(geo.chunk(r, s), geo.chunk(r, s), one)   # value: the stored row shard itself
        out.route(geo.chunk(r, s), geo.chunk(0, s), one)    # sum over slots r
        pos.s[1, geo.chunk(r, s)] = one
    att = TinTAttention(H // K, {"q": q, "k": (Mixer.zeros(ar, H, K), BlockDiag.zeros(ar, H, K)),
                                 "v": (v_mx, _identity_bd(ar, H, K))}, pos, out, "linear", "lin")
    return Module("LinBwd", [att], geo.gate(ar, prefix_gate, TAKE))


def linear_descent(ar: Arith, geo: Geometry, weights: bool = True, bias_step: Any = None) -> Module:
    """tint.linear_descent: LinDesc = GATE + ATT(H/K; K,D,K; K); prefixes query the training tokens.

    ``weights`` = False updates the bias only (LN descent, bias-only default); ``bias_step`` is the
    bias learning rate (default eta).
    """
    H, K = geo.H, geo.K
    one, eta = ar.scalar(1), ar.scalar(geo.eta)
    eta_b = eta if bias_step is None else ar.scalar(bias_step)
    weight, bias = _linear_heads(geo)
    v_mx = Mixer.zeros(ar, H, K)
    for r, s in weight:
        if weights:
            v_mx.route(geo.chunk(geo.S, s), geo.chunk(r, s), -eta)  # value: -eta x_t shard s (memory)
    for s, c in enumerate(bias):
        v_mx.route(geo.chunk(0, s), c, -eta_b)                       # bias heads: -eta dy_t shard s
    pos = PosProj.zeros(ar, geo.P, K, H // K)
    for j in range(K):
        pos.W[geo.T + j, j] = one          # q_p = e_j on prefix j
    pos.W[:geo.T, K] = one                 # k_p = e_0 on every token
    for r, s in weight:
        pos.s[0, geo.chunk(r, s)] = one
    for c in bias:
        pos.s[0, c] = pos.s[1, c] = one
    out = Mixer.zeros(ar, H, K)
    for c in range(H // K):
        out.route(c, c, one)
    att = TinTAttention(H // K, {"q": (Mixer.zeros(ar, H, K), BlockDiag.zeros(ar, H, K)), "k": _dy_by_slot(ar, geo),
                                 "v": (v_mx, _identity_bd(ar, H, K))}, pos, out, "linear", "desc")
    return Module("LinDesc", [att], geo.gate(ar, ADD, DROP))


def linear_backward_descent(ar: Arith, geo: Geometry, weights: bool = True, bias_step: Any = None) -> Parallel:
    """Backward || descent in one TinT layer: token rows from the backward, prefix rows from the descent."""
    return Parallel("LinBwdDesc", (linear_backward(ar, geo, prefix_gate=DROP),
                                   linear_descent(ar, geo, weights, bias_step)))


# ---------------------------------------------------------------------------------------------------
# prefix sets: packing a D x D linear layer into K prefix rows and back (Def 2.1, §2.4)
# ---------------------------------------------------------------------------------------------------
def pack(ar: Arith, geo: Geometry, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """tint.def_2_1: K prefix rows; prefix j holds rows S j .. S j + S - 1 of W, prefix 0 also b."""
    rows = ar.zeros((geo.K, geo.H))
    for j in range(geo.K):
        for r in range(geo.S):
            rows[j, r * geo.D:(r + 1) * geo.D] = W[geo.S * j + r]
    rows[0, geo.S * geo.D:] = b
    return rows


def unpack(geo: Geometry, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(W, b) back from the prefix rows; enumerating (j, r) in order gives rows S j + r = 0, 1, ..."""
    W = np.stack([rows[j, r * geo.D:(r + 1) * geo.D] for j in range(geo.K) for r in range(geo.S)])
    return W, rows[0, geo.S * geo.D:].copy()


def diag_matrix(ar: Arith, g: np.ndarray) -> np.ndarray:
    """diag(gamma): LN's gamma is held as a full D x D weight (as in the authors' code)."""
    m = ar.zeros((len(g), len(g)))
    for i, v in enumerate(g):
        m[i, i] = v
    return m
