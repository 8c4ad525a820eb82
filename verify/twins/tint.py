"""Broken twins of the TinT checkers (:mod:`attnsim.verify.claims.tint`).

Twins break a term of a simulated module (the bias of a linear layer, LN's beta), its orientation (W
instead of W^T in the backward pass, §2.6 (2)), the sign or size of the SGD step (§2.6 (3), Def. 2.8),
a causal boundary, the finite-difference step (Def. 2.7, 2.8), the stop-gradient of W_Q and W_K
(§2.6 (5)), a ledger entry or a count formula; or perturb TinT's result by a few units in the last
30-odd bits, which only a tight agreement test (the checks' 40 or 30 bits in float64) catches. The size
twins are in :mod:`attnsim.verify.twins.tint_size`.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np

from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import wrapped

_EX = "attnsim.sim.tint.experiments"
_TINY = 2.0 ** -30


def _nudge(x: Any, rel: float = _TINY) -> Any:
    """``x`` with its first entry moved by ``rel`` of the array's largest magnitude."""
    y = np.array(x, dtype=np.float64, copy=True)
    y.flat[0] += rel * max(float(np.max(np.abs(y))), 1.0)
    return y


def _nudged_first(out: tuple) -> tuple:
    return (_nudge(out[0]),) + tuple(out[1:])


def _pack_without_bias(ar: Any, geo: Any, W: Any, b: Any) -> tuple[tuple, dict]:
    return (ar, geo, W, 0 * b), {}


def _pack_transposed(ar: Any, geo: Any, W: Any, b: Any) -> tuple[tuple, dict]:
    return (ar, geo, W.T, b), {}


def _geometry_eta(factor: float) -> Any:
    def args(*a: Any, **kw: Any) -> tuple[tuple, dict]:
        kw["eta"] = kw["eta"] * factor
        return a, kw
    return args


def _lr_scaled(factor: float) -> Any:
    """Arguments of ``build(aux, cfg, ...)`` with the inner learning rate times ``factor``."""
    def args(aux: Any, cfg: Any, *a: Any, **kw: Any) -> tuple[tuple, dict]:
        return (aux, dataclasses.replace(cfg, inner_lr=cfg.inner_lr * factor)) + a, kw
    return args


# ---------------------------------------------------------------- §2.6 (1)-(3): linear modules

@twin("tint.linear_forward", "bias_dropped", "TinT's linear forward is given W with a zero bias", params={},
      kind="construction")
@contextmanager
def _lin_fwd_bias() -> Iterator[None]:
    with wrapped(f"{_EX}.pack", args=_pack_without_bias):
        yield


@twin("tint.linear_forward", "within_2^-30", "TinT's output moved by 2^-30 relative, which a 30-bit test accepts",
      numerics="float64", kind="agreement")
@contextmanager
def _lin_fwd_loose() -> Iterator[None]:
    with wrapped(f"{_EX}.linear_module", result=_nudged_first):
        yield


@twin("tint.linear_backward", "w_not_transposed", "the backward module multiplies by W instead of W^T",
      kind="construction")
@contextmanager
def _lin_bwd_transposed() -> Iterator[None]:
    with wrapped(f"{_EX}.pack", args=_pack_transposed):
        yield


@twin("tint.linear_backward", "within_2^-30", "TinT's dx moved by 2^-30 relative, which a 30-bit test accepts",
      numerics="float64", kind="agreement")
@contextmanager
def _lin_bwd_loose() -> Iterator[None]:
    with wrapped(f"{_EX}.linear_module", result=_nudged_first):
        yield


@twin("tint.linear_descent", "step_sign_flipped", "the descent module steps up the gradient (eta negated)",
      kind="construction")
@contextmanager
def _lin_desc_sign() -> Iterator[None]:
    with wrapped(f"{_EX}.Geometry", args=_geometry_eta(-1)):
        yield


@twin("tint.linear_descent", "within_2^-30", "the updated prefix moved by 2^-30 relative, which a 30-bit test "
      "accepts", numerics="float64", kind="agreement")
@contextmanager
def _lin_desc_loose() -> Iterator[None]:
    with wrapped(f"{_EX}.linear_module", result=_nudged_first):
        yield


@twin("tint.stacking", "s1_output_changed", "with K = D (S = 1) the forward output gains 1/8 in one entry",
      kind="construction")
@contextmanager
def _stack_s1() -> Iterator[None]:
    from attnsim.sim.tint import experiments as ex

    original = ex.linear_module

    def broken(ar: Any, D: int, K: int, which: str, *a: Any, **kw: Any) -> Any:
        got, want, n = original(ar, D, K, which, *a, **kw)
        if K == D and which == "forward":
            got = got.copy()
            got.flat[0] = got.flat[0] + ar.scalar(1) / 8
        return got, want, n

    with mock.patch(f"{_EX}.linear_module", broken):
        yield


