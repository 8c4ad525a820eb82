"""Checker for Lemma B.13 (App. B): a (gamma, eps, rho)-MPC computed by an ANNA-transformer with k heads a layer.

The f-ary scan of :mod:`attnsim.sim.anna.mpc_scan`, split (each machine keeps its state as one-word records, so a
round sends several records to one destination; capacity k = f, memory s = N/P + 2 f - 1) runs twice on the referee
MPC machine: directly, and inside the transformer of :mod:`attnsim.sim.anna.mpc_capacity` (one layer per round,
k heads, Lemma B.4's code with alpha = k). Both answers must equal ``numpy.cumsum`` of the input. Layers, heads
and width come off the ledger, the largest number of destinations a machine named in a round off the
transformer; formulas and Lemma B.13's bounds are in paper_refs/anna.toml.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Iterator, Mapping

import numpy as np

from attnsim.sim.anna.message_code import DecodingError
from attnsim.sim.anna.mpc_capacity import run_capacity
from attnsim.sim.anna.mpc_scan import scan_memory, scan_protocol
from attnsim.sim.anna.transformer import size_from_ledger
from attnsim.sim.ledger import Ledger
from attnsim.verify.claims.anna_direct import direct_mechanism
from attnsim.verify.claims.anna_mpc_to_anna import EXACT
from attnsim.verify.registry import CheckContext, Measurement, Param, ParamSweep, checker

GROWTH = ((256, 4, 2), (1024, 8, 3), (4096, 16, 4), (16384, 32, 5))
"""(N, block, fan) of the growth sweep: s = block + 2 fan - 1 = 7, 13, 23, 41 and k = fan = 2 .. 5 grow with N."""

QUICK_GROWTH = ((64, 4, 2), (128, 4, 2), (256, 8, 3), (512, 8, 3))

CAPACITY_SWEEP = ParamSweep(
    var="fan",
    grid=lambda quick: [{"N": 1024 if quick else 4096, "P": 64 if quick else 256, "fan": f} for f in (2, 3, 4, 8)],
    resources=("heads", "embedding_dim", "contacts"))
"""Lemma B.13's heads, width and contacts judged as the capacity k = N^rho grows at fixed N (rho from 1/12 to 1/4
at N = 4096): a count growing one power of k faster than k heads and s k^4 log N width fails."""


def _points(rows: tuple[tuple[int, int, int], ...]) -> list[dict[str, Any]]:
    return [{"N": n, "P": n // b, "fan": f} for n, b, f in rows]


def _largest_fan(N: int, P: int) -> int:
    """The largest fan whose scan memory N/P + 2 fan - 1 lies below N (below 2: none)."""
    low, high = 1, N  # scan_memory grows with the fan and reaches N at fan = N: the answer lies in [low, high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if scan_memory(N // P, mid, split=True) < N else (low, mid)
    return low


def _memory_below_N(params: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """The lemma needs eps < 1: the scan's memory s = N/P + 2 fan - 1 below N. The fuzz keeps it, moving P to the
    fewest machines that leave room for a fan of 2 (one machine never does; sought among the next 4096 counts, then
    N) and the fan to the largest that fits; drawn freely, s lay at or above N in 513 of 1157 draws of a one-minute
    fuzz. A P that does not divide N is refused for P first."""
    N, P, fan = params.get("N"), params.get("P"), params.get("fan")
    if N is None or P is None or fan is None or P < 1 or N % P:
        return
    if _largest_fan(N, P) < 2:
        near = (q for q in (*range(P + 1, min(N, P + 4096)), N) if not N % q and _largest_fan(N, q) >= 2)
        yield ("P", f"on {P} machine{'s' if P > 1 else ''} the scan's memory N/P + 2 fan - 1 is not below N = {N} "
                    "for any fan >= 2 (the lemma needs eps < 1)", next(near, None))
        P = params["P"]  # the fuzz moves it before reading on
    s = scan_memory(N // P, fan, split=True)
    if s >= N:
        best = _largest_fan(N, P)
        yield ("fan", f"memory s = N/P + 2 fan - 1 = {s} is not below N = {N} (the lemma needs eps < 1)",
               best if best >= 2 else None)


@checker("anna.lemma_b_13", evidence="independent", numerics=EXACT, params=[
    Param("N", int, 1024, "input integers (one column); at least 5, the least N that some P and fan >= 2 leave "
          "memory s = N/P + 2 fan - 1 below", minimum=5),
    Param("P", int, 64, "MPC machines (must divide N)", minimum=1),
    Param("fan", int, 4, "the scan's fan f: capacity k = f, memory s = N/P + 2 f - 1", minimum=2),
    Param("mechanism", str, "alg1", "attention inside every head", choices=("alg1", "ema")),
], grid=lambda quick: _points(((256, 8, 3),) if quick else ((256, 8, 3), (1024, 16, 4))),
   growth_grid=lambda quick: _points(QUICK_GROWTH if quick else GROWTH), param_sweeps={"capacity": CAPACITY_SWEEP},
   relations=_memory_below_N)
def check_lemma_b_13(ctx: CheckContext) -> Measurement:
    """The scan directly and inside Lemma B.13's transformer; outputs against numpy.cumsum, counts off the ledger."""
    N, P, fan = ctx.params["N"], ctx.params["P"], ctx.params["fan"]
    x = np.random.default_rng(ctx.seed).integers(0, 10 * N, size=N)
    reference = [(int(v),) for v in np.cumsum(x)]
    protocol = partial(scan_protocol, x, machines=P, fan=fan, split=True)
    direct_ledger = Ledger()
    direct = protocol(ledger=direct_ledger)
    R, s = direct_ledger.rounds("mpc_round"), direct.memory
    ledger = Ledger()
    ref_name = "numpy.cumsum (and the protocol run directly)"
    try:
        run, contacts = run_capacity(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=N, machines=P,
                                     block=N // P, memory=s, capacity=fan,
                                     mechanism=direct_mechanism(ctx.params["mechanism"], ctx.seed), ledger=ledger)
    except DecodingError as exc:
        return Measurement(evidence="independent", reference=ref_name, agree=False, error_bits=0.0,
                           derived={"R": R, "s": s, "k": fan},
                           counts={"decoding_failures": ledger.total("decode_failure")},
                           reasons=[f"the transformer stopped: {exc}"])
    reasons = []
    if direct.vector() != reference:
        reasons.append("the protocol run directly differs from numpy.cumsum")
    wrong = sum(a != b for a, b in zip(run.outputs, reference))
    if wrong:
        reasons.append(f"the transformer's output differs from the reference at {wrong} of {N} tokens")
    size = size_from_ledger(ledger)
    code = run.code
    derived = {"R": R, "s": s, "k": fan, "T": code.rows, "B": code.base}
    return Measurement(
        evidence="independent", reference=ref_name, agree=not wrong, error_bits=math.inf if not wrong else 0.0,
        counts={"layers": size["layers"], "heads": size["heads"], "embedding_dim": max(size["qk_dim"], size["v_dim"]),
                "contacts": contacts, "decoding_failures": ledger.total("decode_failure")},
        counts_by_tag=direct_ledger.by_tag("mpc_round"), rounds=R, derived=derived, reasons=reasons,
        extra={**derived, "P": P, "mechanism": ctx.params["mechanism"], "max_alpha": run.max_alpha,
               "code": {"alpha": code.alpha, "base": code.base, "rows": code.rows, "digits": code.digits,
                        "width": code.width},
               "eps_run": math.log(s) / math.log(N), "rho_run": math.log(fan) / math.log(N)},
    )
