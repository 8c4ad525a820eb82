"""The exact numerics' base z (default 2): names, exact Thm 3.4 identity under it, broken
constructions caught (by the layer-by-layer comparison: the grid-rounded output alone can hide them,
``verify/layer_record.py``), flint and Fraction giving the same rationals, the zero-row matmul shortcut."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from attnsim.sim.masks import Full
from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.numerics.base import Numerics
from attnsim.sim.numerics.exact import draw_base
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import multi_layer
from attnsim.sim.two_heads.blocks import decode_A, decode_AB
from attnsim.sim.two_heads.multi_layer import full_head, simulate_layers
from attnsim.sim.two_heads.packing import run_packed
from attnsim.verify.cases import random_case
from attnsim.verify.claims.two_heads_exact import THM_3_4_PARAMS, bounded_layers, thm_3_4_measure
from attnsim.verify.registry import CheckContext

HEAD_JOBS = multi_layer.head_jobs  # the correct jobs, kept before any test replaces them
SMALL = dict(N=13, M=4, d=4, H=2, L=2, Hp=2, Lp=2)  # 13 = 3·4 + 1: a partial last block, so padding is used


def _ctx(numerics: str, **over) -> CheckContext:
    p = {q.name: q.default for q in THM_3_4_PARAMS}
    p.update(SMALL, **over)
    return CheckContext("two_heads.thm_3_4", p, numerics, 0, None)


@pytest.mark.parametrize("name, z, grid", [
    ("exact", Fraction(2), 64), ("fraction", Fraction(2), 64), ("exact:32", Fraction(2), 32),
    ("exact:64:3/2", Fraction(3, 2), 64), ("fraction:8:5", Fraction(5), 8), ("exact:64:seeded", draw_base(4), 64),
])
def test_names_choose_grid_and_base(name, z, grid):
    nm = get_numerics(name, 4)
    assert (nm.z_fraction, nm.grid, nm.name) == (z, grid, name)


@pytest.mark.parametrize("name", ["exact:64:1", "exact:64:1/2", "fraction:64:x", "exact:64:0"])
def test_bad_base_names_the_parameter(name):
    with pytest.raises(NumericsError, match="^numerics: .*base z"):
        get_numerics(name)


@pytest.mark.parametrize("numerics", ["exact", "exact:64:seeded"])
@pytest.mark.parametrize("scheme", ["paper", "fused"])
def test_thm_3_4_exact_identity(numerics, scheme):
    m = thm_3_4_measure(_ctx(numerics, scheme=scheme))
    assert m.agree and m.counts["calls"] > 0
    assert m.extra["layers_compared_before_rounding"] == SMALL["L"]  # each layer exact, not only the rounded output


def _no_constant_column(*args, **kwargs):
    """Broken padding: Step-1 pad rows beyond the unpadded layout all zero (score 0, like Step 2's),
    while the decode assumes score 1."""
    jobs, plans = HEAD_JOBS(*args, **kwargs)
    out = []
    for job, plan in zip(jobs, plans):
        if plan.kind != "R" and plan.pad:
            Z = job.Z.copy()
            first_pad = max(s.lo for s in plan.layout.segs if s.what == "pad")  # the rows added for the length
            Z[first_pad:] = Z[first_pad:] * 0
            job = replace(job, Z=Z)
        out.append(job)
    return out, plans


def _pad_miscounted(*args, **kwargs):
    """Broken decode: the padding count of a padded Step-1/fused job is off by one."""
    jobs, plans = HEAD_JOBS(*args, **kwargs)
    out = []
    for job, plan in zip(jobs, plans):
        if plan.kind != "R" and plan.pad:
            job = replace(job, decode=(decode_A if plan.kind == "A" else decode_AB)(plan.pad - 1))
        out.append(job)
    return out, plans


@pytest.mark.parametrize("broken", [_no_constant_column, _pad_miscounted])
@pytest.mark.parametrize("scheme", ["paper", "fused"])
def test_broken_construction_is_caught_under_the_default_base(monkeypatch, broken, scheme):
    monkeypatch.setattr(multi_layer, "head_jobs", broken)
    m = thm_3_4_measure(_ctx("exact", scheme=scheme))
    assert not m.agree and m.error_bits < 30
    assert any("before ψ" in r for r in m.reasons)


def _thm_3_4_output(numerics: str, case) -> np.ndarray:
    nm = get_numerics(numerics, 0)
    p = SMALL
    spec = OracleSpec(p["M"] + 1, p["Hp"], p["Lp"], p["Hp"] * p["Lp"] * (3 * case.spec.m + 3), residual=True)
    Y = simulate_layers(case.spec, case.weights, nm.array(case.X, "X"), Oracle(spec, nm), b=p["M"],
                        build_head=full_head(p["M"], "fused", uniform=True), runner=run_packed, tag="t")
    return np.vectorize(nm.to_fraction_or_float, otypes=[object])(Y)


@pytest.mark.parametrize("base", ["", ":64:seeded"])
def test_flint_and_fraction_give_the_same_rationals(base):
    p = SMALL
    case = bounded_layers(random_case(p["N"], p["d"], p["H"], p["L"], Full(), 0, layer_mlp="affine"), quadratic=False)
    a, b = _thm_3_4_output("exact" + base, case), _thm_3_4_output("fraction" + base, case)
    assert a.shape == (p["N"], p["d"]) and all(isinstance(x, Fraction) for x in a.reshape(-1))
    assert (a == b).all()


def test_matmul_skips_zero_rows_exactly():
    nm = get_numerics("exact", 0)
    rng = np.random.default_rng(1)
    a = nm.array(np.vectorize(lambda v: Fraction(int(v), 3), otypes=[object])(rng.integers(-9, 10, (5, 6))))
    b = nm.array(np.vectorize(lambda v: Fraction(int(v), 4), otypes=[object])(rng.integers(-4, 5, (6, 3))))
    b[[1, 4]] = nm.zeros((2, 3))
    assert (nm.matmul(a, b) == Numerics.matmul(nm, a, b)).all()
    assert (nm.matmul(a, nm.zeros((6, 3))) == 0).all() and nm.matmul(a, nm.zeros((6, 3))).shape == (5, 3)


def test_huge_score_exponent_is_a_clear_error():
    nm = get_numerics("exact", 0)
    big = nm.array([[2**40, 0], [0, 2**40]])
    with pytest.raises(NumericsError, match="exponent"):
        nm.attention(big, big, nm.array([[1], [2]]))


@pytest.mark.parametrize("name", ["exact", "fraction"])
def test_a_score_off_the_grid_with_thousands_of_digits_is_named_briefly(name):
    """After two exact layers with an identity MLP a score can be a fraction of 6,000 digits, more than Python
    prints (it raised ValueError inside the refusal's own message); the refusal shows it to six digits."""
    nm = get_numerics(name, 0)
    huge = Fraction(3 ** 12000 + 1, 3 ** 12000)  # about 5,700 digits each way, just above 1
    with pytest.raises(NumericsError, match=r"score ≈ 1 \(a fraction of about 5726 / 5726 digits\) is not on"):
        nm.weights(nm.array([[huge]]), None)
    with pytest.raises(NumericsError, match=r"score 1/3 is not on"):
        nm.weights(nm.array([[Fraction(1, 3)]]), None)
