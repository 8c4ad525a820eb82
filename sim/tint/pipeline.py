"""Run a built TinT on one sequence: tint.sgd_step end to end (Fig. 1).

:func:`run` returns the auxiliary weights TinT holds in its prefix rows after ``steps`` simulated SGD
steps on the training part, and the logits of the final forward pass. The sequence fed to every
module is [K prefix rows; n token rows]; positions are one-hot (token t -> e_t, prefix j -> e_{T+j}).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.builder import N_SUB, BackwardBlock, ForwardBlock, TinT, prefix_sets, weights_from_sets
from attnsim.sim.tint.configs import TinTConfigError
from attnsim.sim.tint.layers import Context
from attnsim.sim.tint.modules import Geometry, diag_matrix, pack


@dataclass
class Runner:
    """One sequence's rows, positions and masks, and the helper that runs a module on contents."""

    ar: Arith
    geo: Geometry
    ctx: Context
    n: int

    @staticmethod
    def of(ar: Arith, geo: Geometry, n: int, n_train: int, softmax_eps: Any = None) -> "Runner":
        """A runner for sequences of ``n`` tokens, ``n_train`` of them trained on."""
        K, N = geo.K, geo.K + n
        pos = np.zeros((N, geo.P), dtype=int)
        for j in range(K):
            pos[j, geo.T + j] = 1
        for i in range(n):
            pos[K + i, i] = 1
        is_train = np.zeros(N, dtype=bool)
        is_train[K:K + n_train] = True
        lin = np.tril(np.ones((N, N), dtype=bool)) | is_train[None, :]
        desc = np.broadcast_to(is_train[None, :], (N, N)).copy()
        tok = np.zeros((N, N), dtype=bool)
        tok[K:, K:] = np.tril(np.ones((n, n), dtype=bool))
        return Runner(ar, geo, Context(ar.array(pos), {"lin": lin, "desc": desc, "aux": tok}, softmax_eps), n)

    def rows(
        self, content: np.ndarray, prefix: np.ndarray | None = None, memory: np.ndarray | None = None
    ) -> np.ndarray:
        """TinT's input rows: prefix rows, token content, and memory in the tail coordinates."""
        geo = self.geo
        x = self.ar.zeros((geo.K + self.n, geo.H))
        if prefix is not None:
            x[:geo.K] = prefix
        x[geo.K:, :content.shape[1]] = content
        if memory is not None:
            x[geo.K:, geo.H - memory.shape[1]:] = memory
        return x

    def __call__(self, module: Any, content: np.ndarray, prefix: np.ndarray | None = None,
                 memory: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(token contents [0, D), prefix rows) after the module."""
        out = module(self.ar, self.rows(content, prefix, memory), self.ctx)
        K, D = self.geo.K, self.geo.D
        return out[K:, :D], out[:K]


def _ln_forward(run: Runner, mods: tuple, h: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hat, _ = run(mods[0], h, s)
    return run(mods[1], hat, s)[0], np.concatenate([hat, h], axis=1)


def forward_layer(run: Runner, b: ForwardBlock, s: dict, h: np.ndarray) -> tuple[np.ndarray, dict]:
    """tint.linear_forward / ln_forward / attn_forward / act_forward on one aux layer."""
    mem: dict[str, Any] = {}
    a, mem["ln1"] = _ln_forward(run, b.ln1, h, s["ln1"])
    q, k, v = (run(b.qkv, a, s[x])[0] for x in ("q", "k", "v"))
    o = run(b.softmax, np.concatenate([q, k, v], axis=1))[0]
    mem["attn"], mem["o"], mem["a"] = np.concatenate([q, k, a], axis=1), o, a
    h1 = h + run(b.o, o, s["o"])[0]
    m, mem["ln2"] = _ln_forward(run, b.ln2, h1, s["ln2"])
    mem["m"], mem["u"], mem["g"] = m, [], []
    f = None
    for i in range(N_SUB):
        u = run(b.fc, m, s[f"fc{i}"])[0]
        g = run(b.act, u, s[f"act{i}"])[0]
        y = run(b.proj, g, s[f"proj{i}"])[0]
        mem["u"].append(u)
        mem["g"].append(g)
        f = y if f is None else f + y
    return h1 + f, mem


def backward_layer(run: Runner, b: BackwardBlock, s: dict, mem: dict, dh: np.ndarray) -> tuple[np.ndarray, dict]:
    """tint.linear_backward+descent, act_backward, ln_backward+descent, attn_backward+descent."""
    new = dict(s)
    dm = None
    for i in range(N_SUB):
        dg, new[f"proj{i}"] = run(b.proj, dh, s[f"proj{i}"], mem["g"][i])
        du, _ = run(b.act, dg, s[f"act{i}"], mem["u"][i])
        dmi, new[f"fc{i}"] = run(b.fc, du, s[f"fc{i}"], mem["m"])
        dm = dmi if dm is None else dm + dmi
    dhat, new["ln2"] = run(b.ln2[0], dm, s["ln2"], mem["ln2"])
    dh1 = dh + run(b.ln2[1], dhat, new["ln2"], mem["ln2"])[0]
    do, new["o"] = run(b.o, dh1, s["o"], mem["o"])
    dv, _ = run(b.attn, do, None, mem["attn"])
    da, new["v"] = run(b.v, dv, s["v"], mem["a"])
    dahat, new["ln1"] = run(b.ln1[0], da, s["ln1"], mem["ln1"])
    return dh1 + run(b.ln1[1], dahat, new["ln1"], mem["ln1"])[0], new


@dataclass
class Result:
    """Result of a TinT run: updated weights and the logits of the first and final forward passes."""
    weights: am.Weights          # aux weights read back from the prefix sets after the last step
    logits: np.ndarray           # final forward pass with those weights
    first_logits: np.ndarray     # first forward pass (original weights)


def run(t: TinT, w: am.Weights, ids: np.ndarray, n_train: int, softmax_eps: Any = None) -> Result:
    """tint.sgd_step: TinT's forward -> gradient -> backward+descent -> forward, ``steps`` times."""
    ar, aux = t.ar, t.aux
    n, n_sim = len(ids), t.cfg.simulated(aux)
    if not 1 <= n <= aux.positions:
        raise TinTConfigError(f"{n} tokens, but the auxiliary model has {aux.positions} positions", param="ids")
    if not 2 <= n_train <= n:
        raise TinTConfigError(f"the training part needs 2..{n} tokens (one loss term at least), got {n_train}",
                              param="n_train")
    if t.cfg.steps and not t.backward_blocks:
        raise TinTConfigError("a TinT built for counting cannot run", param="count_only")
    start = aux.layers - n_sim
    r = Runner.of(ar, t.geo, n, n_train, softmax_eps)
    sets, lnf = prefix_sets(t, w), _lnf_set(t, w)
    h = am.embed(aux, w, ids)
    for i in range(start):
        h = forward_layer(r, t.forward_blocks[i], sets[i], h)[0]
    h_start, blocks = h, t.forward_blocks[start:]
    first_logits = None
    for step in range(t.cfg.steps):
        h, mems = h_start, []
        for i, b in enumerate(blocks):
            h, mem = forward_layer(r, b, sets[start + i], h)
            mems.append(mem)
        final, ln_mem = _ln_forward(r, t.grad.ln, h, lnf)
        logits = final @ w["wte"].T
        first_logits = logits if first_logits is None else first_logits
        dfinal = am.loss_gradient(ar, w, logits, ids, am.train_positions(n, n_train))
        dhat, lnf = r(t.grad.back[0], dfinal, lnf, ln_mem)
        dh = r(t.grad.back[1], dhat, lnf, ln_mem)[0]
        for i in reversed(range(n_sim)):
            dh, sets[start + i] = backward_layer(r, t.backward_blocks[step][i], sets[start + i], mems[i], dh)
        blocks = t.final_blocks[step]
    h = h_start
    for i, b in enumerate(blocks):
        h = forward_layer(r, b, sets[start + i], h)[0]
    logits = _ln_forward(r, t.grad.ln, h, lnf)[0] @ w["wte"].T
    return Result(weights_from_sets(t, w, sets, lnf), logits, first_logits)


def _lnf_set(t: TinT, w: am.Weights) -> np.ndarray:
    return pack(t.ar, t.geo, diag_matrix(t.ar, w["lnf_g"]), w["lnf_b"])
