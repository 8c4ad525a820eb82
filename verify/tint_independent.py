"""TinT's SGD step held against references that share no code with it (Fig. 1, §2.7; Def 3.1).

Float numerics (float64, mp): :mod:`attnsim.verify.tint_torch`, the auxiliary model written in torch and
differentiated by autograd in float64. Exact numerics: :mod:`attnsim.verify.tint_tape`, the model written again
over rationals and differentiated by a tape. Without torch, a float record has no independent reference: it
says so (``partial``) and does not pass.

The loss positions are defined here from the step's statement, not read from the construction: position t
is trained on when its next token is a training token (t < n_train - 1); under the authors' convention the
last position too when the whole sequence is the training part (docs/tint_reconciliation.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint.arith import Arith, bits_of_agreement
from attnsim.sim.tint.cases import Case
from attnsim.verify import tint_tape, tint_torch

AUTHORS_BPROJ_STEPS = 4  # the authors' code: 4 shares of b_proj, each given the full step


@dataclass
class Verdict:
    """The step against its independent reference: evidence, error (bits), what differed."""

    evidence: str
    reference: str | None
    equal: bool                  # exact: every updated weight and final logit equal
    bits: float                  # the lesser of the weights' and the final logits' bits of agreement
    step_bits: float | None      # the weights' worst error in bits of the largest entry of the update itself
    want: dict | None            # the reference's updated weights (arithmetic arrays; floats for torch)
    partial: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def loss_positions(n: int, n_train: int, authors: bool) -> np.ndarray:
    """Positions whose next-token loss the step trains on."""
    pos = np.arange(n) < n_train - 1
    if authors and n_train == n:
        pos[n - 1] = True
    return pos


def _compare(got: dict, want: dict, start: dict, got_logits: np.ndarray, want_logits: np.ndarray
             ) -> tuple[float, float, float]:
    """Over float arrays: bits of the updated weights (worst error over the largest weight), the same error in
    bits of the largest update entry, and bits of the final logits (worst error over the largest logit)."""
    g, w, s = _arrays(got), _arrays(want), _arrays(start)
    err = max(float(np.max(np.abs(a - b))) for a, b in zip(g, w))
    scale = max(float(np.max(np.abs(b))) for b in w)
    step = max(float(np.max(np.abs(b - c))) for b, c in zip(w, s))
    logit_err = float(np.max(np.abs(got_logits - want_logits)))
    return (bits_of_agreement(err, scale), bits_of_agreement(err, step),
            bits_of_agreement(logit_err, float(np.max(np.abs(want_logits)))))


def _floats(ar: Arith, w: dict) -> dict:
    out = {k: ar.to_float(v) for k, v in w.items() if k != "layers"}
    out["layers"] = [{k: ar.to_float(v) for k, v in lw.items()} for lw in w["layers"]]
    return out


def reference_step(c: Case, ar: Arith, start: dict, fd_scale: int, authors: bool
                   ) -> tuple[dict, np.ndarray, str] | None:
    """The independent reference's updated weights and final logits from ``start`` and its name; None without
    torch outside exact arithmetic. Exact: arithmetic arrays; otherwise float64 arrays."""
    n_sim, steps = c.tint.simulated(c.aux), c.tint.steps
    pos = loss_positions(len(c.ids), c.n_train, authors)
    bproj = AUTHORS_BPROJ_STEPS if authors else 1
    if ar.kind == "exact":
        eps = ar.scalar(1) / fd_scale
        want = tint_tape.sgd_steps(ar, start, c.tokens, pos, c.aux.heads, c.aux.activation, ar.scalar(c.tint.inner_lr),
                                   n_sim, steps, eps, bproj, authors)
        return want, tint_tape.forward_logits(ar, want, c.tokens, c.aux.heads, c.aux.activation, eps), \
            tint_tape.REFERENCE
    if not tint_torch.available():
        return None
    spec = tint_torch.StepSpec(lr=c.tint.inner_lr, n_sim=n_sim, steps=steps, ln_fd=1.0 / fd_scale,
                               act_fd=1.0 / fd_scale, bproj_steps=bproj, last_position=authors)
    want = tint_torch.sgd_steps(_floats(ar, start), c.tokens, pos, c.aux.heads, c.aux.activation, spec)
    return want, tint_torch.forward_logits(want, c.tokens, c.aux.heads, c.aux.activation), tint_torch.REFERENCE


def step_against_reference(c: Case, ar: Arith, start: dict, got: dict, got_logits: np.ndarray, fd_scale: int,
                           authors: bool) -> Verdict:
    """TinT's updated weights ``got`` and final logits against the independent reference step from ``start``."""
    ref = reference_step(c, ar, start, fd_scale, authors)
    if ref is None:
        return Verdict("self-consistency", None, False, float("nan"), None, None, partial=tint_torch.MISSING)
    want, logits, name = ref
    exact = ar.kind == "exact"
    equal = exact and all(ar.equal(a, b) for a, b in zip(_arrays(got), _arrays(want))) and ar.equal(got_logits, logits)
    bits, step_bits, logit_bits = _compare(_floats(ar, got), _floats(ar, want) if exact else want, _floats(ar, start),
                                           ar.to_float(got_logits), ar.to_float(logits) if exact else logits)
    return Verdict("independent", name, equal or bits == logit_bits == float("inf"), min(bits, logit_bits),
                   step_bits, want, extra={"weight_bits": bits, "logit_bits": logit_bits})


