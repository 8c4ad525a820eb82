"""How many bits do the constructions need? Measured answers to two_heads §1.1.

The paper assumes O(log N)-bit numbers and gives no rounding analysis. This module runs the Two
Heads constructions — two_heads.lemma_3_1, two_heads.thm_3_4 (unmasked, packed), two_heads.thm_3_5
(causal) and two_heads.thm_5_1 (sliding window + sinks), each in its paper and its fused scheme —
and the direct attention of the same model under the same mask, in the fixed-width numerics
(``attnsim.sim.numerics.fixed``), and measures the row-wise relative L2 error (two_heads §1.1)
against the exact/mp reference:

* :func:`bits_study` — for each N, the narrowest format of a family (``float``: E exponent bits,
  mantissa bits searched; ``fixed``: I integer bits sized from the run, fraction bits searched)
  whose error stays ≤ a target, found by a galloping bisection; then a least-squares fit of
  bits-needed against log2 N (slope in bits per doubling of N, R²) and a plain verdict.
* :func:`blocks_study` — error at one fixed format against the number of merged blocks n = N/M.
* :func:`decode_study` — the conditioning of the decode A = p/(1 − p) as A grows.

Truth. ``verify/precision_truth.py``: exact rational scores and values, exp in mpmath with at least
64 guard bits, exact integer sums, rounded once to float64 — its own error is below 2^-52, so
targets down to 2^-36 (the accepted range) are measured faithfully. The constructions and the row
sampling are in ``verify/precision_constructions.py``; the maximum is over the sampled rows.

Failure modes are results, not crashes: a NumericsError (p rounding to 1 in the decode, overflow,
a constant the format cannot hold) makes that width fail with the error as its reason, and a row
that came out 0 although its true value is not (every normaliser rounded to 0 — exp underflow, or
Thm 5.1's prefix difference A_P − A_S cancelling to 0) is reported as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.verify.precision.constructions import CLAIMS, CONSTRUCTIONS, Setup, make_setup, run_construction  # noqa: F401
from attnsim.verify.registry import UsageError
from attnsim.verify.stats import LineFit, linear_fit

TARGET = 2.0 ** -10
FAMILIES = ("float", "fixed")
ACCELERATION = 1.0  # bits per doubling by which the last step may exceed the first (see verdict)


@dataclass
class Eval:
    """One run at one format: error bits (−log2 of the worst row's relative error) or why it failed."""

    fmt: str
    width: int
    error_bits: float
    reason: str | None = None


def error_bits(Y: np.ndarray, T: np.ndarray) -> float:
    """−log2 of the worst row-wise relative L2 error of Y against T."""
    diff = np.linalg.norm(Y - T, axis=1)
    norm = np.linalg.norm(T, axis=1)
    rel = np.where(norm > 0, diff / np.where(norm > 0, norm, 1), diff)
    worst = float(rel.max()) if rel.size else 0.0
    return math.inf if worst == 0 else -math.log2(worst)


def evaluate(name: str, fmt: str, width: int, setup: Setup, seed: int = 0) -> Eval:
    """Run a construction in format ``fmt`` and measure its error in bits (or why it failed)."""
    try:
        nm = get_numerics(fmt, seed)
        Y = run_construction(name, nm, setup)
    except NumericsError as exc:
        return Eval(fmt, width, -math.inf, str(exc))
    zero = (np.abs(Y).max(axis=1) == 0) & (np.abs(setup.truth).max(axis=1) > 0)
    reason = None
    if zero.any():
        row = int(setup.rows[np.argmax(zero)])
        why = ("its normaliser A_P − A_S cancelled to 0 or its block normalisers underflowed (exp underflow)"
               if setup.claim == "two_heads.thm_5_1" and name != "direct" else
               "exp underflow: every block normaliser A rounded to 0")
        reason = f"{fmt}: row {row} came out 0: {why}"
    return Eval(fmt, width, error_bits(Y, setup.truth), reason)


@dataclass(frozen=True)
class Family:
    """A family of formats indexed by precision bits p: float:E.p or fixed:qI.p, plus options."""

    kind: str
    fixed_bits: int  # E for float, I for fixed
    options: str = ""

    def name(self, p: int) -> str:
        """The numerics name of this family at precision ``p``."""
        head = f"float:{self.fixed_bits}.{p}" if self.kind == "float" else f"fixed:q{self.fixed_bits}.{p}"
        return head + (f":{self.options}" if self.options else "")

    def width(self, p: int) -> int:
        """Total bits at precision ``p``."""
        return 1 + self.fixed_bits + p if self.kind == "float" else self.fixed_bits + p

    @property
    def bounds(self) -> tuple[int, int]:
        """The range of precisions a float64 carrier can represent."""
        return (1, 52) if self.kind == "float" else (0, 53 - self.fixed_bits)


def make_family(kind: str, setup: Setup, exp_bits: int = 8, int_bits: int | None = None,
                options: str = "") -> Family:
    """float: E = exp_bits; fixed: I = int_bits, or sized from a wide run (peak |value| plus sign and 1)."""
    if kind not in FAMILIES:
        raise UsageError(f"--family: must be one of {', '.join(FAMILIES)}, got {kind!r}")
    if kind == "float":
        return Family(kind, exp_bits, options)
    if int_bits is None:
        peak = 1.0
        for name in ("paper", "fused", "direct"):
            wide = get_numerics("float:11.40")
            try:
                run_construction(name, wide, setup)
            except NumericsError:
                pass  # the values met before the failure still size the format; the search reports it
            peak = max(peak, wide.peak)
        int_bits = min(math.ceil(math.log2(peak)) + 2, 52)
    return Family(kind, int_bits, options)


@dataclass
class Need:
    """The smallest passing precision of one construction at one N, with every evaluation tried."""
    construction: str
    N: int
    precision: int | None  # smallest passing precision bits (None: not reached)
    width: int | None
    evals: list[Eval] = field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
        """The distinct failure reasons of the evaluations."""
        return sorted({e.reason for e in self.evals if e.reason})


def bits_needed(name: str, setup: Setup, family: Family, target: float = TARGET, hint: int | None = None,
                seed: int = 0) -> Need:
    """The smallest precision p with error ≤ target: one probe, a predicted p, a gallop, a bisection.

    Assumes the error shrinks as p grows (true of single roundings; for whole runs up to noise, so
    the answer is the threshold the search brackets).
    """
    lo, hi = family.bounds
    need_bits = -math.log2(target)
    cache: dict[int, Eval] = {}

    def ok(p: int) -> bool:
        if p not in cache:
            cache[p] = evaluate(name, family.name(p), family.width(p), setup, seed)
        e = cache[p]
        return e.reason is None and e.error_bits >= need_bits

    p = min(max(hint or 16, lo), hi)
    ok(p)
    first = cache[p]
    if math.isfinite(first.error_bits) and first.reason is None:
        p = min(max(p + math.ceil(need_bits - first.error_bits), lo), hi)
    if ok(p):
        good, bad = p, lo - 1
        while good > lo and ok(good - 1):
            good -= 1
            if good - 1 in cache:
                break
        bad = good - 1
    else:
        bad, step, good = p, 1, None
        while good is None:
            if bad >= hi:
                return Need(name, setup.N, None, None, [cache[k] for k in sorted(cache)])
            q = min(hi, bad + step)
            if ok(q):
                good = q
            else:
                bad, step = q, 2 * step
    while good - bad > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return Need(name, setup.N, good, family.width(good), [cache[k] for k in sorted(cache)])


def fit_log2(xs: list[float], ys: list[float]) -> LineFit:
    """Least squares y = a + b·log2 x: b is in bits per doubling of N. R² is 1 for a perfect (also a flat) fit."""
    return linear_fit(np.log2(np.asarray(xs, float)), ys)


def per_doubling(Ns: list[int], widths: list[int]) -> list[float]:
    """Bits added per doubling of N between consecutive grid points."""
    return [(w2 - w1) / math.log2(n2 / n1) for (n1, w1), (n2, w2) in zip(zip(Ns, widths), zip(Ns[1:], widths[1:]))]


def verdict(needs: list[Need], fit: LineFit) -> str:
    """Plain words: is the measured growth of bits-needed consistent with O(log N)?

    Growth linear in log2 N — a constant number of bits per doubling of N, whatever the constant —
    is O(log N). Growth polynomial in N shows as bits per doubling that keep increasing with N, so
    the verdict is negative when the last step adds more than ``ACCELERATION`` bits per doubling
    over the first step (and over zero).
    """
    missing = [n.N for n in needs if n.width is None]
    if missing:
        return f"not established: no width up to the family's limit met the target at N = {missing}"
    steps = per_doubling([n.N for n in needs], [n.width for n in needs])  # type: ignore[misc]
    if len(steps) >= 2 and steps[-1] > max(steps[0], 0.0) + ACCELERATION:
        return ("faster than logarithmic here: bits per doubling of N grow from "
                f"{steps[0]:+.2f} to {steps[-1]:+.2f}")
    return f"consistent with O(log N): about {max(fit.slope, 0.0):.2f} more bits per doubling of N"


def bits_study(Ns: list[int], M: int, kind: str = "float", target: float = TARGET,
               constructions: tuple[str, ...] = CONSTRUCTIONS, d: int = 4, seed: int = 0, exp_bits: int = 8,
               int_bits: int | None = None, options: str = "", sample_blocks: int | None = 16,
               input_kind: str = "random", progress: Callable[[str], None] | None = None, *,
               claim: str = "two_heads.lemma_3_1", window: int | None = None,
               sinks: int | None = None) -> dict[str, Any]:
    """Bits needed per N and construction of ``claim``, the fits and the verdicts (a JSON-able dict)."""
    if not 0 < target < 1 or target < 2.0 ** -36:
        raise UsageError(f"--target: must lie in [2^-36, 1) (formats are carried in float64 and the truth is "
                         f"rounded once to float64); got {target}")
    hints: dict[str, int | None] = {c: None for c in constructions}
    needs: dict[str, list[Need]] = {c: [] for c in constructions}
    families: dict[int, str] = {}
    for N in sorted(Ns):
        setup = make_setup(N, M, d, seed, sample_blocks, input_kind, claim=claim, window=window, sinks=sinks)
        family = make_family(kind, setup, exp_bits, int_bits, options)
        families[N] = f"fixed:q{family.fixed_bits}.F" if kind == "fixed" else f"float:{family.fixed_bits}.M"
        for c in constructions:
            if progress:
                progress(f"N={N} {c}")
            need = bits_needed(c, setup, family, target, hints[c], seed)
            hints[c] = need.precision
            needs[c].append(need)
    out: dict[str, Any] = {"claim": claim, "window": setup.window, "sinks": setup.sinks, "Ns": sorted(Ns), "M": M,
                           "family": kind, "target": target, "d": d, "seed": seed,
                           "sample_blocks": sample_blocks, "input": input_kind, "formats": families,
                           "constructions": {}}
    for c, ns in needs.items():
        ok = [n for n in ns if n.width is not None]
        fit = fit_log2([n.N for n in ok], [n.width for n in ok])
        out["constructions"][c] = {
            "N": [n.N for n in ns], "width": [n.width for n in ns], "precision": [n.precision for n in ns],
            "evals": [len(n.evals) for n in ns], "reasons": [n.reasons for n in ns],
            "slope": fit.slope, "intercept": fit.intercept, "r2": fit.r2, "verdict": verdict(ns, fit),
            "steps": per_doubling([n.N for n in ok], [n.width for n in ok])}
    return out


def blocks_study(Ns: list[int], M: int, fmt: str = "float:fp32", constructions: tuple[str, ...] = CONSTRUCTIONS,
                 d: int = 4, seed: int = 0, sample_blocks: int | None = 16,
                 input_kind: str = "random", *, claim: str = "two_heads.lemma_3_1", window: int | None = None,
                 sinks: int | None = None) -> dict[str, Any]:
    """Error bits at one format against the number of merged blocks n = N/M (fit: bits per doubling of n)."""
    get_numerics(fmt)  # a clear error for a bad name
    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in constructions}
    for N in sorted(Ns):
        setup = make_setup(N, M, d, seed, sample_blocks, input_kind, claim=claim, window=window, sinks=sinks)
        for c in constructions:
            e = evaluate(c, fmt, 0, setup, seed)
            rows[c].append({"N": N, "n": math.ceil(N / M), "error_bits": e.error_bits, "reason": e.reason})
    fits = {}
    for c, rs in rows.items():
        good = [r for r in rs if math.isfinite(r["error_bits"])]
        f = fit_log2([r["n"] for r in good], [r["error_bits"] for r in good])
        fits[c] = {"slope": f.slope, "r2": f.r2}
    return {"claim": claim, "format": fmt, "M": M, "rows": rows, "fits": fits}


