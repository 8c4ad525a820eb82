"""Checkers for MPC in small memory: anna.thm_4_2 (= Thm C.3) and anna.thm_c_1 (Thm C.1) (Lemma C.2's sort is
checked in verify/claims/anna_sort.py); and the O(d N log N) time of exact-match attention (anna.def_ema, App. B).

Both run a construction of :mod:`attnsim.sim.anna.mpc_small` on the referee MPC machine and compare
every layer's output exactly with the reference (Algorithm 1 for ANNA, sorted exact matching for
EMA) on the same hash draws. Rounds, machines and the largest load are read off the MPC ledger; the
exact formulas and the paper's bounds live in paper_refs/anna.toml. The LSH parameters z and ell
are the proof of Thm A.1's choice for each N (:func:`attnsim.theory.lsh.proof_parameters`); the
checker passes rho, q2 = 1/p2 - 1 and A1 = alphabet - 1 so the toml can write z and ell as the
proof's functions of N.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from attnsim.sim.anna.anna_stack import clustered_stack, exact_match_stack, run_stack
from attnsim.sim.anna.attention import ema
from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.lsh import FAMILIES, draw_tables
from attnsim.sim.anna.mpc import MPCLimitError
from attnsim.sim.anna.mpc_small import SORTS, SmallMemoryPlan, SmallMemoryRun, anna_stack_mpc, memory_reasons
from attnsim.sim.ledger import Ledger
from attnsim.theory.lsh import proof_parameters, rho_limit
from attnsim.verify.agreement import exact_outcome
from attnsim.verify.anna_mpc_memory import (
    defined,
    in_sublinear_memory,
    least_s_scale,
    max_load,
    memory_words,
    regime,
)
from attnsim.verify.lsh_sensitivity import sensitivity
from attnsim.verify.refusals import REFUSAL_DRAWS, Refused, draw_seed, refused, runs_deciding_refusals
from attnsim.verify.registry import CheckContext, Measurement, Param, ParamSweep, UsageError, checker, size_grid
from attnsim.verify.relations import eps1_between

EXACT = ("exact",)
LSH_NAMES = tuple(FAMILIES)


def value_of(ctx: CheckContext, name: str, derived: dict[str, Any] | None = None) -> int:
    """The claim's definition ``name`` in paper_refs at these parameters (and ``derived`` values)."""
    return defined(ctx.claim, name, {**ctx.params, **(derived or {})})


def sort_rounds(sort: str, plan_rounds: int) -> int:
    """``sort_rounds`` of the exact round formula: the splitter sort's plan count a layer (a recursion over levels,
    the same for every draw; the ledger's total must then equal the formula, and its growth in N and in eps' - eps
    is judged by the sweeps); 0 for the radix sort, whose rounds the formula counts itself (``radix_rounds``)."""
    return 0 if sort == "radix" else plan_rounds


CONTAINMENT_ROUTE = {"splitter": "this route's",
                     "radix": "the splitter sort's (the default route); this route is held to its exact counts"}
"""Which route the record's containments analyse (paper_refs analyses the default route only)."""

SORT_ROUTE = {"splitter": "ours: Lemma C.2 by our randomized splitter-tree sample sort (docs/anna_lemma_c_2.md)",
              "radix": "ours: the LSD radix sort, O(1/(eps'-eps)^2) rounds (the labelled alternative)"}


def family_alphabet(tables: list) -> int:
    """The code alphabet of the drawn tables (all of one family)."""
    return tables[0][0].alphabet


REDRAWS_PARAM = Param("redraws", int, REFUSAL_DRAWS, "fresh draws of the splitter sort's random choices, on the "
                      "same input, when the record's own draw is refused: the chance of a refusal is decided over "
                      "them (each takes as long as the record's own draw; the batch stops once decided)",
                      minimum=1, maximum=100)

SORT_PARAM = Param("sort", str, "splitter", "Lemma C.2's sort: splitter (our splitter-tree sample sort, "
                   "O(1/(eps'-eps)) rounds) or radix (the LSD radix sort, O(1/(eps'-eps)^2), the labelled alternative)",
                   choices=SORTS)


