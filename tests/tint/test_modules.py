"""Each TinT module against its direct math (tint.linear_*, ln_*, attn_*, act_*), in exact arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import CASES
from attnsim.sim.tint.modules import Geometry, linear_forward, pack
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


@pytest.mark.parametrize("case_name", ["tiny-relu", "tiny-gelu"])
@pytest.mark.parametrize(
    "which", ["ln_forward", "attn_forward", "attn_backward", "act_forward", "act_backward", "ln_fd"]
)
def test_nonlinear_modules_are_exact(which: str, case_name: str) -> None:
    """tint.ln_forward, attn_forward, act_forward: the aux maps exactly; tint.attn_backward: the
    stop-gradient dv = sum_t a_tj dy_t; act_backward and the LN finite difference: Def 2.8 exactly."""
    got, want = ex.nonlinear_module(EXACT, CASES[case_name], which)
    assert EXACT.equal(got, want)


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
