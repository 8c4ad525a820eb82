"""TinT's layer-norm, self-attention and activation modules (Def 2.8, Def 2.10).

Memory convention (docs/reconstructions.md, "What comes from the authors' code"): before a backward module the
builder writes the forward pass's memory into the tail of the token rows, as the authors' code does from its Python
lists: linear / activation memory x at [H - D, H); LN memory [x_hat, x] at [H - 2D, H); attention memory
[Qx, Kx, x] at [H - 3D, H). d = H / H_sim is the TinT softmax head dim and the chunk size of the
mixers below.

* tint.ln_forward        LN normalisation (gated) then LinFwd on (diag gamma, beta)        exact
                         (with tanh gates, also the authors' soft coordinate weights on [0, D))
* tint.ln_backward       LinBwd on diag gamma, then dx ~ N (f(x + dxhat/N) - xhat) (Def 2.8) O(1/N)
* tint.ln_descent        LinDesc on beta only (bias-only default, approximation G)
* tint.attn_forward      shared LinFwd for Q, K, V, then a softmax head per aux head           exact
* tint.attn_backward     stop-gradient: transposed softmax gives dv; then W_V backward      biased (E)
* tint.attn_descent      W_V descent only; W_Q, W_K pass through
* tint.act_forward       a TinT MLP with the aux activation                                  exact
* tint.act_backward      dx ~ N (act(x + dy/N) - act(x))                                    O(1/N)
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.aux_model import attention_scale
from attnsim.sim.tint.layers import (
    BlockDiag,
    CoordGated,
    Mixer,
    Module,
    PartialLayerNorm,
    PosProj,
    TinTAttention,
    TinTMLP,
)
from attnsim.sim.tint.modules import KEEP, TAKE, Geometry


def _chunk_of(geo: Geometry, offset: int) -> int:
    return offset // geo.d


def ln_normalise(ar: Arith, geo: Geometry) -> Module:
    """First half of tint.ln_forward: x -> x_hat on the token rows (GATE; no other parameters)."""
    return Module("LNNorm", [PartialLayerNorm(geo.D, geo.gate_scale)], geo.gate(ar, KEEP, TAKE))


def ln_fd_backward(ar: Arith, geo: Geometry) -> Module:
    """Second half of tint.ln_backward (Def 2.8): 2 MX(d) + GATE around TinT's LN op."""
    H, D, d = geo.H, geo.D, geo.d
    one, N = ar.scalar(1), ar.scalar(geo.fd_scale)
    first, second = Mixer.zeros(ar, H, d), Mixer.zeros(ar, H, d)
    for i in range(D // d):
        first.route(i, i, one / N)                          # dxhat / N
        first.route(_chunk_of(geo, H - D) + i, i, one)      # + x (memory)
        second.route(i, i, N)                               # N f(x + dxhat/N)
        second.route(_chunk_of(geo, H - 2 * D) + i, i, -N)  # - N x_hat (memory)
    for c in range(_chunk_of(geo, H - 2 * D), H // d):
        first.route(c, c, one)                              # carry the memory through
    last = second if geo.gate_scale is None else CoordGated(second, D, geo.gate_scale)
    return Module("LNFD", [first, PartialLayerNorm(D, geo.gate_scale), last], geo.gate(ar, KEEP, TAKE))


def _aux_head_maps(ar: Arith, geo: Geometry, src_offset: int, scale: object) -> tuple[Mixer, BlockDiag]:
    """MX(d) + BD(d): TinT head h receives aux head h's slice of the region starting at src_offset."""
    mx, bd = Mixer.zeros(ar, geo.H, geo.d), BlockDiag.zeros(ar, geo.H, geo.d)
    for h in range(geo.aux_heads):
        c, o = divmod(h * geo.d_a, geo.d)
        mx.route(_chunk_of(geo, src_offset) + c, h, ar.scalar(1))
        for u in range(o, o + geo.d_a):
            bd.W[h][u, u] = scale
    return mx, bd


def _aux_softmax(ar: Arith, geo: Geometry, q_at: int, k_at: int, v_at: int, transpose: bool,
                 post_mask: str | None = None) -> TinTAttention:
    """ATT(H_sim; d,d,d; d): one softmax head per aux head, scores scaled by 1/sqrt(d_a)."""
    one = ar.scalar(1)
    out = Mixer.zeros(ar, geo.H, geo.d)
    for h in range(geo.aux_heads):
        out.route(h, h * geo.d_a // geo.d, one)
    maps = {"q": _aux_head_maps(ar, geo, q_at, attention_scale(ar, geo.d_a)),
            "k": _aux_head_maps(ar, geo, k_at, one), "v": _aux_head_maps(ar, geo, v_at, one)}
    return TinTAttention(geo.H_sim, maps, PosProj.zeros(ar, geo.P, geo.d, geo.H_sim), out, "softmax", "aux",
                         transpose_probs=transpose, post_mask=post_mask)


def attention_softmax(ar: Arith, geo: Geometry) -> Module:
    """Second half of tint.attn_forward: rows [Qx, Kx, Vx, ...] -> per-head causal softmax attention."""
    D = geo.D
    return Module("AttnSoftmax", [_aux_softmax(ar, geo, 0, D, 2 * D, transpose=False)], geo.gate(ar, KEEP, TAKE))


def attention_backward(ar: Arith, geo: Geometry, post_mask: str | None = None) -> Module:
    """First half of tint.attn_backward: dv_j = sum_t a_{t,j} dy_t with the scores recomputed from
    the memory [Qx, Kx] and the probability matrix transposed (stop-gradient, approximation E).

    ``post_mask`` = "lin" keeps a_{t,j} only for t = j or t in the training part, as the authors' code
    does (docs/tint_reconciliation.md); the default sums over every t >= j."""
    H, D = geo.H, geo.D
    return Module("AttnBwd", [_aux_softmax(ar, geo, H - 3 * D, H - 2 * D, 0, transpose=True, post_mask=post_mask)],
                  geo.gate(ar, KEEP, TAKE))


def activation_forward(ar: Arith, geo: Geometry) -> Module:
    """tint.act_forward: ActFwd = MX(d) + BD(d) + GATE."""
    H, D, d = geo.H, geo.D, geo.d
    one = ar.scalar(1)
    first, second = Mixer.zeros(ar, H, d), BlockDiag.zeros(ar, H, d)
    for i in range(D // d):
        first.route(i, i, one)
        second.W[i] = ar.array(np.eye(d))
    return Module("ActFwd", [TinTMLP(first, geo.activation, second)], geo.gate(ar, KEEP, TAKE))


def activation_backward(ar: Arith, geo: Geometry) -> Module:
    """tint.act_backward: ActBwd = 2 MX(d); [x + dy/N ; x] -> act -> N (first - second). No gate."""
    H, D, d = geo.H, geo.D, geo.d
    one, N = ar.scalar(1), ar.scalar(geo.fd_scale)
    first, second = Mixer.zeros(ar, H, d), Mixer.zeros(ar, H, d)
    mem = _chunk_of(geo, H - D)
    for i in range(D // d):
        first.route(i, i, one / N)
        first.route(mem + i, i, one)
        first.route(mem + i, D // d + i, one)
        second.route(i, i, N)
        second.route(D // d + i, i, -N)
    return Module("ActBwd", [TinTMLP(first, geo.activation, second)])
