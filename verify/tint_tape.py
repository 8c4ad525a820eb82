"""A second independent reference for TinT's SGD step, exact: reverse-mode differentiation by a small tape.

torch (:mod:`attnsim.verify.tint_torch`) cannot compute in rationals, so in exact numerics TinT's step
(Fig. 1, §2.7) is checked against this route instead: the auxiliary model's forward pass is written here once
more, over the arithmetic's own scalars, as a program of array operations (matmul, sums, products, column
slices), and its gradient is taken by replaying that program backwards through each operation's generic
vector-Jacobian product. No layer's gradient is derived by hand. TinT's approximations enter as they do in
torch: attention probabilities are constants (stop-gradient), and the layer norm's and the activation's
backward are the one-sided differences of Def 2.8, (f(x + eps g) - f(x)) / eps.

The non-rational primitives (exp, sqrt, the activations) are the arithmetic's own oracles
(``attnsim.sim.tint.arith``), which construction and reference share as their numerics; with them every
other operation is exact, so the comparison is equality.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from attnsim.sim.tint.arith import Arith

REFERENCE = ("reverse-mode differentiation by a tape over exact rationals, of the auxiliary model written "
             "again in attnsim.verify.tint_tape")
LN_EPS = 1e-5
FROZEN = ("wq", "bq", "wk", "bk")
GAMMAS = ("ln1_g", "ln2_g")


class Node:
    """A value on the tape, the operations it came from and the gradient gathered for it."""

    __slots__ = ("value", "parents", "grad", "index")

    def __init__(self, tape: "Tape", value: Any, parents: tuple = ()) -> None:
        """A node holding ``value``; ``parents`` pairs each input node with its vector-Jacobian product."""
        self.value, self.parents, self.grad, self.index = value, parents, None, len(tape.nodes)
        tape.nodes.append(self)


def _unbroadcast(g: np.ndarray, shape: tuple) -> np.ndarray:
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


class Tape:
    """Records array operations; :meth:`backward` returns d(root)/d(node) for the nodes asked for."""

    def __init__(self) -> None:
        """An empty tape."""
        self.nodes: list[Node] = []

    def leaf(self, value: Any) -> Node:
        """An input (a weight or a constant)."""
        return Node(self, value)

    def add(self, a: Node, b: Node) -> Node:
        """a + b, broadcasting."""
        return Node(self, a.value + b.value, ((a, lambda g: _unbroadcast(g, a.value.shape)),
                                              (b, lambda g: _unbroadcast(g, b.value.shape))))

    def mul(self, a: Node, b: Node) -> Node:
        """a * b entrywise, broadcasting."""
        return Node(self, a.value * b.value, ((a, lambda g: _unbroadcast(g * b.value, a.value.shape)),
                                              (b, lambda g: _unbroadcast(g * a.value, b.value.shape))))

    def matmul(self, a: Node, b: Node) -> Node:
        """a @ b."""
        return Node(self, a.value @ b.value, ((a, lambda g: g @ b.value.T), (b, lambda g: a.value.T @ g)))

    def transpose(self, a: Node) -> Node:
        """a^T."""
        return Node(self, a.value.T, ((a, lambda g: g.T),))

    def columns(self, a: Node, lo: int, hi: int, zero: Any) -> Node:
        """Columns lo..hi-1 of a."""
        def back(g: np.ndarray) -> np.ndarray:
            full = np.full(a.value.shape, zero, dtype=a.value.dtype)
            full[:, lo:hi] = g
            return full
        return Node(self, a.value[:, lo:hi], ((a, back),))

    def hcat(self, parts: list[Node]) -> Node:
        """The parts side by side (columns)."""
        edges, lo = [], 0
        for p in parts:
            hi = lo + p.value.shape[1]
            edges.append((p, lambda g, lo=lo, hi=hi: g[:, lo:hi]))
            lo = hi
        return Node(self, np.concatenate([p.value for p in parts], axis=1), tuple(edges))

    def custom(self, a: Node, value: Any, vjp: Callable[[Any], Any]) -> Node:
        """A function of a with a given value and vector-Jacobian product (Def 2.8's differences, the loss)."""
        return Node(self, value, ((a, vjp),))

    def backward(self, root: Node, seed: Any) -> None:
        """Gather d(root)/d(node) * seed into every node's ``grad``, in reverse order of recording."""
        root.grad = seed
        for node in reversed(self.nodes[: root.index + 1]):
            if node.grad is None:
                continue
            for parent, vjp in node.parents:
                g = vjp(node.grad)
                parent.grad = g if parent.grad is None else parent.grad + g


class _Model:
    """The pre-LN decoder (GPT-2 / OPT style) on a tape, in one arithmetic."""

    def __init__(self, ar: Arith, heads: int, act_name: str, eps: Any) -> None:
        self.ar, self.heads, self.eps = ar, heads, eps
        self.act = ar.activation(act_name)
        self.zero = ar.scalar(0)

    def normalize(self, x: np.ndarray) -> np.ndarray:
        ar, D = self.ar, x.shape[-1]
        c = x - x.sum(axis=-1, keepdims=True) / ar.scalar(D)
        sigma = ar.sqrt((c * c).sum(axis=-1, keepdims=True) / ar.scalar(D) + ar.scalar(LN_EPS))
        return c / sigma

    def _difference(self, t: Tape, x: Node, f: Callable[[np.ndarray], np.ndarray]) -> Node:
        value, eps = f(x.value), self.eps
        return t.custom(x, value, lambda g: (f(x.value + g * eps) - value) / eps)

    def softmax(self, s: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        ar = self.ar
        if ar.kind != "exact":  # shift by the row maximum outside exact arithmetic (overflow)
            s = s - np.where(allowed, s, s.min()).max(axis=-1, keepdims=True)
        w = np.where(allowed, ar.exp(np.where(allowed, s, self.zero)), self.zero)
        return w / w.sum(axis=-1, keepdims=True)

    def layer(self, t: Tape, p: dict, h: Node) -> Node:
        ar = self.ar
        a = t.add(t.mul(self._difference(t, h, self.normalize), p["ln1_g"]), p["ln1_b"])
        q, k, v = (t.add(t.matmul(a, t.transpose(p[w])), p[b]) for w, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
        n, D = h.value.shape
        dh = D // self.heads
        scale = ar.scalar(1) / ar.sqrt(ar.array([dh]))[0]
        causal = np.tril(np.ones((n, n), dtype=bool))
        outs = []
        for i in range(self.heads):
            lo, hi = i * dh, (i + 1) * dh
            probs = self.softmax(q.value[:, lo:hi] @ k.value[:, lo:hi].T * scale, causal)  # a constant: stop-grad
            outs.append(t.matmul(t.leaf(probs), t.columns(v, lo, hi, self.zero)))
        h = t.add(t.add(h, t.matmul(t.hcat(outs), t.transpose(p["wo"]))), p["bo"])
        m = t.add(t.mul(self._difference(t, h, self.normalize), p["ln2_g"]), p["ln2_b"])
        u = t.add(t.matmul(m, t.transpose(p["wfc"])), p["bfc"])
        return t.add(t.add(h, t.matmul(self._difference(t, u, self.act), t.transpose(p["wproj"]))), p["bproj"])

    def logits(self, t: Tape, w: dict, layers: list[dict], h: Node) -> Node:
        for p in layers:
            h = self.layer(t, p, h)
        final = t.add(t.mul(self._difference(t, h, self.normalize), w["lnf_g"]), w["lnf_b"])
        return t.matmul(final, t.transpose(w["wte"]))

    def loss(self, t: Tape, logits: Node, ids: np.ndarray, positions: np.ndarray, last_position: bool) -> Node:
        """The summed cross-entropy's node; its value is not needed, only d(loss)/d(logits) = p - target."""
        ar = self.ar
        n, V = logits.value.shape
        p = self.softmax(logits.value, np.ones((n, V), dtype=bool))
        target = np.full((n, V), self.zero, dtype=object if ar.kind != "float64" else float)
        for i in range(n - 1):
            target[i, ids[i + 1]] = ar.scalar(1)
        on = np.array([bool(positions[i]) and (i < n - 1 or last_position) for i in range(n)])
        weight = ar.array(on.astype(int))[:, None]
        return t.custom(logits, None, lambda g: g * (p - target) * weight)


def _leaves(t: Tape, w: dict) -> dict:
    out: dict[str, Any] = {k: t.leaf(v) for k, v in w.items() if k != "layers"}
    out["layers"] = [{k: t.leaf(v) for k, v in lw.items()} for lw in w["layers"]]
    return out


def sgd_steps(ar: Arith, w: dict, ids: np.ndarray, positions: np.ndarray, heads: int, act_name: str, lr: Any,
              n_sim: int, steps: int, eps: Any, bproj_steps: int = 1, last_position: bool = False) -> dict:
    """TinT's reference step, ``steps`` times: SGD on the summed loss at ``positions``, stop-gradient through
    the attention scores, Def 2.8 differences of step ``eps`` for layer norm and activation, only the betas of
    the layer norms and never W_Q, W_K updated, the top ``n_sim`` layers and ln_f only."""
    model = _Model(ar, heads, act_name, eps)
    w = dict(w, layers=[dict(lw) for lw in w["layers"]])
    start = len(w["layers"]) - n_sim
    t0 = Tape()
    h0 = w["wte"][np.asarray(ids)] + w["wpe"][: len(ids)]
    for p in w["layers"][:start]:
        h0 = model.layer(t0, _leaves(t0, {"layers": [p]})["layers"][0], t0.leaf(h0)).value
    for _ in range(steps):
        t = Tape()
        nodes = _leaves(t, w)
        logits = model.logits(t, nodes, nodes["layers"][start:], t.leaf(h0))
        t.backward(model.loss(t, logits, ids, positions, last_position), ar.scalar(1))
        new = dict(w, layers=[dict(lw) for lw in w["layers"]])
        new["lnf_b"] = w["lnf_b"] - ar.scalar(lr) * nodes["lnf_b"].grad
        for i in range(start, len(w["layers"])):
            for key, node in nodes["layers"][i].items():
                if key in FROZEN or key in GAMMAS:
                    continue
                step = ar.scalar(lr) * (bproj_steps if key == "bproj" else 1)
                new["layers"][i][key] = w["layers"][i][key] - step * node.grad
        w = new
    return w


def forward_logits(ar: Arith, w: dict, ids: np.ndarray, heads: int, act_name: str, eps: Any) -> np.ndarray:
    """The auxiliary model's logits (the forward values of the same program)."""
    t = Tape()
    nodes = _leaves(t, w)
    h0 = t.leaf(w["wte"][np.asarray(ids)] + w["wpe"][: len(ids)])
    return _Model(ar, heads, act_name, eps).logits(t, nodes, nodes["layers"], h0).value


def module(ar: Arith, which: str, x: dict, heads: int, act_name: str) -> np.ndarray:
    """The exact reference output of one TinT module, from the model's own operations here (see
    :func:`attnsim.verify.tint_torch.module` for the list)."""
    model = _Model(ar, heads, act_name, x["eps"])
    h, g, eps = x["h"], x["g"], x["eps"]
    if which == "ln_forward":
        return model.normalize(h) * x["ln1_g"] + x["ln1_b"]
    if which in ("attn_forward", "attn_backward"):
        n, D = x["q"].shape
        dh = D // heads
        scale = ar.scalar(1) / ar.sqrt(ar.array([dh]))[0]
        causal = np.tril(np.ones((n, n), dtype=bool))
        out = []
        for i in range(heads):
            lo, hi = i * dh, (i + 1) * dh
            p = model.softmax(x["q"][:, lo:hi] @ x["k"][:, lo:hi].T * scale, causal)
            out.append(p @ x["v"][:, lo:hi] if which == "attn_forward" else p.T @ g[:, lo:hi])
        return np.concatenate(out, axis=1)
    if which == "act_forward":
        return model.act(h)
    f = model.normalize if which == "ln_fd" else model.act
    return (f(h + g * eps) - f(h)) / eps


def mlp_sgd(ar: Arith, w: dict, x: np.ndarray, target: np.ndarray, n_train: int, act_name: str, act_fd: Any,
            eta: Any, steps: int) -> dict:
    """tint.rebuttal_mlp_aux's exact reference: SGD on the 2-layer MLP's loss 1/2 sum_{t < n_train} |y - target|^2
    by the tape; the activation's backward is Def 2.8's difference, or (``act_fd`` None, ReLU) its derivative."""
    act = ar.activation(act_name)
    zero = ar.scalar(0)
    mask = ar.array((np.arange(len(x)) < n_train).astype(int))[:, None]
    for _ in range(steps):
        t = Tape()
        p = {k: t.leaf(v) for k, v in w.items()}
        u = t.add(t.matmul(t.leaf(x), t.transpose(p["w1"])), p["b1"])
        if act_fd is None:
            g = t.custom(u, act(u.value), lambda d, u=u: np.where(u.value > zero, d, zero))
        else:
            g = t.custom(u, act(u.value), lambda d, u=u: (act(u.value + d * act_fd) - act(u.value)) / act_fd)
        y = t.add(t.matmul(g, t.transpose(p["w2"])), p["b2"])
        loss = t.custom(y, None, lambda d, y=y: d * (y.value - target) * mask)
        t.backward(loss, ar.scalar(1))
        w = {k: w[k] - ar.scalar(eta) * p[k].grad for k in w}
    return w
