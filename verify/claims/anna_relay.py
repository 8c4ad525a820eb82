"""Checker of Lemma B.12 (App. B, = Sanford et al. 2024a, Prop. 24) for our relay: an R-round (gamma, eps)-MPC run as
an MPC in which every machine talks to at most k = N^rho machines a round, in O(R (1 + gamma)/(2 rho^2)) rounds.

Our conversion is the relay of :mod:`attnsim.sim.anna.relay_routing` (proof of its load and of the round bound in
docs/anna_mpc_to_anna.md): each round of the protocol becomes D^2 relay rounds along the D base-k digits of the
token ids, D = ceiling(log P / log k), and in each relay round a token hears one sender a head, k - 1 heads. The
relay runs inside the transformer of :mod:`attnsim.sim.anna.mpc_to_anna`, where a relay round is one layer; the
checker runs the prefix-sum (or sort) protocol there and directly, compares the outputs with ``numpy.cumsum``
(``numpy.sort``), and reads the relay rounds (the layers less the input and output layers) and the contacts (a
layer's heads plus the token itself) off the ledger. rho = log k / log N, eps = log s / log N and
gamma = log(P s / N) / log N (P = N^(1 + gamma - eps) machines) are those of the run; the rounds are judged
against the lemma's bound as 1/rho grows at fixed N (the rho sweep).
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import isqrt
from typing import Any, Iterator, Mapping

from attnsim.sim.anna.message_code import DecodingError
from attnsim.sim.anna.mpc_to_anna import RelayOverflowError, run_protocol
from attnsim.sim.anna.relay_routing import RelayError
from attnsim.sim.anna.transformer import size_from_ledger
from attnsim.sim.ledger import Ledger
from attnsim.verify.claims.anna_mpc_to_anna import (
    DIVIDES_N,
    EXACT,
    EXACT_EPS,
    least_size,
    machine_counts,
    planned_memory,
    protocol_case,
    run_directly,
)
from attnsim.verify.registry import CheckContext, Measurement, Param, ParamSweep, checker

CAPACITIES = (2, 3, 4, 8, 16)
"""k over the rho sweep at N = 1024 (s = 512, eps = 0.9): rho = log k / log N from 1/10 to 2/5 < eps/2, 1/rho
spanning 4x; D = 5, 4, 3, 2, 2 digits for P = 32 machines."""

RHO_SWEEP = ParamSweep(
    var="log(N)/log(k)",
    grid=lambda quick: [{"N": 1024, "P": 32, "eps": 0.9, "k": k} for k in CAPACITIES],
    resources=("rounds",))
"""Lemma B.12's rounds judged as 1/rho grows at fixed N (a count growing like 1/rho^3 fails)."""


def _exponent_needed(params: Mapping[str, Any], N: int, P: int) -> int:
    """log2 of the least memory (a power of two) the protocol needs for N words on P machines."""
    return planned_memory({**params, "N": N, "P": P, "eps": None}).bit_length() - 1


def _at_most_N(log2s: int, log2n: int) -> bool:
    return log2s <= log2n