def run_protocol(ctx: CheckContext, protocol: Callable[[Ledger, int], SmallMemoryRun]
                 ) -> tuple[list[tuple[SmallMemoryRun, Ledger]], list[str], dict[str, Any]]:
    """Run ``protocol(ledger, seed)`` at the record's seed. With the splitter sort a draw refused for a load starts a
    batch of ``redraws`` fresh draws of the sort's choices on the same input, whose refusals are decided by their
    probability (:mod:`attnsim.verify.refusals`); the radix sort's loads are exact, so its refusal fails the record,
    as does a refusal for a fault (a message to a machine that does not exist). Returns
    every run that was not refused (with its ledger) for the caller to compare, the refusals' reasons to fail, and
    the record's account of them."""
    def attempt(draw: int) -> tuple[SmallMemoryRun, Ledger] | Refused:
        ledger = Ledger()
        try:
            return protocol(ledger, draw_seed(ctx.seed, draw)), ledger
        except MPCLimitError as exc:
            return refused(exc)
        except AnnaInputError as exc:
            if str(exc).startswith("s:"):
                raise UsageError(f"--s_scale: {str(exc)[3:]}") from None
            raise

    exact = None if ctx.params["sort"] == "splitter" else f"{ctx.params['sort']} sort"
    return runs_deciding_refusals(attempt(0), attempt, ctx.params["redraws"], exact_loads=exact)


SORT_TAG = "mpc_small.sort."
"""The ledger tag of every round of the protocol's sort (either sort runs under the label ``sort``)."""


def ledger_counts(ledger: Ledger, load: int) -> dict[str, int]:
    """Machines, rounds and the sort's rounds off a run's ledger, and the largest load of the runs compared (a
    record none of whose draws ran has no counts: its refusals fail it)."""
    return {"machines": ledger.total("mpc_machine"), "rounds": ledger.rounds("mpc_round"),
            "sorting_rounds": ledger.rounds("mpc_round", SORT_TAG), "max_load": load}


SMALL_MEMORY = ({"eps1": 0.5, "s_scale": 12.0}, {"eps1": 0.75, "s_scale": 3.2})
"""s = ceil(s_scale N^eps') below N from N = 256 on (eps' = 1/2) and from N = 128 on (eps' = 3/4)."""
GAPS = (1 / 4, 3 / 16, 1 / 8, 1 / 16)
"""eps' - eps over the gap sweeps of the protocols, at eps = 1/16: 4 values spanning 4x."""


def gap_sweep(point: Callable[[bool, float], dict[str, Any]]) -> ParamSweep:
    """Rounds, and the sort's share of them, judged as 1/(eps' - eps) grows at a fixed N (a round count growing like
    1/(eps'-eps)^2 fails)."""
    return ParamSweep(var="1/(eps1 - eps)", grid=lambda quick: [point(quick, g) for g in GAPS],
                      resources=("rounds", "sorting_rounds"))


RADIX_MEMORY_4_2 = {**SMALL_MEMORY[1], "s_scale": 3.5}
"""Thm 4.2's radix points: with H = 2 heads a machine holds 6 items and a scan-tree node of 4 children (214 words
at N = 256), past the s = 205 of SMALL_MEMORY's 3.2; 3.5 gives s = 224 there and 634 < N at N = 1024."""


SPLITTER_SUBLINEAR = {"eps1": 0.95, "s_scale": 1.0}
"""The default memory of Thm 4.2 and C.1, where the splitter sort runs at s < N: s = ceil(N^0.95) = 1399, 2703,
5221, 10086 words at N = 2048 (the default) ... 16384, above the ~1280 its fans need with 3-word keys
(docs/anna_lemma_c_2.md) and below N."""
SUBLINEAR_SIZES = (2048, 4096, 8192, 16384)
"""The growth sweeps in N of Thm 4.2 (full report) and Thm C.1 at SPLITTER_SUBLINEAR: 4 sizes over 8x."""


LARGE_MEMORY_4_2 = {"eps1": 0.75, "s_scale": 40.0}
"""Thm 4.2's splitter sort at small N: s = 40 N^(3/4) >= N (2560 words at N = 256; labelled ``regime``, partial):
the quick grid and the quick growth sweep, a few seconds a point."""