def _arrays(w: dict) -> list[np.ndarray]:
    return [w[k] for k in sorted(w) if k != "layers"] + [lw[k] for lw in w["layers"] for k in sorted(lw)]



def module_against_reference(ar: Arith, c: Case, which: str, got: np.ndarray, inputs: dict) -> Verdict:
    """One TinT module's output against its reference on the same inputs: torch in float, the tape in exact."""
    heads, act = c.aux.heads, c.aux.activation
    if ar.kind == "exact":
        want = tint_tape.module(ar, which, inputs, heads, act)
        err = float(np.max(np.abs(ar.to_float(got - want))))
        return Verdict("independent", tint_tape.REFERENCE, ar.equal(got, want),
                       bits_of_agreement(err, float(np.max(np.abs(ar.to_float(want))))), None, None)
    if not tint_torch.available():
        return Verdict("self-consistency", None, False, float("nan"), None, None, partial=tint_torch.MISSING)
    want = tint_torch.module(which, _float_inputs(ar, inputs), heads, act)
    err = float(np.max(np.abs(ar.to_float(got) - want)))
    return Verdict("independent", tint_torch.REFERENCE, err == 0.0, bits_of_agreement(err, float(np.max(np.abs(want)))),
                   None, None)


def _float_inputs(ar: Arith, inputs: dict) -> dict:
    return {k: (float(ar.to_float(np.array([v]))[0]) if k == "eps" else ar.to_float(v))
            for k, v in inputs.items() if k != "probs"}


def fd_sweep(c: Case, ar: Arith, which: str, scales: list[int]) -> tuple[list[float], list[float]]:
    """Def 2.8 in TinT's step, for N in ``scales`` (eps = 1/N): (the error against the torch step whose ``which``
    backward ("ln_fd" | "act_fd") is exact autograd, TinT's bits against the torch step that differences as TinT
    does). The first should fall like eps (a second view); the second is the independent comparison."""
    errors, bits = [], []
    pos = loss_positions(len(c.ids), c.n_train, False)
    for n in scales:
        r = ex.sgd_step(c, ar, n)
        start, got = _floats(ar, r.weights), _floats(ar, r.got)
        spec = tint_torch.StepSpec(lr=c.tint.inner_lr, n_sim=c.tint.simulated(c.aux), steps=c.tint.steps,
                                   ln_fd=1.0 / n, act_fd=1.0 / n)
        same = tint_torch.sgd_steps(start, c.tokens, pos, c.aux.heads, c.aux.activation, spec)
        exact = tint_torch.sgd_steps(start, c.tokens, pos, c.aux.heads, c.aux.activation,
                                     replace(spec, **{which: None}))
        b, _, _ = _compare(got, same, start, np.zeros(1), np.ones(1))
        bits.append(b)
        errors.append(max(float(np.max(np.abs(a - e))) for a, e in zip(_arrays(got), _arrays(exact))))
    return errors, bits
