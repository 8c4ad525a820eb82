"""Assemble TinT for an auxiliary config and run it: forward -> loss gradient -> backward + descent ->
forward with the updated weights, for one or more SGD steps (tint.sgd_step, Fig. 1).

The modules are the attention / MLP layers of ``modules`` and ``modules_nonlinear``. Between modules
the builder does what the authors' code does in Python (docs/reconstructions.md): it loads the relevant prefix set
into the K prefix rows, writes the forward pass's memory back into the tail of the token rows before
a backward module, adds residuals, concatenates Q/K/V for the softmax module, sums the 4 sub-MLPs,
and computes the loss gradient with the exact softmax outside TinT (approximation K).

Parameters are counted into a :class:`~attnsim.sim.ledger.Ledger` (kind "param") with one tag per
module type (the code's names): LinFwd, LinBwd, LinDesc, LNFwd, LNBwdDesc, AttnFwd, AttnBwdDesc,
ActFwd, ActBwd, Prefix, Grad, Emb. Shared modules are counted once, per-layer copies each time, as
``torch``'s parameter list does (docs/reconstructions.md, Table 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnsim.sim.ledger import Ledger
from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.configs import AuxConfig, TinTConfig, check
from attnsim.sim.tint.layers import Module, Parallel
from attnsim.sim.tint.modules import Geometry, diag_matrix, linear_backward_descent, linear_forward, pack, unpack
from attnsim.sim.tint.modules_nonlinear import (
    activation_backward,
    activation_forward,
    attention_backward,
    attention_softmax,
    ln_fd_backward,
    ln_normalise,
)

N_SUB = 4  # sub-MLPs of width D (the MLP of width 4D, shared as in §2.7)


def _sets_of_layer() -> list[str]:
    subs = [f"{kind}{k}" for k in range(N_SUB) for kind in ("fc", "act", "proj")]
    return ["ln1", "q", "k", "v", "o", "ln2"] + subs  # 18 prefix sets (docs/reconstructions.md)


@dataclass
class ForwardBlock:
    """The TinT modules of one auxiliary layer's forward pass."""
    ln1: tuple[Module, Module]
    qkv: Module
    softmax: Module
    o: Module
    ln2: tuple[Module, Module]
    fc: Module
    act: Module
    proj: Module


@dataclass
class BackwardBlock:
    """The TinT modules of one auxiliary layer's backward pass and descent."""
    proj: Parallel
    act: Module
    fc: Parallel
    ln2: tuple[Parallel, Module]
    o: Parallel
    attn: Module
    v: Parallel
    ln1: tuple[Parallel, Module]


@dataclass
class GradBlock:
    """The modules of the final layer norm's forward and backward."""
    ln: tuple[Module, Module]
    back: tuple[Parallel, Module]


def forward_block(ar: Arith, geo: Geometry) -> ForwardBlock:
    """Build the forward modules of one auxiliary layer."""
    return ForwardBlock((ln_normalise(ar, geo), linear_forward(ar, geo)), linear_forward(ar, geo),
                        attention_softmax(ar, geo), linear_forward(ar, geo),
                        (ln_normalise(ar, geo), linear_forward(ar, geo)), linear_forward(ar, geo),
                        activation_forward(ar, geo), linear_forward(ar, geo))


def backward_block(ar: Arith, geo: Geometry, bias_step: Any = None, attn_post_mask: str | None = None
                   ) -> BackwardBlock:
    """Build the backward-and-descent modules of one auxiliary layer.

    Each sub-MLP holds b_proj / 4, so by default its bias share takes a quarter step and the four
    shares sum to one SGD step; ``bias_step`` = eta is the authors' code's full step per share, and
    ``attn_post_mask`` their attention-backward mask (docs/tint_reconciliation.md)."""
    ln = lambda: (linear_backward_descent(ar, geo, weights=False), ln_fd_backward(ar, geo))  # noqa: E731
    share = ar.scalar(geo.eta) / N_SUB if bias_step is None else ar.scalar(bias_step)
    return BackwardBlock(linear_backward_descent(ar, geo, bias_step=share), activation_backward(ar, geo),
                         linear_backward_descent(ar, geo), ln(), linear_backward_descent(ar, geo),
                         attention_backward(ar, geo, attn_post_mask), linear_backward_descent(ar, geo), ln())


def _count_forward(led: Ledger, b: ForwardBlock) -> None:
    led.record(
        "param", "LNFwd", amount=b.ln1[0].n_params() + b.ln1[1].n_params() + b.ln2[0].n_params() + b.ln2[1].n_params()
    )
    led.record("param", "AttnFwd", amount=b.qkv.n_params() + b.softmax.n_params())
    led.record("param", "LinFwd", amount=b.o.n_params() + b.fc.n_params() + b.proj.n_params())
    led.record("param", "ActFwd", amount=b.act.n_params())


def _count_backward(led: Ledger, b: BackwardBlock) -> None:
    for par in (b.proj, b.fc, b.o):
        led.record("param", "LinBwd", amount=par.branches[0].n_params())
        led.record("param", "LinDesc", amount=par.branches[1].n_params())
    led.record("param", "ActBwd", amount=b.act.n_params())
    led.record("param", "LNBwdDesc", amount=sum(m.n_params() for m in (*b.ln1, *b.ln2)))
    led.record("param", "AttnBwdDesc", amount=b.attn.n_params() + b.v.n_params())


