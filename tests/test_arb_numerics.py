"""``arb:BITS`` ball arithmetic: parsed once with one clear error, balls that hold the exact value, and the
certification a check records (``sim/numerics/arb.py``, ``verify/precision/certify.py``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.numerics.arb import Arb, ArbSpec, midpoint, radius
from attnsim.verify.check import run_check
from attnsim.verify.precision.certify import certified_bits, reference_inside

F = Fraction


@pytest.mark.parametrize("arg, says", [(None, "needs a precision"), ("x", "expected arb:BITS"),
                                       ("4", r"BITS=4 is outside 10\.\..* \(below 10 bits a ball cannot hold"),
                                       ("65537", r"BITS=65537 is outside 10\.\.65536 \(the largest working")])
def test_bad_precision_is_one_error_naming_the_numerics(arg, says):
    with pytest.raises(NumericsError, match=says) as exc:
        ArbSpec.parse(arg)
    assert exc.value.param == "numerics"


def test_balls_hold_the_exact_rational_value_of_attention():
    """The companion balls (weights z**(D·s)) contain the exact numerics' attention, decided in rationals; a
    value one radius beyond the midpoint is outside (the membership test can fail)."""
    ex = get_numerics("exact:64:3/2")
    balls = Arb(ArbSpec(40).with_base(ex.grid, ex.z_fraction))
    rng = np.random.default_rng(1)
    q, k, v = (np.vectorize(lambda t: F(int(t), 4), otypes=[object])(rng.integers(-4, 5, size=s))
               for s in ((3, 2), (5, 2), (5, 2)))
    exact = ex.attention(*(ex.array(x) for x in (q, k, v)))
    ball = balls.attention(*(balls.array(x) for x in (q, k, v)))
    for e, b in zip(exact.reshape(-1), ball.reshape(-1)):
        v_exact = ex.to_fraction_or_float(e)
        assert 0 < radius(b) < F(1, 2 ** 20) * (1 + abs(v_exact))
        assert abs(v_exact - midpoint(b)) <= radius(b)
        assert abs(v_exact + 2 * radius(b) - midpoint(b)) > radius(b)


def test_certified_bits_bound_the_row_error():
    nm = Arb(ArbSpec(64))
    Y = np.array([[nm.scalar(F(3)), nm.scalar(F(4))]], dtype=object)
    assert certified_bits(Y)["certified_bits"] == float("inf")
    Y = nm.div(Y, nm.array([[F(3)]]))  # 1 and 4/3: 4/3 is rounded, a radius appears
    cert = certified_bits(Y)
    assert 60 < cert["certified_bits"] < 70 and cert["uncertified_rows"] == 0
    wide = nm.div(nm.ones((1, 1)), nm.sub(nm.ones((1, 1)), nm.ones((1, 1))))  # 1/0: an infinite ball
    cert = certified_bits(wide)
    assert (cert["certified_bits"], cert["non_finite_balls"], cert["uncertified_rows"]) == (0.0, 1, 1)


def test_a_reference_off_by_one_ulp_of_the_truth_misses_the_balls():
    """The reference-inside test is the comparison a wrong construction fails: shifting the reference by far
    more than the balls' radius but far less than 2^-60 relative is caught."""
    nm, truth = Arb(ArbSpec(128)), get_numerics("mp:320")
    Y = nm.div(nm.array([[F(1), F(2)]]), nm.array([[F(3)]]))
    ref = truth.div(truth.array([[F(1), F(2)]]), truth.array([[F(3)]]))
    assert reference_inside(Y, ref, truth) == (0, None)
    off = ref.copy()
    off[0, 1] = off[0, 1] * (1 + truth.ctx.mpf(2) ** -100)
    assert reference_inside(Y, off, truth) == (1, (0, 1))


def test_check_records_certified_bits_and_the_exact_output_inside():
    r = run_check("two_heads.lemma_3_1", {"N": 12, "M": 4, "d": 2}, numerics="arb:96")
    cert = r["extra"]["certified"]
    assert r["verdict"] == "pass", r["reasons"]
    assert 80 < cert["certified_bits"] <= r["error_bits"]
    assert cert["reference_outside"] == 0
    assert cert["exact"]["status"] == "checked" and cert["exact"]["outside"] == 0
    assert cert["exact"]["entries"] == 12 * 2
