"""The auxiliary model TinT fine-tunes: a pre-LN GPT-2/OPT-style decoder with hand-derived gradients.

Forward (the authors' code; docs/reconstructions.md): h <- h + O Attn(LN1 h); h <- h + MLP(LN2 h); logits = E
LN_f(h), tied embeddings E, causal softmax attention scaled by 1/sqrt(d_a), MLP width 4D with GELU-new or ReLU.
Loss: the *summed* next-token cross-entropy over the chosen positions (approximation I of §2.2 as
lettered in docs/reconstructions.md).

:func:`gradients` is the reference backward pass of tint.sgd_step. Its :class:`Approx` switches turn
on, one at a time, the approximations TinT makes (§2.2; letters as in docs/reconstructions.md): stop-gradient
through the attention scores (E), first-order finite differences for the LN and activation backward (D, Def 2.8), and
bias-only LN updates (G). With every switch off it is the exact gradient (checked against finite
differences in tests). :func:`sgd_step` updates the top ``n_sim`` layers and ln_f as TinT does
(embeddings frozen, design choice H).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.configs import AuxConfig

LN_EPS = 1e-5
Weights = dict[str, Any]
LAYER_KEYS = ("ln1_g", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo",
              "ln2_g", "ln2_b", "wfc", "bfc", "wproj", "bproj")


@dataclass(frozen=True)
class Approx:
    """Which of TinT's approximations the reference step applies (§2.2, lettered in docs/reconstructions.md)."""

    stop_grad: bool = False         # E: attention probabilities treated as constants (W_Q, W_K then get no gradient)
    ln_fd: Any = None               # D: LN backward by (f(x + eps g) - f(x)) / eps; None = exact Jacobian
    act_fd: Any = None              # D: activation backward by the same one-sided difference
    ln_bias_only: bool = False      # G: LN gamma is not updated
    bproj_steps: int = 1            # the MLP output bias takes this many steps (the authors' code: 4 shares x 1)

    @staticmethod
    def tint(eps: Any = 1e-3) -> "Approx":
        """TinT's defaults: stop-grad, FD with eps = 1/scale_embeddings for LN and activation, beta only."""
        return Approx(stop_grad=True, ln_fd=eps, act_fd=eps, ln_bias_only=True)


def init_weights(cfg: AuxConfig, ar: Arith, seed: int, grid: int = 64) -> Weights:
    """Random weights on the grid (1/grid) Z (small rationals keep exact runs fast). Matrices have standard
    deviation 0.5, scaled by sqrt(16/D) above D = 16 so that pre-activations stay of order 1 at wider widths."""
    rng = np.random.default_rng(seed)
    D = cfg.D
    matrix = 0.5 * min(1.0, (16 / D) ** 0.5)

    def draw(*shape: int, scale: float = matrix, center: float = 0.0) -> np.ndarray:
        return ar.array(np.round((center + scale * rng.standard_normal(shape)) * grid) / grid)

    layers = []
    for _ in range(cfg.layers):
        layers.append(
            {
                "ln1_g": draw(D, scale=0.25, center=1.0),
                "ln1_b": draw(D, scale=0.25),
                "wq": draw(D, D),
                "bq": draw(D, scale=0.25),
                "wk": draw(D, D),
                "bk": draw(D, scale=0.25),
                "wv": draw(D, D),
                "bv": draw(D, scale=0.25),
                "wo": draw(D, D),
                "bo": draw(D, scale=0.25),
                "ln2_g": draw(D, scale=0.25, center=1.0),
                "ln2_b": draw(D, scale=0.25),
                "wfc": draw(4 * D, D),
                "bfc": draw(4 * D, scale=0.25),
                "wproj": draw(D, 4 * D),
                "bproj": draw(D, scale=0.25),
            }
        )
    return {"wte": draw(cfg.vocab, D), "wpe": draw(cfg.positions, D, scale=0.25), "layers": layers,
            "lnf_g": draw(D, scale=0.25, center=1.0), "lnf_b": draw(D, scale=0.25)}