def _grid_4_2(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"N": 256, **LARGE_MEMORY_4_2}, {"N": 128, "layers": 2, "heads": 3, **LARGE_MEMORY_4_2},
                {"N": 256, "sort": "radix", **RADIX_MEMORY_4_2}]
    return ([{"N": n, **LARGE_MEMORY_4_2} for n in (256, 1024)]
            + [{"N": n, "sort": "radix", **RADIX_MEMORY_4_2} for n in (256, 1024)]
            + [{"N": n} for n in (2048, 4096)]
            + [{"N": 2048, **extra} for extra in ({"heads": 3}, {"layers": 2}, {"lsh": "cross-polytope"})])


def _growth_4_2(quick: bool) -> list[dict[str, Any]]:
    """Thm 4.2's sweep in N: at the default memory, below N, in the full report (2048 ... 16384, about 5
    CPU-minutes); the quick sweep (128 ... 1024) runs at s >= N, and its points say so."""
    return ([{"N": n, **LARGE_MEMORY_4_2} for n in (128, 256, 512, 1024)] if quick
            else [{"N": n} for n in SUBLINEAR_SIZES])


GAP_BELOW_N = {"N": 8192, "s_scale": 450.0}
"""The full gap sweeps of Thm 4.2 and C.1 (eps = 1/16, eps' = 1/8 ... 5/16): s = 1388 ... 7519 words, above the
~1280 the splitter sort's fans need and below N at every point. Their quick sweeps run at N = 128 and 256 with
s_scale = 700, s >= N (marked in their points)."""


def _gap_point_4_2(quick: bool, gap: float) -> dict[str, Any]:
    """One head in the full sweep: its smallest memory puts H = 2 on 42,214 machines, 134 s a point (H = 1: 74 s)."""
    size = {"N": 128, "s_scale": 700.0} if quick else {**GAP_BELOW_N, "heads": 1}
    return {**size, "eps": 1 / 16, "eps1": 1 / 16 + gap}


