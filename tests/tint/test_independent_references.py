"""The independent references of tint.sgd_step: torch autograd (float64) and the exact tape (rationals)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import CASES
from attnsim.verify import tint_independent, tint_tape, tint_torch
from attnsim.verify.registry import CheckContext, get_checker

torch = pytest.importorskip("torch", reason="the torch reference needs the torch extra")
torch.set_num_threads(1)
F64, EXACT = get_arith("float64"), get_arith("exact")


def _step(name: str, ar=F64):
    c = CASES[name]
    r = ex.sgd_step(c, ar)
    return c, r, tint_independent.step_against_reference(c, ar, r.weights, r.got, r.logits, 1000, False)


def test_torch_reference_agrees_with_tint_at_d64() -> None:
    _, _, v = _step("gpt2-d64")
    assert v.evidence == "independent" and v.bits >= 40 and v.step_bits >= 33


def test_the_torch_reference_is_not_the_exact_gradient() -> None:
    """Detaching the probabilities and differencing are what TinT does; without them torch disagrees."""
    c, r, v = _step("tiny-gelu")
    w0 = tint_independent._floats(F64, r.weights)
    pos = tint_independent.loss_positions(len(c.ids), c.n_train, False)
    spec = tint_torch.StepSpec(lr=c.tint.inner_lr, n_sim=2, stop_grad=False, ln_fd=None, act_fd=None)
    full = tint_torch.sgd_steps(w0, c.tokens, pos, c.aux.heads, c.aux.activation, spec)
    assert v.bits >= 35
    assert max(np.max(np.abs(a - b)) for a, b in zip(tint_independent._arrays(full), tint_independent._arrays(v.want))
               ) > 1e-4


def test_exact_tape_equals_the_hand_derived_step() -> None:
    """The tape (mechanical chain rule) and aux_model's hand-derived gradients agree in rationals: two routes."""
    c = CASES["tiny-relu"]
    w = am.init_weights(c.aux, EXACT, c.seed)
    pos = am.train_positions(len(c.ids), c.n_train)
    eps = EXACT.scalar(1) / 1000
    want = am.sgd_step(c.aux, EXACT, w, c.tokens, pos, EXACT.scalar(c.tint.inner_lr), 2, am.Approx.tint(eps))
    got = tint_tape.sgd_steps(EXACT, w, c.tokens, pos, c.aux.heads, c.aux.activation, c.tint.inner_lr, 2, 1, eps)
    assert all(EXACT.equal(a, b) for a, b in zip(tint_independent._arrays(got), tint_independent._arrays(want)))


def test_without_torch_a_float_record_is_partial_not_pass(monkeypatch) -> None:
    monkeypatch.setattr(tint_torch, "available", lambda: False)
    chk = get_checker("tint.sgd_step")
    m = chk.fn(CheckContext("tint.sgd_step", chk.resolve({"approximations": False}), "float64", 0))
    assert m.evidence == "self-consistency" and m.agree is False and m.extra["partial"] == tint_torch.MISSING
