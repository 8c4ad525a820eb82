"""An independent reference for TinT: the auxiliary model written directly in torch, differentiated by autograd.

TinT (Panigrahi et al., ICML 2024, Fig. 1 and §2.7) claims that one forward pass of the simulator takes one
SGD step on its auxiliary model. This module computes that step with none of attnsim's model code: the
pre-LN decoder is written here in torch (``torch.nn.functional.layer_norm``, ``gelu``/``relu``, a causal
softmax, tied embeddings), in float64, and its gradient is taken by ``torch.autograd``. TinT's stated
approximations (§2.2) are imposed the way a torch user would impose them, never by a hand-written gradient:

* stop-gradient through the attention scores: the probabilities are ``detach()``-ed;
* first-order finite differences for the layer-norm and activation backward (Def 2.8): an
  ``autograd.Function`` whose backward returns (f(x + eps g) - f(x)) / eps;
* only beta of each layer norm is updated, W_Q and W_K never; only ln_f and the top ``n_sim`` layers move.

The loss is the summed next-token cross-entropy over the positions given (``torch.nn.functional.cross_entropy``
with ``reduction="sum"``). Weights come in and go out as float64 numpy arrays under the parameter names of the
auxiliary model (``wte``, ``wpe``, ``layers[i]["wq"]``, ...); tests trace that no attnsim construction code
runs while this module computes (tests/test_independence.py).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import numpy as np

# torch is an optional extra (pip install 'attnsim[torch]'), loaded by ``available`` or by the first call of a
# function that other modules call (``_with_torch``; the helpers they call find it loaded): every command loads
# this module with the registry of checkers, and importing torch took about 1.5 CPU s of every command that runs
# no TinT reference (``attnsim check two_heads.lemma_3_1``, ``attnsim claims``).
torch: Any = None
F: Any = None

REFERENCE = "torch autograd in float64 on the auxiliary model written directly in torch (attnsim.verify.tint_torch)"
MISSING = "torch is not installed (pip install 'attnsim[torch]'): no independent reference for this record, partial"
LN_EPS = 1e-5  # GPT-2 / OPT layer norm epsilon
FROZEN = ("wq", "bq", "wk", "bk")  # stop-gradient: the query and key maps are never updated (§2.6 (5))
GAMMAS = ("ln1_g", "ln2_g")


def available() -> bool:
    """Whether torch can be imported here (imported now, if it was not)."""
    global torch, F
    if torch is None:
        try:
            import torch as loaded
            import torch.nn.functional as functional
        except ImportError:  # pragma: no cover - exercised on machines without torch
            return False
        torch, F = loaded, functional
    return True


_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def _with_torch(fn: _Fn) -> _Fn:
    """``fn`` with torch loaded first; without torch, an ImportError that says how to install it."""
    @functools.wraps(fn)
    def loaded(*args: Any, **kwargs: Any) -> Any:
        if not available():
            raise ImportError(MISSING)
        return fn(*args, **kwargs)
    return loaded  # type: ignore[return-value]


@dataclass(frozen=True)
class StepSpec:
    """One simulated fine-tuning run: what TinT's step keeps and approximates (§2.2, §2.7)."""

    lr: float
    n_sim: int                   # top layers updated (with ln_f)
    steps: int = 1
    stop_grad: bool = True       # attention probabilities detached
    ln_fd: float | None = 1e-3   # finite-difference step of the layer norm's backward; None = exact autograd
    act_fd: float | None = 1e-3  # the same for the activation's backward
    ln_bias_only: bool = True    # layer-norm gammas frozen
    bproj_steps: int = 1         # the MLP output bias takes this many steps (the authors' code: 4)
    last_position: bool = False  # the last position (no next token) is trained on, with no target


def _t(x: Any) -> "torch.Tensor":
    return torch.as_tensor(np.asarray(x, dtype=np.float64))


def _fd_op(fn: Callable[["torch.Tensor"], "torch.Tensor"], eps: float | None) -> Callable[["torch.Tensor"], Any]:
    """``fn`` whose backward is the one-sided difference (fn(x + eps g) - fn(x)) / eps (Def 2.8); exact if None."""
    if eps is None:
        return fn

    class _FiniteDifference(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: "torch.Tensor") -> "torch.Tensor":
            ctx.save_for_backward(x)
            return fn(x)

        @staticmethod
        def backward(ctx: Any, g: "torch.Tensor") -> "torch.Tensor":
            (x,) = ctx.saved_tensors
            return (fn(x + eps * g) - fn(x)) / eps

    return _FiniteDifference.apply


def normalize(x: "torch.Tensor") -> "torch.Tensor":
    """Layer norm without its affine part."""
    return F.layer_norm(x, (x.shape[-1],), eps=LN_EPS)


def activation(name: str) -> Callable[["torch.Tensor"], "torch.Tensor"]:
    """GPT-2's tanh-approximated GELU or OPT's ReLU."""
    return (lambda x: F.gelu(x, approximate="tanh")) if name == "gelu_new" else torch.relu


