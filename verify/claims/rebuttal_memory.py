"""Checkers for what the authors told reviewers about memory and hash tables (issue 11, items 3, 5, 6).

* ``two_heads.rebuttal_kv_memory`` (seed 000/001): the simulation needs O(N·d) storage like a KV
  cache. We measure the peak live memory (``tracemalloc``; numpy reports its buffers to it) of the
  float64 simulation of one head on the streaming engine (:mod:`attnsim.sim.engine`) over a doubling
  sweep of N and fit the log-log exponent. The engine streams by key-block column, so its memory is
  O(N·M + N·d): linear in N at fixed M, but not O(N·d) independently of M. ``path=direct`` measures
  direct attention materialising N × N scores (exponent ≈ 2) -- the comparison, and the deliberately
  wrong "simulation" that the exponent check must reject.
* ``anna.rebuttal_hash_tables`` (seed 002): ell, z and the failure bound eta from the proof's formulas
  (:func:`attnsim.theory.lsh.ideal_parameters`, rho = 1/c^2, p2 given) for the reviewer's grid, and the
  empirical eta of Algorithm 1 at small N via the ``anna.alg_1`` checker.
* ``anna.rebuttal_linear_memory`` (seed 002): peak memory words of Algorithm 2 (one table reused) and
  Algorithm 1 (ell tables) from their ledgers over a doubling sweep of N, both exponents fitted.

The target exponents come from paper_refs (``[claims.extra] exponent``); a checker only compares.
"""

from __future__ import annotations

import math
import tracemalloc
from typing import Any, Callable

import numpy as np

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.attention import anna_linear_memory, anna_tables
from attnsim.sim.anna.lsh import HyperplaneLSH, draw_tables
from attnsim.sim.anna.tasks import clustered_sphere_points
from attnsim.sim.ledger import Ledger
from attnsim.theory.formulas import evaluate
from attnsim.theory.lsh import hyperplane_probabilities, ideal_parameters, proof_parameters
from attnsim.verify.long_run import random_layer, run_layer
from attnsim.verify.registry import (CheckContext, Measurement, Param, UsageError, checker, get_checker,
                                     report_section)

EXPONENT_SLACK = 0.25
"""How far a fitted log-log exponent may exceed the claimed one (fits over 3-5 doublings carry log factors)."""


def loglog_exponent(ns: list[int], values: list[float]) -> float:
    """Least-squares slope of log(value) against log(N)."""
    if len(ns) < 2:
        raise UsageError("--points: an exponent needs at least 2 sizes")
    return float(np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(values, float)), 1)[0])


def claimed_exponent(claim_id: str, name: str = "exponent") -> float:
    """The exponent a claim states, from its ``[claims.extra]`` table in paper_refs."""
    return float(evaluate(str(get_claim(claim_id).extra[name]), {}, {}))


def exponent_reason(what: str, fitted: float, claimed: float) -> list[str]:
    if fitted > claimed + EXPONENT_SLACK:
        return [f"{what}: fitted log-log exponent {fitted:.3f} exceeds the claimed {claimed:g} "
                f"(+{EXPONENT_SLACK} slack)"]
    return []


