"""The stream a TinT network reads and writes (tint.sgd_step; docs/tint_network.md): its input (prefix
embeddings = the auxiliary weights, Def 2.1; token and position embeddings; one-hot positions, Def 2.3;
the prefix mask; next-token targets and the loss mask) and what is read off it after the pass (the
updated weights, the logits)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.builder import _sets_of_layer, prefix_sets, weights_from_sets
from attnsim.sim.tint.configs import AuxConfig, TinTConfigError
from attnsim.sim.tint.modules import Geometry, diag_matrix, pack
from attnsim.sim.tint.network import Convention, Network


# ------------------------------------------------------------------------------------------ input
def loss_positions(n: int, n_train: int, convention: str | Convention = "paper") -> np.ndarray:
    """Positions whose loss gradient enters the step: t whose next token is a training token; under
    the authors' convention also the last position when the whole sequence is the training part."""
    pos = am.train_positions(n, n_train)
    if Convention.named(convention).last_position and n_train == n:
        pos = pos.copy()
        pos[n - 1] = True
    return pos


def input_embedding(net: Network, w: am.Weights, ids: np.ndarray, n_train: int) -> np.ndarray:
    """The stream TinT starts from: prefix embeddings = the auxiliary weights (Def 2.1), token rows =
    token + position embeddings, one-hot positions, the prefix mask, next-token targets, loss mask."""
    ar, geo, aux = net.ar, net.geo, net.aux
    n = len(ids)
    if not 1 <= n <= aux.positions:
        raise TinTConfigError(f"--ids: {n} tokens, but the auxiliary model has {aux.positions} positions")
    if not 2 <= n_train <= n:
        raise TinTConfigError(f"--n_train: the training part needs 2..{n} tokens (one loss term at least), "
                              f"got {n_train}")
    K = geo.K
    x = ar.zeros((K + n, net.width))
    for i, s in enumerate(prefix_sets_of(net, w)):
        for name, rows in s.items():
            x[:K, net.slot(name if name == "lnf" else f"{i}.{name}")] = rows
    pos = np.zeros((K + n, geo.P), dtype=int)
    pos[np.arange(K), geo.T + np.arange(K)] = 1
    pos[K + np.arange(n), np.arange(n)] = 1
    x[:, net.reg("pos")] = ar.array(pos)
    x[K:K + n_train, net.reg("train")] = ar.scalar(1)
    loss = loss_positions(n, n_train, net.convention)
    for t in range(n - 1):
        x[K + t, net.reg("target").start + int(ids[t + 1])] = ar.scalar(1) if loss[t] else ar.scalar(0)
    x[K:, net.reg("loss_mask")] = ar.array(loss.astype(int))[:, None]
    x[K:, net.reg("h0")] = am.embed(aux, w, ids)
    return x


def prefix_sets_of(net: Network, w: am.Weights) -> list[dict[str, np.ndarray]]:
    """The prefix sets of every layer, and ln_f's as the last entry ``{"lnf": rows}``."""
    lnf = pack(net.ar, net.geo, diag_matrix(net.ar, w["lnf_g"]), w["lnf_b"])
    return [*prefix_sets(_shim(net), w), {"lnf": lnf}]


@dataclass
class View:
    """What ``builder.prefix_sets`` / ``weights_from_sets`` read off a built TinT."""

    ar: Arith
    geo: Geometry
    aux: AuxConfig


def _shim(net: Network) -> View:
    return View(net.ar, net.geo, net.aux)


# ------------------------------------------------------------------------------------------ output
def logits(net: Network, x: np.ndarray, first: bool = False) -> np.ndarray:
    """The final (or, with ``first``, the first) forward pass's logits, read off the stream."""
    return x[net.geo.K:, net.reg("logits_first" if first else "logits")]


def updated_weights(net: Network, x: np.ndarray, base: am.Weights) -> am.Weights:
    """The auxiliary weights the prefix area holds (after the pass: the updated ones)."""
    K = net.geo.K
    sets = [{name: x[:K, net.slot(f"{i}.{name}")] for name in _sets_of_layer()} for i in range(net.aux.layers)]
    return weights_from_sets(_shim(net), base, sets, x[:K, net.slot("lnf")])
