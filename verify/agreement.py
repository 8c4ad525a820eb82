"""Output agreement: exact equality, or the row-wise relative L2 error in bits (two_heads §1.1).

error_bits = -log2( max_i ||y_i - t_i||_2 / ||t_i||_2 ) against a reference t computed in a
*truth* numerics: the same backend for exact kinds (compared with ==), mp at more than twice the
precision for approximate ones. Rows whose reference is 0 use the absolute error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from attnsim.sim.numerics import Numerics, get_numerics
from attnsim.verify.registry import UsageError


@dataclass(frozen=True)
class Agreement:
    """Outcome of a comparison: agree or not, the error in bits (inf when equal) and the worst row."""
    agree: bool
    error_bits: float  # math.inf when equal
    worst_row: int | None
    min_bits: float | None


def exact_outcome(same: bool, refused: bool) -> tuple[bool | None, float | None]:
    """``agree`` and ``error_bits`` of an exact comparison: (True, inf) or (False, 0.0); (None, None) when the run
    was refused before it had an output (a randomized construction's draw over the referee's limits), so that the
    record says no output was compared rather than a wrong one."""
    if refused:
        return None, None
    return same, math.inf if same else 0.0


def truth_numerics(nm: Numerics, seed: int) -> Numerics:
    """Where the reference is computed: ``nm`` itself when exact, else mp at >= 2x the precision."""
    if nm.exact:
        return nm
    bits = nm.bits
    return get_numerics(f"mp:{max(2 * bits + 64, 192)}", seed)


def default_min_bits(nm: Numerics, ceiling: float | None = None) -> float | None:
    """Bits of agreement required by default: precision − min(10, precision/2) (None for exact numerics).

    The margin is 10 bits for wide formats (float64: 43) and half the precision for narrow ones
    (bf16: 4, fp32: 14), so that a narrow format's default asks for something it can deliver. ``ceiling``,
    when given, is what the format delivers on the model at hand (the bits the model keeps evaluated directly
    in ``nm``, ``model_check.direct_bits``); the margin is then taken off the smaller of the two.
    """
    if nm.exact:
        return None
    bits = nm.bits
    top = float(bits) if ceiling is None else min(float(bits), ceiling)
    return top - min(10, bits // 2)


def asked_bits(nm: Numerics, kept: float | None, losses: list[tuple[float, str]], rounding_bits: float = 0.0,
               kept_words: str = "the model itself keeps {bits} bits evaluated directly in this format") -> float:
    """The bits of agreement a check asks for by default: :func:`default_min_bits` below the smaller of the precision
    and ``kept`` (the bits the computation keeps done directly in ``nm``; None: not measured), less each loss the
    construction may suffer by design (their errors add, so their bits combine as log2 Σ 2^loss) and less
    ``rounding_bits``. Each loss comes with the words that say what suffers it ("Lemma 3.1's decode may lose {bits}
    bits ...", formatted with the loss), and ``kept`` with ``kept_words``. Less than 1 bit left is a precision too
    narrow for the input: a UsageError naming ``--numerics`` that says why."""
    default = default_min_bits(nm, kept)
    assert default is not None, "exact numerics ask for equality"
    positive = [bits for bits, _ in losses if bits > 0]  # a loss of 0 bits is no error term at all
    total = float(np.logaddexp2.reduce(positive)) if len(positive) > 1 else sum(positive)
    asked = default - total - rounding_bits
    if asked >= 1:
        return asked
    parts = [words.format(bits=f"{bits:.1f}") for bits, words in losses if bits >= 0.05]
    if kept is not None and kept < nm.bits:
        parts.append(kept_words.format(bits=f"{max(kept, 0.0):.1f}"))
    raise UsageError(f"{nm.name}: {'; '.join(parts)} (docs/precision.md, Agreement), which leaves under 1 of the "
                     f"{default_min_bits(nm):g} bits asked by default; use more bits (or ask for some with "
                     "--min-bits)", param="numerics")


def _to_mp(ctx: Any, x: Any) -> Any:
    if isinstance(x, Fraction):
        return ctx.mpf(x.numerator) / x.denominator
    if hasattr(x, "p") and hasattr(x, "q"):
        return ctx.mpf(int(x.p)) / int(x.q)
    return ctx.mpf(x)


def compare(y: np.ndarray, ref: np.ndarray, nm: Numerics, truth: Numerics, min_bits: float | None) -> Agreement:
    """Compare ``y`` with ``ref``: ``==`` in exact numerics, else the row-wise relative error against ``min_bits``."""
    if y.shape != ref.shape:
        return Agreement(False, 0.0, None, min_bits)
    if nm.exact:
        eq = np.vectorize(lambda a, b: a == b, otypes=[bool])(y, ref) if y.size else np.ones(0, bool)
        if eq.all():
            return Agreement(True, math.inf, None, None)
        worst = int(np.argwhere(~eq)[0][0])
        yf = np.vectorize(lambda v: float(nm.to_fraction_or_float(v)))(y)
        rf = np.vectorize(lambda v: float(nm.to_fraction_or_float(v)))(ref)
        err = np.linalg.norm(yf - rf, axis=1) / np.maximum(np.linalg.norm(rf, axis=1), 1e-300)
        bits = 0.0 - math.log2(err.max()) if err.max() > 0 else 60.0  # 0.0 - x: a total miss is 0 bits, not -0
        return Agreement(False, bits, worst, None)
    ctx = mpmath.MPContext()
    ctx.prec = truth.bits + 32
    worst_err, worst_row = ctx.mpf(0), None
    for i in range(y.shape[0]):
        diff = ctx.sqrt(ctx.fsum((_to_mp(ctx, a) - _to_mp(ctx, b)) ** 2 for a, b in zip(y[i], ref[i])))
        norm = ctx.sqrt(ctx.fsum(_to_mp(ctx, b) ** 2 for b in ref[i]))
        if not ctx.isfinite(diff):
            return Agreement(False, 0.0, i, min_bits)
        err = diff / norm if norm != 0 else diff
        if err > worst_err or worst_row is None:
            worst_err, worst_row = err, i
    bits = math.inf if worst_err == 0 else 0.0 - float(ctx.log(worst_err, 2))
    return Agreement(min_bits is None or bits >= min_bits, bits, worst_row, min_bits)