def sweep(n_max: int, points: int) -> list[int]:
    """n_max / 2^(points-1), ..., n_max / 2, n_max."""
    if points < 2:
        raise UsageError(f"--points: need at least 2 sizes for a fit, got {points}")
    ns = [n_max >> k for k in range(points - 1, -1, -1)]
    if ns[0] < 2:
        raise UsageError(f"--N, --points: the sweep N/2^(points-1) = {ns[0]} is below 2")
    return ns


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak live bytes (tracemalloc) while ``fn`` runs, above what was live before it started."""
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        if not was:
            tracemalloc.stop()


# ---------------------------------------------------------------- Two Heads: KV-cache memory

def direct_attention(N: int, d: int, seed: int) -> np.ndarray:
    """One head of attention computed directly: the N × N scores and weights exist in full."""
    spec, weights, X = random_layer(N, d, 1, seed)
    hw = weights.layers[0].heads[0]
    s = (X @ hw.WQ) @ (X @ hw.WK).T
    w = np.exp(s - s.max(axis=1, keepdims=True))
    return (w @ (X @ hw.WV)) / w.sum(axis=1, keepdims=True)


def simulation_peak(path: str, N: int, M: int, d: int, seed: int) -> int:
    if path == "engine":
        return peak_bytes(lambda: run_layer(N, M, d, scheme="fused", scheduler="serial", workers=1, seed=seed))
    return peak_bytes(lambda: direct_attention(N, d, seed))


def _kv_grid(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"N": 1024, "M": 32, "d": 16, "points": 3, "compare": 1024}]
    return [{"N": 8192, "M": 128, "d": 64, "points": 5, "compare": 4096}]


def peak_sweep(path: str, ns: list[int], M: int, d: int, seed: int) -> tuple[list[int], float]:
    """Peak bytes per N (after one unmeasured warm-up run: first-call caches are not the method's) and the exponent."""
    simulation_peak(path, ns[0], M, d, seed)
    peaks = [simulation_peak(path, n, M, d, seed) for n in ns]
    return peaks, loglog_exponent(ns, peaks)


@checker("two_heads.rebuttal_kv_memory", numerics=("float64",), default_numerics="float64", grid=_kv_grid, params=[
    Param("N", int, 2048, "largest input length of the sweep", minimum=2),
    Param("M", int, 64, "oracle length (block size b = M)", minimum=2),
    Param("d", int, 32, "embedding dimension (one head)", minimum=1),
    Param("points", int, 4, "sizes in the doubling sweep N/2^(points-1) .. N", minimum=2),
    Param("path", str, "engine", "what is measured as the simulation: engine, or direct (N x N attention; "
          "a wrong simulation that the exponent check must reject)", choices=("engine", "direct")),
    Param("compare", int, 1024, "largest N of the direct-attention comparison sweep (0: none)", minimum=0),
])
def check_kv_memory(ctx: CheckContext) -> Measurement:
    """Peak live memory of one head's float64 simulation against N, log-log exponent against the claim;
    direct attention's exponent alongside for comparison (not checked)."""
    p = ctx.params
    ns = sweep(p["N"], p["points"])
    peaks, fitted = peak_sweep(p["path"], ns, p["M"], p["d"], ctx.seed)
    claimed = claimed_exponent(ctx.claim)
    reasons = exponent_reason(f"peak memory of the {p['path']} path", fitted, claimed)
    extra: dict[str, Any] = {
        "path": p["path"], "N_sweep": ns, "peak_bytes": peaks, "exponent": fitted, "claimed_exponent": claimed,
        "slack": EXPONENT_SLACK, "bytes_per_token": [pk / n for pk, n in zip(peaks, ns)]}
    if p["compare"]:
        dns = [n for n in sweep(p["compare"], p["points"]) if n >= 2]
        dpeaks, dfit = peak_sweep("direct", dns, p["M"], p["d"], ctx.seed)
        extra.update(direct_N_sweep=dns, direct_peak_bytes=dpeaks, direct_exponent=dfit)
    return Measurement(agree=None, counts={"peak_bytes": peaks[-1], "exponent": fitted}, derived={"b": p["M"]},
                       reasons=reasons, extra=extra)


# ---------------------------------------------------------------- ANNA: hash tables in practice

TABLE_NS = (1_000, 16_000, 100_000, 1_000_000)
TABLE_CS = (1.1, 2.0, 3.0, 10.0, 1000.0)


def empirical_eta(n: int, runs: int, seed: int) -> dict[str, Any]:
    """Algorithm 1's failure rate over ``runs`` seeds at N = n, by anna.alg_1's checker, next to the
    proof's union bound for that run's ell and z (the ``eta_proof`` formula of anna.alg_1 in paper_refs)."""
    from attnsim.verify.claims.anna import check_alg_1

    params = get_checker("anna.alg_1").resolve({"N": n, "runs": runs})
    m = check_alg_1(CheckContext("anna.alg_1", params, "exact", seed, None))
    claim = get_claim("anna.alg_1")
    bound = float(evaluate(claim.resources["eta_proof"].bound, claim.definitions, {**params, **m.derived}))
    ex = m.extra
    return {"N": n, "runs": runs, "rho": ex["rho"], "z": ex["z"], "ell": ex["ell"], "eta_hat": ex["eta_hat"],
            "eta_ci95": ex["eta_ci95"], "violating_runs": ex["violating_runs"], "eta_proof_bound": bound,
            "alg_1_reasons": list(m.reasons)}


def _tables_grid(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"table": "reviewer", "emp_N": 16, "runs": 10}]
    return [{"table": "full", "emp_N": 32, "runs": 100}, {"table": "full", "emp_N": 64, "runs": 50}]


