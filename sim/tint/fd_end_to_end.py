"""Finite differences end to end vs TinT's per-layer first-order scheme (tint.rebuttal_fd_end_to_end).

A reviewer asked why TinT uses finite differences only inside a layer (Def 2.8) and not for the whole
model, i.e. back-propagation replaced by forward passes. The authors answered that the variance of a
finite-difference gradient estimate grows in proportion to the number of parameters. This module
measures three gradient estimates of the 2-layer MLP of ``mlp_aux`` (GELU, squared loss, float64)
against its exact gradient g:

* ``coordinate`` – perturb each parameter in turn: g_i ~ (L(theta + eps e_i) - L(theta)) / eps.
  n_params + 1 forward passes, deterministic (no variance), bias O(eps).
* ``spsa``       – random directions, one-sided, as in MeZO / SPSA: g ~ (L(theta + eps z) - L(theta)) / eps * z
  with z ~ N(0, I) over all parameters, one direction per estimate (2 forward passes per estimate;
  the base value L(theta) is computed once and shared by the samples). Unbiased as eps -> 0, but E|g_hat - g|^2 =
  (n_params + 1) |g|^2.
* ``tint``       – TinT's scheme: exact backprop through the linear layers, the activation's backward
  by the one-sided difference of step eps (tint.act_backward). Deterministic, bias O(eps).

Statistics are over ``samples`` direction seeds, drawn from their own stream of ``seed``
(:func:`directions`); the model and data are fixed by ``seed``.
Figures are relative to |g|: ``bias`` = |mean - g| / |g|,
``variance`` = trace of the covariance over the samples / |g|^2 (per single estimate),
``noise_floor`` = sqrt(variance / samples), the error a zero-bias mean of that many samples still has.
Forward passes are counted in a ledger (kind "forward", tag per estimator).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnsim.sim.ledger import Ledger
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.configs import TinTConfigError
from attnsim.sim.tint.mlp_aux import MLPConfig, MLPWeights, init_mlp, mlp_gradients

KEYS = ("w1", "b1", "w2", "b2")
ESTIMATORS = ("coordinate", "spsa", "tint")


@dataclass(frozen=True)
class Problem:
    """A tiny MLP, its data and its exact gradient (float64)."""

    cfg: MLPConfig
    w: MLPWeights
    x: np.ndarray
    target: np.ndarray
    n_train: int

    @property
    def theta(self) -> np.ndarray:
        """All parameters as one flat vector."""
        return np.concatenate([np.asarray(self.w[k], dtype=float).reshape(-1) for k in KEYS])

    @property
    def n_params(self) -> int:
        """Number of parameters."""
        return int(self.theta.size)

    def loss(self, theta: np.ndarray, led: Ledger, tag: str) -> np.ndarray:
        """The loss at each row of ``theta`` (one forward pass each, batched), or at a single theta."""
        thetas = np.atleast_2d(theta)
        led.record("forward", tag, amount=len(thetas))
        ar = get_arith("float64")
        parts, i = {}, 0
        for k in KEYS:
            size = self.w[k].size
            parts[k] = thetas[:, i:i + size].reshape((len(thetas),) + self.w[k].shape)
            i += size
        u = np.einsum("td,bed->bte", self.x, parts["w1"]) + parts["b1"][:, None, :]
        y = np.einsum("btd,bed->bte", ar.activation(self.cfg.activation)(u), parts["w2"]) + parts["b2"][:, None, :]
        diff = (y - self.target)[:, :self.n_train]
        out = 0.5 * (diff * diff).sum(axis=(1, 2))
        return out if np.ndim(theta) == 2 else out[0]

    def flat(self, grads: MLPWeights) -> np.ndarray:
        """Gradients flattened in the order of :attr:`theta`."""
        return np.concatenate([np.asarray(grads[k], dtype=float).reshape(-1) for k in KEYS])

    def gradient(self, act_fd: float | None = None) -> np.ndarray:
        """The exact gradient, or TinT's per-layer first-order one when ``act_fd`` is set."""
        ar = get_arith("float64")
        return self.flat(mlp_gradients(self.cfg, ar, self.w, self.x, self.target, self.n_train, act_fd))


