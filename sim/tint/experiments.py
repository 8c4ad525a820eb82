"""TinT against its reference, one approximation at a time (tint.sgd_step, §2.2).

Each function runs the construction and the reference SGD step of ``aux_model`` side by side and
returns plain numbers; ``attnsim.verify.claims.tint`` turns them into check records. Errors are the
largest absolute difference over the updated auxiliary weights; ``rel`` divides by the largest
entry of the exact SGD update, so 1e-3 means "0.1% of the step".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith, max_abs_diff
from attnsim.sim.tint.builder import N_SUB, build
from attnsim.sim.tint.cases import Case
from attnsim.sim.tint.configs import TinTConfigError
from attnsim.sim.tint.linear_attention import linear_head, softmax_simulation
from attnsim.sim.tint.modules import Geometry, diag_matrix, linear_backward_descent, linear_forward, pack
from attnsim.sim.tint.modules_nonlinear import (
    activation_backward,
    activation_forward,
    attention_backward,
    attention_softmax,
    ln_fd_backward,
    ln_normalise,
)
from attnsim.sim.tint.network import Convention, Network, build_tint, forward
from attnsim.sim.tint.network_io import input_embedding, loss_positions, updated_weights
from attnsim.sim.tint.network_io import logits as network_logits
from attnsim.sim.tint.network_size import NetworkSize
from attnsim.sim.tint.network_size import count as count_network
from attnsim.sim.tint.pipeline import Runner, run


def group_errors(got: am.Weights, want: am.Weights) -> dict[str, float]:
    """Largest |difference| per parameter group (a LAYER_KEYS name over all layers; ln_f apart)."""
    out = {key: max(max_abs_diff(g[key], w[key]) for g, w in zip(got["layers"], want["layers"]))
           for key in am.LAYER_KEYS}
    out["lnf_b"], out["lnf_g"] = max_abs_diff(got["lnf_b"], want["lnf_b"]), max_abs_diff(got["lnf_g"], want["lnf_g"])
    return out


def worst(errors: dict[str, float]) -> float:
    """The largest of a set of errors."""
    return max(errors.values())


def reference(c: Case, ar: Arith, w: am.Weights, approx: am.Approx, convention: str | Convention = "paper"
              ) -> am.Weights:
    """``steps`` reference SGD steps with the given approximations (and, under the authors' convention,
    their loss positions and 4x output-bias step; their attention-backward mask changes nothing here:
    the upstream gradient is 0 on test positions, docs/tint_reconciliation.md)."""
    positions = loss_positions(len(c.ids), c.n_train, convention)
    if Convention.named(convention).bias_full_step:
        approx = replace(approx, bproj_steps=N_SUB)
    for _ in range(c.tint.steps):
        w = am.sgd_step(c.aux, ar, w, c.tokens, positions, ar.scalar(c.tint.inner_lr), c.tint.simulated(c.aux), approx)
    return w


def fd_eps(ar: Arith, fd_scale: int) -> Any:
    """The finite-difference step 1/``fd_scale`` in this arithmetic."""
    return ar.scalar(1) / fd_scale


@dataclass
class StepRun:
    """One TinT run (one forward of the built network) and the reference step with the same approximations.

    ``pipeline_equal`` / ``pipeline_bits``: the network's updated weights and logits against the
    module-by-module pipeline (None when it was not run)."""

    net: Network
    size: NetworkSize
    weights: am.Weights
    got: am.Weights
    want: am.Weights
    errors: dict[str, float]
    exact_equal: bool           # every updated weight equal (exact numerics: bit for bit)
    logits_equal: bool          # the final forward pass's logits equal the aux model's with ``want``
    test_loss: dict[str, float]  # summed loss on the test part: before, after (TinT), after (reference)
    pipeline_equal: bool | None = None
    pipeline_bits: float | None = None
    logits: np.ndarray | None = None  # the network's final forward pass


def _versus_pipeline(c: Case, ar: Arith, w: am.Weights, got: am.Weights, logits: np.ndarray, fd_scale: int,
                     gate_scale: float | None, softmax_eps: Any) -> tuple[bool, float]:
    """The module-by-module pipeline on the same input: (equal, bits of agreement) with the network."""
    res = run(build(c.aux, c.tint, ar, fd_scale=fd_scale, gate_scale=gate_scale), w, c.tokens, c.n_train, softmax_eps)
    errs = group_errors(got, res.weights)
    errs["logits"] = max_abs_diff(logits, res.logits)
    equal = worst(errs) == 0.0 and all(ar.equal(g[k], h[k]) for g, h in zip(got["layers"], res.weights["layers"])
                                       for k in am.LAYER_KEYS) and ar.equal(logits, res.logits)
    scale = max(max_abs_diff(res.logits, 0 * res.logits), 1e-300)
    return equal, (float("inf") if worst(errs) == 0 else -float(np.log2(worst(errs) / scale)))


def sgd_step(c: Case, ar: Arith, fd_scale: int = 1000, gate_scale: float | None = None,
             softmax_eps: Any = None, convention: str | Convention = "paper", pipeline: bool = False) -> StepRun:
    """Run TinT's SGD step on case ``c`` as one forward of the built network, and the reference step;
    with ``pipeline`` also the module-by-module pipeline (paper convention only)."""
    w = am.init_weights(c.aux, ar, c.seed)
    net = build_tint(c.aux, c.tint, ar, fd_scale=fd_scale, gate_scale=gate_scale, convention=convention,
                     wte=w["wte"], wpe=w["wpe"])
    x = forward(net, input_embedding(net, w, c.tokens, c.n_train), softmax_eps)
    got, out_logits = updated_weights(net, x, w), network_logits(net, x)
    want = reference(c, ar, w, am.Approx.tint(fd_eps(ar, fd_scale)), convention)
    equal = all(ar.equal(g[k], h[k]) for g, h in zip(got["layers"], want["layers"]) for k in am.LAYER_KEYS) and \
        ar.equal(got["lnf_b"], want["lnf_b"]) and ar.equal(got["lnf_g"], want["lnf_g"])
    ref_logits = am.forward(c.aux, ar, want, c.tokens)[0]
    test = am.test_positions(len(c.ids), c.n_train)
    loss = {"before": am.summed_loss(ar, network_logits(net, x, first=True), c.tokens, test),
            "tint": am.summed_loss(ar, out_logits, c.tokens, test),
            "reference": am.summed_loss(ar, ref_logits, c.tokens, test)}
    r = StepRun(net, count_network(net), w, got, want, group_errors(got, want), equal,
                ar.equal(out_logits, ref_logits), loss, logits=out_logits)
    if pipeline and net.convention == Convention():
        r.pipeline_equal, r.pipeline_bits = _versus_pipeline(c, ar, w, got, out_logits, fd_scale, gate_scale,
                                                             softmax_eps)
    return r


def bproj_ratio(c: Case, ar: Arith, r: StepRun, fd_scale: int = 1000) -> dict[str, float]:
    """TinT's step on the MLP output bias over the paper's SGD step on it, entrywise (least, largest):
    1 under the paper's convention, 4 under the authors' (4 shares, each given the full step)."""
    sgd = reference(c, ar, r.weights, am.Approx.tint(fd_eps(ar, fd_scale)))
    ratios = []
    for g, s, w in zip(r.got["layers"], sgd["layers"], r.weights["layers"]):
        num, den = ar.to_float(g["bproj"] - w["bproj"]), ar.to_float(s["bproj"] - w["bproj"])
        ratios += [float(a / b) for a, b in zip(num, den) if b != 0]
    return {"least": min(ratios), "largest": max(ratios)} if ratios else {}


def update_scale(c: Case, ar: Arith, w: am.Weights) -> float:
    """Largest entry of the exact SGD update (no approximation)."""
    return worst(group_errors(reference(c, ar, w, am.Approx()), w))


def approximation_errors(c: Case, ar: Arith, fd_scale: int = 1000, gate_scale: float = 10.0,
                         softmax_eps: float = 1e-3) -> dict[str, dict[str, Any]]:
    """Each approximation's error alone, relative to the exact SGD update (§2.2: D, E, G, J, C as