@checker("anna.rebuttal_hash_tables", numerics=("exact",), grid=_tables_grid, params=[
    Param("N", int, 16_000, "context length of the reviewer's example", minimum=2),
    Param("c", float, 10.0, "approximation factor of the reviewer's example", minimum=1.0),
    Param("p2", float, 0.5, "far-collision probability of one hash (the paper leaves it open)", minimum=1e-9),
    Param("table", str, "full", "full (N in 1e3..1e6, c in 1.1..1000), reviewer (its N only), none",
          choices=("full", "reviewer", "none")),
    Param("emp_N", int, 32, "N of the empirical eta runs (anna.alg_1's checker, hyperplane LSH, r=0.2, c=7)", minimum=2),
    Param("runs", int, 50, "seeds of the empirical eta runs (0: skip them)", minimum=0),
])
def check_hash_tables(ctx: CheckContext) -> Measurement:
    """The proof's ell, z, eta for an ideal family (rho = 1/c^2), and Algorithm 1's empirical eta."""
    p = ctx.params
    if p["c"] <= 1:
        raise UsageError(f"--c: the approximation factor must be > 1, got {p['c']}")
    if not 0 < p["p2"] < 1:
        raise UsageError(f"--p2: must be in (0, 1), got {p['p2']}")
    here = ideal_parameters(p["N"], p["c"], p["p2"])
    ns = {"full": TABLE_NS, "reviewer": (p["N"],), "none": ()}[p["table"]]
    table = []
    for n in ns:
        for c in TABLE_CS:
            q = ideal_parameters(n, c, p["p2"])
            table.append({"N": n, "c": c, "rho": q.rho, "z": q.z, "ell": q.ell, "delta": q.delta,
                          "eta_bound": q.eta_bound, "ell_asymptotic": q.ell_asymptotic,
                          "hash_evaluations": q.hash_evaluations, "theorem_applies": q.rho < 1 / 3})
    reasons: list[str] = []
    empirical: dict[str, Any] = {}
    if p["runs"]:
        empirical = empirical_eta(p["emp_N"], p["runs"], ctx.seed)
        if empirical["eta_ci95"][0] > empirical["eta_proof_bound"]:
            reasons.append(f"empirical eta {empirical['eta_hat']:.3g} (95% CI from {empirical['eta_ci95'][0]:.3g}) "
                           f"exceeds the proof's bound {empirical['eta_proof_bound']:.3g} at N={p['emp_N']}")
        reasons += [f"anna.alg_1 at N={p['emp_N']}: {r}" for r in empirical["alg_1_reasons"]]
    derived = {"rho": here.rho, "p1": here.p1, "z": here.z, "ell": here.ell, "delta": here.delta}
    return Measurement(
        agree=None, counts={"tables": here.ell, "z": here.z, "eta_bound": here.eta_bound},
        derived=derived, reasons=reasons,
        extra={**derived, "eta_bound": here.eta_bound, "ell_asymptotic_ln": here.ell_asymptotic,
               "ell_asymptotic_log2": here.ell_asymptotic / math.log(2), "table": table, "empirical": empirical},
    )


