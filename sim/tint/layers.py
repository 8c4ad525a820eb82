"""TinT's primitive layers, parameterised as in the authors' code (Def 2.3;
layout in docs/reconstructions.md, "What comes from the authors' code").

Every TinT module of ``attnsim.sim.tint.modules`` is a stack of these, acting on the rows of a
sequence [K prefix rows; n token rows] of width H = D_sim, with one-hot positions p in R^P
(P = T + K; token t -> e_t, prefix j -> e_{T+j}). Each layer knows its parameter count:

* :class:`BlockDiag` BD(c): H/c independent c x c blocks + bias            -> H c + H
* :class:`Mixer`     MX(c): per in-chunk coordinate u, an (H/c) x (H/c) matrix mixing the H/c
                     chunks of size c (the code's transposed Conv2D)        -> c (H/c)^2 + H
* :class:`Gate`      out = phi(p.a_old + a0) x + phi(p.a_new + a1) f(x)    -> 2P + 2
                     phi = tanh (``gate_scale`` = 10: tanh(10) = 1 - 4.1e-9) or hard (exact 0/1)
* :class:`PosProj`   POS(b, a): one P -> 3b map shared by all heads, switched per head -> 3bP + 3b + 4a
* :class:`TinTAttention` ATT(a; c_q, c_k, c_v; c_o) (Def 2.3): q = BD(MX(x)) + s_q^h p-part, same
                     for k, v; linear (identity) or softmax scores; output MX(c_o).
* :class:`TinTMLP`   first layer, the aux activation, second layer.
* :class:`PartialLayerNorm` normalises coordinates [0, D) of every row (no parameters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.aux_model import LN_EPS, normalize, softmax_rows
from attnsim.sim.tint.linear_attention import grouped_linear_head, key_groups, softmax_simulation


@dataclass
class Context:
    """What every layer may read besides the rows: positions and the masks of this sequence."""

    pos: np.ndarray           # (N, P) one-hot, in the arithmetic
    masks: dict[str, np.ndarray]  # name -> (N, N) bool
    softmax_eps: Any = None   # not None: every linear head is simulated by softmax (tint.thm_2_5)


class Layer(Protocol):
    """What a module stacks: a map of the rows that knows its parameter count."""

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context) -> np.ndarray:
        """Map the rows ``x`` (prefix rows first) in arithmetic ``ar``."""

    def n_params(self) -> int:
        """Number of parameters."""


@dataclass
class BlockDiag:
    """BD(c): y[:, block i] = x[:, block i] @ W[i] + b[block i]."""

    W: np.ndarray  # (H/c, c, c)
    b: np.ndarray  # (H,)

    @staticmethod
    def zeros(ar: Arith, H: int, c: int) -> "BlockDiag":
        """An all-zero block-diagonal map of width H with blocks of size c."""
        return BlockDiag(ar.zeros((H // c, c, c)), ar.zeros(H))

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context | None = None) -> np.ndarray:
        """Apply the blocks to consecutive column chunks and add the bias."""
        nb, c, _ = self.W.shape
        y = np.concatenate([ar.matmul(x[:, i * c:(i + 1) * c], self.W[i]) for i in range(nb)], axis=1)
        return y + self.b

    def n_params(self) -> int:
        """Number of weights and biases."""
        return int(self.W.size + self.b.size)


@dataclass
class Mixer:
    """MX(c): y[:, chunk i, coord u] = sum_k x[:, chunk k, coord u] M[u, k, i] + b."""

    M: np.ndarray  # (c, H/c, H/c)
    b: np.ndarray  # (H,)

    @staticmethod
    def zeros(ar: Arith, H: int, c: int) -> "Mixer":
        """An all-zero channel mixer of width H over blocks of size c."""
        return Mixer(ar.zeros((c, H // c, H // c)), ar.zeros(H))

    def route(self, src: int, dst: int, value: Any) -> None:
        """Add ``value`` x chunk ``src`` into chunk ``dst``, for every in-chunk coordinate."""
        self.M[:, src, dst] = self.M[:, src, dst] + value

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context | None = None) -> np.ndarray:
        """Mix the H/c blocks channel by channel and add the bias."""
        c, nc, _ = self.M.shape
        xs = x.reshape(x.shape[0], nc, c)
        y = np.stack([ar.matmul(xs[:, :, u], self.M[u]) for u in range(c)], axis=2)
        return y.reshape(x.shape[0], nc * c) + self.b

    def n_params(self) -> int:
        """Number of weights and biases."""
        return int(self.M.size + self.b.size)


@dataclass
class Gate:
    """out = phi(p.a_old + a0) * x + phi(p.a_new + a1) * f(x), phi = tanh or identity (hard)."""

    a_old: np.ndarray  # (P,)
    a_new: np.ndarray  # (P,)
    a0: Any
    a1: Any
    tanh: bool

    @staticmethod
    def keyed(ar: Arith, P: int, T: int, prefix: tuple[int, int], token: tuple[int, int],
              gate_scale: float | None) -> "Gate":
        """Gate that gives (old, new) = ``prefix`` on prefix rows and ``token`` on token rows."""
        scale = ar.scalar(1) if gate_scale is None else ar.scalar(gate_scale)
        is_prefix = np.arange(P) >= T
        old = np.where(is_prefix, prefix[0], token[0])
        new = np.where(is_prefix, prefix[1], token[1])
        return Gate(ar.array(old) * scale, ar.array(new) * scale, ar.scalar(0), ar.scalar(0), gate_scale is not None)

    def combine(self, ar: Arith, x: np.ndarray, fx: np.ndarray, ctx: Context) -> np.ndarray:
        """g_old·x + g_new·f(x), with gates read from each row's one-hot position."""
        phi = ar.tanh if self.tanh else (lambda z: z)
        g_old = phi(ar.matmul(ctx.pos, self.a_old[:, None])[:, 0] + self.a0)
        g_new = phi(ar.matmul(ctx.pos, self.a_new[:, None])[:, 0] + self.a1)
        return g_old[:, None] * x + g_new[:, None] * fx

    def n_params(self) -> int:
        """Number of gate parameters."""
        return int(self.a_old.size + self.a_new.size + 2)


