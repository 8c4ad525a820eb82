"""TinT for a 2-layer MLP auxiliary model (no attention, no layer norm): tint.rebuttal_mlp_aux.

The reviewers asked whether TinT adapts to simple auxiliary models; the authors answered that the
modules compose according to the auxiliary architecture. This module does exactly that with the
existing modules of ``modules`` / ``modules_nonlinear``, unchanged:

    forward   u = W1 x + b1 (LinFwd), g = act(u) (ActFwd), y = W2 g + b2 (LinFwd)
    backward  dg = W2^T dy || descent of (W2, b2)  (LinBwd || LinDesc, one TinT layer)
              du = N (act(u + dg / N) - act(u))     (ActBwd, Def 2.8)
              W1^T du || descent of (W1, b1)        (LinBwd || LinDesc)

The auxiliary model is y_t = W2 act(W1 x_t + b1) + b2 per token (W1, W2 are D x D: the linear modules
simulate D x D layers), trained on the squared error 1/2 sum_{t < n_train} |y_t - target_t|^2. As in
the transformer pipeline, the loss gradient dy_t = y_t - target_t is computed outside TinT (§2.2,
approximation K in docs/reconstructions.md); every other operation runs through TinT's attention / MLP layers.

With ReLU the one-sided difference of ActBwd equals relu'(u) dg *exactly* unless a pre-activation lies
within |dg| / N of the kink (or on it); :func:`kink_margin_ok` says whether a run is clear of it, and
then TinT's step equals the *exact* gradient step bit for bit in exact numerics. With GELU the
reference takes the same one-sided difference (``act_fd``), as in tint.sgd_step.

Parameters are counted into a ledger (kind "param") with the builder's tags: LinFwd, ActFwd, LinBwd,
LinDesc, ActBwd, Prefix (the three prefix sets fc, act, proj of K x H; act's is all zero, as in the
transformer builder). Steps and reuse follow ``builder.build``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from attnsim.sim.ledger import Ledger
from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.configs import ACTIVATIONS, TINY, TinTConfigError
from attnsim.sim.tint.layers import Module, Parallel
from attnsim.sim.tint.modules import Geometry, linear_backward_descent, linear_forward, pack, unpack
from attnsim.sim.tint.modules_nonlinear import activation_backward, activation_forward
from attnsim.sim.tint.pipeline import Runner
from attnsim.sim.tint.relu_kink import relu_difference_exact

MLPWeights = dict[str, np.ndarray]  # w1, b1, w2, b2
SETS = ("fc", "act", "proj")


@dataclass(frozen=True)
class MLPConfig:
    """A 2-layer MLP aux model of width D on T token positions, and the TinT hyperparameters."""

    D: int = 8
    T: int = 6
    activation: str = "relu"
    K: int = 2
    H_sim: int = 10
    eta: Any = 0.25
    fd_scale: int = 1000
    steps: int = 1
    reuse_forward: bool = True
    reuse_backward: bool = True


def head_counts(D: int, K: int) -> list[int]:
    """The numbers of TinT heads H_sim the MLP auxiliary model can be built with (K dividing D): they split the
    width (D/K + 1) D into heads whose dimension divides D, so H_sim = (D/K + 1) D / h for each divisor h of D."""
    width = (D // K + 1) * D
    return sorted(width // h for h in range(1, D + 1) if D % h == 0)


def validate(cfg: MLPConfig) -> None:
    """Raise TinTConfigError naming the first parameter TinT cannot be built for."""
    if cfg.D < 1 or cfg.T < 1:
        raise TinTConfigError(f"must be >= 1, got D = {cfg.D}, T = {cfg.T}", param="D/T")
    if cfg.activation not in ACTIVATIONS:
        raise TinTConfigError(f"{cfg.activation!r} is not one of {', '.join(ACTIVATIONS)}", param="activation")
    if cfg.K < 1 or cfg.D % cfg.K:
        raise TinTConfigError(f"the number of prefixes K = {cfg.K} must divide D = {cfg.D}", param="K")
    if cfg.H_sim not in head_counts(cfg.D, cfg.K):
        raise TinTConfigError(f"must divide the width (D/K + 1) D = {(cfg.D // cfg.K + 1) * cfg.D} with head dim "
                              f"dividing D = {cfg.D}", param="H_sim")
    if cfg.steps < 1:
        raise TinTConfigError(f"SGD steps must be >= 1, got {cfg.steps}", param="steps")
    if cfg.fd_scale < 1:
        raise TinTConfigError(f"must be >= 1, got {cfg.fd_scale}", param="fd_scale")


def geometry(cfg: MLPConfig) -> Geometry:
    """TinT's geometry for the MLP auxiliary model (validated first)."""
    validate(cfg)
    return Geometry(cfg.D, cfg.K, cfg.T, cfg.H_sim, 1, cfg.activation, cfg.eta, cfg.fd_scale)


