"""Broken twins of the TinT definition and descent rows (:mod:`attnsim.verify.claims.tint_rows`).

Each breaks the construction the row checks: the prefix layout, a position term or the gate of a TinT
attention layer, the transposed probabilities or the step of the V descent, the bias-only LN descent,
the all-zero activation sets, the sub-MLPs' bias shares, the targets or mask of the loss gradient, the map
or step of the first-order gradient, the number of steps or the pass read for dynamic evaluation.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np

from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import wrapped

_R = "attnsim.sim.tint.rows"


# ---------------------------------------------------------------- Def 2.1
@twin("tint.def_2_1", "stack_order_reversed", "each prefix stores its S rows in reverse order", kind="construction")
@contextmanager
def _d21_order() -> Iterator[None]:
    from attnsim.sim.tint import rows as r

    original = r.pack

    def broken(ar: Any, geo: Any, W: Any, b: Any) -> Any:
        out = original(ar, geo, W, b)
        if geo.S > 1:
            blocks = [out[:, i * geo.D:(i + 1) * geo.D].copy() for i in range(geo.S)]
            for i, blk in enumerate(reversed(blocks)):
                out[:, i * geo.D:(i + 1) * geo.D] = blk
        return out

    with mock.patch(f"{_R}.pack", broken):
        yield


@twin("tint.def_2_1", "bias_in_last_prefix", "the bias is written into the last prefix instead of prefix 0",
      kind="construction")
@contextmanager
def _d21_bias() -> Iterator[None]:
    from attnsim.sim.tint import rows as r

    original = r.pack

    def broken(ar: Any, geo: Any, W: Any, b: Any) -> Any:
        out = original(ar, geo, W, b)
        if geo.K > 1:
            out[-1, geo.S * geo.D:], out[0, geo.S * geo.D:] = out[0, geo.S * geo.D:].copy(), ar.zeros(geo.D)
        return out

    with mock.patch(f"{_R}.pack", broken):
        yield


# ---------------------------------------------------------------- Def 2.3
@twin("tint.def_2_3", "key_position_term_dropped", "the keys lose their positional term", kind="construction")
@contextmanager
def _d23_pos() -> Iterator[None]:
    from attnsim.sim.tint.layers import PosProj

    original = PosProj.parts

    def parts(self: PosProj, ar: Any, pos: Any) -> Any:
        q, k, v = original(self, ar, pos)
        return [q, 0 * k, v]

    with mock.patch.object(PosProj, "parts", parts):
        yield


@twin("tint.def_2_3", "gate_keeps_no_input", "the gate drops its input term (out = g_new f(x))", kind="construction")
@contextmanager
def _d23_gate() -> Iterator[None]:
    from attnsim.sim.tint.layers import Gate

    def combine(self: Gate, ar: Any, x: Any, fx: Any, ctx: Any) -> Any:
        phi = ar.tanh if self.tanh else (lambda z: z)
        return phi(ar.matmul(ctx.pos, self.a_new[:, None])[:, 0] + self.a1)[:, None] * fx

    with mock.patch.object(Gate, "combine", combine):
        yield


# ---------------------------------------------------------------- §2.6 (6)
@twin("tint.attn_descent", "probabilities_not_transposed", "dv_j sums a_{j,t} dy_t (the forward matrix, untransposed)",
      kind="construction")
@contextmanager
def _ad_transpose() -> Iterator[None]:
    from attnsim.sim.tint import rows as r

    original = r.attention_backward

    def broken(*a: Any, **kw: Any) -> Any:
        m = original(*a, **kw)
        m.layers[0].transpose_probs = False
        return m

    with mock.patch(f"{_R}.attention_backward", broken):
        yield


@twin("tint.attn_descent", "key_set_written", "the network's descent also writes the K prefix set", kind="construction")
@contextmanager
def _ad_k() -> Iterator[None]:
    def mark(net: Any) -> Any:
        for lay in net.layers:
            if getattr(lay, "prefix", None) and lay.prefix.endswith(".k"):
                lay.prefix_out = True
        return net

    with wrapped(f"{_R}.build_tint", result=mark):
        yield


# ---------------------------------------------------------------- §2.6 (9)
def _with_weights(ar: Any, geo: Any, weights: bool = True, bias_step: Any = None) -> tuple[tuple, dict]:
    return (ar, geo), {"weights": True, "bias_step": bias_step}


@twin("tint.ln_descent", "gamma_updated", "the LN descent also updates its weight (the full outer product)",
      kind="construction")
@contextmanager
def _lnd_gamma() -> Iterator[None]:
    with wrapped(f"{_R}.linear_backward_descent", args=_with_weights):
        yield


@twin("tint.ln_descent", "step_sign_flipped", "the LN descent steps up the gradient", kind="construction")
@contextmanager
def _lnd_sign() -> Iterator[None]:
    from attnsim.sim.tint.modules import Geometry

    original = Geometry.of

    def of(aux: Any, tint: Any, *a: Any, **kw: Any) -> Any:
        return original(aux, dataclasses.replace(tint, inner_lr=-tint.inner_lr), *a, **kw)

    with mock.patch.object(Geometry, "of", staticmethod(of)):
        yield


# ---------------------------------------------------------------- §2.6 (12)
@twin("tint.act_descent", "activation_set_written", "a descent layer writes the activation prefix sets",
      kind="construction")
@contextmanager
def _actd_written() -> Iterator[None]:
    def mark(net: Any) -> Any:
        for lay in net.layers:
            if getattr(lay, "prefix", None) and ".act" in lay.prefix:
                lay.prefix_out = True
        return net

    with wrapped(f"{_R}.build_tint", result=mark):
        yield


@twin("tint.act_descent", "activation_set_holds_fc", "the activation prefix sets hold the fc weights",
      kind="construction")
@contextmanager
def _actd_fc() -> Iterator[None]:
    def fill(sets: Any) -> Any:
        for s in sets:
            for k in range(4):
                if f"act{k}" in s:
                    s[f"act{k}"] = s[f"fc{k}"].copy()
        return sets

    with wrapped("attnsim.sim.tint.network_io.prefix_sets", result=fill):
        yield


# ---------------------------------------------------------------- MLP split
@twin("tint.mlp_split", "shares_hold_full_bias", "each sub-MLP's proj set holds all of b_proj instead of a quarter",
      kind="construction")
@contextmanager
def _mlp_full() -> Iterator[None]:
    from attnsim.sim.tint import builder

    original = builder.prefix_sets

    def broken(t: Any, w: Any) -> Any:
        sets = original(t, w)
        bias = slice(t.geo.S * t.geo.D, None)
        for s in sets:
            for k in range(builder.N_SUB):
                s[f"proj{k}"][0, bias] = s[f"proj{k}"][0, bias] * builder.N_SUB
        return sets

    with mock.patch("attnsim.sim.tint.builder.prefix_sets", broken):
        yield


@twin("tint.mlp_split", "full_step_per_share", "each bias share takes the full step (the authors' code)",
      kind="construction")
@contextmanager
def _mlp_step() -> Iterator[None]:
    with wrapped(f"{_R}.mlp_split", args=lambda c, ar, convention="paper": ((c, ar, "authors"), {})):
        yield


# ---------------------------------------------------------------- loss gradient
@twin("tint.loss_gradient", "target_is_current_token", "the target of position t is token t, not t + 1",
      kind="construction")
@contextmanager
def _lg_target() -> Iterator[None]:
    from attnsim.sim.tint import rows as r

    original = r.input_embedding

    def broken(net: Any, w: Any, ids: Any, n_train: int) -> Any:
        x = original(net, w, ids, n_train)
        K, cols = net.geo.K, net.reg("target")
        t = x[K:, cols].copy()
        x[K + 1:, cols] = t[:-1]
        x[K, cols] = 0 * t[0]
        return x

    with mock.patch(f"{_R}.input_embedding", broken):
        yield


@twin("tint.loss_gradient", "loss_on_every_position", "the loss mask lets every position through", kind="construction")
@contextmanager
def _lg_mask() -> Iterator[None]:
    from attnsim.sim.tint import rows as r

    original = r.input_embedding

    def broken(net: Any, w: Any, ids: Any, n_train: int) -> Any:
        x = original(net, w, ids, n_train)
        x[net.geo.K:, net.reg("loss_mask")] = net.ar.scalar(1)
        return x

    with mock.patch(f"{_R}.input_embedding", broken):
        yield


# ---------------------------------------------------------------- Def 2.7
@twin("tint.def_2_7", "non_symmetric_map", "the first-order gradient goes through LN plus a non-symmetric shift",
      kind="construction")
@contextmanager
def _d27_map() -> Iterator[None]:
    with wrapped(f"{_R}.ln_map", result=lambda y: y + np.roll(y, 1, axis=-1) / 2):
        yield


@twin("tint.def_2_7", "one_sided_large_step", "the difference is one-sided with step 2^-20", kind="construction")
@contextmanager
def _d27_step() -> Iterator[None]:
    def one_sided(ar: Any, f: Any, x: Any, dy: Any, eps: Any) -> Any:
        e = ar.scalar(2) ** -20
        return (f(ar, x + dy * e) - f(ar, x)) / e

    with mock.patch(f"{_R}.first_order_gradient", one_sided):
        yield


# ---------------------------------------------------------------- Def 3.1
@twin("tint.dynamic_eval", "one_step_short", "TinT takes one SGD step fewer than dynamic evaluation",
      kind="construction")
@contextmanager
def _de_steps() -> Iterator[None]:
    def args(aux: Any, cfg: Any, *a: Any, **kw: Any) -> tuple[tuple, dict]:
        return (aux, dataclasses.replace(cfg, steps=max(cfg.steps - 1, 1))) + a, kw

    with wrapped(f"{_R}.build_tint", args=args):
        yield


@twin("tint.dynamic_eval", "first_pass_read", "the held-out logits are read from the first forward pass",
      kind="construction")
@contextmanager
def _de_first() -> Iterator[None]:
    with wrapped(f"{_R}.logits", args=lambda net, x, first=False: ((net, x, True), {})):
        yield
