"""What a run in ``arb:BITS`` ball arithmetic certifies (docs/precision.md, "Certified precision").

Three things, each from the balls of one run:

* **certified error bits** — for every output row i the balls bound the row-wise relative L2 error of the
  midpoints against the exact-real output y_i (the simulation criterion of two_heads §1.1):
  ‖mid_i − y_i‖ ≤ ‖rad_i‖ and ‖y_i‖ ≥ ‖mid_i‖ − ‖rad_i‖, so err_i ≤ ‖rad_i‖ / (‖mid_i‖ − ‖rad_i‖). The
  record's ``certified_bits`` is −log2 of the largest bound over rows (0 when a row's balls do not separate it
  from 0, or hold a non-finite ball). ``max_relative_radius_bits`` is −log2 of the largest rad/|mid| over the
  entries with a nonzero midpoint (the per-entry figure).
* **reference inside** — the mp reference (``agreement.truth_numerics``, more than twice the bits) must lie in
  every ball widened by the reference's own rounding: a wrong construction computes a different real number,
  and its balls miss the reference once BITS is large enough. Independent evidence: the reference is the
  large model evaluated directly (``sim.model.reference``).
* **exact inside** — where the ``exact`` numerics can run: the construction's exact rational output, whose
  weights are z**(D·s), must lie in every ball of a *companion* run whose weights are exp(D·ln z·s), the same
  real function (``sim/numerics/arb.py``). This is a membership test of an exact number in a ball computed
  with a ball for ln z: it holds when ball arithmetic is sound and both runs compute the same construction.
  Membership is decided in rationals, |v − mid| ≤ rad (``arb.contains`` would first round v into a ball at
  flint's global precision, and a 128-bit ball does not contain a 53-bit one). It says nothing of exp(s)
  itself; the real-exp run is certified by ball arithmetic alone.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import mpmath
import numpy as np

from attnsim.sim.numerics import Array, Numerics, NumericsError, get_numerics
from attnsim.sim.numerics.arb import Arb, is_finite_ball, midpoint, radius
from attnsim.sim.oracle import Oracle, OracleSpec

EXACT_COMPANION = "exact:64:65/64"
"""The exact numerics a containment check runs in. Its weights z**(64·s) with z = 65/64 are e^(0.992·s): the
companion is conditioned like the real-exp run, so its balls are about as narrow and the membership test is
sharp. (The default base z = 2 makes weights 2^(64·s), a softmax 44 times sharper: block masses near 2^300,
whose decode p/(1 − p) leaves nothing certified at 128 bits.)"""


def _log2(x: Fraction) -> float:
    """log2 of a positive rational of any size (math.log2 takes big integers whole; floats would underflow)."""
    return math.log2(x.numerator) - math.log2(x.denominator)


def _floor_bits(bits: float) -> float:
    """Bits rounded down to 1/100 (a certificate is never rounded up); ±inf unchanged."""
    return bits if math.isinf(bits) else math.floor(bits * 100) / 100


def row_bound_bits(mids: list[Fraction], rads: list[Fraction]) -> float | None:
    """−log2 of ‖rad‖/(‖mid‖ − ‖rad‖), the row's certified relative error (inf: exact; None: not certified,
    ‖rad‖ ≥ ‖mid‖). Computed from the exact squared norms, so radii of 2^-4000 do not underflow."""
    M2, R2 = sum(m * m for m in mids), sum(r * r for r in rads)
    if R2 == 0:
        return math.inf
    if R2 >= M2:
        return None
    ratio = math.sqrt(float(R2 / M2)) if R2 / M2 > Fraction(1, 2 ** 1000) else 0.0  # ‖rad‖/‖mid‖ < 1
    return 0.5 * (_log2(M2) - _log2(R2)) + math.log2(1 - ratio)


def certified_bits(Y: Array) -> dict[str, Any]:
    """The error the balls of ``Y`` certify: row-wise relative L2 bound and the per-entry relative radius."""
    worst_row, worst_row_at = math.inf, None
    worst_entry = math.inf
    non_finite = uncertified_rows = 0
    for i, row in enumerate(Y):
        bad = sum(not is_finite_ball(x) for x in row)
        if bad:
            non_finite += bad
            uncertified_rows += 1
            worst_row, worst_row_at = -math.inf, i
            continue
        mids, rads = [midpoint(x) for x in row], [radius(x) for x in row]
        for m, r in zip(mids, rads):
            if m != 0 and r != 0:
                worst_entry = min(worst_entry, _log2(abs(m)) - _log2(r))
        if not any(mids) and not any(rads):
            continue  # an exactly zero row (a fully masked query): certified exactly
        bits = row_bound_bits(mids, rads)
        if bits is None:
            uncertified_rows += 1
            bits = -math.inf
        if bits < worst_row or worst_row_at is None:
            worst_row, worst_row_at = bits, i
    return {"certified_bits": max(0.0, _floor_bits(worst_row)),
            "worst_row": worst_row_at,
            "max_relative_radius_bits": _floor_bits(worst_entry),
            "non_finite_balls": non_finite, "uncertified_rows": uncertified_rows}


def reference_inside(Y: Array, ref: Array, truth: Numerics) -> tuple[int, tuple[int, int] | None]:
    """(entries whose ball misses the reference, the first of them); the reference's own error
    (2^-(truth bits − 4) relative) widens each ball."""
    ctx = mpmath.MPContext()
    ctx.prec = truth.bits + 32
    slack = ctx.ldexp(1, -(truth.bits - 4))
    missed, first = 0, None
    for (i, j), x in np.ndenumerate(Y):
        if not is_finite_ball(x):
            continue  # an infinite ball holds everything; certified_bits reports it
        m, r = midpoint(x), radius(x)
        t = ctx.mpf(ref[i, j])
        if abs(ctx.mpf(m.numerator) / m.denominator - t) > ctx.mpf(r.numerator) / r.denominator + slack * abs(t):
            missed += 1
            first = first or (i, j)
    return missed, first


def exact_inside(nm: Arb, oracle_spec: OracleSpec, X: Array, simulate: Callable[[Oracle, Array], Array],
                 seed: int, skip: str | None = None) -> dict[str, Any]:
    """Run the construction in ``exact`` and in the companion balls (weights z**(D·s)); count the exact entries
    outside their ball. ``status`` is ``checked`` or why it could not run (an input off the score grid, or
    ``skip``: the caller's reason, e.g. an exact run estimated too long)."""
    exact = get_numerics(EXACT_COMPANION, seed)
    companion = Arb(nm.spec.with_base(exact.grid, exact.z_fraction))
    out: dict[str, Any] = {"exact_numerics": exact.name, "companion": companion.name}
    if skip:
        return {**out, "status": f"not run: {skip}"}
    try:
        Y_exact = simulate(Oracle(oracle_spec, exact), exact.array(X, "X"))
    except NumericsError as exc:
        return {**out, "status": f"not run: {exc.message}"}
    Y_ball = simulate(Oracle(oracle_spec, companion), companion.array(X, "X"))
    def inside(b: Any, v: Any) -> bool:  # |v − mid| ≤ rad decided in rationals (arb's contains() would first
        return abs(exact.to_fraction_or_float(v) - midpoint(b)) <= radius(b)  # round v into a ball at ctx.prec)

    finite = [(i, j) for (i, j), b in np.ndenumerate(Y_ball) if is_finite_ball(b)]
    outside = [(i, j) for i, j in finite if not inside(Y_ball[i, j], Y_exact[i, j])]
    cert = certified_bits(Y_ball)
    return {**out, "status": "checked", "entries": len(finite), "infinite_balls": int(Y_ball.size) - len(finite),
            "outside": len(outside),
            "first_outside": list(outside[0]) if outside else None,
            "companion_certified_bits": cert["certified_bits"]}


def certify(nm: Numerics, Y: Array, ref: Array, truth: Numerics, oracle_spec: OracleSpec, X: Array,
            simulate: Callable[[Oracle, Array], Array], seed: int,
            skip_exact: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """The ``certified`` field of an arb record, and the reasons it fails (a ball missing the reference or the
    exact output)."""
    assert isinstance(nm, Arb)
    cert = certified_bits(Y)
    missed, first = reference_inside(Y, ref, truth)
    cert.update({"reference_outside": missed, "first_reference_outside": list(first) if first else None})
    cert["exact"] = exact_inside(nm, oracle_spec, X, simulate, seed, skip_exact)
    reasons = []
    if missed:
        reasons.append(f"certified: {missed} balls miss the {truth.name} reference (first at row, column {first})")
    if cert["exact"].get("outside"):
        reasons.append(f"certified: {cert['exact']['outside']} exact outputs lie outside their balls "
                       f"(first at row, column {cert['exact']['first_outside']})")
    return cert, reasons


def summary(cert: dict[str, Any]) -> str:
    """One line for ``attnsim check``'s text output."""
    ex = cert["exact"]
    inside = (f"exact output ({ex['exact_numerics']}) inside {ex['entries'] - ex['outside']} of {ex['entries']} "
              f"companion balls" if ex["status"] == "checked" else f"exact containment {ex['status']}")
    return (f"certified: {cert['certified_bits']:g} bits (row-wise relative, from the balls' radii; largest "
            f"entry radius/|mid| 2^{-cert['max_relative_radius_bits']:g}); reference inside "
            f"{'every ball' if not cert['reference_outside'] else 'all but ' + str(cert['reference_outside'])}; "
            + inside)
