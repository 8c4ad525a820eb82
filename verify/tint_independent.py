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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

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


def step_against_reference(c: Case, ar: Arith, start: dict, got: dict, got_logits: np.ndarray, fd_scale: int,
                           authors: bool) -> Verdict:
    """TinT's updated weights ``got`` and final logits against the independent reference step from ``start``."""
    n_sim, steps = c.tint.simulated(c.aux), c.tint.steps
    pos = loss_positions(len(c.ids), c.n_train, authors)
    bproj = AUTHORS_BPROJ_STEPS if authors else 1
    if ar.kind == "exact":
        eps = ar.scalar(1) / fd_scale
        want = tint_tape.sgd_steps(ar, start, c.tokens, pos, c.aux.heads, c.aux.activation, ar.scalar(c.tint.inner_lr),
                                   n_sim, steps, eps, bproj, authors)
        logits = tint_tape.forward_logits(ar, want, c.tokens, c.aux.heads, c.aux.activation, eps)
        equal = all(ar.equal(a, b) for a, b in zip(_arrays(got), _arrays(want))) and ar.equal(got_logits, logits)
        bits, step_bits, logit_bits = _compare(_floats(ar, got), _floats(ar, want), _floats(ar, start),
                                               ar.to_float(got_logits), ar.to_float(logits))
        return Verdict("independent", tint_tape.REFERENCE, equal, min(bits, logit_bits), step_bits, want,
                       extra={"weight_bits": bits, "logit_bits": logit_bits})
    if not tint_torch.available():
        return Verdict("self-consistency", None, False, float("nan"), None, None, partial=tint_torch.MISSING)
    spec = tint_torch.StepSpec(lr=c.tint.inner_lr, n_sim=n_sim, steps=steps, fd=1.0 / fd_scale, bproj_steps=bproj,
                               last_position=authors)
    w0 = _floats(ar, start)
    want = tint_torch.sgd_steps(w0, c.tokens, pos, c.aux.heads, c.aux.activation, spec)
    logits = tint_torch.forward_logits(want, c.tokens, c.aux.heads, c.aux.activation)
    bits, step_bits, logit_bits = _compare(_floats(ar, got), want, w0, ar.to_float(got_logits), logits)
    return Verdict("independent", tint_torch.REFERENCE, bits == logit_bits == float("inf"), min(bits, logit_bits),
                   step_bits, want, extra={"weight_bits": bits, "logit_bits": logit_bits})


def _arrays(w: dict) -> list[np.ndarray]:
    return [w[k] for k in sorted(w) if k != "layers"] + [lw[k] for lw in w["layers"] for k in sorted(lw)]