# ---------------------------------------------------------------------------------------------------
# primitives shared by the reference and by TinT's own layers (a TinT LN / softmax head is the same op)
# ---------------------------------------------------------------------------------------------------
def normalize(ar: Arith, x: np.ndarray, eps: Any = LN_EPS) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise (x - mean) / sqrt(var + eps) and sigma, for x of shape (n, D)."""
    D = x.shape[-1]
    inv_d = ar.scalar(1) / D
    mu = x.sum(axis=-1, keepdims=True) * inv_d
    c = x - mu
    var = (c * c).sum(axis=-1, keepdims=True) * inv_d
    sigma = ar.sqrt(var + ar.scalar(eps))
    return c / sigma, sigma


def softmax_rows(ar: Arith, scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Softmax over the allowed entries of each row; a row with nothing allowed is 0."""
    zero = ar.scalar(0)
    if ar.kind != "exact":
        big = np.where(allowed, scores, np.min(scores) if scores.size else zero)
        scores = scores - big.max(axis=-1, keepdims=True)
    w = np.where(allowed, ar.exp(np.where(allowed, scores, zero)), zero)
    den = w.sum(axis=-1, keepdims=True)
    den = np.where(den == zero, ar.scalar(1), den)
    return w / den


def causal(n: int) -> np.ndarray:
    """The n × n causal mask (True where a key is visible)."""
    return np.tril(np.ones((n, n), dtype=bool))


def attention_scale(ar: Arith, d_head: int) -> Any:
    """1/sqrt(d_a), from the arithmetic's sqrt oracle (rational when d_a is a square)."""
    return ar.scalar(1) / ar.sqrt(ar.array([d_head]))[0]


# ---------------------------------------------------------------------------------------------------
# forward with cache
# ---------------------------------------------------------------------------------------------------
def embed(cfg: AuxConfig, w: Weights, ids: np.ndarray) -> np.ndarray:
    """Token plus positional embeddings of ``ids``."""
    return w["wte"][ids] + w["wpe"][: len(ids)]