def log2_block_sum_max(setup: Setup) -> float:
    """log2 of the largest block normaliser A_{i,t} = Σ_{j∈S_t} exp(<q_i,k_j>) over the sampled rows (float64)."""
    nm = get_numerics("float64")
    hw = setup.case.weights.layers[0].heads[0]
    X = nm.array(setup.case.X)
    s = (X[setup.rows] @ nm.array(hw.WQ)) @ (X @ nm.array(hw.WK)).T
    top = float(s.max())
    A = np.add.reduceat(np.exp(s - top), np.arange(0, setup.N, setup.M), axis=1)
    return top / math.log(2) + math.log2(float(A.max()))


def scale_study(N: int, M: int, scales: list[Fraction], kind: str = "float", target: float = TARGET,
                constructions: tuple[str, ...] = CONSTRUCTIONS, d: int = 4, seed: int = 0, exp_bits: int = 8,
                sample_blocks: int | None = 16) -> dict[str, Any]:
    """Bits needed at one N as the scores grow (W^Q scaled): the decode's conditioning at model level.

    The simulation's error is governed by the largest block normaliser A (condition ≈ A + 1 of
    p/(1 − p)); direct attention subtracts the row max and does not see A.
    """
    rows = []
    for c in scales:
        setup = make_setup(N, M, d, seed, sample_blocks, score_scale=c)
        family = make_family(kind, setup, exp_bits)
        entry: dict[str, Any] = {"scale": float(c), "log2_A_max": log2_block_sum_max(setup)}
        for name in constructions:
            need = bits_needed(name, setup, family, target, None, seed)
            entry[name] = need.width
            entry[f"{name}_precision"] = need.precision
        rows.append(entry)
    fits = {}
    for name in constructions:
        pts = [(r["log2_A_max"], r[f"{name}_precision"]) for r in rows if r[f"{name}_precision"] is not None]
        if len(pts) >= 2:
            fits[name] = linear_fit([p[0] for p in pts], [p[1] for p in pts]).slope
    return {"N": N, "M": M, "family": kind, "target": target, "rows": rows, "bits_per_log2_A": fits}


