"""Checker of Lemma C.2 (App. C): sorting N items of O(N^eps) words in O(1/(eps'-eps)) MPC rounds on
O(N^(1+eps-eps')) machines of memory O(N^eps').

The construction is the splitter-tree sample sort (:mod:`attnsim.sim.anna.mpc_splitter_sort`, proof in
docs/anna_lemma_c_2.md) on the referee MPC machine. Keys are drawn from 0..N^2-1 and every item is padded to
max(2, ceil(N^eps)) words, so the items have the size the lemma speaks of. The output, read in machine order, is
compared with Python's ``sorted`` of the drawn keys (no code shared with the construction). Rounds, machines and
the largest load are read off the ledger; the bounds live in paper_refs/anna.toml. The sort's rounds do not depend
on its random draws: the sort returns its plan's count (:func:`~attnsim.sim.anna.mpc_splitter_sort.sort_rounds`), a
self-consistency check beside the ledger's, and a run whose ledger disagrees fails.

The sort's loads are not proved for every draw: the referee refuses a round that would overload a machine, and a
refused draw has no output. A record runs ``draws`` draws and decides the chance of a refusal by its probability:
it fails when the 95% Clopper-Pearson interval of the refused draws lies above paper_refs' ``refusal_target``, and
reports the one-sided 95% upper bound as the resource ``refusal``. The outputs of the draws that ran are all compared;
a record whose every draw was refused compares none and fails.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np

from attnsim.sim.anna.mpc import MPC, MPCLimitError
from attnsim.sim.anna.mpc_splitter_sort import splitter_sort
from attnsim.sim.ledger import Ledger
from attnsim.verify.agreement import exact_outcome
from attnsim.verify.anna_mpc_memory import defined, in_sublinear_memory, least_s_scale
from attnsim.verify.refusals import REFUSAL_DRAWS, Refusals, Refused, refusal_target, refused
from attnsim.verify.registry import CheckContext, Measurement, Param, ParamSweep, checker, size_grid
from attnsim.verify.relations import eps1_between

GAPS = (1 / 4, 3 / 16, 1 / 8, 3 / 32, 1 / 16)
"""eps' - eps over the gap sweep: 5 values spanning 4x, at eps = 1/16. Larger gaps (3/8 and up at N = 4096) give
memory for the one-level sample sort, 6 rounds whatever the gap: the sweep starts where the levels recurse."""

GAP_MEMORY = 215.0
"""s_scale of the gap sweep, eps' = 1/8 ... 5/16: s = 609 ... 2893 words at N = 4096 (quick) and 724 ... 4462 at
16384 (full), below N at every point. At 128 (s = 363 at N = 4096, eps' = 1/8) the referee refuses some draws of the
first point for loads over s (``--draws 20`` measures how many; docs/anna_lemma_c_2.md, "Why small s is fragile")."""

GAP_SWEEP = ParamSweep(
    var="1/(eps1 - eps)",
    grid=lambda quick: [{"N": 4096 if quick else 16384, "eps": 1 / 16, "eps1": 1 / 16 + g, "s_scale": GAP_MEMORY,
                         "draws": 1} for g in GAPS],
    resources=("rounds",))
"""Lemma C.2's rounds judged as 1/(eps'-eps) grows at fixed N (a round count growing like 1/(eps'-eps)^2 fails)."""


HALF_MEMORY = {"eps1": 0.5, "s_scale": 128.0}
"""s = 128 N^(1/2), at or above N up to N = 16384: one labelled point of the full grid (partial, outside the
lemma's range). The default, s = ceil(4 N^(3/4)), is below N with room for the sort's fans from N = 2048 on:
1218 words there, 2048 at 4096, 5793 at 16384 and 9742 at 32768."""


def _grid(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"N": 2048}, {"N": 4096}]
    return [{"N": n} for n in (2048, 4096, 16384, 32768)] + [{"N": 16384, "eps": 0.125}, {"N": 4096, **HALF_MEMORY}]


def _sort_one(ctx: CheckContext, draw: int, shape: dict[str, int]
              ) -> tuple[list[int], MPC, Ledger, int, Refused | None]:
    """One draw: keys from 0..N^2-1 and the sort's own random choices, both from (seed, draw). Returns the keys, the
    machine, its ledger, the sort's plan count (0 when refused) and the referee's refusal (None when it ran)."""
    N, w, b, P, kw = ctx.params["N"], shape["w"], shape["b"], shape["P"], shape["kw"]
    keys = [int(x) for x in np.random.default_rng((ctx.seed, draw)).integers(0, N * N, size=N)]
    pad = (0,) * (w - kw)  # a key is (drawn key, item index), kw = 2 words: distinct, as the sort needs
    ledger = Ledger()
    mpc = MPC(P, shape["s"], ledger=ledger, tag="mpc_sort")
    mpc.load({m: [(keys[i], i, *pad) for i in range(m * b, min(N, (m + 1) * b))] for m in range(P)})
    try:
        plan = splitter_sort(mpc, range(P), key=lambda r: (r[0], r[1]), key_words=kw, record_words=w,
                             seed=ctx.seed * 1009 + draw)
    except MPCLimitError as exc:
        return keys, mpc, ledger, 0, refused(exc)
    return keys, mpc, ledger, plan, None


def _shape(ctx: CheckContext) -> dict[str, int]:
    """The run's sizes, from the claim's definitions: memory s, item words w, items b a machine at the start,
    machines P and key words kw."""
    return {x: defined(ctx.claim, x, ctx.params) for x in ("s", "w", "b", "P", "kw")}


def _memory_for_the_sort(params: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """eps' must lie in (eps, 1), and a machine must hold at least one item beside the sort's room: b >= 1 items of
    w words in s. The fuzz keeps both, moving eps' just above eps and s_scale up to a memory that holds an item
    (before P = ceiling(N / b) is read, which has no value at b = 0)."""
    if any(params.get(x) is None for x in ("N", "eps", "eps1", "s_scale")):
        return
    yield from eps1_between(params["eps"], params["eps1"],
                            f"the lemma needs 0 <= eps < eps' < 1, got eps={params['eps']}, eps'={params['eps1']}")
    if not params["eps"] < params["eps1"] < 1:  # not moved: nothing more to read
        return
    if defined("anna.lemma_c_2", "b", params) < 1:
        s, w = (defined("anna.lemma_c_2", x, params) for x in ("s", "w"))
        yield ("s_scale", f"s = {s} words holds no item of {w} words with the sort's room beside it",
               least_s_scale("anna.lemma_c_2", params, lambda m: defined("anna.lemma_c_2", "b", params, {"s": m}) >= 1))


@checker("anna.lemma_c_2", evidence="independent", numerics=("exact",), params=[
    Param("N", int, 4096, "items (random keys in 0..N^2-1, each padded to max(2, ceil(N^eps)) words)", minimum=16),
    Param("eps", float, 0.25, "eps: items of max(2, ceil(N^eps)) words", minimum=0.0, maximum=1.0),
    Param("eps1", float, 0.75, "eps': local memory s = ceil(s_scale * N^eps')", minimum=0.01, maximum=1.0),
    Param("s_scale", float, 4.0, "constant in front of N^eps' (the default puts s below N from N = 2048 on)",
          minimum=1.0, maximum=4096.0),
    Param("draws", int, REFUSAL_DRAWS, "independent draws (keys and the sort's random choices); the chance that the "
          "referee refuses a draw is decided over them", minimum=1, maximum=1000),
], grid=_grid,
   growth_grid=size_grid("N", (2048, 4096, 8192, 16384), (2048, 4096, 8192, 16384, 32768)),
   param_sweeps={"gap": GAP_SWEEP}, relations=_memory_for_the_sort)
def check_lemma_c_2(ctx: CheckContext) -> Measurement:
    """The splitter-tree sample sort over ``draws`` draws: every output against ``sorted``; rounds, machines and load
    off the ledger; the chance of a refused draw against the refusal target."""
    N, eps, eps1, n = (ctx.params[x] for x in ("N", "eps", "eps1", "draws"))
    shape = _shape(ctx)
    s, w, b = shape["s"], shape["w"], shape["b"]
    loads: list[str] = []
    faults: list[str] = []
    wrong, load, rounds, machines, plans = 0, 0, set(), set(), set()
    last = Ledger()  # the last draw that ran: its rounds by tag
    for t in range(n):
        keys, mpc, ledger, plan, refusal = _sort_one(ctx, t, shape)
        machines.add(ledger.total("mpc_machine"))
        if refusal is not None:
            (loads if refusal.load else faults).append(refusal.reason)
            continue
        last = ledger
        wrong += [r[0] for mem in mpc.memory for r in mem] != sorted(keys)
        rounds.add(ledger.rounds("mpc_round"))
        plans.add(plan)
        load = max(load, max((e.amount for e in ledger.entries if e.kind == "mpc_load"), default=0))
    done = n - len(loads) - len(faults)
    refusals = Refusals(len(loads), n, refusal_target(), loads[0] if loads else None)
    reasons = [f"the referee refused a round of {len(faults)} of {n} draws for a fault, not a load: {faults[0]}"
               ] if faults else []
    reasons += refusals.reasons()
    if wrong:
        reasons.append(f"on {wrong} of {done} draws the machines' records, read in machine order, are not the "
                       "sorted keys")
    if len(rounds) > 1 or len(plans) > 1:
        reasons.append(f"the round count varies between draws: ledger {sorted(rounds)}, plan {sorted(plans)}")
    elif rounds and rounds != plans:
        reasons.append(f"the ledger counts {min(rounds)} rounds, the sort's plan {min(plans)}")
    agree, bits = exact_outcome(not wrong, refused=not done)
    counts = {"machines": max(machines), "refusal": refusals.upper}
    if done:
        counts |= {"rounds": max(rounds), "max_load": load}
    return Measurement(
        evidence="independent", reference="sorted(keys)", agree=agree, error_bits=bits,
        counts=counts, counts_by_tag=last.by_tag("mpc_round"), rounds=max(rounds) if done else None,
        reasons=reasons,
        extra={"s": s, "in_stated_range": in_sublinear_memory(s, N), "item_words": w, "items_per_machine": b,
               "plan_rounds": max(plans) if done else None, "gap": eps1 - eps,
               "rounds_times_gap": max(rounds) * (eps1 - eps) if done else None, "max_words_received": load,
               **refusals.extra(),
               "route": "ours: randomized splitter-tree sample sort (Goodrich et al. 2011's is deterministic)"},
    )
