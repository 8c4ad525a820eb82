"""TinT's definition and descent rows, each construction run alone (the checkers of
``attnsim.verify.claims.tint_rows`` hold the results against references computed another way).

* tint.def_2_1        :func:`prefix_layout`      pack a D x D layer into K prefix rows and back
* tint.def_2_3        :func:`attention_layer`    one TinT attention layer with position terms, and its gate
* tint.attn_descent   :func:`attention_descent`  stop-gradient dv, then the W_V descent (Q, K untouched)
* tint.ln_descent     :func:`ln_descent`         LN backward || descent on (diag gamma, beta): beta only
* tint.act_descent    :func:`activation_sets`    the activation prefix sets before and after a step
* tint.mlp_split      :func:`mlp_split`          4 sub-MLPs through one fc / act / proj, and their bias shares
* tint.loss_gradient  :func:`loss_gradient`      the network's read-out layer computing the loss gradient
* tint.def_2_7        :func:`first_order_gradient` the directional derivative J dy TinT uses for J^T dy
* tint.dynamic_eval   :func:`dynamic_eval`       TinT's logits on the held-out part after its steps
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.builder import N_SUB
from attnsim.sim.tint.cases import Case
from attnsim.sim.tint.configs import TinTConfigError
from attnsim.sim.tint.layers import BlockDiag, Context, Gate, Mixer, Module, PosProj, TinTAttention
from attnsim.sim.tint.modules import Geometry, diag_matrix, linear_backward_descent, pack, unpack
from attnsim.sim.tint.modules_nonlinear import attention_backward
from attnsim.sim.tint.network import Convention, ModuleLayer, Readout, build_tint, forward, read_out
from attnsim.sim.tint.network_io import View, input_embedding, logits
from attnsim.sim.tint.pipeline import Runner


def _draw(ar: Arith, rng: np.random.Generator, *shape: int, grid: int = 8) -> np.ndarray:
    return ar.array(np.round(rng.standard_normal(shape) * grid) / grid)


def prefix_layout(ar: Arith, D: int, K: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """tint.def_2_1: (W, b, the K prefix rows holding them, (W, b) read back)."""
    if K < 1 or D % K:
        raise TinTConfigError(f"--K: the number of prefixes K = {K} must divide D = {D}")
    rng = np.random.default_rng(seed)
    W, b = _draw(ar, rng, D, D), _draw(ar, rng, D)
    geo = Geometry(D, K, T=1, H_sim=1, aux_heads=1, activation="relu", eta=0)
    rows = pack(ar, geo, W, b)
    return W, b, rows, unpack(geo, rows)


@dataclass
class AttentionCase:
    """A TinT attention layer with random weights, its input rows, context and output (tint.def_2_3)."""

    module: Module
    x: np.ndarray
    ctx: Context
    out: np.ndarray


def attention_layer(ar: Arith, kind: str, seed: int = 0, H: int = 8, heads: int = 2, c: int = 4, N: int = 5,
                    P: int = 7) -> AttentionCase:
    """One gated TinT attention layer (``kind`` linear or softmax) with every array random."""
    rng = np.random.default_rng(seed)
    r = lambda *s: _draw(ar, rng, *s, grid=4) / 4  # noqa: E731
    maps = {v: (Mixer(r(c, H // c, H // c), r(H)), BlockDiag(r(H // c, c, c), r(H))) for v in "qkv"}
    hd = H // heads
    att = TinTAttention(heads, maps, PosProj(r(P, 3 * hd), r(3 * hd), r(3, heads), r(heads)),
                        Mixer(r(c, H // c, H // c), r(H)), kind, "m")
    gate = Gate(r(P), r(P), r(1)[0], r(1)[0], tanh=True)
    pos = np.zeros((N, P), dtype=int)
    pos[np.arange(N), rng.permutation(P)[:N]] = 1
    mask = np.tril(np.ones((N, N), dtype=bool)) | (rng.random((N, N)) < 0.3)
    ctx = Context(ar.array(pos), {"m": mask})
    module = Module("Def2.3", [att], gate)
    x = r(N, H)
    return AttentionCase(module, x, ctx, module(ar, x, ctx))


def _layer_cache(c: Case, ar: Arith) -> tuple[Geometry, Runner, am.Weights, dict, np.ndarray]:
    geo = Geometry.of(c.aux, c.tint)
    w = am.init_weights(c.aux, ar, c.seed)
    h = am.embed(c.aux, w, c.tokens)
    _, cache = am.layer_forward(c.aux, ar, w["layers"][0], h)
    return geo, Runner.of(ar, geo, len(c.ids), c.n_train), w, cache, h[::-1].copy()


def attention_descent(c: Case, ar: Arith) -> dict[str, Any]:
    """tint.attn_descent on the first layer: upstream dy -> stop-gradient dv -> (dx, new V prefix rows);
    and the prefix slots the built network's layers write."""
    geo, run, w, cache, dy = _layer_cache(c, ar)
    lw = w["layers"][0]
    dv, _ = run(attention_backward(ar, geo), dy, None, np.concatenate([cache["q"], cache["k"], cache["ln1"]], axis=1))
    _, v_rows = run(linear_backward_descent(ar, geo), dv, pack(ar, geo, lw["wv"], lw["bv"]), cache["ln1"])
    net = build_tint(c.aux, c.tint, ar)
    written = sorted({lay.prefix.split(".", 1)[-1] for lay in net.layers
                      if isinstance(lay, ModuleLayer) and lay.prefix_out and lay.prefix})
    return {"dy": dy, "cache": cache, "weights": lw, "new_v": unpack(geo, v_rows), "written_sets": written}