def problem(D: int, seed: int, n: int = 6, n_train: int = 4) -> Problem:
    """A width-``D`` MLP regression problem with ``n`` tokens, ``n_train`` of them trained on."""
    if D < 1:
        raise TinTConfigError(f"the model width must be >= 1, got {D}", param="D")
    cfg = MLPConfig(D=D, T=n, activation="gelu_new", K=1, H_sim=1)
    w, x, target = init_mlp(cfg, get_arith("float64"), seed, n)
    return Problem(cfg, w, x, target, n_train)


@dataclass(frozen=True)
class Row:
    """One estimator at one step size: cost in forward passes, bias and spread against the true gradient."""
    estimator: str
    eps: float
    forward_passes: int      # per estimate
    bias: float              # |mean - g| / |g|
    variance: float          # tr Cov / |g|^2 per estimate
    noise_floor: float       # sqrt(variance / samples)


def coordinate(p: Problem, eps: float, led: Ledger) -> np.ndarray:
    """The one-sided coordinate-wise finite-difference gradient with step ``eps``."""
    theta = p.theta
    base = p.loss(theta, led, "coordinate")
    return (p.loss(theta + eps * np.eye(theta.size), led, "coordinate") - base) / eps


def spsa(p: Problem, eps: float, samples: int, rng: np.random.Generator, led: Ledger) -> np.ndarray:
    """``samples`` independent one-direction estimates (rows); L(theta) is evaluated once and shared."""
    theta = p.theta
    z = rng.standard_normal((samples, theta.size))
    base = p.loss(theta, led, "spsa")
    return ((p.loss(theta + eps * z, led, "spsa") - base) / eps)[:, None] * z


def _row(name: str, eps: float, passes: int, est: np.ndarray, g: np.ndarray) -> Row:
    est = np.atleast_2d(est)
    gn2 = float(g @ g)
    mean = est.mean(0)
    var = float(((est - mean) ** 2).sum(1).mean()) / gn2 if len(est) > 1 else 0.0
    return Row(name, eps, passes, float(np.linalg.norm(mean - g)) / np.sqrt(gn2), var, float(np.sqrt(var / len(est))))


def directions(seed: int) -> np.random.Generator:
    """The generator of the random directions: a stream of ``seed`` apart from the model's (``init_mlp`` draws
    the weights from ``default_rng(seed)``; the same generator here made the first direction a multiple of the
    weights, correlated with the gradient)."""
    return np.random.default_rng([seed, 1])


def compare(p: Problem, eps_list: list[float], samples: int, seed: int) -> tuple[list[Row], Ledger]:
    """One row per (estimator, eps)."""
    if samples < 2:
        raise TinTConfigError(f"need >= 2 random directions for a variance, got {samples}", param="samples")
    if not eps_list or min(eps_list) <= 0:
        raise TinTConfigError(f"every step must be > 0, got {eps_list}", param="eps")
    g = p.gradient()
    rng = directions(seed)
    led = Ledger()
    rows = []
    for eps in eps_list:
        rows.append(_row("coordinate", eps, p.n_params + 1, coordinate(p, eps, led), g))
        rows.append(_row("spsa", eps, 2, spsa(p, eps, samples, rng, led), g))
        rows.append(_row("tint", eps, 1, p.gradient(act_fd=eps), g))
    return rows, led


def variance_by_width(widths: list[int], eps: float, samples: int, seed: int) -> list[tuple[int, int, float]]:
    """(width, n_params, SPSA relative variance per estimate) for each width."""
    out = []
    for D in widths:
        p = problem(D, seed)
        g = p.gradient()
        row = _row("spsa", eps, 2, spsa(p, eps, samples, directions(seed), Ledger()), g)
        out.append((D, p.n_params, row.variance))
    return out