lettered in docs/reconstructions.md).

    stop_grad and ln_bias_only are structural in TinT, so they are measured on the reference; the
    finite differences, the tanh gates and Thm 2.5 are measured on TinT itself against the reference
    step that has every *other* approximation TinT makes.
    """
    w = am.init_weights(c.aux, ar, c.seed)
    scale = update_scale(c, ar, w)
    eps = fd_eps(ar, fd_scale)
    tint_run = sgd_step(c, ar, fd_scale)
    base = am.Approx.tint(eps)
    pairs = {
        "stop_grad": (reference(c, ar, w, am.Approx(stop_grad=True)), reference(c, ar, w, am.Approx())),
        "ln_bias_only": (reference(c, ar, w, am.Approx(ln_bias_only=True)), reference(c, ar, w, am.Approx())),
        "ln_fd": (tint_run.got, reference(c, ar, w, replace(base, ln_fd=None))),
        "act_fd": (tint_run.got, reference(c, ar, w, replace(base, act_fd=None))),
        "gates": (sgd_step(c, ar, fd_scale, gate_scale=gate_scale).got, tint_run.want),
        "thm_2_5": (sgd_step(c, ar, fd_scale, softmax_eps=softmax_eps).got, tint_run.want),
    }
    out: dict[str, dict[str, Any]] = {}
    for name, (got, want) in pairs.items():
        groups = group_errors(got, want)
        err = worst(groups)
        out[name] = {"abs": err, "rel": err / scale, "worst_group": max(groups, key=groups.get),
                     "by_group": groups}
    return out


def stop_grad_bias(c: Case, ar: Arith) -> dict[str, float]:
    """Approximation E alone: the stop-gradient step against the exact step, absolute and relative."""
    w = am.init_weights(c.aux, ar, c.seed)
    err = worst(group_errors(reference(c, ar, w, am.Approx(stop_grad=True)), reference(c, ar, w, am.Approx())))
    return {"abs": err, "rel": err / update_scale(c, ar, w)}


def fd_sweep(c: Case, ar: Arith, which: str, scales: list[int]) -> list[float]:
    """TinT's error against the reference step whose ``which`` ("ln_fd" | "act_fd") backward is exact."""
    errs = []
    for n in scales:
        r = sgd_step(c, ar, n)
        want = reference(c, ar, r.weights, replace(am.Approx.tint(fd_eps(ar, n)), **{which: None}))
        errs.append(worst(group_errors(r.got, want)))
    return errs


