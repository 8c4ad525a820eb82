"""The per-call identities of the Two Heads constructions, proved once per call shape with sympy.

The oracle's output at a used query row depends on the real keys it sees only through
A = Σ a_j and B = Σ a_j v_j (a_j = exp(<q, k_j>)), and on the u padding / synthetic rows it sees.
With symbolic A > 0, B, u ≥ 1 (or ≥ 0) and E = e (the +1 of a normaliser call's scores), the output is
written as the oracle computes softmax over those rows, then the construction's own decoders
(``blocks.decode_A``, ``blocks.decode_AB``) and recombination (``blocks.sort_parts``) are run on the
symbols through a sympy :class:`~attnsim.sim.numerics.base.Numerics`; the result must simplify to
A and B exactly (Lemma 3.1's p/(1 − p), Claim B.6, Thm 3.5's shift row, the fused values). With the
plan's ``units`` obligation (u is the decoder's constant) and coverage, this is the whole argument.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import sympy as sp

from attnsim.sim.numerics.base import Array, Numerics
from attnsim.sim.two_heads.blocks import decode_A, decode_AB, sort_parts

A, B1, B2, E = sp.symbols("A B1 B2 E", positive=True)
U = sp.Symbol("u", integer=True, positive=True)


class SympyNumerics(Numerics):
    """Numerics over sympy expressions (only what the decoders and the recombination use)."""

    name = "sympy"
    exact = True

    def scalar(self, value: int | Fraction | float) -> Any:
        """``value`` as a sympy number or expression."""
        return sp.sympify(value)

    def to_fraction_or_float(self, value: Any) -> Fraction | float:
        """A number as a float (for messages only)."""
        return float(value)

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """exp(score), 0 where not allowed."""
        w = np.vectorize(sp.exp, otypes=[object])(scores)
        return w if allowed is None else np.where(allowed, w, sp.Integer(0))


NM = SympyNumerics()


def _row(*xs: Any) -> Array:
    return np.array([list(xs)], dtype=object)


@dataclass
class Identity:
    """One call shape's identity: what was proved and how long it took."""

    name: str
    shape: str
    proved: bool
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return asdict(self)


def _normaliser() -> bool:
    # real keys score <q,k> + 1 (weight E·a_j, value 1); u pad/synthetic rows score 1 (weight E, value 0)
    p = (E * A) / (E * A + U * E)
    out = decode_A(U - 1)(NM, _row(p))
    return sp.simplify(out[0, 0] - A) == 0


def _ratio() -> bool:
    # real keys weight a_j, values v_j; u zero rows weight 1, value 0: the call returns B/(A + u)
    out = _row(B1 / (A + U), B2 / (A + U))
    _, Bs = sort_parts(NM, [("k", "A", _row(A), 0), ("k", "R", out, U)])
    return all(sp.simplify(x - y) == 0 for x, y in zip(Bs["k"][0], (B1, B2)))


def _fused() -> bool:
    # values [v, 1] on real keys, [0, 0] on the u pad/synthetic rows; scores +1 throughout
    den = E * A + U * E
    out = decode_AB(U - 1)(NM, _row(E * B1 / den, E * B2 / den, E * A / den))
    return all(sp.simplify(x - y) == 0 for x, y in zip(out[0], (B1, B2, A)))


def _signed() -> bool:
    # Theorem 5.1: P covers sinks + window + the local prefix below the window, S that prefix
    Aw, Ap, Bw, Bp = sp.symbols("Aw Ap Bw Bp", positive=True)
    return sp.simplify(((Bw + Bp) - Bp) / ((Aw + Ap) - Ap) - Bw / Aw) == 0


SHAPES: dict[str, tuple[str, Callable[[], bool]]] = {
    "normaliser": ("A = u·p/(1 − p), p the output of u non-real rows beside the real keys "
                   "(Lemma 3.1 Step 1, Claim B.6, Thm 3.5, Thm 5.1)", _normaliser),
    "ratio": ("B = out·(A + u), out the ratio call's output with u zero rows (Lemma 3.1 Step 2, "
              "Thm 3.5's shift row)", _ratio),
    "fused": ("[B, A] from [B/(A + u), A/(A + u)] with values [v, 1] (fused scheme)", _fused),
    "signed recombination": ("(B_P − B_S)/(A_P − A_S) = window sum ratio (Thm 5.1)", _signed),
}


def prove_all() -> list[Identity]:
    """Every call shape's identity."""
    out = []
    for name, (shape, fn) in SHAPES.items():
        start = time.perf_counter()
        ok = fn()
        out.append(Identity(name, shape, ok, round(time.perf_counter() - start, 3)))
    return out