def layer_forward(cfg: AuxConfig, ar: Arith, lw: dict, h: np.ndarray) -> tuple[np.ndarray, dict]:
    """One pre-LN decoder layer; returns the output and what the backward pass needs."""
    n, H, da = h.shape[0], cfg.heads, cfg.d_head
    a, s1 = normalize(ar, h)
    ln1 = a * lw["ln1_g"] + lw["ln1_b"]
    q, k, v = (ln1 @ lw[m].T + lw[b] for m, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
    scale = attention_scale(ar, da)
    probs, o = [], ar.zeros((n, cfg.D))
    for hd in range(H):
        sl = slice(hd * da, (hd + 1) * da)
        p = softmax_rows(ar, (q[:, sl] @ k[:, sl].T) * scale, causal(n))
        probs.append(p)
        o[:, sl] = p @ v[:, sl]
    h1 = h + o @ lw["wo"].T + lw["bo"]
    m, s2 = normalize(ar, h1)
    ln2 = m * lw["ln2_g"] + lw["ln2_b"]
    u = ln2 @ lw["wfc"].T + lw["bfc"]
    g = ar.activation(cfg.activation)(u)
    out = h1 + g @ lw["wproj"].T + lw["bproj"]
    cache = dict(h=h, a=a, s1=s1, ln1=ln1, q=q, k=k, v=v, probs=probs, o=o, h1=h1, m=m, s2=s2, ln2=ln2, u=u, g=g)
    return out, cache


def forward(cfg: AuxConfig, ar: Arith, w: Weights, ids: np.ndarray, start: int = 0,
            h: np.ndarray | None = None) -> tuple[np.ndarray, list[dict], dict]:
    """Logits and caches. ``start``/``h`` re-run from layer ``start`` on a given hidden state."""
    h = embed(cfg, w, ids) if h is None else h
    caches = []
    for lw in w["layers"][start:]:
        h, c = layer_forward(cfg, ar, lw, h)
        caches.append(c)
    hf, sf = normalize(ar, h)
    final = hf * w["lnf_g"] + w["lnf_b"]
    return final @ w["wte"].T, caches, dict(h=h, hat=hf, sigma=sf, out=final)


def loss_gradient(ar: Arith, w: Weights, logits: np.ndarray, ids: np.ndarray,
                  positions: np.ndarray) -> np.ndarray:
    """d(sum of -log p(next token)) / d(ln_f output), zero outside ``positions`` (approximation K)."""
    n, V = logits.shape
    allowed = np.ones((n, V), dtype=bool)
    p = softmax_rows(ar, logits, allowed)
    target = ar.zeros((n, V))
    for t in range(n - 1):
        target[t, ids[t + 1]] = ar.scalar(1)
    dlog = (p - target) * ar.array(positions.astype(int))[:, None]
    return dlog @ w["wte"]


def summed_loss(ar: Arith, logits: np.ndarray, ids: np.ndarray, positions: np.ndarray) -> float:
    """Summed next-token cross-entropy at ``positions`` (as a float, for reports)."""
    lf = ar.to_float(logits)
    total = 0.0
    for t in np.flatnonzero(positions):
        row = lf[t] - lf[t].max()
        total += float(np.log(np.exp(row).sum()) - row[ids[t + 1]])
    return total


# ---------------------------------------------------------------------------------------------------
# backward
# ---------------------------------------------------------------------------------------------------
def ln_backward(ar: Arith, hat: np.ndarray, sigma: np.ndarray, x: np.ndarray, g: np.ndarray,
                dy: np.ndarray, fd: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx, dgamma, dbeta) of y = g * hat + b. ``fd`` = eps uses (hat(x + eps dhat) - hat(x)) / eps."""
    dhat = dy * g
    if fd is None:
        D = hat.shape[-1]
        inv_d = ar.scalar(1) / D
        dx = (dhat - dhat.sum(-1, keepdims=True) * inv_d - hat * (dhat * hat).sum(-1, keepdims=True) * inv_d) / sigma
    else:
        eps = ar.scalar(fd)
        dx = (normalize(ar, x + dhat * eps)[0] - hat) / eps
    return dx, (dy * hat).sum(0), dy.sum(0)


def act_backward(cfg: AuxConfig, ar: Arith, u: np.ndarray, dy: np.ndarray, fd: Any) -> np.ndarray:
    """The activation's backward: exact, or the first-order finite difference of Def 2.8 when ``fd`` is set."""
    act = ar.activation(cfg.activation)
    if fd is not None:
        eps = ar.scalar(fd)
        return (act(u + dy * eps) - act(u)) / eps
    if cfg.activation == "relu":
        return np.where(u > ar.scalar(0), dy, ar.scalar(0))
    c, a = ar.const_sqrt_2_over_pi(), ar.scalar(0.044715) if ar.kind != "exact" else ar.scalar(44715) / 10 ** 6
    half = ar.scalar(1) / 2
    t = ar.tanh(c * (u + a * u * u * u))
    return dy * (half * (1 + t) + half * u * (1 - t * t) * c * (1 + 3 * a * u * u))


def layer_backward(cfg: AuxConfig, ar: Arith, lw: dict, c: dict, dout: np.ndarray,
                   approx: Approx) -> tuple[np.ndarray, dict]:
    """Gradient w.r.t. the layer input and the layer's parameters (names as in LAYER_KEYS)."""
    grads: dict[str, np.ndarray] = {}
    # MLP branch
    grads["wproj"], grads["bproj"] = dout.T @ c["g"], dout.sum(0)
    du = act_backward(cfg, ar, c["u"], dout @ lw["wproj"], approx.act_fd)
    grads["wfc"], grads["bfc"] = du.T @ c["ln2"], du.sum(0)
    dx2, grads["ln2_g"], grads["ln2_b"] = ln_backward(
        ar, c["m"], c["s2"], c["h1"], lw["ln2_g"], du @ lw["wfc"], approx.ln_fd
    )
    dh1 = dout + dx2
    # attention branch
    grads["wo"], grads["bo"] = dh1.T @ c["o"], dh1.sum(0)
    do = dh1 @ lw["wo"]
    n, da = dout.shape[0], cfg.d_head
    dq, dk, dv = ar.zeros((n, cfg.D)), ar.zeros((n, cfg.D)), ar.zeros((n, cfg.D))
    scale = attention_scale(ar, da)
    for hd, p in enumerate(c["probs"]):
        sl = slice(hd * da, (hd + 1) * da)
        dv[:, sl] = p.T @ do[:, sl]
        if not approx.stop_grad:
            dp = do[:, sl] @ c["v"][:, sl].T
            ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
            dq[:, sl], dk[:, sl] = ds @ c["k"][:, sl], ds.T @ c["q"][:, sl]
    for name, d in (("q", dq), ("k", dk), ("v", dv)):
        grads["w" + name], grads["b" + name] = d.T @ c["ln1"], d.sum(0)
    dln1 = dq @ lw["wq"] + dk @ lw["wk"] + dv @ lw["wv"]
    dx1, grads["ln1_g"], grads["ln1_b"] = ln_backward(ar, c["a"], c["s1"], c["h"], lw["ln1_g"], dln1, approx.ln_fd)
    return dh1 + dx1, grads


BackwardObserver = Callable[[dict, dict, np.ndarray], None]
"""Called as (layer weights, layer cache, gradient at the layer's output) before each simulated layer's backward."""


def gradients(cfg: AuxConfig, ar: Arith, w: Weights, ids: np.ndarray, positions: np.ndarray,
              n_sim: int, approx: Approx = Approx(), observe: BackwardObserver | None = None) -> dict[str, Any]:
    """Gradients of the summed loss at ``positions`` for ln_f and the top ``n_sim`` layers (``observe``: see
    :data:`BackwardObserver`)."""
    start = cfg.layers - n_sim
    h = embed(cfg, w, ids)
    for lw in w["layers"][:start]:
        h = layer_forward(cfg, ar, lw, h)[0]
    logits, caches, fc = forward(cfg, ar, w, ids, start=start, h=h)
    dfinal = loss_gradient(ar, w, logits, ids, positions)
    dh, g_f, b_f = ln_backward(ar, fc["hat"], fc["sigma"], fc["h"], w["lnf_g"], dfinal, approx.ln_fd)
    out: dict[str, Any] = {"lnf_g": g_f, "lnf_b": b_f, "layers": {}}
    for i in reversed(range(n_sim)):
        if observe is not None:
            observe(w["layers"][start + i], caches[i], dh)
        dh, out["layers"][start + i] = layer_backward(cfg, ar, w["layers"][start + i], caches[i], dh, approx)
    return out


def sgd_step(cfg: AuxConfig, ar: Arith, w: Weights, ids: np.ndarray, positions: np.ndarray, lr: Any,
             n_sim: int, approx: Approx = Approx(), observe: BackwardObserver | None = None) -> Weights:
    """tint.sgd_step: theta - lr * (summed-loss gradient) on ln_f and the top n_sim layers (``observe``: see
    :data:`BackwardObserver`)."""
    g = gradients(cfg, ar, w, ids, positions, n_sim, approx, observe)
    eta = ar.scalar(lr)
    frozen_ln = ("ln1_g", "ln2_g") if approx.ln_bias_only else ()
    new = dict(w, layers=[dict(lw) for lw in w["layers"]])
    new["lnf_b"] = w["lnf_b"] - eta * g["lnf_b"]
    if not approx.ln_bias_only:
        new["lnf_g"] = w["lnf_g"] - eta * g["lnf_g"]
    for i, gl in g["layers"].items():
        for key in LAYER_KEYS:
            if key not in frozen_ln and not (approx.stop_grad and key in ("wq", "bq", "wk", "bk")):
                step = eta * approx.bproj_steps if key == "bproj" and approx.bproj_steps != 1 else eta
                new["layers"][i][key] = w["layers"][i][key] - step * gl[key]
    return new


def train_positions(n: int, n_train: int) -> np.ndarray:
    """Loss positions of the training part: t whose next token t+1 is a training token."""
    return np.arange(n) < n_train - 1


def test_positions(n: int, n_train: int) -> np.ndarray:
    """Positions scored after the update: t whose next token is a test token."""
    t = np.arange(n)
    return (t >= n_train - 1) & (t < n - 1)