@twin("tint.stacking", "step_doubled", "the descent module takes twice the step (eta doubled)", kind="construction")
@contextmanager
def _stack_step() -> Iterator[None]:
    with wrapped(f"{_EX}.Geometry", args=_geometry_eta(2)):
        yield


# ---------------------------------------------------------------- Thm 2.5: softmax simulates linear attention

@twin("tint.thm_2_5", "eps_square_root", "the simulation uses sqrt(eps) where the theorem uses eps",
      kind="construction")
@contextmanager
def _thm25_sqrt() -> Iterator[None]:
    with wrapped(f"{_EX}.softmax_simulation", args=lambda ar, q, k, v, allowed, e: ((ar, q, k, v, allowed,
                                                                                   e ** 0.5), {})):
        yield


@twin("tint.thm_2_5", "error_floor", "the simulation error carries a constant the size of its smallest-eps error",
      kind="construction")
@contextmanager
def _thm25_floor() -> Iterator[None]:
    with wrapped(f"{_EX}.thm25_sweep", result=lambda errs: [e + errs[-1] for e in errs]):
        yield


# ---------------------------------------------------------------- §2.6 (4), (7), Def. 2.7, 2.8: nonlinear modules

def _module_result(which: str, change: Any) -> Any:
    from attnsim.sim.tint import experiments as ex

    original = ex.nonlinear_module

    def broken(ar: Any, c: Any, w: str) -> Any:
        got, want = original(ar, c, w)
        return (change(got) if w == which else got), want

    return mock.patch(f"{_EX}.nonlinear_module", broken)


def _rows_shifted(x: Any) -> Any:
    return np.concatenate([x[:1], x[:-1]], axis=0)


def _last_row_negated(x: Any) -> Any:
    y = x.copy()
    y[-1] = -y[-1]
    return y


def _halved(x: Any) -> Any:
    return x / 2


@twin("tint.attn_forward", "causal_boundary_off_by_one", "each token's attention output is its predecessor's",
      kind="construction")
@contextmanager
def _attn_shift() -> Iterator[None]:
    with _module_result("attn_forward", _rows_shifted):
        yield


@twin("tint.attn_forward", "within_2^-30", "the attention output moved by 2^-30 relative", numerics="float64",
      kind="agreement")
@contextmanager
def _attn_loose() -> Iterator[None]:
    with _module_result("attn_forward", _nudge):
        yield


@twin("tint.ln_forward", "beta_dropped", "LN's beta is left out of the prefix (a zero bias)", kind="construction")
@contextmanager
def _ln_beta() -> Iterator[None]:
    with wrapped(f"{_EX}.pack", args=_pack_without_bias):
        yield


@twin("tint.ln_forward", "within_2^-30", "the LN output moved by 2^-30 relative", numerics="float64", kind="agreement")
@contextmanager
def _ln_loose() -> Iterator[None]:
    with _module_result("ln_forward", _nudge):
        yield


@twin("tint.act_forward", "last_row_sign", "the activation output of the last token has the wrong sign",
      kind="construction")
@contextmanager
def _act_sign() -> Iterator[None]:
    with _module_result("act_forward", _last_row_negated):
        yield


@twin("tint.act_forward", "within_2^-30", "the activation output moved by 2^-30 relative", numerics="float64",
      kind="agreement")
@contextmanager
def _act_loose() -> Iterator[None]:
    with _module_result("act_forward", _nudge):
        yield


@twin("tint.def_2_8", "difference_step_doubled", "the activation difference quotient divides by 2/N instead of 1/N",
      kind="construction")
@contextmanager
def _def28_step() -> Iterator[None]:
    with _module_result("act_backward", _halved):
        yield


@twin("tint.def_2_8", "within_2^-30", "the LN difference moved by 2^-30 relative", numerics="float64", kind="agreement")
@contextmanager
def _def28_loose() -> Iterator[None]:
    with _module_result("ln_fd", _nudge):
        yield


# ---------------------------------------------------------------- Def. 2.7, 2.8: finite-difference error in eps

def _fixed_fd_scale(aux: Any, cfg: Any, ar: Any, fd_scale: int = 1000, **kw: Any) -> tuple[tuple, dict]:
    return (aux, cfg, ar), {**kw, "fd_scale": 100}


def _with_floor(out: tuple[list[float], list[float]]) -> tuple[list[float], list[float]]:
    errs, bits = out
    return [e + errs[0] for e in errs], bits


@twin("tint.ln_backward", "step_frozen", "TinT's LN difference step stays 1/100 whatever N the sweep asks for",
      params={"halvings": 3}, kind="construction")