def protocol_memory(claim: str) -> Callable[[Mapping[str, Any]], Iterator[tuple[str, str, Any]]]:
    """The relations of a claim run on the small-memory protocol: 0 < eps < eps' < 1, and a memory s that holds the
    protocol and its sort (:func:`~attnsim.sim.anna.mpc_small.memory_reasons`). The fuzz moves eps' to eps + 1/64
    and s_scale up to the least memory that does: drawn freely, 23 of 43 draws of a 20-second fuzz of Thm C.1 broke
    one."""
    def relation(params: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
        if any(params.get(x) is None for x in ("N", "eps", "eps1", "s_scale", "sort")):
            return
        eps = params["eps"]
        yield from eps1_between(eps, params["eps1"], f"the theorem needs 0 < eps < eps' < 1, got eps={eps}, "
                                                     f"eps'={params['eps1']}")
        if not eps < params["eps1"] < 1:  # not moved: nothing more to read
            return
        mv = params["mv"] if "mv" in params else defined(claim, "m", params)

        def short(s: int) -> list[str]:
            return memory_reasons(s, mv, params.get("heads", 1), params["sort"])

        why = short(defined(claim, "s", params))
        if why:
            yield "s_scale", "; ".join(why), least_s_scale(claim, params, lambda s: not short(s))
    return relation


@checker("anna.thm_4_2", evidence="independent", numerics=EXACT, params=[
    Param("N", int, SUBLINEAR_SIZES[0], "tokens", minimum=16),
    Param("heads", int, 2, "heads H per layer (each Algorithm 1 on its own ell tables)", minimum=1),
    Param("m_scale", float, 2.0, "m = max(2, floor(m_scale N^eps / H)): query/key dimension and value width, so "
          "m H = Theta(N^eps)", minimum=0.01, maximum=256.0),
    Param("r", float, 0.02, "near radius", minimum=1e-6, maximum=2.0),
    Param("c", float, 70.0, "approximation factor", minimum=1.0, maximum=2e6),
    Param("layers", int, 1, "ANNA layers L", minimum=1),
    Param("eps", float, 0.25, "eps: m H = m_scale N^eps", minimum=0.01, maximum=1.0),
    Param("eps1", float, SPLITTER_SUBLINEAR["eps1"], "eps': local memory s = ceil(s_scale * N^eps')", minimum=0.01,
          maximum=1.0),
    Param("s_scale", float, SPLITTER_SUBLINEAR["s_scale"], "constant in front of N^eps' (the splitter sort needs "
          "s >= 1120 here; the default puts s below N from N = 2048 on)", minimum=1.0, maximum=4096.0),
    Param("lsh", str, "hyperplane", "hash family", choices=LSH_NAMES),
    SORT_PARAM, REDRAWS_PARAM,
], grid=_grid_4_2, growth_grid=_growth_4_2,
   param_sweeps={"gap": gap_sweep(_gap_point_4_2)}, relations=protocol_memory("anna.thm_4_2"))
def check_thm_4_2(ctx: CheckContext) -> Measurement:
    """An L-layer, H-head ANNA-transformer (Algorithm 1) with m H = Theta(N^eps) on the small-memory MPC protocol;
    every (layer, head) equals Algorithm 1."""
    N, r, c, L, eps, eps1, lsh, H, sort = (ctx.params[x] for x in (
        "N", "r", "c", "layers", "eps", "eps1", "lsh", "heads", "sort"))
    if c <= 1 or c * r >= 2:
        raise UsageError(f"--c: need 1 < c and c*r < 2 on the unit sphere, got c={c}, r={r}")
    m = value_of(ctx, "m")
    mv = m  # values in R^m as m exact words: every head's item carries O(m) words
    sens = sensitivity(lsh, r, c, m)
    p1, p2 = sens.p1, sens.p2
    pp = proof_parameters(N, p1, p2)
    if pp.delta >= 0.1 or pp.rho >= rho_limit():
        raise UsageError(f"--N: the proof's delta = N^(3 rho - 1) needs rho < 1/3 and N^(3 rho - 1) < 1/10; "
                         f"got rho = {pp.rho:.3g} at N = {N}")
    s = memory_words(ctx)
    rng = np.random.default_rng(ctx.seed)
    family = FAMILIES[lsh](m)
    tables = [draw_tables(family, H * pp.ell, pp.z, rng) for _ in range(L)]
    stack, states = clustered_stack(rng, N, m, r, tables, mv=mv, heads=H)
    want_states, want = run_stack(stack, states)
    runs, reasons, redraws = run_protocol(ctx, lambda ledger, seed: anna_stack_mpc(
        stack, states, memory=s, ledger=ledger, sort=sort, seed=seed))
    run, ledger = runs[0] if runs else (None, Ledger())
    agreeing = [[a.same_as(b) for a, b in zip(r.layers, want)] for r, _ in runs]
    per_layer = agreeing[0] if runs else []
    wrong = sum(not (all(a) and len(a) == L * H and r.states == want_states) for a, (r, _) in zip(agreeing, runs))
    same = bool(runs) and not wrong
    load = max((max_load(led) for _, led in runs), default=0)
    if wrong:
        reasons.append(f"MPC output differs from Algorithm 1 on {wrong} of {len(runs)} draws that ran ((layer, "
                       f"head)s agreeing on the first: {per_layer})")
    if load > s:
        reasons.append(f"a machine received {load} words > s = {s}")
    plan = SmallMemoryPlan(N, pp.ell, pp.z, family_alphabet(tables), mv, s, H, sort) if run is None else run.plan
    derived = {"rho": pp.rho, "q2": 1 / p2 - 1, "A1": plan.alphabet - 1, "sort_radix": int(sort == "radix")}
    derived["sort_rounds"] = sort_rounds(sort, plan.sort_rounds)
    agree, bits = exact_outcome(same, not runs)
    return Measurement(
        evidence="independent", reference="attnsim.sim.anna.anna_stack.run_stack", agree=agree, error_bits=bits,
        counts=ledger_counts(ledger, load) if runs else {},
        counts_by_tag=ledger.by_tag("mpc_round"), rounds=ledger.rounds("mpc_round") if runs else None, derived=derived,
        reasons=reasons,
        extra={**derived, "p1": p1, "p2": p2, "rho_source": sens.how, "regime": regime(s, N),
               "in_stated_range": in_sublinear_memory(s, N), "ell": pp.ell,
               "z": pp.z, "s": s, "fan": plan.fan, "heads": H, "m": m, "mH": m * H, "mH_per_N_eps": m * H / N**eps,
               "sort": SORT_ROUTE[sort], "containment_route": CONTAINMENT_ROUTE[sort],
               "sort_rounds_per_layer": plan.sort_rounds,
               "sort_rounds_times_gap": plan.sort_rounds * (eps1 - eps),
               "items_per_machine": plan.per_machine, "tokens_per_machine": plan.tokens_per_machine,
               "token_machines": plan.token_machines, "sort_machines": plan.sort_machines,
               "tree_depth": plan.tree_depth, "sort_passes": plan.passes, "fanout_depth": plan.fanout_depth,
               "heads_agreeing": sum(per_layer), "max_words_received": load, **redraws,
               "words_moved": ledger.total("mpc_message"),
               "retrieved_per_query": float(np.mean([w.counts.mean() for w in want]))},
    )


LARGE_MEMORY_C_1 = {"eps1": 0.5, "s_scale": 100.0}
"""Thm C.1's splitter sort at small N: s = 100 N^(1/2) >= N up to N = 10^4 (labelled ``regime``, partial)."""


def _grid_c_1(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"N": 2048, "layers": 2}, {"N": 256, "layers": 2, **LARGE_MEMORY_C_1},
                {"N": 256, "layers": 2, "sort": "radix", **SMALL_MEMORY[0]}]
    return ([{"N": n, "layers": L, **LARGE_MEMORY_C_1} for L in (1, 3) for n in (256, 2048)]
            + [{"N": n, "layers": L} for L in (1, 3) for n in (2048, 8192)]
            + [{"N": n, "layers": 2, "sort": "radix", **mem} for mem in SMALL_MEMORY for n in (256, 1024)])


