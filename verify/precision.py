"""How many bits do the constructions need? Measured answers to two_heads digest §1.7 and §5.

The paper assumes O(log N)-bit numbers and gives no rounding analysis. This module runs
two_heads.lemma_3_1 (the paper's two-call scheme and the fused one-call scheme) and the direct
attention of the same model in the fixed-width numerics (``attnsim.sim.numerics.fixed``) and
measures the row-wise relative L2 error (digest §1.7) against a float64 truth:

* :func:`bits_study` — for each N, the narrowest format of a family (``float``: E exponent bits,
  mantissa bits searched; ``fixed``: I integer bits sized from the run, fraction bits searched)
  whose error stays ≤ a target, found by a galloping bisection; then a least-squares fit of
  bits-needed against log2 N (slope in bits per doubling of N, R²).
* :func:`blocks_study` — error at one fixed format against the number of merged blocks n = N/M.
* :func:`decode_study` — the conditioning of the decode A = p/(1 − p) as A grows.

Truth and sampling. The truth is direct attention in float64 (relative error below 2^-40 at these
sizes, tests/test_precision.py checks it against mp:192), so errors down to 2^-30 are measured
faithfully. Rows are independent in both the construction and direct attention, so at large N the
error is measured on a seeded sample of query blocks (``sample_blocks``; every block when N/M is
small): the construction runs its own ``head_jobs``/``combine`` for those query blocks against
*every* key block, and direct attention computes those rows against every key — the same rounded
values a full run produces for those rows (tested). The maximum is over the sampled rows.

Failure modes are results, not crashes: a NumericsError (p rounding to 1 in the decode, overflow,
a constant the format cannot hold) makes that width fail with the error as its reason, and a row
whose every block normaliser A rounded to 0 (exp underflow), leaving an output of 0, is reported
as such.
"""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from attnsim.sim.masks import Full
from attnsim.sim.model import HeadWeights, LayerWeights, Weights
from attnsim.sim.numerics import Numerics, NumericsError, get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads.blocks import combine, head_jobs
from attnsim.verify.cases import Case, random_case
from attnsim.verify.precision_runner import run_batched
from attnsim.verify.registry import UsageError

TARGET = 2.0 ** -10
CONSTRUCTIONS = ("paper", "fused", "direct")
FAMILIES = ("float", "fixed")
ACCELERATION = 1.0  # bits per doubling by which the last step may exceed the first (see verdict)


@dataclass(frozen=True, eq=False)
class Setup:
    """One case at one N: the model, the block size, the sampled query blocks and the float64 truth."""

    N: int
    M: int
    case: Case
    q_blocks: tuple[int, ...]
    rows: np.ndarray
    truth: np.ndarray


def make_setup(N: int, M: int, d: int = 4, seed: int = 0, sample_blocks: int | None = 16,
               input_kind: str = "random", score_scale: Fraction = Fraction(1)) -> Setup:
    """The seeded random case at N; ``score_scale`` multiplies W^Q, and so every score."""
    if N < 1 or M < 2 or d < 1:
        raise UsageError(f"--N/--M/--d: need N >= 1, M >= 2, d >= 1; got N={N}, M={M}, d={d}")
    case = random_case(N, d, 1, 1, Full(), seed, layer_mlp="identity", input_kind=input_kind, exact_kind=False)
    if score_scale != 1:
        hw = case.weights.layers[0].heads[0]
        scaled = HeadWeights(hw.WQ * Fraction(score_scale), hw.WK, hw.WV)
        case = Case(case.spec, Weights((LayerWeights((scaled,), case.weights.layers[0].psi),)), case.X)
    starts = list(range(0, N, M))
    if sample_blocks and len(starts) > sample_blocks:
        pick = np.random.default_rng(seed + 1).choice(len(starts), size=sample_blocks, replace=False)
        starts = [starts[i] for i in sorted(pick)]
    rows = np.concatenate([np.arange(s, min(s + M, N)) for s in starts])
    setup = Setup(N, M, case, tuple(starts), rows, np.zeros(0))
    truth = run_construction("direct", get_numerics("float64"), setup)
    return Setup(N, M, case, tuple(starts), rows, truth)