def decode_study(fmt: str, max_log2_A: int = 30, per_binade: int = 64, seed: int = 0) -> dict[str, Any]:
    """The decode of two_heads.lemma_3_1 Step 1 in format ``fmt``: p = A/(A + 1) rounded, A' = p/(1 − p).

    For A drawn in each binade [2^k, 2^(k+1)), the worst relative error of A' in bits, or the point
    where p rounds to 1 and the decode fails. Condition number of the decode: ≈ A + 1, so about one
    bit is lost per doubling of A.
    """
    nm = get_numerics(fmt, seed)
    rng = np.random.default_rng(seed)
    rows = []
    top = getattr(getattr(nm, "fmt", None), "max_value", math.inf)
    last = max_log2_A if not math.isfinite(top) else min(max_log2_A, math.floor(math.log2(top)) - 2)
    for k in range(0, last + 1):  # A + 1 must fit the format
        A = nm.array(rng.uniform(1, 2, per_binade) * 2.0 ** k)
        p = nm.div(A, nm.add(A, nm.ones(A.shape)))
        one_minus = nm.sub(nm.ones(p.shape), p)
        fails = int((one_minus == 0).sum())
        ok = one_minus != 0
        if ok.any():
            dec = nm.div(p[ok], one_minus[ok])
            rel = np.abs(dec - A[ok]) / A[ok]
            worst = float(rel.max())
            bits = math.inf if worst == 0 else -math.log2(worst)
        else:
            bits = -math.inf
        rows.append({"log2_A": k, "error_bits": bits, "p_rounds_to_1": fails, "samples": per_binade})
    good = [r for r in rows if math.isfinite(r["error_bits"]) and r["p_rounds_to_1"] == 0]
    f = fit_log2([2.0 ** r["log2_A"] for r in good], [r["error_bits"] for r in good])
    first_fail = next((r["log2_A"] for r in rows if r["p_rounds_to_1"]), None)
    return {"format": fmt, "rows": rows, "slope": f.slope, "r2": f.r2, "first_log2_A_failing": first_fail,
            "precision_bits": nm.bits}


def parse_target(text: str) -> float:
    """``2^-10``, ``2**-10``, ``1e-3`` or ``0.001``."""
    t = text.strip().replace("**", "^")
    try:
        if "^" in t:
            base, exp = t.split("^", 1)
            value = float(base) ** float(exp)
        else:
            value = float(t)
    except (ValueError, OverflowError, ZeroDivisionError):
        value = None
    if not isinstance(value, float) or not 0 < value < 1:  # a negative base to a fractional power is complex
        raise UsageError(f"--target: expected a relative error in (0, 1) such as 2^-10 or 1e-3, got {text!r}")
    return value