@contextmanager
def _lnb_step() -> Iterator[None]:
    with wrapped(f"{_EX}.build_tint", args=_fixed_fd_scale):
        yield


@twin("tint.ln_backward", "error_floor", "a constant error that does not shrink with eps = 1/N",
      params={"halvings": 3}, kind="construction")
@contextmanager
def _lnb_floor() -> Iterator[None]:
    with wrapped("attnsim.verify.tint_independent.fd_sweep", result=_with_floor):
        yield


@twin("tint.act_backward", "step_frozen", "TinT's activation difference step stays 1/100 whatever N",
      params={"halvings": 3}, kind="construction")
@contextmanager
def _actb_step() -> Iterator[None]:
    with wrapped(f"{_EX}.build_tint", args=_fixed_fd_scale):
        yield


@twin("tint.act_backward", "error_floor", "a constant error that does not shrink with eps = 1/N",
      params={"halvings": 3}, kind="construction")
@contextmanager
def _actb_floor() -> Iterator[None]:
    with wrapped("attnsim.verify.tint_independent.fd_sweep", result=_with_floor):
        yield


# ---------------------------------------------------------------- §2.6: one SGD step end to end

def _wv_nudged(w: Any) -> Any:
    layer = w["layers"][0]
    layer["wv"] = _nudge(layer["wv"], 2.0 ** -20)
    return w


def _wq_moved(w: Any) -> Any:
    layer = w["layers"][0]
    layer["wq"] = _nudge(layer["wq"], 2.0 ** -10)
    return w


@twin("tint.sgd_step", "step_sign_flipped", "TinT's inner SGD step goes up the gradient",
      params={"approximations": False}, numerics="float64", kind="construction")
@contextmanager
def _sgd_sign() -> Iterator[None]:
    with wrapped(f"{_EX}.build_tint", args=_lr_scaled(-1)):
        yield


@twin("tint.sgd_step", "within_2^-20", "one updated W_V entry moved by 2^-20 relative, inside a 20-bit test",
      params={"approximations": False}, numerics="float64", kind="agreement")
@contextmanager
def _sgd_loose() -> Iterator[None]:
    with wrapped(f"{_EX}.updated_weights", result=_wv_nudged):
        yield


@twin("tint.thm_1_1", "step_sign_flipped", "the one forward pass's inner SGD step goes up the gradient",
      params={"case": "tiny-relu"}, numerics="float64", kind="construction")
@contextmanager
def _thm11_sign() -> Iterator[None]:
    with wrapped(f"{_EX}.build_tint", args=_lr_scaled(-1)):
        yield


@twin("tint.thm_1_1", "within_2^-20", "one updated W_V entry moved by 2^-20 relative, inside the 30-bit test",
      params={"case": "tiny-relu"}, numerics="float64", kind="agreement")
@contextmanager
def _thm11_loose() -> Iterator[None]:
    with wrapped(f"{_EX}.updated_weights", result=_wv_nudged):
        yield


@twin("tint.attn_backward", "query_weights_updated", "the backward pass changes W_Q (no stop-gradient)",
      kind="construction")
@contextmanager
def _attnb_wq() -> Iterator[None]:
    with wrapped(f"{_EX}.updated_weights", result=_wq_moved):
        yield


@twin("tint.attn_backward", "step_doubled", "TinT's inner step is twice the reference's", kind="construction")
@contextmanager
def _attnb_step() -> Iterator[None]:
    with wrapped(f"{_EX}.build_tint", args=_lr_scaled(2)):
        yield


def _copies_step_doubled(aux: Any, cfg: Any, *a: Any, **kw: Any) -> tuple[tuple, dict]:
    if not cfg.reuse_forward:
        cfg = dataclasses.replace(cfg, inner_lr=cfg.inner_lr * 2)
    return (aux, cfg) + a, kw


@twin("tint.param_sharing", "copies_step_doubled", "the duplicated modules take twice the shared modules' step",
      kind="construction")
@contextmanager
def _share_step() -> Iterator[None]:
    with wrapped(f"{_EX}.build_tint", args=_copies_step_doubled):
        yield


@twin("tint.param_sharing", "within_2^-40", "the shared run's W_V moved by 2^-40 relative (any tolerance hides it)",
      kind="agreement")
@contextmanager
def _share_loose() -> Iterator[None]:
    def nudge(w: Any) -> Any:
        layer = w["layers"][0]
        layer["wv"] = _nudge(layer["wv"], 2.0 ** -40)
        return w

    from attnsim.sim.tint import experiments as ex

    original, calls = ex.updated_weights, []

    def broken(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        res = original(*a, **kw)
        return nudge(res) if len(calls) == 1 else res

    with mock.patch(f"{_EX}.updated_weights", broken):
        yield