def _gap_point_c_1(quick: bool, gap: float) -> dict[str, Any]:
    size = {"N": 256, "s_scale": 700.0} if quick else GAP_BELOW_N
    return {**size, "layers": 1, "eps": 1 / 16, "eps1": 1 / 16 + gap}


@checker("anna.thm_c_1", evidence="independent", numerics=EXACT, params=[
    Param("N", int, SUBLINEAR_SIZES[0], "tokens", minimum=4),
    Param("d", int, 2, "query/key dimension (integer coordinates)", minimum=1),
    Param("alphabet", int, 16, "each coordinate is in 0..alphabet-1", minimum=2, maximum=1 << 24),
    Param("layers", int, 2, "EMA layers L", minimum=1),
    Param("eps", float, 0.25, "eps with m H = O(N^eps)", minimum=0.01, maximum=1.0),
    Param("eps1", float, SPLITTER_SUBLINEAR["eps1"], "eps': local memory s = ceil(s_scale * N^eps')", minimum=0.01,
          maximum=1.0),
    Param("s_scale", float, SPLITTER_SUBLINEAR["s_scale"], "constant in front of N^eps' (the splitter sort needs "
          "s >= 1120 here, below N from N = 2048 on by default; 12: s < N for N >= 256 at eps' = 1/2 with --sort "
          "radix)", minimum=1.0, maximum=4096.0),
    Param("mv", int, 2, "value width (exact integer words)", minimum=1, maximum=4096),
    SORT_PARAM, REDRAWS_PARAM,
], grid=_grid_c_1, growth_grid=size_grid("N", SUBLINEAR_SIZES, layers=1),
   param_sweeps={"gap": gap_sweep(_gap_point_c_1)}, relations=protocol_memory("anna.thm_c_1"))