def attention(q: "torch.Tensor", k: "torch.Tensor", v: "torch.Tensor", heads: int, stop_grad: bool) -> "torch.Tensor":
    """Causal multi-head softmax attention scaled by 1/sqrt(d_head); probabilities detached under stop-gradient."""
    n, D = q.shape
    dh = D // heads
    split = lambda x: x.reshape(n, heads, dh).transpose(0, 1)  # noqa: E731
    scores = split(q) @ split(k).transpose(1, 2) / math.sqrt(dh)
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    probs = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    if stop_grad:
        probs = probs.detach()
    return (probs @ split(v)).transpose(0, 1).reshape(n, D)


def _layer(p: dict, h: "torch.Tensor", heads: int, act: Callable, ln: Callable, stop_grad: bool) -> "torch.Tensor":
    a = ln(h) * p["ln1_g"] + p["ln1_b"]
    q, k, v = (a @ p[w].T + p[b] for w, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
    h = h + attention(q, k, v, heads, stop_grad) @ p["wo"].T + p["bo"]
    m = ln(h) * p["ln2_g"] + p["ln2_b"]
    return h + act(m @ p["wfc"].T + p["bfc"]) @ p["wproj"].T + p["bproj"]


def _logits(w: dict, layers: list[dict], h: "torch.Tensor", heads: int, act: Callable, ln: Callable,
            stop_grad: bool) -> "torch.Tensor":
    for p in layers:
        h = _layer(p, h, heads, act, ln, stop_grad)
    return (ln(h) * w["lnf_g"] + w["lnf_b"]) @ w["wte"].T


def _as_torch(w: dict) -> dict:
    out = {k: _t(v) for k, v in w.items() if k != "layers"}
    out["layers"] = [{k: _t(v) for k, v in lw.items()} for lw in w["layers"]]
    return out


def _as_numpy(w: dict) -> dict:
    out: dict[str, Any] = {k: v.detach().numpy().copy() for k, v in w.items() if k != "layers"}
    out["layers"] = [{k: v.detach().numpy().copy() for k, v in lw.items()} for lw in w["layers"]]
    return out


def _loss(logits: "torch.Tensor", ids: "torch.Tensor", positions: np.ndarray, last_position: bool) -> "torch.Tensor":
    n = logits.shape[0]
    pos = torch.as_tensor(np.flatnonzero(positions[: n - 1]))
    loss = F.cross_entropy(logits[pos], ids[pos + 1], reduction="sum")
    if last_position and positions[n - 1]:
        loss = loss + torch.logsumexp(logits[n - 1], dim=0)  # the authors' code: a zero target there
    return loss


@_with_torch
def forward_logits(w: dict, ids: np.ndarray, heads: int, act_name: str) -> np.ndarray:
    """The auxiliary model's logits for token ids ``ids`` (weights as float arrays)."""
    with torch.no_grad():
        tw = _as_torch(w)
        ids_t = torch.as_tensor(np.asarray(ids))
        h = tw["wte"][ids_t] + tw["wpe"][: len(ids_t)]
        return _logits(tw, tw["layers"], h, heads, activation(act_name), normalize, False).numpy()


@_with_torch
def sgd_steps(w: dict, ids: np.ndarray, positions: np.ndarray, heads: int, act_name: str, spec: StepSpec) -> dict:
    """``spec.steps`` steps of SGD on the summed loss at ``positions``, with TinT's approximations.

    The layers below the top ``n_sim`` are run once, without gradient (they are frozen, §2.7)."""
    tw = _as_torch(w)
    ids_t = torch.as_tensor(np.asarray(ids))
    act, ln = _fd_op(activation(act_name), spec.act_fd), _fd_op(normalize, spec.ln_fd)
    start = len(tw["layers"]) - spec.n_sim
    with torch.no_grad():
        h0 = tw["wte"][ids_t] + tw["wpe"][: len(ids_t)]
        for p in tw["layers"][:start]:
            h0 = _layer(p, h0, heads, act, ln, spec.stop_grad)
    trained = [(tw, "lnf_b")] + [(p, k) for p in tw["layers"][start:] for k in p
                                 if k not in FROZEN and not (spec.ln_bias_only and k in GAMMAS)]
    if not spec.ln_bias_only:
        trained.append((tw, "lnf_g"))
    for _ in range(spec.steps):
        for owner, key in trained:
            owner[key] = owner[key].detach().requires_grad_(True)
        logits = _logits(tw, tw["layers"][start:], h0, heads, act, ln, spec.stop_grad)
        grads = torch.autograd.grad(_loss(logits, ids_t, positions, spec.last_position),
                                    [owner[key] for owner, key in trained], allow_unused=True)
        with torch.no_grad():
            for (owner, key), g in zip(trained, grads):
                step = spec.lr * (spec.bproj_steps if key == "bproj" else 1)
                owner[key] = owner[key] - step * (torch.zeros_like(owner[key]) if g is None else g)
    return _as_numpy(tw)


# ---------------------------------------------------------------------------------------- single modules
def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """tint.ln_forward's reference: torch's layer norm with affine gamma, beta."""
    return F.layer_norm(_t(x), (x.shape[-1],), _t(gamma), _t(beta), eps=LN_EPS).numpy()


def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, heads: int) -> np.ndarray:
    """tint.attn_forward's reference: causal softmax attention of the auxiliary model."""
    with torch.no_grad():
        return attention(_t(q), _t(k), _t(v), heads, False).numpy()


