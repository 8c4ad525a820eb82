"""Where ReLU's one-sided difference (Def 2.8) is the exact derivative, shared by tint.act_backward and
tint.rebuttal_mlp_aux.

``(relu(u + eps dg) - relu(u)) / eps`` equals ``relu'(u) dg`` exactly when ``u`` and ``u + eps dg`` lie
strictly on the same side of 0 (for every entry); otherwise a pre-activation lies within ``eps |dg|`` of the
kink (or on it) and the difference is not the derivative there. That is a property of the input and the step,
not of TinT: a checker refuses such a run (the statement "exact away from the kink" does not apply to it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.cases import Case
from attnsim.sim.tint.network_io import loss_positions


def relu_difference_exact(ar: Arith, u: np.ndarray, dg: np.ndarray, eps: Any) -> bool:
    """Every ``u`` and ``u + eps dg`` lie strictly on the same side of 0 (the one-sided difference is exact)."""
    zero = ar.scalar(0)
    shifted = u + dg * eps
    return not (np.any((u > zero) != (shifted > zero)) or np.any(u == zero))


def transformer_kink_clear(c: Case, ar: Arith, fd_scale: int) -> bool:
    """ReLU case ``c``: whether every simulated layer's activation, at every SGD step of TinT's reference
    (Approx.tint with eps = 1/fd_scale, paper convention), is clear of the kink. If it is, the step with the
    one-sided activation difference equals the step with the exact ReLU derivative (layer by layer, from the top,
    the upstream gradients agree), so tint.act_backward's error must vanish."""
    cfg, eps = c.aux, ar.scalar(1) / fd_scale
    near: list[bool] = []

    def observe(lw: dict, cache: dict, dh: np.ndarray) -> None:
        near.append(not relu_difference_exact(ar, cache["u"], dh @ lw["wproj"], eps))

    w, positions = am.init_weights(cfg, ar, c.seed), loss_positions(len(c.ids), c.n_train, "paper")
    for _ in range(c.tint.steps):
        w = am.sgd_step(cfg, ar, w, c.tokens, positions, ar.scalar(c.tint.inner_lr), c.tint.simulated(cfg),
                        am.Approx.tint(eps), observe)
    return not any(near)