def thm25_sweep(ar: Arith, eps_list: list[float], seed: int = 0, n: int = 6, dim: int = 3) -> list[float]:
    """tint.thm_2_5 standalone: max |softmax simulation - linear head| for each eps (causal mask)."""
    rng = np.random.default_rng(seed)
    q, k, v = (ar.array(np.round(rng.standard_normal((n, dim)) * 16) / 16) for _ in range(3))
    allowed = np.tril(np.ones((n, n), dtype=bool))
    exact = linear_head(q, k, v, allowed, ar.scalar(0))
    return [max_abs_diff(softmax_simulation(ar, q, k, v, allowed, e), exact) for e in eps_list]


def linear_inputs(ar: Arith, D: int, n: int, seed: int) -> tuple[np.ndarray, ...]:
    """(W, b, x, dy) of :func:`linear_module`: random rationals on the grid Z/8."""
    rng = np.random.default_rng(seed)
    draw = lambda *s: ar.array(np.round(rng.standard_normal(s) * 8) / 8)  # noqa: E731
    return draw(D, D), draw(D), draw(n, D), draw(n, D)


def linear_geometry(ar: Arith, D: int, K: int, n: int, eta: Any = 0.25) -> Geometry:
    """The geometry :func:`linear_module` builds its module for (one head, n positions)."""
    return Geometry(D, K, T=n, H_sim=1, aux_heads=1, activation="relu", eta=ar.scalar(eta))