def ln_descent(c: Case, ar: Arith) -> dict[str, Any]:
    """tint.ln_descent: the LN backward || descent (bias only) on the first layer's ln1 set."""
    geo, run, w, cache, dy = _layer_cache(c, ar)
    lw = w["layers"][0]
    mem = np.concatenate([cache["a"], cache["h"]], axis=1)
    _, rows = run(linear_backward_descent(ar, geo, weights=False), dy, pack(ar, geo, diag_matrix(ar, lw["ln1_g"]),
                                                                               lw["ln1_b"]), mem)
    return {"dy": dy, "weights": lw, "new": unpack(geo, rows)}


def _run_network(c: Case, ar: Arith, convention: Any = "paper") -> tuple[Any, am.Weights, np.ndarray, np.ndarray]:
    w = am.init_weights(c.aux, ar, c.seed)
    net = build_tint(c.aux, c.tint, ar, convention=convention, wte=w["wte"], wpe=w["wpe"])
    x0 = input_embedding(net, w, c.tokens, c.n_train)
    return net, w, x0, forward(net, x0)


def activation_sets(c: Case, ar: Arith) -> dict[str, Any]:
    """tint.act_descent: the activation prefix slots before and after one forward of the network, and
    which layers write an activation slot."""
    net, _, x0, x = _run_network(c, ar)
    K = net.geo.K
    slots = [s for s in net.sets if net.set_kinds[s].startswith("act")]
    writers = [lay.prefix for lay in net.layers if isinstance(lay, ModuleLayer) and lay.prefix_out
               and lay.prefix in slots]
    return {"before": [x0[:K, net.slot(s)] for s in slots], "after": [x[:K, net.slot(s)] for s in slots],
            "writers": writers, "n_slots": len(slots)}


def mlp_split(c: Case, ar: Arith, convention: Any = "paper") -> dict[str, Any]:
    """tint.mlp_split on the first layer: the MLP as 4 sub-MLPs through one fc / act / proj module (each with
    its prefix set), summed; and the 4 output-bias shares after the proj backward || descent on an
    upstream gradient dy (the shares' sum is the step on b_proj)."""
    from attnsim.sim.tint.builder import backward_block, forward_block, prefix_sets

    geo, run, w, cache, dy = _layer_cache(c, ar)
    blk = forward_block(ar, geo)
    conv = Convention.named(convention)
    back = backward_block(ar, geo, bias_step=geo.eta if conv.bias_full_step else None)
    sets = prefix_sets(View(ar, geo, c.aux), w)[0]
    out, shares = None, []
    for k in range(N_SUB):
        u = run(blk.fc, cache["ln2"], sets[f"fc{k}"])[0]
        g = run(blk.act, u, sets[f"act{k}"])[0]
        y = run(blk.proj, g, sets[f"proj{k}"])[0]
        out = y if out is None else out + y
        shares.append(unpack(geo, run(back.proj, dy, sets[f"proj{k}"], g)[1])[1])
    return {"mlp": out, "cache": cache, "weights": w["layers"][0], "shares": shares, "dy": dy}


def loss_gradient(c: Case, ar: Arith) -> dict[str, Any]:
    """tint.loss_gradient: the network's gradient read-out alone, on the final LN output of the auxiliary model."""
    w = am.init_weights(c.aux, ar, c.seed)
    net = build_tint(c.aux, c.tint, ar, wte=w["wte"], wpe=w["wpe"])
    x = input_embedding(net, w, c.tokens, c.n_train)
    lay = next(lay for lay in net.layers if isinstance(lay, Readout) and lay.grad)
    final = am.forward(c.aux, ar, w, c.tokens)[2]["out"]
    x[net.geo.K:, net.reg(lay.src)] = final
    read_out(net, lay, x)
    return {"got": x[net.geo.K:, net.reg(lay.out)], "final": final, "wte": w["wte"],
            "positions": np.flatnonzero(am.train_positions(len(c.ids), c.n_train))}


def ln_map(ar: Arith, x: np.ndarray) -> np.ndarray:
    """The layer norm's normalisation x -> x_hat (eps inside sigma), the map whose Jacobian is symmetric."""
    return am.normalize(ar, x)[0]


def first_order_gradient(ar: Arith, f: Callable[[Arith, np.ndarray], np.ndarray], x: np.ndarray, dy: np.ndarray,
                         eps: Any) -> np.ndarray:
    """tint.def_2_7: the directional derivative J dy by a central difference of step ``eps`` (TinT's
    first-order gradient, standing for J^T dy when J is symmetric)."""
    return (f(ar, x + dy * eps) - f(ar, x - dy * eps)) / (2 * eps)


def dynamic_eval(c: Case, ar: Arith, convention: Any = "paper") -> dict[str, Any]:
    """tint.dynamic_eval: TinT's final logits (after ``steps`` simulated steps), its first logits and the
    auxiliary weights it started from."""
    net, w, _, x = _run_network(c, ar, convention)
    return {"logits": logits(net, x), "first": logits(net, x, first=True), "weights": w}