def _memory_and_capacity(params: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """s = 2^round(eps log2 N) must hold what the protocol needs on P machines, and rho = log k / log N must lie
    below eps / 2 of that memory (k^2 < s). The fuzz keeps both, moving N up where no P up to N leaves the protocol
    N words, then P up where P does not, eps up to the least exponent whose memory fits, and k down to the largest
    capacity below the square root of s: drawn freely, they broke them in 241 of 356 draws of a 20-second fuzz."""
    N, P, eps, k = (params.get(x) for x in ("N", "P", "eps", "k"))
    if N is None or P is None or eps is None or P < 1 or N % P or N & (N - 1):
        return
    if not machine_counts(params, N, P, _at_most_N):  # N too small: up to the least size where some count fits
        yield ("N", f"on {P} to {N} machines the protocol needs more than N = {N} words a machine",
               least_size(params, N, P, _at_most_N))
        N = params["N"]  # the fuzz moves it before reading on
        if not machine_counts(params, N, P, _at_most_N):
            return
    log2n = N.bit_length() - 1
    least = _exponent_needed(params, N, P)
    if least > log2n:  # more machines, less memory each
        yield ("P", f"on {P} machines the protocol needs {1 << least} words, more than N = {N}",
               machine_counts(params, N, P, _at_most_N)[0])
        P = params["P"]  # the fuzz moves it before reading on
        least = _exponent_needed(params, N, P)
    e = round(eps * log2n)
    if e < least:
        yield ("eps", f"s = 2^round(eps log2 N) = {1 << e} is below the {1 << least} words the protocol needs on {P} "
                      "machines", least / log2n if least <= log2n else None)
        e = round(params["eps"] * log2n)  # the fuzz moves it before reading on
    s = 1 << e
    if k is not None and not k * k < s:
        top = isqrt(s - 1)
        yield ("k", f"the lemma needs rho = log k / log N below eps / 2 = {e / (2 * log2n):.3f} of the memory s = {s} "
                    f"words (k^2 < s), got k = {k}", top if top >= 2 else None)


@checker("anna.lemma_b_12", evidence="independent", numerics=EXACT, params=[
    Param("protocol", str, "sum", "the (gamma, eps)-MPC protocol to convert", choices=("sum", "sort")),
    Param("N", int, 1024, "input words", minimum=4, power_of_two=True, why_power_of_two=EXACT_EPS),
    Param("P", int, 32, "MPC machines (they divide N)", minimum=2, power_of_two=True, why_power_of_two=DIVIDES_N),
    Param("eps", float, 0.9, "memory exponent: s = 2^round(eps log2 N)", minimum=0.01, maximum=1.0),
    Param("k", int, 4, "capacity: machines a machine may talk to in a relay round (the relay's base)", minimum=2),
], grid=lambda quick: [{"k": 4}] if quick else [{"k": k} for k in (2, 4, 16)],
   growth_grid=lambda quick: [{"N": n, "P": 32, "k": 4} for n in ((256, 512, 1024, 2048) if quick
                                                                  else (256, 512, 1024, 2048, 4096))],
   param_sweeps={"rho": RHO_SWEEP}, relations=_memory_and_capacity)
def check_lemma_b_12(ctx: CheckContext) -> Measurement:
    """The protocol directly and through the relay; relay rounds and contacts off the ledger."""
    N, P, k = ctx.params["N"], ctx.params["P"], ctx.params["k"]
    protocol, reference = protocol_case(ctx, ctx.params["protocol"])
    direct_ledger = Ledger()
    direct = run_directly(ctx, protocol, direct_ledger)
    R, s = direct_ledger.rounds("mpc_round"), direct.memory
    eps, rho = math.log(s) / math.log(N), math.log(k) / math.log(N)
    gamma = math.log(P * s / N) / math.log(N)
    ledger = Ledger()
    try:
        run = run_protocol(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=N, machines=direct.machines,
                           block=direct.block, base=k, memory=s, ledger=ledger, tag="lemma_b_12")
    except (DecodingError, RelayError, RelayOverflowError) as exc:
        return Measurement(evidence="independent", reference="numpy (and the protocol run directly)", agree=False,
                           error_bits=0.0, reasons=[f"the relay stopped: {exc}"])
    reasons = []
    if direct.vector() != reference:
        reasons.append("the protocol run directly differs from the reference answer")
    wrong = sum(a != b for a, b in zip(run.outputs, reference))
    if wrong:
        reasons.append(f"the relayed run's output differs from the reference at {wrong} of {N} tokens")
    size = size_from_ledger(ledger)
    relay_heads = max((n for layer, n in _heads_per_layer(ledger).items() if 0 < layer < size["layers"] - 1),
                      default=0)
    derived: dict[str, Any] = {"R": R, "s": s, "eps": eps, "rho": rho, "gamma": gamma}
    return Measurement(
        evidence="independent", reference="numpy.cumsum or numpy.sort (and the protocol run directly)",
        agree=not wrong, error_bits=math.inf if not wrong else 0.0,
        counts={"rounds": size["layers"] - 2, "contacts": relay_heads + 1},
        counts_by_tag=direct_ledger.by_tag("mpc_round"), rounds=R, derived=derived, reasons=reasons,
        extra={**derived, "D": run.plan.hops, "relay_rounds_per_round": Fraction(size["layers"] - 2, R) if R else 0,
               "max_token_units": run.max_token_units, "capacity_B": run.plan.capacity,
               "route": "ours: the digit relay (docs/anna_mpc_to_anna.md), not Prop. 24's construction"},
    )


def _heads_per_layer(ledger: Ledger) -> dict[int, int]:
    """Heads the ledger recorded in each layer (``anna_head`` entries by round)."""
    out: dict[int, int] = {}
    for e in ledger.entries:
        if e.kind == "anna_head":
            out[e.round] = out.get(e.round, 0) + 1
    return out