def run_construction(name: str, nm: Numerics, setup: Setup) -> np.ndarray:
    """Output rows ``setup.rows`` of construction ``name`` in numerics ``nm``."""
    case = setup.case
    hw = case.weights.layers[0].heads[0]
    X = nm.array(case.X, "X")
    WQ, WK, WV = nm.array(hw.WQ, "W^Q"), nm.array(hw.WK, "W^K"), nm.array(hw.WV, "W^V")
    if name == "direct":
        q = nm.matmul(X[setup.rows], WQ)
        return nm.attention(q, nm.matmul(X, WK), nm.matmul(X, WV))
    if name not in ("paper", "fused"):
        raise UsageError(f"--constructions: unknown construction {name!r}; choose from {', '.join(CONSTRUCTIONS)}")
    d = case.spec.d
    oracle = Oracle(OracleSpec(setup.M + 1, 1, 1, 2 * d + 2), nm)
    jobs, plans = head_jobs(nm, X, WQ, WK, WV, setup.M, name, "lemma_3_1")
    keep = [i for i, p in enumerate(plans) if p.q0 in set(setup.q_blocks)]
    results = run_batched(oracle, [jobs[i] for i in keep])
    Y = combine(nm, oracle.ledger, case.spec.N, d, [plans[i] for i in keep], results, "lemma_3_1", oracle.round)
    return Y[setup.rows]


@dataclass
class Eval:
    """One run at one format: error bits (−log2 of the worst row's relative error) or why it failed."""

    fmt: str
    width: int
    error_bits: float
    reason: str | None = None


def error_bits(Y: np.ndarray, T: np.ndarray) -> float:
    diff = np.linalg.norm(Y - T, axis=1)
    norm = np.linalg.norm(T, axis=1)
    rel = np.where(norm > 0, diff / np.where(norm > 0, norm, 1), diff)
    worst = float(rel.max()) if rel.size else 0.0
    return math.inf if worst == 0 else -math.log2(worst)


def evaluate(name: str, fmt: str, width: int, setup: Setup, seed: int = 0) -> Eval:
    try:
        nm = get_numerics(fmt, seed)
        Y = run_construction(name, nm, setup)
    except NumericsError as exc:
        return Eval(fmt, width, -math.inf, str(exc))
    zero = (np.abs(Y).max(axis=1) == 0) & (np.abs(setup.truth).max(axis=1) > 0)
    reason = None
    if zero.any():
        reason = (f"{fmt}: exp underflow: every block normaliser A of row {int(setup.rows[np.argmax(zero)])} "
                  "rounded to 0, so the row came out 0")
    return Eval(fmt, width, error_bits(Y, setup.truth), reason)


@dataclass(frozen=True)
class Family:
    """A family of formats indexed by precision bits p: float:E.p or fixed:qI.p, plus options."""

    kind: str
    fixed_bits: int  # E for float, I for fixed
    options: str = ""

    def name(self, p: int) -> str:
        head = f"float:{self.fixed_bits}.{p}" if self.kind == "float" else f"fixed:q{self.fixed_bits}.{p}"
        return head + (f":{self.options}" if self.options else "")

    def width(self, p: int) -> int:
        return 1 + self.fixed_bits + p if self.kind == "float" else self.fixed_bits + p

    @property
    def bounds(self) -> tuple[int, int]:
        return (1, 52) if self.kind == "float" else (0, 53 - self.fixed_bits)


def make_family(kind: str, setup: Setup, exp_bits: int = 8, int_bits: int | None = None,
                options: str = "") -> Family:
    """float: E = exp_bits; fixed: I = int_bits, or sized from a wide run (peak |value| plus sign and 1)."""
    if kind not in FAMILIES:
        raise UsageError(f"--format-family: must be one of {', '.join(FAMILIES)}, got {kind!r}")
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
    construction: str
    N: int
    precision: int | None  # smallest passing precision bits (None: not reached)
    width: int | None
    evals: list[Eval] = field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
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