@dataclass
class PosProj:
    """POS(b, a): (q_p, k_p, v_p) = p W + c, shared by all heads; head h uses s[var, h] * part + s0[h]."""

    W: np.ndarray      # (P, 3b)
    c: np.ndarray      # (3b,)
    s: np.ndarray      # (3, a)
    s0: np.ndarray     # (a,)

    @staticmethod
    def zeros(ar: Arith, P: int, b: int, a: int) -> "PosProj":
        """An all-zero positional projection for P positions, head width b and a heads."""
        return PosProj(ar.zeros((P, 3 * b)), ar.zeros(3 * b), ar.zeros((3, a)), ar.zeros(a))

    def parts(self, ar: Arith, pos: np.ndarray) -> list[np.ndarray]:
        """Per variable (q, k, v): an (N, a, b) array of head-wise positional terms."""
        b = self.W.shape[1] // 3
        base = ar.matmul(pos, self.W) + self.c
        return [base[:, None, v * b:(v + 1) * b] * self.s[v][None, :, None] + self.s0[None, :, None] for v in range(3)]

    def n_params(self) -> int:
        """Number of parameters."""
        return int(self.W.size + self.c.size + self.s.size + self.s0.size)


@dataclass
class TinTAttention:
    """ATT(a; c_q, c_k, c_v; c_o): TinT attention with one-hot position terms (Def 2.3).

    ``kind`` = "linear" (scores used as they are, masked scores 0) or "softmax" (masked -> excluded).
    ``transpose_probs`` = the code's ``attnt_back``: the probability matrix is transposed before it
    multiplies the values (used by the stop-gradient attention backward, tint.attn_backward);
    ``post_mask`` then keeps only the entries that mask allows (the authors' code multiplies by its
    attention mask there).
    """

    heads: int
    maps: dict[str, tuple[Mixer, BlockDiag]]  # "q", "k", "v" -> (MX(c), BD(c)), applied MX first
    pos: PosProj
    out: Mixer
    kind: str
    mask: str
    transpose_probs: bool = False
    post_mask: str | None = None  # a mask applied to the (transposed) probabilities (the authors' backward)

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context) -> np.ndarray:
        """Multi-head attention over the rows, with positional terms and the mask of ``ctx``."""
        N, H = x.shape
        a, hd = self.heads, H // self.heads
        q, k, v = (self._content(ar, x, name).reshape(N, a, hd) + part
                   for name, part in zip("qkv", self.pos.parts(ar, ctx.pos)))
        allowed = ctx.masks[self.mask]
        zero = ar.scalar(0)
        # exact linear heads are summed by groups of rows with the same keys (values unchanged, fewer products)
        grouped = key_groups(np.broadcast_to(allowed, (N, N))) if self.kind == "linear" and ar.kind == "exact" and \
            ctx.softmax_eps is None and not self.transpose_probs and self.post_mask is None else []
        out = []
        for h in range(a):
            idle = not np.any(v[:, h, :] != zero) or (
                self.kind == "linear" and not (np.any(q[:, h, :] != zero) and np.any(k[:, h, :] != zero)))
            if idle:  # every value is 0, or (linear) every score is 0: the head outputs 0
                out.append(ar.zeros((N, hd)))
                continue
            if self.kind == "linear" and ctx.softmax_eps is not None:
                out.append(softmax_simulation(ar, q[:, h, :], k[:, h, :], v[:, h, :], allowed, ctx.softmax_eps))
                continue
            if grouped:
                out.append(grouped_linear_head(q[:, h, :], k[:, h, :], v[:, h, :], grouped, zero))
                continue
            scores = q[:, h, :] @ k[:, h, :].T
            w = np.where(allowed, scores, zero) if self.kind == "linear" else softmax_rows(ar, scores, allowed)
            if self.transpose_probs:
                w = w.T
            if self.post_mask is not None:
                w = np.where(ctx.masks[self.post_mask], w, zero)
            out.append(w @ v[:, h, :])
        return self.out(ar, np.concatenate(out, axis=1))

    def _content(self, ar: Arith, x: np.ndarray, name: str) -> np.ndarray:
        mx, bd = self.maps[name]
        return bd(ar, mx(ar, x))

    def n_params(self) -> int:
        """Number of parameters of the content maps, positional projection and output."""
        return (
            sum(m.n_params() + b.n_params() for m, b in self.maps.values()) + self.pos.n_params() + self.out.n_params()
        )