# ---------------------------------------------------------------- ANNA: linear memory

def lsh_memory_words(N: int, m: int, r: float, c: float, seed: int) -> tuple[int, int, bool]:
    """Peak memory words of Algorithm 1 and Algorithm 2 on one clustered input (same hashes), and equality."""
    p1, p2 = hyperplane_probabilities(r, c)
    pp = proof_parameters(N, p1, p2)
    rng = np.random.default_rng(seed)
    q, k = clustered_sphere_points(rng, N, m, r)
    v = rng.integers(-1000, 1001, size=(N, 2))
    tables = draw_tables(HyperplaneLSH(m), pp.ell, pp.z, rng)
    l1, l2 = Ledger(), Ledger()
    same = anna_tables(q, k, v, tables, ledger=l1).same_as(anna_linear_memory(q, k, v, tables, ledger=l2))
    return int(l1.total("memory_words")), int(l2.total("memory_words")), same


def _linmem_grid(quick: bool) -> list[dict[str, Any]]:
    return [{"N": 256, "points": 3}] if quick else [{"N": 4096, "points": 6}]


@checker("anna.rebuttal_linear_memory", numerics=("exact",), grid=_linmem_grid, params=[
    Param("N", int, 1024, "largest N of the sweep", minimum=2),
    Param("points", int, 4, "sizes in the doubling sweep", minimum=2),
    Param("m", int, 8, "query/key dimension", minimum=2),
    Param("r", float, 0.2, "near radius", minimum=1e-6),
    Param("c", float, 7.0, "approximation factor (c*r <= 2)", minimum=1.0),
])
def check_linear_memory(ctx: CheckContext) -> Measurement:
    """Algorithm 2's and Algorithm 1's peak memory words (ledger) against N, exponents fitted."""
    p = ctx.params
    if p["c"] <= 1 or p["c"] * p["r"] > 2:
        raise UsageError(f"--c, --r: need c > 1 and c*r <= 2, got c={p['c']}, r={p['r']}")
    ns = sweep(p["N"], p["points"])
    runs = [lsh_memory_words(n, p["m"], p["r"], p["c"], ctx.seed) for n in ns]
    w1, w2 = [r[0] for r in runs], [r[1] for r in runs]
    e1, e2 = loglog_exponent(ns, w1), loglog_exponent(ns, w2)
    claimed = claimed_exponent(ctx.claim)
    reasons = exponent_reason("Algorithm 2's memory words", e2, claimed)
    reasons += [f"Algorithms 1 and 2 differ at N={n}" for n, r in zip(ns, runs) if not r[2]]
    pp = proof_parameters(p["N"], *hyperplane_probabilities(p["r"], p["c"]))
    return Measurement(
        agree=all(r[2] for r in runs), error_bits=math.inf if all(r[2] for r in runs) else 0.0,
        counts={"memory_words": w2[-1], "alg1_memory_words": w1[-1], "exponent": e2},
        derived={"z": pp.z, "ell": pp.ell, "rho": pp.rho}, reasons=reasons,
        extra={"N_sweep": ns, "alg1_words": w1, "alg2_words": w2, "alg1_exponent": e1, "alg2_exponent": e2,
               "exponent": e2, "claimed_exponent": claimed, "slack": EXPONENT_SLACK, "z": pp.z, "ell": pp.ell,
               "rho": pp.rho},
    )


# ---------------------------------------------------------------- report sections

def _latest(records: list[dict], claim: str) -> dict | None:
    """The record of ``claim`` with the largest N (ties: the last one)."""
    rs = [r for r in records if r["claim"] == claim]
    return max(rs, key=lambda r: r["params"].get("N", 0)) if rs else None