def stop_grad_value_gradient(q: np.ndarray, k: np.ndarray, v: np.ndarray, heads: int, dy: np.ndarray) -> np.ndarray:
    """tint.attn_backward's reference: the gradient reaching V through detached probabilities."""
    vt = _t(v).requires_grad_(True)
    out = attention(_t(q), _t(k), vt, heads, True)
    return torch.autograd.grad(out, vt, _t(dy))[0].numpy()


def act(x: np.ndarray, name: str) -> np.ndarray:
    """tint.act_forward's reference."""
    return activation(name)(_t(x)).numpy()


def difference(fn_name: str, x: np.ndarray, g: np.ndarray, eps: float) -> np.ndarray:
    """Def 2.8 computed in torch: (f(x + eps g) - f(x)) / eps for f = layer norm ("ln") or an activation."""
    f = normalize if fn_name == "ln" else activation(fn_name)
    xt, gt = _t(x), _t(g)
    return ((f(xt + eps * gt) - f(xt)) / eps).numpy()


def vjp(fn_name: str, x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The exact gradient J^T g by autograd, for f = layer norm ("ln") or an activation: what Def 2.8 approximates."""
    f = normalize if fn_name == "ln" else activation(fn_name)
    xt = _t(x).requires_grad_(True)
    return torch.autograd.grad(f(xt), xt, _t(g))[0].numpy()


@_with_torch
def module(which: str, x: dict, heads: int, act_name: str) -> np.ndarray:
    """The reference output of one TinT module on the inputs ``x`` (``attnsim.sim.tint.experiments.module_inputs``
    names them): a layer norm with gamma, beta; causal attention; its stop-gradient value gradient; the
    activation; and Def 2.8's differences of the activation and of the layer norm."""
    f = {k: np.asarray(v, dtype=np.float64) if k != "eps" else float(v) for k, v in x.items() if k != "probs"}
    if which == "ln_forward":
        return layer_norm(f["h"], f["ln1_g"], f["ln1_b"])
    if which == "attn_forward":
        return causal_attention(f["q"], f["k"], f["v"], heads)
    if which == "attn_backward":
        return stop_grad_value_gradient(f["q"], f["k"], f["v"], heads, f["g"])
    if which == "act_forward":
        return act(f["h"], act_name)
    return difference("ln" if which == "ln_fd" else act_name, f["h"], f["g"], f["eps"])


@_with_torch
def linear(which: str, W: np.ndarray, b: np.ndarray, x: np.ndarray, dy: np.ndarray, n_train: int,
           eta: float) -> tuple[np.ndarray, ...]:
    """tint.linear_*'s reference by autograd: y = x W^T + b ("forward"); the gradient dy reaching x ("backward");
    one SGD step on W, b for the loss sum_{t < n_train} <y_t, dy_t> ("descent": (W', b'))."""
    Wt, bt, xt = _t(W).requires_grad_(True), _t(b).requires_grad_(True), _t(x).requires_grad_(True)
    y = F.linear(xt, Wt, bt)
    if which == "forward":
        return (y.detach().numpy(),)
    if which == "backward":
        return (torch.autograd.grad(y, xt, _t(dy))[0].numpy(),)
    gW, gb = torch.autograd.grad((y[:n_train] * _t(dy)[:n_train]).sum(), (Wt, bt))
    return (Wt - eta * gW).detach().numpy(), (bt - eta * gb).detach().numpy()


@_with_torch
def mlp_sgd(w: dict, x: np.ndarray, target: np.ndarray, n_train: int, act_name: str, act_fd: float | None,
            eta: float, steps: int) -> dict:
    """tint.rebuttal_mlp_aux's reference: ``steps`` SGD steps on the 2-layer MLP y = W2 act(W1 x + b1) + b2 for the
    loss 1/2 sum_{t < n_train} |y_t - target_t|^2, by autograd (the activation's backward by Def 2.8's difference
    when ``act_fd`` is set)."""
    act = _fd_op(activation(act_name), act_fd)
    p = {k: _t(v) for k, v in w.items()}
    xt, tt = _t(x), _t(target)
    for _ in range(steps):
        p = {k: v.detach().requires_grad_(True) for k, v in p.items()}
        y = F.linear(act(F.linear(xt, p["w1"], p["b1"])), p["w2"], p["b2"])
        loss = 0.5 * ((y[:n_train] - tt[:n_train]) ** 2).sum()
        grads = torch.autograd.grad(loss, list(p.values()))
        p = {k: (v - eta * g).detach() for (k, v), g in zip(p.items(), grads)}
    return {k: v.numpy() for k, v in p.items()}