def check_thm_c_1(ctx: CheckContext) -> Measurement:
    """An L-layer EMA-transformer on the small-memory MPC protocol; every layer equals sorted exact matching."""
    N, d, A, L, eps, eps1, mv, sort = (ctx.params[x] for x in (
        "N", "d", "alphabet", "layers", "eps", "eps1", "mv", "sort"))
    s = memory_words(ctx)
    stack, states = exact_match_stack(np.random.default_rng(ctx.seed), N, d, A, L, mv=mv)
    want_states, want = run_stack(stack, states, attend=ema)
    runs, reasons, redraws = run_protocol(ctx, lambda ledger, seed: anna_stack_mpc(
        stack, states, memory=s, ledger=ledger, sort=sort, seed=seed))
    run, ledger = runs[0] if runs else (None, Ledger())
    agreeing = [[a.same_as(b) for a, b in zip(r.layers, want)] for r, _ in runs]
    per_layer = agreeing[0] if runs else []
    wrong = sum(not (all(a) and len(a) == L and r.states == want_states) for a, (r, _) in zip(agreeing, runs))
    same = bool(runs) and not wrong
    load = max((max_load(led) for _, led in runs), default=0)
    if wrong:
        reasons.append(f"MPC output differs from exact-match attention on {wrong} of {len(runs)} draws that ran "
                       f"(layers agreeing on the first: {per_layer})")
    if load > s:
        reasons.append(f"a machine received {load} words > s = {s}")
    work = ledger.total("mpc_message")
    code = stack.layers[0].hashes[0]
    plan = SmallMemoryPlan(N, 1, code.z, code.alphabet, mv, s, 1, sort) if run is None else run.plan
    derived = {"mv": mv, "sort_radix": int(sort == "radix")}
    derived["sort_rounds"] = sort_rounds(sort, plan.sort_rounds)
    agree, bits = exact_outcome(same, not runs)
    return Measurement(
        evidence="independent", reference="attnsim.sim.anna.anna_stack.run_stack", agree=agree, error_bits=bits,
        counts=ledger_counts(ledger, load) | {"work": work} if runs else {},
        counts_by_tag=ledger.by_tag("mpc_round"), rounds=ledger.rounds("mpc_round") if runs else None, derived=derived,
        reasons=reasons,
        extra={"s": s, "regime": regime(s, N), "in_stated_range": in_sublinear_memory(s, N), "fan": plan.fan,
               "sort_machines": plan.sort_machines,
               "sort": SORT_ROUTE[sort], "containment_route": CONTAINMENT_ROUTE[sort],
               "sort_rounds_per_layer": plan.sort_rounds,
               "sort_rounds_times_gap": plan.sort_rounds * (eps1 - eps),
               "token_machines": plan.token_machines,
               "tree_depth": plan.tree_depth, "sort_passes": plan.passes, "max_words_received": load, **redraws,
               "work_per_dNlogN": work / (L * d * N * math.log(N)),
               "matches_per_query": float(np.mean([w.counts.mean() for w in want]))},
    )


@checker("anna.def_ema", evidence="independent", numerics=EXACT, params=[
    Param("N", int, 1024, "queries and keys", minimum=2),
    Param("d", int, 2, "key dimension (integer coordinates)", minimum=1),
    Param("alphabet", int, 1 << 20, "each coordinate is in 0..alphabet-1 (half the queries copy a key)",
          minimum=2, maximum=1 << 24),
    Param("mv", int, 2, "value width (exact integers)", minimum=1, maximum=4096),
], grid=lambda quick: [{"N": 256}] if quick else [{"N": n} for n in (256, 1024, 4096)],
   growth_grid=size_grid("N", (256, 512, 1024, 2048), (512, 1024, 2048, 4096, 8192)))
def check_def_ema(ctx: CheckContext) -> Measurement:
    """Exact-match attention by sorting and binary search: key comparisons (ledger) against O(d N log N)."""
    N, d, A, mv = (ctx.params[x] for x in ("N", "d", "alphabet", "mv"))
    rng = np.random.default_rng(ctx.seed)
    k, v = rng.integers(0, A, size=(N, d)), rng.integers(-99, 100, size=(N, mv))
    q = np.where(rng.random((N, 1)) < 0.5, k[rng.integers(0, N, size=N)], rng.integers(0, A, size=(N, d)))
    ledger = Ledger()
    got = ema(q, k, v, ledger=ledger, count_sort=True)
    equal = (q[:, None, :] == k[None, :, :]).all(axis=2)  # the definition, pair by pair
    same = bool(np.array_equal(got.counts, equal.sum(axis=1)) and np.array_equal(got.sums, equal.astype(np.int64) @ v))
    ops = ledger.total("compare")
    return Measurement(
        agree=same, error_bits=math.inf if same else 0.0, evidence="independent",
        reference="numpy: every query compared with every key (the definition)",
        counts={"time": ops}, counts_by_tag=ledger.by_tag("compare"),
        reasons=[] if same else ["sorted exact matching differs from comparing every query with every key"],
        extra={"key_comparisons": ops, "per_dNlogN": ops / (d * N * math.log(N))},
    )