@dataclass(frozen=True)
class Fit:
    slope: float  # bits per doubling of N
    intercept: float
    r2: float


def fit_log2(xs: list[float], ys: list[float]) -> Fit:
    """Least squares y = a + b·log2 x. R² is 1 for a perfect (also a flat) fit."""
    lx, y = np.log2(np.asarray(xs, float)), np.asarray(ys, float)
    if len(lx) < 2:
        return Fit(math.nan, math.nan, math.nan)
    b, a = np.polyfit(lx, y, 1)
    ss_res, ss_tot = float(((y - (a + b * lx)) ** 2).sum()), float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 if ss_tot == 0 else 1 - ss_res / ss_tot
    return Fit(float(b), float(a), r2)


def per_doubling(Ns: list[int], widths: list[int]) -> list[float]:
    """Bits added per doubling of N between consecutive grid points."""
    return [(w2 - w1) / math.log2(n2 / n1) for (n1, w1), (n2, w2) in zip(zip(Ns, widths), zip(Ns[1:], widths[1:]))]


def verdict(needs: list[Need], fit: Fit) -> str:
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
               input_kind: str = "random", progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Bits needed per N and construction, the fits and the verdicts (a JSON-able dict)."""
    if not 0 < target < 1 or target < 2.0 ** -36:
        raise UsageError(f"--target: must lie in [2^-36, 1) (the float64 truth resolves ~2^-40); got {target}")
    hints: dict[str, int | None] = {c: None for c in constructions}
    needs: dict[str, list[Need]] = {c: [] for c in constructions}
    families: dict[int, str] = {}
    for N in sorted(Ns):
        setup = make_setup(N, M, d, seed, sample_blocks, input_kind)
        family = make_family(kind, setup, exp_bits, int_bits, options)
        families[N] = f"fixed:q{family.fixed_bits}.F" if kind == "fixed" else f"float:{family.fixed_bits}.M"
        for c in constructions:
            if progress:
                progress(f"N={N} {c}")
            need = bits_needed(c, setup, family, target, hints[c], seed)
            hints[c] = need.precision
            needs[c].append(need)
    out: dict[str, Any] = {"Ns": sorted(Ns), "M": M, "family": kind, "target": target, "d": d, "seed": seed,
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
                 input_kind: str = "random") -> dict[str, Any]:
    """Error bits at one format against the number of merged blocks n = N/M (fit: bits per doubling of n)."""
    get_numerics(fmt)  # a clear error for a bad name
    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in constructions}
    for N in sorted(Ns):
        setup = make_setup(N, M, d, seed, sample_blocks, input_kind)
        for c in constructions:
            e = evaluate(c, fmt, 0, setup, seed)
            rows[c].append({"N": N, "n": math.ceil(N / M), "error_bits": e.error_bits, "reason": e.reason})
    fits = {}
    for c, rs in rows.items():
        good = [r for r in rs if math.isfinite(r["error_bits"])]
        f = fit_log2([r["n"] for r in good], [r["error_bits"] for r in good])
        fits[c] = {"slope": f.slope, "r2": f.r2}
    return {"format": fmt, "M": M, "rows": rows, "fits": fits}


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
            b, a = np.polyfit([p[0] for p in pts], [p[1] for p in pts], 1)
            fits[name] = float(b)
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
    for k in range(0, min(max_log2_A, math.floor(math.log2(top)) - 2) + 1):  # A + 1 must fit the format
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
            "precision_bits": getattr(nm, "bits", None)}


def parse_target(text: str) -> float:
    """``2^-10``, ``2**-10``, ``1e-3`` or ``0.001``."""
    t = text.strip().replace("**", "^")
    try:
        if "^" in t:
            base, exp = t.split("^", 1)
            return float(base) ** float(exp)
        return float(t)
    except ValueError:
        raise UsageError(f"--target: expected e.g. 2^-10 or 1e-3, got {text!r}") from None