def _verdict(r: dict | None) -> str:
    if r is None:
        return "**not run** in this sweep"
    return "**holds**" if r["verdict"] == "pass" else "**does not hold**: " + "; ".join(r["reasons"])


def _mib(b: float) -> str:
    return f"{b / 2**20:.2f}"


@report_section("two_heads")
def two_heads_memory_section(records: list[dict], out_dir, quick: bool) -> str:
    """Issue 11, item 3: KV-cache memory of the simulation."""
    r = _latest(records, "two_heads.rebuttal_kv_memory")
    md = ["### Questions from review — Two Heads (memory and tables)", "",
          "#### Does the simulation need only KV-cache memory?", "",
          "A reviewer asked what the simulation costs in memory; the authors answered that it stores only keys, "
          "values and a constant number of fixed vectors, O(N·d) like a KV cache.", ""]
    if r is not None:
        ex, p = r["extra"], r["params"]
        md += [f"Measured: peak live memory (tracemalloc) of one float64 head on the streaming engine, M = {p['M']}, "
               f"d = {p['d']}, fused scheme, against direct attention materialising N × N scores.", "",
               "| N | simulation peak (MiB) | bytes per token | direct attention peak (MiB) |", "|---|---|---|---|"]
        direct = dict(zip(ex.get("direct_N_sweep", []), ex.get("direct_peak_bytes", [])))
        for n, pk, bpt in zip(ex["N_sweep"], ex["peak_bytes"], ex["bytes_per_token"]):
            md.append(f"| {n} | {_mib(pk)} | {bpt:.0f} | {_mib(direct[n]) if n in direct else '—'} |")
        md += ["", f"Fitted log-log exponent: simulation **{ex['exponent']:.3f}**"
               + (f", direct attention **{ex['direct_exponent']:.3f}**" if "direct_exponent" in ex else "") + ".", ""]
    md += ["Claim (`two_heads.rebuttal_kv_memory`, our words): the simulation's memory grows linearly in N at fixed "
           "M. What the engine actually holds is O(N·M + N·d): keys and values plus the scores of one key-block "
           "column of calls (about N·M), so the authors' O(N·d) is right in N but hides a factor M/d when M > d.", "",
           f"Verdict: {_verdict(r)}.", ""]
    return "\n".join(md)


def _nearby(table: list[dict], n: int) -> str:
    """Where the reviewer's two figures do appear in the tabulated grid (64 at c = 10, about 900 at N = n)."""
    ell = {(row["N"], row["c"]): row["ell"] for row in table}
    out = []
    if (n, 3.0) in ell:
        out.append(f"ℓ = {ell[(n, 3.0)]} at c = 3, N = {n:,}")
    if (1_000_000, 10.0) in ell:
        out.append(f"ℓ = {ell[(1_000_000, 10.0)]} at c = 10, N = 10⁶")
    return (" For comparison, the same formulas give " + " and ".join(out) + ".") if out else ""