@dataclass
class TinTMLP:
    """second(act(first(x))) with the auxiliary model's activation (activation forward / backward modules)."""

    first: Mixer | BlockDiag
    activation: str
    second: Mixer | BlockDiag

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context) -> np.ndarray:
        """second(act(first(x)))."""
        return self.second(ar, ar.activation(self.activation)(self.first(ar, x)))

    def n_params(self) -> int:
        """Number of parameters of both maps."""
        return self.first.n_params() + self.second.n_params()


def _soft(ar: Arith, scale: float) -> Any:
    """The authors' soft coordinate weight tanh(``scale``) (1 - 4.1e-9 at their gate_scale 10)."""
    return ar.tanh(ar.array([scale]))[0]


@dataclass
class PartialLayerNorm:
    """Normalise coordinates [0, D) of every row, leave the rest (TinT's LN op; no parameters).

    ``coord_scale`` = None selects [0, D) exactly. A number models the authors' code, which weights
    the coordinates by g = tanh(coord_scale) on [0, D) and 0 elsewhere: mean sum(g x) / sum(g),
    sigma = sqrt(eps + sum((g (x - mean))^2) / sum(g)), output g (x - mean) / sigma + (1 - g) x.
    """

    D: int
    coord_scale: float | None = field(default=None, metadata={"param": False})

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context) -> np.ndarray:
        """Normalise the first D coordinates of each row; the rest pass unchanged."""
        y = x.copy()
        if self.coord_scale is None:
            y[:, :self.D] = normalize(ar, x[:, :self.D])[0]
            return y
        g, xs = _soft(ar, self.coord_scale), x[:, :self.D]
        inv = ar.scalar(1) / (g * self.D)
        mu = (xs * g).sum(axis=-1, keepdims=True) * inv
        c = xs - mu
        sigma = ar.sqrt(((c * g) * (c * g)).sum(axis=-1, keepdims=True) * inv + ar.scalar(LN_EPS))
        y[:, :self.D] = g * (c / sigma) + (1 - g) * xs
        return y

    def n_params(self) -> int:
        """Zero: normalisation has no parameters."""
        return 0


@dataclass
class CoordGated:
    """``inner`` on coordinates [0, D) mixed with its input as the authors' LN backward does:
    g inner(x) + (1 - g) x there, g = tanh(coord_scale); the rest of the row is inner's."""

    inner: Mixer
    D: int
    coord_scale: float = field(metadata={"param": False})

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context) -> np.ndarray:
        """The gated mix on [0, D)."""
        y = self.inner(ar, x, ctx)
        g = _soft(ar, self.coord_scale)
        y[:, :self.D] = g * y[:, :self.D] + (1 - g) * x[:, :self.D]
        return y

    def n_params(self) -> int:
        """The inner map's parameters (the coordinate weight is a constant of the configuration)."""
        return self.inner.n_params()


@dataclass
class Module:
    """A stack of layers followed by a gate: out = gate(x, layers(x)) (the code's module pattern)."""

    name: str
    layers: list[Layer]
    gate: Gate | None = None

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context) -> np.ndarray:
        """Run the layers in order, then the gate (if any) between input and output."""
        f = x
        for layer in self.layers:
            f = layer(ar, f, ctx)
        return f if self.gate is None else self.gate.combine(ar, x, f, ctx)

    def n_params(self) -> int:
        """Number of parameters of the layers and the gate."""
        return sum(layer.n_params() for layer in self.layers) + (self.gate.n_params() if self.gate else 0)


@dataclass
class Parallel:
    """Two modules in one TinT layer, outputs summed (backward || descent, as the linear descent module does)."""

    name: str
    branches: tuple[Module, Module]

    def __call__(self, ar: Arith, x: np.ndarray, ctx: Context) -> np.ndarray:
        """The sum of both branches' outputs."""
        return self.branches[0](ar, x, ctx) + self.branches[1](ar, x, ctx)

    def n_params(self) -> int:
        """Number of parameters of both branches."""
        return self.branches[0].n_params() + self.branches[1].n_params()
