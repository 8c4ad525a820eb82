"""Finite-difference claims outside their statement's range are refused (UsageError on fd_scale), not failed:
the slope of an O(eps) error at eps = 1, and ReLU's "exact away from the kink" when a pre-activation lies
within eps |dg| of the kink (tint.act_backward and tint.rebuttal_mlp_aux share the test)."""

from __future__ import annotations

import pytest

from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import case
from attnsim.sim.tint.relu_kink import transformer_kink_clear
from attnsim.verify import tint_independent, tint_torch
from attnsim.verify.check import run_check
from attnsim.verify.registry import UsageError


def test_the_slope_of_an_o_eps_error_is_not_judged_at_eps_1() -> None:
    # tiny-gelu at N = 1, 2: local slope 0.81, the Taylor remainder's bend, not a wrong order
    with pytest.raises(UsageError) as e:
        run_check("tint.act_backward", {"case": "tiny-gelu", "fd_scale": 1, "halvings": 2}, "float64")
    assert e.value.param == "fd_scale"


def test_relu_near_its_kink_is_refused_and_the_kink_test_is_exact() -> None:
    with pytest.raises(UsageError) as e:
        run_check("tint.act_backward", {"case": "d12-S3", "fd_scale": 2, "halvings": 2}, "float64")
    assert e.value.param == "fd_scale"
    if not tint_torch.available():  # the refusal above needs no reference; the sweep below is torch's
        pytest.skip(tint_torch.MISSING)
    # the test refuses exactly the steps whose difference is not the derivative: N = 2, 4 inexact, 8 exact
    ar, c = get_arith("float64"), case("d12-S3")
    errs, _ = tint_independent.fd_sweep(c, ar, "act_fd", [4, 8])
    assert [transformer_kink_clear(c, ar, n) for n in (4, 8)] == [False, True]
    assert errs[0] > 1e-3 and errs[1] < 1e-9


def test_the_mlp_rebuttal_refuses_a_step_across_the_relu_kink() -> None:
    with pytest.raises(UsageError) as e:
        run_check("tint.rebuttal_mlp_aux", {"fd_scale": 4}, "float64")
    assert e.value.param == "fd_scale"