@report_section("anna")
def anna_memory_section(records: list[dict], out_dir, quick: bool) -> str:
    """Issue 11, items 5 and 6: hash tables in practice and the linear-memory Algorithm 2."""
    t = _latest(records, "anna.rebuttal_hash_tables")
    md = ["### Questions from review — ANNA (memory and tables)", "",
          "#### How many hash tables, and how likely is a failure, in practice?", "",
          "A reviewer estimated 64 tables per layer at c = 10, N = 16,000 (against about 900 from a literal reading "
          "of the bound) and asked for the constants and the failure probability; the authors answered that the "
          "constants are beyond their analysis and that η decays polynomially in N.", ""]
    if t is not None:
        ex, p = t["extra"], t["params"]
        md += [f"Constants used (the proof of Theorem A.1, `attnsim.theory.lsh`): ideal family ρ = 1/c², "
               f"p2 = {p['p2']}, p1 = p2^ρ; z = ⌈log_(1/p2)(10N³)⌉, ℓ = ⌈ln(N²/δ)/p1^z⌉, δ = min(N^(3ρ−1), 1/10), "
               "η ≤ ℓN²p2^z + N²(1−p1^z)^ℓ. The theorem needs ρ < 1/3 (c > √3); rows with ρ ≥ 1/3 are shown "
               "for the arithmetic only.", "",
               f"The reviewer's example, c = {p['c']:g}, N = {p['N']}: **ℓ = {ex['ell']} tables, z = {ex['z']} "
               f"hashes per table, η ≤ {ex['eta_bound']:.3g}**; the asymptotic form N^(3ρ) log N gives "
               f"{ex['ell_asymptotic_ln']:.1f} with ln and {ex['ell_asymptotic_log2']:.1f} with log₂. We could "
               "not reproduce the reviewer's 64 from N^0.03 log N at this N." + _nearby(ex["table"], p["N"]), ""]
        if ex["table"]:
            md += ["| N | c | ρ | z | ℓ | η bound | theorem applies |", "|---|---|---|---|---|---|---|"]
            md += [f"| {row['N']:,} | {row['c']:g} | {row['rho']:.4g} | {row['z']} | {row['ell']:.4g} | "
                   f"{row['eta_bound']:.3g} | {'yes' if row['theorem_applies'] else 'no'} |" for row in ex["table"]]
            md.append("")
        e = ex.get("empirical") or {}
        if e:
            md += [f"Empirical η (random hyperplanes, r = 0.2, c = 7, ρ = {e['rho']:.3g}, N = {e['N']}, ℓ = {e['ell']}, "
                   f"z = {e['z']}): {e['violating_runs']} of {e['runs']} seeds broke the ANNA definition, "
                   f"η̂ = {e['eta_hat']:.3g} (95% CI [{e['eta_ci95'][0]:.3g}, {e['eta_ci95'][1]:.3g}]) against the "
                   f"proof's bound {e['eta_proof_bound']:.3g}. Larger N is not feasible to run: ℓ·z hashes per point "
                   "and an N² definition check per seed.", ""]
    md += ["Claim (`anna.rebuttal_hash_tables`, our words): with the proof's constants, ℓ and z are as tabulated "
           "and the empirical failure rate stays within the proof's union bound.", "", f"Verdict: {_verdict(t)}.", ""]
    m = _latest(records, "anna.rebuttal_linear_memory")
    md += ["#### Does Algorithm 2 really run in linear memory?", "",
           "A reviewer asked about the memory overhead of the hash tables; the authors answered that one table reused "
           "over the ℓ rounds (Algorithm 2) needs only O(N) memory at the same time.", ""]
    if m is not None:
        ex = m["extra"]
        md += ["Measured: peak memory words from the constructions' ledgers, the same hash draws for both "
               f"(hyperplane LSH, r = 0.2, c = 7, m = 8; at the largest N: ℓ = {ex['ell']}, z = {ex['z']}).", "",
               "| N | Algorithm 1 words | Algorithm 2 words | ratio |", "|---|---|---|---|"]
        md += [f"| {n} | {a} | {b} | {a / b:.1f} |" for n, a, b in zip(ex["N_sweep"], ex["alg1_words"], ex["alg2_words"])]
        md += ["", f"Fitted log-log exponents: Algorithm 2 **{ex['alg2_exponent']:.3f}**, Algorithm 1 "
               f"**{ex['alg1_exponent']:.3f}** (ℓ grows like N^(3ρ) log N and z like log N, so both carry log "
               "factors over a short sweep).", ""]
    md += ["Claim (`anna.rebuttal_linear_memory`, our words): Algorithm 2 gives Algorithm 1's output exactly with "
           "memory linear in N up to the log N code words per bucket.", "", f"Verdict: {_verdict(m)}.", ""]
    return "\n".join(md)
