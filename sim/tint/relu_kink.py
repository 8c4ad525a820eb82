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
    approx, n_sim = am.Approx.tint(eps), c.tint.simulated(c.aux)
    w, ids, start = am.init_weights(cfg, ar, c.seed), c.tokens, cfg.layers - n_sim
    positions = loss_positions(len(c.ids), c.n_train, "paper")
    for _ in range(c.tint.steps):
        h = am.embed(cfg, w, ids)
        for lw in w["layers"][:start]:
            h = am.layer_forward(cfg, ar, lw, h)[0]
        logits, caches, fc = am.forward(cfg, ar, w, ids, start=start, h=h)
        dh = am.ln_backward(ar, fc["hat"], fc["sigma"], fc["h"], w["lnf_g"],
                            am.loss_gradient(ar, w, logits, ids, positions), approx.ln_fd)[0]
        for i in reversed(range(n_sim)):
            lw = w["layers"][start + i]
            if not relu_difference_exact(ar, caches[i]["u"], dh @ lw["wproj"], eps):
                return False
            dh = am.layer_backward(cfg, ar, lw, caches[i], dh, approx)[0]
        w = am.sgd_step(cfg, ar, w, ids, positions, ar.scalar(c.tint.inner_lr), n_sim, approx)
    return True