# ------------------------------------------------------------------------------------------ reference
def init_mlp(cfg: MLPConfig, ar: Arith, seed: int, n: int, grid: int = 64) -> tuple[MLPWeights, np.ndarray, np.ndarray]:
    """Weights, inputs x (n x D) and targets (n x D), all on the grid (1/grid) Z."""
    rng = np.random.default_rng(seed)
    draw = lambda *shape: ar.array(np.round(0.5 * rng.standard_normal(shape) * grid) / grid)  # noqa: E731
    D = cfg.D
    w = {"w1": draw(D, D), "b1": draw(D), "w2": draw(D, D), "b2": draw(D)}
    return w, draw(n, D), draw(n, D)


def mlp_forward(cfg: MLPConfig, ar: Arith, w: MLPWeights, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u, g, y) for every token."""
    u = x @ w["w1"].T + w["b1"]
    g = ar.activation(cfg.activation)(u)
    return u, g, g @ w["w2"].T + w["b2"]


def loss_gradient(ar: Arith, y: np.ndarray, target: np.ndarray, n_train: int) -> np.ndarray:
    """d(1/2 sum_{t < n_train} |y_t - target_t|^2) / dy (zero on the other tokens)."""
    mask = ar.array((np.arange(len(y)) < n_train).astype(int))[:, None]
    return (y - target) * mask


def mlp_gradients(cfg: MLPConfig, ar: Arith, w: MLPWeights, x: np.ndarray, target: np.ndarray, n_train: int,
                  act_fd: Any = None) -> MLPWeights:
    """Exact backprop (``act_fd`` None) or with TinT's one-sided activation difference of step act_fd."""
    u, g, y = mlp_forward(cfg, ar, w, x)
    dy = loss_gradient(ar, y, target, n_train)
    du = am.act_backward(replace(TINY, activation=cfg.activation), ar, u, dy @ w["w2"], act_fd)
    return {"w2": dy.T @ g, "b2": dy.sum(0), "w1": du.T @ x, "b1": du.sum(0)}


def mlp_sgd(cfg: MLPConfig, ar: Arith, w: MLPWeights, x: np.ndarray, target: np.ndarray, n_train: int,
            act_fd: Any = None) -> MLPWeights:
    """``cfg.steps`` reference SGD steps theta <- theta - eta grad."""
    eta = ar.scalar(cfg.eta)
    for _ in range(cfg.steps):
        gr = mlp_gradients(cfg, ar, w, x, target, n_train, act_fd)
        w = {k: w[k] - eta * gr[k] for k in w}
    return w


def kink_margin_ok(cfg: MLPConfig, ar: Arith, w: MLPWeights, x: np.ndarray, target: np.ndarray, n_train: int) -> bool:
    """ReLU: every step's u and u + dg/N lie strictly on the same side of 0 (so the difference is exact;
    the test is :func:`relu_kink.relu_difference_exact`, shared with tint.act_backward)."""
    eps = ar.scalar(1) / cfg.fd_scale
    for _ in range(cfg.steps):
        u, _, y = mlp_forward(cfg, ar, w, x)
        if not relu_difference_exact(ar, u, loss_gradient(ar, y, target, n_train) @ w["w2"], eps):
            return False
        w = mlp_sgd(replace(cfg, steps=1), ar, w, x, target, n_train)
    return True


# ------------------------------------------------------------------------------------------ TinT
@dataclass
class MLPForward:
    """The forward modules of the MLP: fc, activation, proj."""
    fc: Module
    act: Module
    proj: Module


@dataclass
class MLPBackward:
    """The backward-and-descent modules of the MLP."""
    proj: Parallel
    act: Module
    fc: Parallel