def linear_module(ar: Arith, D: int, K: int, which: str, n: int = 5, n_train: int = 3,
                  seed: int = 0, eta: Any = 0.25) -> tuple[np.ndarray, np.ndarray, int]:
    """tint.linear_forward / linear_backward / linear_descent on random rationals.

    Returns (TinT's result, the direct math, the module's parameter count): W x + b on the token
    rows; W^T dy; or the prefix rows after descent against pack(W - eta sum dy x^T, b - eta sum dy).
    """
    if K < 1 or D % K:
        raise TinTConfigError(f"the number of prefixes K = {K} must divide D = {D}", param="K")
    geo = linear_geometry(ar, D, K, n, eta)
    W, b, x, dy = linear_inputs(ar, D, n, seed)
    r = Runner.of(ar, geo, n, n_train)
    if which == "forward":
        m = linear_forward(ar, geo)
        return r(m, x, pack(ar, geo, W, b))[0], x @ W.T + b, m.n_params()
    m = linear_backward_descent(ar, geo)
    dx, prefix = r(m, dy, pack(ar, geo, W, b), x)
    if which == "backward":
        return dx, dy @ W, m.branches[0].n_params()
    eta_s = ar.scalar(eta)
    tr = slice(0, n_train)
    want = pack(ar, geo, W - eta_s * (dy[tr].T @ x[tr]), b - eta_s * dy[tr].sum(0))
    return prefix, want, m.branches[1].n_params()


def module_inputs(ar: Arith, c: Case) -> dict[str, Any]:
    """What :func:`nonlinear_module` feeds the modules: the case's embedded tokens ``h``, a gradient-like input
    ``g`` (h reversed), the difference step ``eps``, the first layer's LN1 affine part, and its Qx, Kx, Vx."""
    geo = Geometry.of(c.aux, c.tint)
    w = am.init_weights(c.aux, ar, c.seed)
    h = am.embed(c.aux, w, c.tokens)
    lw = w["layers"][0]
    _, cache = am.layer_forward(c.aux, ar, lw, h)
    return {"h": h, "g": h[::-1].copy(), "eps": ar.scalar(1) / geo.fd_scale, "ln1_g": lw["ln1_g"],
            "ln1_b": lw["ln1_b"], "q": cache["q"], "k": cache["k"], "v": cache["v"], "ln1": cache["ln1"],
            "probs": cache["probs"], "o": cache["o"]}


def nonlinear_module(ar: Arith, c: Case, which: str) -> tuple[np.ndarray, np.ndarray]:
    """(TinT's result, the auxiliary model's own computation) for one module on the case's first layer.

    ``which``: "ln_forward" (normalise + LinFwd on diag gamma, beta), "attn_forward" (softmax module on
    [Qx, Kx, Vx]), "attn_backward" (stop-gradient dv), "act_forward", "act_backward" (Def 2.8),
    "ln_fd" (the LN finite difference of Def 2.8). Inputs: :func:`module_inputs`.
    """
    geo = Geometry.of(c.aux, c.tint)
    x = module_inputs(ar, c)
    h, g, eps = x["h"], x["g"], x["eps"]
    r = Runner.of(ar, geo, len(c.ids), c.n_train)
    act = ar.activation(c.aux.activation)
    if which == "ln_forward":
        s = pack(ar, geo, diag_matrix(ar, x["ln1_g"]), x["ln1_b"])
        return r(linear_forward(ar, geo), r(ln_normalise(ar, geo), h, s)[0], s)[0], x["ln1"]
    if which == "attn_forward":
        return r(attention_softmax(ar, geo), np.concatenate([x["q"], x["k"], x["v"]], axis=1))[0], x["o"]
    if which == "attn_backward":
        got = r(attention_backward(ar, geo), g, None, np.concatenate([x["q"], x["k"], x["ln1"]], axis=1))[0]
        da = c.aux.d_head
        return got, np.concatenate([p.T @ g[:, i * da:(i + 1) * da] for i, p in enumerate(x["probs"])], axis=1)
    if which == "act_forward":
        return r(activation_forward(ar, geo), h)[0], act(h)
    if which == "act_backward":
        return r(activation_backward(ar, geo), g, None, h)[0], (act(h + g * eps) - act(h)) / eps
    if which == "ln_fd":
        hat = am.normalize(ar, h)[0]
        got = r(ln_fd_backward(ar, geo), g, None, np.concatenate([hat, h], axis=1))[0]
        return got, (am.normalize(ar, h + g * eps)[0] - hat) / eps
    raise TinTConfigError(f"unknown module {which!r}", param="which")
