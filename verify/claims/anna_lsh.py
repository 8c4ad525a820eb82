"""Checkers of the ANNA paper's nearest-neighbour attention (Thm 3.4 / A.1, Algorithms 1 and 2; paper_refs/anna.toml).

The LSH parameters z and ell are *inputs* to Algorithm 1: the checker sets them as the proof of Theorem A.1
does (``attnsim.theory.lsh.proof_parameters``) and reports them in ``derived``; paper_refs defines the same
ell(N), z(N), so the exact hash count also confirms that the run used the proof's choices, and the containment
sees them grow (docs/anna_eta.md). The failure rate eta decides anna.alg_1 / alg_2 through its Clopper-Pearson
interval (:func:`eta_reason`). Each run is compared with an independent reference
(:mod:`attnsim.verify.lsh_reference`); counts are read off the ledger.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attnsim.sim.anna.attention import anna_linear_memory, anna_tables
from attnsim.sim.anna.constraints import RationalWeights, check_anna
from attnsim.sim.anna.lsh import FAMILIES, draw_tables
from attnsim.sim.anna.tasks import (
    clustered_sphere_points,
)
from attnsim.sim.engine.blas import single_threaded_blas
from attnsim.sim.ledger import Ledger
from attnsim.theory.lsh import proof_parameters, rho_limit
from attnsim.verify import lsh_reference
from attnsim.verify.lsh_sensitivity import lsh_range, rho_too_large, sensitivity
from attnsim.verify.registry import CheckContext, Measurement, Param, UsageError, checker
from attnsim.verify.stats import binomial_interval, interval_above, rate_upper

EXACT = ("exact",)


# ---------------------------------------------------------------- Theorem 3.4 / Algorithms 1 and 2

DETERMINISTIC_RULES = ("nonnegative", "normalized")
"""ANNA rules that collision-count weights meet on every draw; a break of one fails the run outright."""


def eta_reason(failures: int, runs: int, eta_bound: float, alpha: float = 0.05) -> str | None:
    """Why the measured failure rate contradicts the proof's eta, or None when it does not.

    The definition (Def. of ANNA, Sec. 3) allows each run to fail with probability eta; the verdict
    fails when the whole (1 - alpha) Clopper-Pearson interval of failures/runs lies above
    ``eta_bound`` (the proof of Thm A.1's union bound at this N).
    """
    above = interval_above(failures, runs, eta_bound, level=1 - alpha)
    if above is None:
        return None
    return (f"eta: {failures}/{runs} runs break the ANNA definition; the {100 * (1 - alpha):g}% Clopper-Pearson "
            f"interval [{above[0]:.4g}, {above[1]:.4g}] lies above the proof's eta = {eta_bound:.4g}")


_LSH_PARAMS = [
    Param("N", int, 64, "number of queries and of keys", minimum=2),
    Param("m", int, 8, "query/key dimension (points on the unit sphere)", minimum=2),
    Param("r", float, 0.2, "near radius r", minimum=1e-6, maximum=2.0),
    Param("c", float, 7.0, "approximation factor c (need c*r <= 2 on the sphere)", minimum=1.0, maximum=2e6),
    Param("seeds", int, 200, "independent seeds (input and hash draws)", minimum=1),
    Param("lsh", str, "hyperplane", "hash family (cross-polytope: Andoni et al. 2015)", choices=tuple(FAMILIES)),
]


_CP = {"lsh": "cross-polytope"}


def _lsh_grid(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"N": 16, "seeds": 20}, {"N": 32, "seeds": 20}, {"N": 64, "seeds": 10}, {"N": 32, "seeds": 20, **_CP}]
    return [{"N": 16, "seeds": 200}, {"N": 32, "seeds": 200}, {"N": 64, "seeds": 200}, {"N": 128, "seeds": 100},
            {"N": 256, "seeds": 30}] + [{"N": n, "seeds": k, **_CP} for n, k in ((32, 200), (64, 200), (128, 50))]


def _alg2_grid(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"N": 32, "seeds": 20}, {"N": 32, "seeds": 10, **_CP}]
    return [{"N": n, "seeds": 20} for n in (32, 128, 256)] + [{"N": n, "seeds": 20, **_CP} for n in (32, 128)]


def _lsh_trials(ctx: CheckContext, alg: str) -> Measurement:
    N, m, r, c, runs, lsh = (ctx.params[k] for k in ("N", "m", "r", "c", "seeds", "lsh"))
    if c <= 1:
        raise UsageError(f"--c: the approximation factor must be > 1, got {c}")
    if c * r > 2 or (lsh == "cross-polytope" and c * r >= 2):
        raise UsageError(f"--r, --c: c*r = {c * r:g} must stay below 2, the diameter of the unit sphere")
    sens = sensitivity(lsh, r, c, m)
    p1, p2 = sens.p1, sens.p2
    pp = proof_parameters(N, p1, p2)
    if pp.rho >= rho_limit():
        raise UsageError(f"--c: {rho_too_large(pp.rho, r, c)}")
    rng = np.random.default_rng(ctx.seed)
    family = FAMILIES[lsh](m)
    failures, broken, disagree, inconsistent = 0, 0, 0, 0
    rules: dict[str, int] = {}
    hashes_per_run, memory, last = set(), 0, Ledger()
    with single_threaded_blas():  # many small products: helper threads would only spin between them
        for _ in range(runs):
            q, k = clustered_sphere_points(rng, N, m, r)
            v = rng.integers(-1000, 1001, size=(N, m))  # m-dimensional values, as Thm 3.4 sums them: its memory's m
            tables = draw_tables(family, pp.ell, pp.z, rng)
            l1, l2 = Ledger(), Ledger()
            a1 = anna_tables(q, k, v, tables, ledger=l1)
            a2 = anna_linear_memory(q, k, v, tables, ledger=l2)
            counts = lsh_reference.collision_counts(q, k, tables)
            sums, hits = lsh_reference.retrieval(counts, v)
            disagree += not a1.same_as(a2)
            inconsistent += not all(np.array_equal(a.counts, hits) and np.array_equal(a.sums, sums) for a in (a1, a2))
            found = check_anna(RationalWeights.from_counts(counts), q, k, r=r, c=c, ell=pp.ell)
            failures += any(f.rule not in DETERMINISTIC_RULES for f in found)
            broken += any(f.rule in DETERMINISTIC_RULES for f in found)
            for rule in {f.rule for f in found}:
                rules[rule] = rules.get(rule, 0) + 1
            own = l1 if alg == "alg1" else l2
            hashes_per_run.add(own.total("hash"))
            memory = max(memory, own.total("memory_words"))
            last = own
    lo, hi = binomial_interval(failures, runs, method="exact")
    upper = eta_upper(failures, runs)
    reasons = []
    if disagree:
        reasons.append(f"Algorithms 1 and 2 differ on {disagree} of {runs} runs")
    if inconsistent:
        reasons.append(f"Algorithm 1 or 2 differs from independently hashed collision counts on {inconsistent} runs")
    if len(hashes_per_run) != 1:
        reasons.append(f"hash evaluations vary between runs: {sorted(hashes_per_run)}")
    if broken:
        reasons.append(f"weights are negative or do not sum to 1 on {broken} of {runs} runs "
                       "(the ANNA definition allows no such run)")
    eta_fail = eta_reason(failures, runs, pp.eta_bound)
    if eta_fail:
        reasons.append(eta_fail)
    eta = failures / runs
    derived = {"rho": pp.rho, "p1": p1, "p2": p2, "q2": 1 / p2 - 1, "z": pp.z, "ell": pp.ell, "delta": pp.delta}
    return Measurement(
        evidence="independent", reference=lsh_reference.REFERENCE,
        agree=not (disagree or inconsistent), error_bits=math.inf if not (disagree or inconsistent) else 0.0,
        counts={"hash_evaluations": max(hashes_per_run), "eta": upper, "eta_proof": upper,
                "eta_ci95_low": lo, "eta_ci95_high": hi, "memory_words": memory},
        counts_by_tag=last.by_tag("hash"), derived=derived, reasons=reasons,
        extra={**derived, "lsh": lsh, "rho_source": sens.how, "p1_estimate": sens.p1_estimate,
               "p2_estimate": sens.p2_estimate, "runs": runs, "violating_runs": failures, "violations_by_rule": rules,
               "eta_hat": eta, "eta_ci95": [lo, hi], "eta_upper95": upper, "eta_proof_at_N": pp.eta_bound,
               "eta_decides": "fail when the 95% interval lies above the proof's eta at this N",
               "alg1_equals_alg2_runs": runs - disagree,
               "last_run": {"buckets": last.total("bucket"), "collisions": last.total("collision")},
               "notes": f"no ANNA violation in {runs - failures}/{runs} runs; eta_hat = {eta:.4g}, "
                        f"95% Clopper-Pearson [{lo:.4g}, {hi:.4g}]; eta and eta_proof are measured as the "
                        f"one-sided 95% upper bound {upper:.4g}"},
    )


def eta_upper(failures: int, runs: int, level: float = 0.95) -> float:
    """The one-sided ``level`` Clopper-Pearson upper bound on eta from ``failures`` of ``runs``
    (:func:`~attnsim.verify.stats.rate_upper`): what anna.alg_1 / anna.alg_2 report as eta and eta_proof.

    Thm 3.4 / A.1 bounds a failure probability, eta = O(N^(3 rho - 1)), so the measurement is what the runs show
    eta to be at most: the empirical rate is 0 at every size of a feasible sweep and would fit nothing (a factor
    times 0 is 0), while the upper bound falls only as fast as the runs grow (:func:`eta_runs`)."""
    return rate_upper(failures, runs, level)


ETA_TARGET = 2.0
"""The growth sweep runs at each N the fewest seeds whose zero-failure upper bound is at most this times the paper's
N^(3 rho - 1): the sweep can show eta = O(N^(3 rho - 1)), and anything growing on top of what it shows."""


def eta_runs(N: int, target: float = ETA_TARGET, r: float = 0.2, c: float = 7.0, m: int = 8,
             lsh: str = "hyperplane") -> int:
    """The fewest runs whose :func:`eta_upper` at zero failures is at most ``target`` x eta's bound of anna.alg_1
    (paper_refs, ``N^(3 rho - 1)``) at this N, with rho of the family at (r, c, m)."""
    from attnsim.paper_refs import get as get_claim
    from attnsim.theory.formulas import evaluate

    sens = sensitivity(lsh, r, c, m)
    rho = proof_parameters(N, sens.p1, sens.p2).rho
    claim = get_claim("anna.alg_1")
    bound = float(evaluate(claim.resources["eta"].bound, claim.definitions, {"N": N, "rho": rho}))
    runs = 1
    while eta_upper(0, runs) > target * bound:
        runs += 1
    return runs


def _lsh_growth(quick: bool) -> list[dict[str, Any]]:
    """Sizes N = 16 ... 128 (quick) or 32 ... 512, each with :func:`eta_runs` seeds (10 ... 124)."""
    return [{"N": n, "seeds": eta_runs(n)} for n in ((16, 32, 64, 128) if quick else (32, 64, 128, 256, 512))]


_LSH_GROWTH = _lsh_growth


@checker("anna.alg_1", evidence="independent", relations=lsh_range,
         numerics=EXACT, params=_LSH_PARAMS, grid=_lsh_grid, growth_grid=_LSH_GROWTH)
def check_alg_1(ctx: CheckContext) -> Measurement:
    """Algorithm 1 on random clustered inputs: definition violations over seeds; equals Algorithm 2."""
    return _lsh_trials(ctx, "alg1")


@checker("anna.alg_2", evidence="independent", relations=lsh_range,
         numerics=EXACT, params=_LSH_PARAMS, grid=_alg2_grid, growth_grid=_LSH_GROWTH)
def check_alg_2(ctx: CheckContext) -> Measurement:
    """Algorithm 2: the same (sums, counts) as Algorithm 1 for the same hashes, one table of memory."""
    return _lsh_trials(ctx, "alg2")
