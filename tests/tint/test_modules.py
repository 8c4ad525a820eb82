"""Each TinT module against its direct math (tint.linear_*, ln_*, attn_*, act_*), in exact arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import CASES
from attnsim.sim.tint.modules import Geometry, diag_matrix, linear_forward, pack
from attnsim.sim.tint.modules_nonlinear import (activation_backward, activation_forward, attention_backward,
                                                attention_softmax, ln_fd_backward, ln_normalise)
from attnsim.sim.tint.pipeline import Runner

EXACT = get_arith("exact")


@st.composite
def d_and_k(draw: st.DrawFn) -> tuple[int, int]:
    D = draw(st.sampled_from([4, 6, 8, 12]))
    return D, draw(st.sampled_from([k for k in range(1, D + 1) if D % k == 0]))


@settings(max_examples=8, deadline=None)
@given(dk=d_and_k(), which=st.sampled_from(["forward", "backward", "descent"]), seed=st.integers(0, 99))
def test_linear_modules_are_exact(dk: tuple[int, int], which: str, seed: int) -> None:
    """tint.linear_forward / backward / descent agree with W x + b, W^T dy, W - eta sum dy x^T exactly, any S."""
    got, want, _ = ex.linear_module(EXACT, dk[0], dk[1], which, seed=seed)
    assert EXACT.equal(got, want)


def test_stacking_does_not_change_the_output() -> None:
    """tint.stacking: S = 12, 6, 4, 3, 2, 1 give the same linear forward output."""
    outs = [ex.linear_module(EXACT, 12, K, "forward", seed=3)[0] for K in (1, 2, 3, 4, 6, 12)]
    assert all(EXACT.equal(o, outs[0]) for o in outs)


def _tiny(ar, name: str = "tiny-gelu"):
    c = CASES[name]
    geo = Geometry.of(c.aux, c.tint)
    w = am.init_weights(c.aux, ar, 0)
    h = am.embed(c.aux, w, c.tokens)
    return c, geo, w, h, Runner.of(ar, geo, len(c.ids), c.n_train)


def test_layer_norm_forward_module() -> None:
    """tint.ln_forward: normalisation module then LinFwd on (diag gamma, beta) = the aux LN, exactly."""
    c, geo, w, h, r = _tiny(EXACT)
    lw = w["layers"][0]
    s = pack(EXACT, geo, diag_matrix(EXACT, lw["ln1_g"]), lw["ln1_b"])
    hat = r(ln_normalise(EXACT, geo), h, s)[0]
    y = r(linear_forward(EXACT, geo), hat, s)[0]
    assert EXACT.equal(y, am.normalize(EXACT, h)[0] * lw["ln1_g"] + lw["ln1_b"])


def test_attention_forward_module() -> None:
    """tint.attn_forward: softmax module on [Qx, Kx, Vx] = the aux causal multi-head attention, exactly."""
    c, geo, w, h, r = _tiny(EXACT)
    out, cache = am.layer_forward(c.aux, EXACT, w["layers"][0], h)
    o = r(attention_softmax(EXACT, geo), np.concatenate([cache["q"], cache["k"], cache["v"]], axis=1))[0]
    assert EXACT.equal(o, cache["o"])


def test_attention_backward_module_is_the_stop_gradient() -> None:
    """tint.attn_backward: dv_j = sum_t a_tj dy_t with a recomputed from the stored Q, K."""
    c, geo, w, h, r = _tiny(EXACT)
    _, cache = am.layer_forward(c.aux, EXACT, w["layers"][0], h)
    dy = EXACT.array(np.round(np.random.default_rng(0).standard_normal(h.shape) * 8) / 8)
    memory = np.concatenate([cache["q"], cache["k"], cache["ln1"]], axis=1)
    dv = r(attention_backward(EXACT, geo), dy, None, memory)[0]
    da = c.aux.d_head
    want = np.concatenate([p.T @ dy[:, i * da:(i + 1) * da] for i, p in enumerate(cache["probs"])], axis=1)
    assert EXACT.equal(dv, want)


@pytest.mark.parametrize("name", ["tiny-relu", "tiny-gelu"])
def test_activation_modules(name: str) -> None:
    """tint.act_forward exact; tint.act_backward = (act(x + dy/N) - act(x)) N exactly (Def 2.8)."""
    c, geo, w, h, r = _tiny(EXACT, name)
    act = EXACT.activation(c.aux.activation)
    assert EXACT.equal(r(activation_forward(EXACT, geo), h)[0], act(h))
    dy = h[::-1].copy()
    eps = EXACT.scalar(1) / geo.fd_scale
    got = r(activation_backward(EXACT, geo), dy, None, h)[0]
    assert EXACT.equal(got, (act(h + dy * eps) - act(h)) / eps)


def test_layer_norm_finite_difference_module() -> None:
    """tint.ln_backward (Def 2.8): N (f(x + dxhat/N) - xhat) with [xhat, x] read from memory, exactly."""
    c, geo, w, h, r = _tiny(EXACT)
    hat = am.normalize(EXACT, h)[0]
    g = hat[::-1].copy()
    got = r(ln_fd_backward(EXACT, geo), g, None, np.concatenate([hat, h], axis=1))[0]
    eps = EXACT.scalar(1) / geo.fd_scale
    assert EXACT.equal(got, (am.normalize(EXACT, h + g * eps)[0] - hat) / eps)


def test_a_broken_module_is_caught() -> None:
    """Swap two entries of LinFwd's re-ordering map: the exact comparison must fail."""
    ar = EXACT
    geo = Geometry(8, 2, T=5, H_sim=1, aux_heads=1, activation="relu", eta=ar.scalar(1))
    m = linear_forward(ar, geo)
    perm = m.layers[1].W[1]
    perm[[0, 1]] = perm[[1, 0]]
    rng = np.random.default_rng(0)
    W, b, x = (ar.array(np.round(rng.standard_normal(s) * 8) / 8) for s in ((8, 8), (8,), (5, 8)))
    got = Runner.of(ar, geo, 5, 3)(m, x, pack(ar, geo, W, b))[0]
    assert not ar.equal(got, x @ W.T + b)
