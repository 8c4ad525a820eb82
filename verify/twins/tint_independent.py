"""Broken twins of tint.sgd_step's independent comparison (:mod:`attnsim.verify.tint_independent`).

Two kinds. A bug in code the construction shares with the auxiliary model's hand-derived reference (its layer
norm, its softmax) moves both alike, so only the torch reference can reject it. A reference that drops one of
TinT's stated approximations (stop-gradient, the finite differences of Def 2.8) or takes another step must
disagree with TinT, and the final logits, which the hand-derived comparison did not hold in float64, must be
held too.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np

from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted, wrapped

_F64 = {"approximations": False}
_TORCH = "attnsim.verify.tint_torch"
_TAPE = "attnsim.verify.tint_tape"


@contextmanager
def _everywhere(name: str, replacement: Any) -> Iterator[None]:
    """``aux_model.name`` replaced, in the auxiliary model and in TinT's layers, which import it."""
    with ExitStack() as stack:
        for module in ("attnsim.sim.tint.aux_model", "attnsim.sim.tint.layers"):
            stack.enter_context(mock.patch(f"{module}.{name}", replacement))
        yield


@twin("tint.sgd_step", "shared_layer_norm_eps", "the layer norm that TinT and the hand-derived step share uses "
      "epsilon 1e-2 instead of 1e-5", params=_F64, numerics="float64", kind="construction")
@contextmanager
def _shared_ln() -> Iterator[None]:
    from attnsim.sim.tint import aux_model as am

    original = am.normalize
    with _everywhere("normalize", lambda ar, x, eps=1e-2: original(ar, x, eps)):
        yield


@twin("tint.sgd_step", "shared_softmax_tempered", "the softmax that TinT and the hand-derived step share "
      "multiplies its scores by 1.01", params=_F64, numerics="float64", kind="construction")
@contextmanager
def _shared_softmax() -> Iterator[None]:
    from attnsim.sim.tint import aux_model as am

    original = am.softmax_rows
    with _everywhere("softmax_rows", lambda ar, s, allowed: original(ar, s * 1.01, allowed)):
        yield


@twin("tint.sgd_step", "reference_without_stop_grad", "the torch reference lets the gradient through the "
      "attention probabilities", params=_F64, numerics="float64", kind="reference")
@contextmanager
def _torch_full_grad() -> Iterator[None]:
    with wrapped(f"{_TORCH}.attention", args=lambda q, k, v, heads, stop: ((q, k, v, heads, False), {})):
        yield


@twin("tint.sgd_step", "reference_exact_backward", "the torch reference differentiates layer norm and activation "
      "exactly instead of by Def 2.8's difference", params=_F64, numerics="float64", kind="reference")
@contextmanager
def _torch_exact() -> Iterator[None]:
    with wrapped(f"{_TORCH}._fd_op", args=lambda fn, eps: ((fn, None), {})):
        yield


@twin("tint.sgd_step", "final_logits_2^-24", "TinT's final logits moved by 2^-24 relative, the weights untouched",
      params=_F64, numerics="float64", kind="agreement")
@contextmanager
def _logits_nudged() -> Iterator[None]:
    def nudge(x: Any) -> Any:
        y = np.array(x, dtype=np.float64, copy=True)
        y.flat[-1] += 2.0 ** -24 * float(np.max(np.abs(y)))
        return y

    with wrapped("attnsim.sim.tint.experiments.network_logits", result=nudge):
        yield


@twin("tint.sgd_step", "tape_difference_step_halved", "the exact tape reference differences with step 1/(2N)",
      params={"approximations": False}, numerics="exact", kind="reference")
@contextmanager
def _tape_eps() -> Iterator[None]:
    original = __import__(_TAPE, fromlist=["_Model"])._Model.__init__

    def init(self: Any, ar: Any, heads: int, act_name: str, eps: Any) -> None:
        original(self, ar, heads, act_name, eps / 2)

    with mock.patch(f"{_TAPE}._Model.__init__", init):
        yield


@twin("tint.thm_1_1", "step_doubled", "TinT's inner learning rate is twice the reference's", numerics="float64",
      kind="construction")
@contextmanager
def _thm11_step() -> Iterator[None]:
    from attnsim.verify.twins.tint import _lr_scaled

    with wrapped("attnsim.sim.tint.experiments.build_tint", args=_lr_scaled(2)):
        yield


@twin("tint.thm_1_1", "width_plus_one", "the width formula read as (S + 1) D_aux + 1", numerics="float64",
      kind="formula")
@contextmanager
def _thm11_width() -> Iterator[None]:
    with formula_shifted("tint.thm_1_1", "width"):
        yield