@dataclass
class MLPTinT:
    """TinT built for the MLP auxiliary model: config, geometry, arithmetic, modules and parameter ledger."""
    cfg: MLPConfig
    geo: Geometry
    ar: Arith
    first: MLPForward
    finals: list[MLPForward]      # per step: the forward pass after it
    backs: list[MLPBackward]      # per step
    ledger: Ledger = field(default_factory=Ledger)

    @property
    def n_params(self) -> int:
        """TinT's parameter count, read from its ledger."""
        return self.ledger.total("param")


def _forward_block(ar: Arith, geo: Geometry, led: Ledger) -> MLPForward:
    b = MLPForward(linear_forward(ar, geo), activation_forward(ar, geo), linear_forward(ar, geo))
    led.record("param", "LinFwd", amount=b.fc.n_params() + b.proj.n_params())
    led.record("param", "ActFwd", amount=b.act.n_params())
    return b


def _backward_block(ar: Arith, geo: Geometry, led: Ledger) -> MLPBackward:
    b = MLPBackward(linear_backward_descent(ar, geo), activation_backward(ar, geo), linear_backward_descent(ar, geo))
    for par in (b.proj, b.fc):
        led.record("param", "LinBwd", amount=par.branches[0].n_params())
        led.record("param", "LinDesc", amount=par.branches[1].n_params())
    led.record("param", "ActBwd", amount=b.act.n_params())
    return b


def build_mlp(cfg: MLPConfig, ar: Arith) -> MLPTinT:
    """Instantiate TinT for the MLP: forward copies and backward copies as the reuse flags say."""
    geo, led = geometry(cfg), Ledger()
    first = _forward_block(ar, geo, led)
    led.record("param", "Prefix", amount=len(SETS) * geo.K * geo.H)
    finals: list[MLPForward] = []
    backs: list[MLPBackward] = []
    for step in range(cfg.steps):
        finals.append(first if cfg.reuse_forward else _forward_block(ar, geo, led))
        backs.append(backs[0] if cfg.reuse_backward and step > 0 else _backward_block(ar, geo, led))
    return MLPTinT(cfg, geo, ar, first, finals, backs, led)


def mlp_prefix_sets(t: MLPTinT, w: MLPWeights) -> dict[str, np.ndarray]:
    """Pack the MLP's weights into prefix sets (the activation's set is all zero)."""
    return {"fc": pack(t.ar, t.geo, w["w1"], w["b1"]), "act": t.ar.zeros((t.geo.K, t.geo.H)),
            "proj": pack(t.ar, t.geo, w["w2"], w["b2"])}


@dataclass
class MLPResult:
    """Result of TinT's SGD steps on the MLP: updated weights and outputs before and after."""
    weights: MLPWeights       # read back from the prefix sets after the last step
    outputs: np.ndarray       # final forward pass (updated weights)
    first_outputs: np.ndarray


def _forward(
    r: Runner, b: MLPForward, s: dict[str, np.ndarray], x: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u = r(b.fc, x, s["fc"])[0]
    g = r(b.act, u, s["act"])[0]
    return u, g, r(b.proj, g, s["proj"])[0]


def run_mlp(t: MLPTinT, w: MLPWeights, x: np.ndarray, target: np.ndarray, n_train: int) -> MLPResult:
    """TinT's forward -> (loss gradient outside) -> backward + descent -> forward, ``steps`` times."""
    n = len(x)
    if not 1 <= n <= t.cfg.T:
        raise TinTConfigError(f"{n} tokens, but TinT was built for T = {t.cfg.T} positions", param="n")
    if not 1 <= n_train <= n:
        raise TinTConfigError(f"must be in 1..{n}, got {n_train}", param="n_train")
    r = Runner.of(t.ar, t.geo, n, n_train)
    s = mlp_prefix_sets(t, w)
    block, first_outputs = t.first, None
    for step in range(t.cfg.steps):
        u, g, y = _forward(r, block, s, x)
        first_outputs = y if first_outputs is None else first_outputs
        dy = loss_gradient(t.ar, y, target, n_train)
        back = t.backs[step]
        dg, s["proj"] = r(back.proj, dy, s["proj"], g)
        du, _ = r(back.act, dg, s["act"], u)
        _, s["fc"] = r(back.fc, du, s["fc"], x)
        block = t.finals[step]
    y = _forward(r, block, s, x)[2]
    (w1, b1), (w2, b2) = unpack(t.geo, s["fc"]), unpack(t.geo, s["proj"])
    return MLPResult({"w1": w1, "b1": b1, "w2": w2, "b2": b2}, y, first_outputs)