@dataclass
class TinT:
    """A built TinT: modules, prefix sets (the aux weights) and the parameter ledger."""

    aux: AuxConfig
    cfg: TinTConfig
    geo: Geometry
    ar: Arith
    forward_blocks: list[ForwardBlock]
    final_blocks: list[list[ForwardBlock]]  # per SGD step, per simulated layer
    backward_blocks: list[list[BackwardBlock]]
    grad: GradBlock
    ledger: Ledger = field(default_factory=Ledger)

    @property
    def n_params(self) -> int:
        """TinT's parameter count, read from its ledger."""
        return self.ledger.total("param")


def build(aux: AuxConfig, cfg: TinTConfig, ar: Arith, fd_scale: int = 1000, gate_scale: float | None = None,
          count_only: bool = False) -> TinT:
    """Instantiate every module the configuration calls for (copies per layer, reuse as configured).

    ``count_only`` builds each block type once and records its parameters once per copy the
    configuration calls for (the copies are identical by construction); the result cannot run.
    Use it with ``get_arith("count")`` for the published configurations.
    """
    check(aux, cfg)
    geo = Geometry.of(aux, cfg, fd_scale, gate_scale)
    n_sim, led = cfg.simulated(aux), Ledger()
    one_fwd = forward_block(ar, geo) if count_only else None
    one_bwd = backward_block(ar, geo) if count_only else None
    new_fwd = lambda: one_fwd or forward_block(ar, geo)  # noqa: E731
    new_bwd = lambda: one_bwd or backward_block(ar, geo)  # noqa: E731
    fwd = [new_fwd() for _ in range(aux.layers)]
    for b in fwd:
        _count_forward(led, b)
        led.record("param", "Prefix", amount=len(_sets_of_layer()) * geo.K * geo.H)
    top = fwd[aux.layers - n_sim:]
    finals: list[list[ForwardBlock]] = []
    backs: list[list[BackwardBlock]] = []
    for step in range(cfg.steps):
        if cfg.reuse_forward:
            finals.append(top)
        else:
            finals.append([new_fwd() for _ in range(n_sim)])
            for b in finals[-1]:
                _count_forward(led, b)
        if cfg.reuse_backward and step > 0:
            backs.append(backs[0])
        else:
            backs.append([new_bwd() for _ in range(n_sim)])
            for bb in backs[-1]:
                _count_backward(led, bb)
    grad = GradBlock((ln_normalise(ar, geo), linear_forward(ar, geo)),
                     (linear_backward_descent(ar, geo, weights=False), ln_fd_backward(ar, geo)))
    led.record("param", "Grad", amount=sum(m.n_params() for m in (*grad.ln, *grad.back)) + geo.K * geo.H)
    led.record("param", "Emb", amount=(aux.vocab + aux.pos_rows) * aux.D)
    if count_only:
        fwd, finals, backs = [], [], []
    return TinT(aux, cfg, geo, ar, fwd, finals, backs, grad, led)


# ---------------------------------------------------------------------------------------------------
# prefix sets <-> aux weights
# ---------------------------------------------------------------------------------------------------
def prefix_sets(t: TinT, w: am.Weights) -> list[dict[str, np.ndarray]]:
    """Pack every auxiliary weight into its prefix sets (Def 2.1), one dict per layer."""
    ar, geo, D = t.ar, t.geo, t.aux.D
    out = []
    for lw in w["layers"]:
        s = {
            "ln1": pack(ar, geo, diag_matrix(ar, lw["ln1_g"]), lw["ln1_b"]),
            "ln2": pack(ar, geo, diag_matrix(ar, lw["ln2_g"]), lw["ln2_b"]),
        }
        for name in ("q", "k", "v", "o"):
            s[name] = pack(ar, geo, lw["w" + name], lw["b" + name])
        for k in range(N_SUB):
            sl = slice(k * D, (k + 1) * D)
            s[f"fc{k}"] = pack(ar, geo, lw["wfc"][sl], lw["bfc"][sl])
            s[f"act{k}"] = ar.zeros((geo.K, geo.H))  # all-zero, as in the authors' code
            s[f"proj{k}"] = pack(ar, geo, lw["wproj"][:, sl], lw["bproj"] / N_SUB)
        out.append(s)
    return out


def weights_from_sets(t: TinT, base: am.Weights, sets: list[dict[str, np.ndarray]], lnf: np.ndarray) -> am.Weights:
    """Read the auxiliary weights back out of the prefix sets."""
    geo = t.geo
    new = dict(base, layers=[])
    for s in sets:
        lw: dict[str, np.ndarray] = {}
        for ln in ("ln1", "ln2"):
            W, b = unpack(geo, s[ln])
            lw[ln + "_g"], lw[ln + "_b"] = np.diagonal(W).copy(), b
        for name in ("q", "k", "v", "o"):
            lw["w" + name], lw["b" + name] = unpack(geo, s[name])
        fcs = [unpack(geo, s[f"fc{k}"]) for k in range(N_SUB)]
        projs = [unpack(geo, s[f"proj{k}"]) for k in range(N_SUB)]
        lw["wfc"], lw["bfc"] = np.concatenate([f[0] for f in fcs]), np.concatenate([f[1] for f in fcs])
        lw["wproj"], lw["bproj"] = (
            np.concatenate([p[0] for p in projs], axis=1),
            sum(p[1] for p in projs[1:]) + projs[0][1],
        )
        new["layers"].append(lw)
    W, b = unpack(geo, lnf)
    new["lnf_g"], new["lnf_b"] = np.diagonal(W).copy(), b
    return new
