"""tint.sgd_step on the tiny auxiliary model (D = 8, 2 heads, 2 layers, vocabulary 16)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.builder import build, prefix_sets
from attnsim.sim.tint.cases import CASES
from attnsim.sim.tint.configs import TINY
from attnsim.sim.tint.pipeline import Runner, forward_layer, run
from attnsim.verify.stats import loglog_fit

F64 = get_arith("float64")


def test_tiny_model_is_the_one_in_the_issue() -> None:
    assert (TINY.D, TINY.heads, TINY.layers, TINY.vocab) == (8, 2, 2, 16)


def test_exact_sgd_step_bit_for_bit() -> None:
    """Hard gates, linear attention: TinT's updated weights == the reference step, every entry, exactly."""
    r = ex.sgd_step(CASES["tiny-relu"], get_arith("exact"))
    assert r.exact_equal and r.logits_equal  # weights, and the test-part forward pass with them
    assert r.test_loss["tint"] == r.test_loss["reference"] != r.test_loss["before"]
    assert all(v == 0.0 for v in r.errors.values())
    moved = ex.group_errors(r.got, r.weights)
    assert moved["wv"] > 0 and moved["wfc"] > 0 and moved["ln1_b"] > 0 and moved["lnf_b"] > 0
    assert moved["wq"] == moved["wk"] == moved["ln1_g"] == 0.0  # approximations E and G: frozen


@pytest.mark.parametrize("name", ["tiny-gelu", "tiny-top1-2steps", "d12-S3", "d12-S6"])
def test_float64_cases_agree_to_round_off(name: str) -> None:
    r = ex.sgd_step(CASES[name], F64)
    assert ex.worst(r.errors) < 1e-9


def test_forward_blocks_equal_the_aux_model_exactly() -> None:
    """tint.ln_forward, attn_forward, linear_forward, act_forward and the 4 sub-MLPs, layer by layer."""
    c = CASES["tiny-gelu"]
    ar = get_arith("exact")
    t = build(c.aux, c.tint, ar)
    w = am.init_weights(c.aux, ar, 0)
    r = Runner.of(ar, t.geo, len(c.ids), c.n_train)
    sets = prefix_sets(t, w)
    h = want = am.embed(c.aux, w, c.tokens)
    for i in range(c.aux.layers):
        h = forward_layer(r, t.forward_blocks[i], sets[i], h)[0]
        want = am.layer_forward(c.aux, ar, w["layers"][i], want)[0]
        assert ar.equal(h, want), f"layer {i}"


@pytest.mark.parametrize("which,name", [("ln_fd", "tiny-gelu"), ("act_fd", "tiny-gelu"), ("ln_fd", "tiny-relu")])
def test_finite_difference_error_is_linear_in_eps(which: str, name: str) -> None:
    scales = [100, 200, 400, 800]
    errs = ex.fd_sweep(CASES[name], F64, which, scales)
    assert abs(loglog_fit([1 / n for n in scales], errs).slope - 1) < 0.05


def test_relu_activation_finite_difference_is_exact_away_from_the_kink() -> None:
    errs = ex.fd_sweep(CASES["tiny-relu"], F64, "act_fd", [1000])
    assert errs[0] < 1e-10


def test_tanh_gate_error_shrinks_like_exp_minus_2s() -> None:
    """Approximation J: 1 - tanh(s) ~ 2 exp(-2 s), so the error falls by ~e^-2 per unit of gate_scale."""
    c = CASES["tiny-relu"]
    errs = [ex.worst(ex.sgd_step(c, F64, gate_scale=s).errors) for s in (5.0, 6.0, 7.0)]
    ratios = [errs[i + 1] / errs[i] for i in range(2)]
    assert all(abs(np.log(r) + 2) < 0.3 for r in ratios), ratios


def test_thm_2_5_inside_tint_error_is_linear_in_eps() -> None:
    c = CASES["tiny-gelu"]
    eps = [1e-3, 5e-4, 2.5e-4]
    errs = [ex.worst(ex.sgd_step(c, F64, softmax_eps=e).errors) for e in eps]
    assert abs(loglog_fit(eps, errs).slope - 1) < 0.1


def test_each_approximation_reported_alone() -> None:
    errs = ex.approximation_errors(CASES["tiny-gelu"], F64)
    assert set(errs) == {"stop_grad", "ln_bias_only", "ln_fd", "act_fd", "gates", "thm_2_5"}
    assert errs["ln_fd"]["rel"] < 1e-3 and errs["act_fd"]["rel"] < 1e-3 and errs["gates"]["rel"] < 1e-3
    assert errs["stop_grad"]["rel"] > 1e-2  # the biased one


def test_reused_and_copied_modules_give_identical_weights() -> None:
    shared = ex.sgd_step(CASES["tiny-top1-2steps"], F64)
    copied = ex.sgd_step(CASES["tiny-2steps-noreuse"], F64)
    assert ex.worst(ex.group_errors(shared.got, copied.got)) == 0.0
    assert copied.size.total > shared.size.total and copied.size.shared_total == shared.size.shared_total


def test_a_broken_descent_is_caught_end_to_end() -> None:
    """Double the value map of one descent module: the comparison with the reference step fails."""
    c = CASES["tiny-relu"]
    t = build(c.aux, c.tint, F64)
    t.backward_blocks[0][1].o.branches[1].layers[0].maps["v"][0].M *= 2
    w = am.init_weights(c.aux, F64, 0)
    got = run(t, w, c.tokens, c.n_train).weights
    want = ex.reference(c, F64, w, am.Approx.tint(1e-3))
    assert ex.group_errors(got, want)["wo"] > 1e-3
