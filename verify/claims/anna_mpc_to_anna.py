"""Checkers for ANNA simulating MPC (Thm 4.1 = Thm B.10 / Cor B.14) and low-rank inside ANNA (Thm 4.4 = Cor D.3);
the pieces it is built of, Lemmas B.4-B.6, are checked in :mod:`attnsim.verify.claims.anna_mpc_pieces`.

Each run executes a protocol twice on the referee MPC machine -- once delivering directly, once inside
the EMA transformer of :mod:`attnsim.sim.anna.mpc_to_anna` -- and compares the transformer's N
outputs with the direct answer (and the protocol's with an independent reference). Layers, heads and
widths are read off the ledger; bounds and exact formulas are in paper_refs/anna.toml.

Scheme parameters the checker sets (as ``anna.alg_1`` sets z and ell): the protocol's memory s is
the least power of two it needs (or 2^round(eps log2 N) when ``--eps`` is given), so
eps = log s / log N is an exact rational; the relay has H = ceiling(heads_scale N^((eps' - eps)/4))
heads per layer and base k = H + 1, and its proved capacity s + 2 k D units fixes the width.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial
from math import isqrt
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import sympy as sp

from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.message_code import DecodingError
from attnsim.sim.anna.mpc_protocols import (
    LowRankLayer,
    ProtocolRun,
    khop_need,
    khop_protocol,
    lowrank_need,
    lowrank_protocol,
    lowrank_reference,
    power_of_two_at_least,
    prefix_sum_protocol,
    samplesort_need,
    samplesort_protocol,
    sort_need,
    sort_protocol,
    sum_need,
)
from attnsim.sim.anna.mpc_to_anna import UNIT_NUMBERS, RelayOverflowError, TransformerRun, run_protocol
from attnsim.sim.anna.relay_routing import RelayError
from attnsim.sim.anna.tasks import hop_labels, hop_string
from attnsim.sim.anna.transformer import size_from_ledger
from attnsim.sim.ledger import Ledger
from attnsim.verify.registry import CheckContext, Measurement, Param, UsageError, checker
from attnsim.verify.relations import STEP, eps1_between

EXACT = ("exact",)
PROTOCOLS = ("khop", "sort", "sum", "samplesort")

EXACT_EPS = "so that eps = log s / log N is exact"
"""Why N is a power of two: the memory s is one, and eps = log s / log N is then a ratio of integers."""
DIVIDES_N = "the machines share N, a power of two, in equal blocks"
"""Why P is a power of two: it divides N."""

_COMMON = [
    Param("N", int, 1024, "input words", minimum=2, power_of_two=True, why_power_of_two=EXACT_EPS),
    Param("P", int, 64, "MPC machines (they divide N)", minimum=1, power_of_two=True, why_power_of_two=DIVIDES_N),
    Param("eps", float, None, "memory exponent: s = 2^round(eps log2 N) (default: the least s the protocol needs)",
          minimum=0.01, maximum=1.0),
    Param("eps1", float, 0.95, "eps' in (eps, 1): heads N^((eps'-eps)/4), width N^eps'", minimum=0.01, maximum=1.0),
    Param("heads_scale", float, 1.0, "constant in front of N^((eps'-eps)/4) heads", minimum=0.01, maximum=256.0),
]


def _log2(N: int) -> int:
    """log2 of N, a power of two (the parameter's domain)."""
    return N.bit_length() - 1


def _memory_for(ctx: CheckContext) -> int | None:
    eps = ctx.params["eps"]
    if eps is None:
        return None
    return 1 << round(eps * _log2(ctx.params["N"]))


def planned_memory(params: Mapping[str, Any]) -> int:
    """The memory s a run takes, before it runs: 2^round(eps log2 N) with ``--eps``, else the least power of two the
    protocol needs (the protocols' own need functions; P divides N)."""
    N, P = params["N"], params["P"]
    if params.get("eps") is not None:
        return 1 << round(params["eps"] * _log2(N))
    b = N // P
    name = params.get("protocol")
    need = (lowrank_need(b, params["d"], params["rank"]) if name is None else
            {"sort": sort_need(b), "samplesort": samplesort_need(b, P), "sum": sum_need(b, P), "khop": khop_need(b)
             }[name])
    return power_of_two_at_least(need)


def machine_counts(params: Mapping[str, Any], n: int, P: int, fits: Callable[[int, int], bool]) -> list[int]:
    """The machine counts P, 2P, ... up to n that divide n and on which the protocol's own memory for n words (as
    planned with no ``--eps``) fits: ``fits(log2 s, log2 n)``."""
    return [q for q in (P << i for i in range(_log2(n) + 1)) if q <= n and not n % q
            and fits(planned_memory({**params, "N": n, "P": q, "eps": None}).bit_length() - 1, _log2(n))]


def least_size(params: Mapping[str, Any], N: int, P: int, fits: Callable[[int, int], bool]) -> int | None:
    """The least N 2^i (i = 1 .. 23) with a machine count from P up that fits (:func:`machine_counts`)."""
    return next((N << i for i in range(1, 24) if machine_counts(params, N << i, P, fits)), None)


def _eps1_above_eps(params: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """eps' must exceed eps = log s / log N of the memory s the run will take, checked before the run. Where the
    protocol's own memory (no ``--eps``) leaves no eps' < 1 above it, the machines P are at fault (too few, each
    holds too much), or N where no count of machines up to N leaves room. The fuzz keeps them, moving N up to the
    least size with room, P up to the fewest machines that leave it and eps' just above eps; drawn freely, eps' fell
    at or below eps in 213 of 259 draws of a one-minute fuzz of Thm 4.1 and 465 of 466 of Thm 4.4, and after P was
    moved, N left no room in 46 of 99 draws of a 20-second fuzz of Cor. B.14."""
    N, P, eps1 = params.get("N"), params.get("P"), params.get("eps1")
    if N is None or P is None or eps1 is None or P < 1 or N % P:
        return

    def room(log2s: int, log2n: int) -> bool:
        """Whether the memory lies below N^(1 - STEP), so that an eps' < 1 lies above its eps."""
        return log2s < (1 - Fraction(STEP)) * log2n

    if params.get("eps") is None and not room(planned_memory(params).bit_length() - 1, _log2(N)):
        if not machine_counts(params, N, P, room):
            yield ("N", f"on {P} to {N} machines the protocol takes at least N^(63/64) words: no eps' < 1 lies above "
                        "its eps", least_size(params, N, P, room))
            N = params["N"]  # the fuzz moves it before reading on
            if not machine_counts(params, N, P, room):
                return
        counts = machine_counts(params, N, P, room)
        if counts[0] != P:
            s = planned_memory(params)
            yield ("P", f"on {P} machine{'s' if P > 1 else ''} the protocol takes s = {s} words, eps = log s / log N = "
                        f"{(s.bit_length() - 1) / _log2(N):.4g}: no eps' < 1 lies above it", counts[0])
    s = planned_memory(params)  # P and N as the fuzz left them
    eps = Fraction(s.bit_length() - 1, _log2(params["N"]))
    if 0 < eps and not eps < eps1:
        yield from eps1_between(float(eps), eps1, f"must exceed eps = log s / log N = {float(eps):.4g}: the protocol "
                                                  f"takes s = {s} words (got eps' = {eps1})")


def _heads(N: int, eps: Fraction, eps1: float, scale: float) -> int:
    """ceiling(heads_scale * N^((eps' - eps)/4)), evaluated exactly as the toml formula is."""
    rho = (sp.nsimplify(eps1) - sp.Rational(eps.numerator, eps.denominator)) / 4
    value = sp.nsimplify(scale) * sp.Integer(N) ** rho
    return int(sp.ceiling(value))


def protocol_case(ctx: CheckContext, name: str) -> tuple[Callable[..., ProtocolRun], list[tuple[int, ...]]]:
    """The protocol as a function of the MPC hooks, and the independent reference answer."""
    N, P = ctx.params["N"], ctx.params["P"]
    rng = np.random.default_rng(ctx.seed)
    memory = _memory_for(ctx)
    if name == "khop":
        text = hop_string(rng, N, max(2, ctx.params.get("alphabet", 4)))
        k = ctx.params.get("k", 5)
        return (partial(khop_protocol, text, hops=k, machines=P, memory=memory),
                [(int(v),) for v in hop_labels(text, k)])
    x = rng.integers(0, 10 * N, size=N)
    if name == "sum":
        return partial(prefix_sum_protocol, x, machines=P, memory=memory), [(int(v),) for v in np.cumsum(x)]
    fn = sort_protocol if name == "sort" else samplesort_protocol
    return partial(fn, x, machines=P, memory=memory), [(int(v),) for v in np.sort(x)]


def run_directly(ctx: CheckContext, protocol: Callable[..., ProtocolRun], ledger: Ledger) -> ProtocolRun:
    """The protocol run directly on the MPC machine; a memory from ``--eps`` below what it needs is refused naming
    --eps."""
    try:
        return protocol(ledger=ledger)
    except AnnaInputError as exc:
        if ctx.params["eps"] is not None and str(exc).startswith("s:"):
            raise UsageError(f"--eps: s = 2^round(eps log2 N) = {_memory_for(ctx)} is too small ({exc})") from None
        raise


def run_in_transformer(ctx: CheckContext, protocol: Callable[..., ProtocolRun], reference: list[tuple[int, ...]],
                       tag: str, sort_tags: tuple[str, ...] = ()) -> Measurement:
    """Direct run, transformer run, comparison and counts (shared by Thm 4.1, Thm 4.4 and the hop route);
    ``sort_tags``: ledger tag prefixes of the protocol's sort, whose rounds in the direct run are counted as
    ``sorting_rounds``."""
    N, eps1 = ctx.params["N"], ctx.params["eps1"]
    log2n = _log2(N)
    direct_ledger = Ledger()
    direct = run_directly(ctx, protocol, direct_ledger)
    s = direct.memory
    if s & (s - 1):
        raise UsageError(f"--eps: the protocol's memory {s} is not a power of two")
    eps = Fraction(s.bit_length() - 1, log2n)
    if not 0 < eps < eps1 < 1:
        raise UsageError(f"--eps1: need 0 < eps < eps' < 1; the protocol needs s = {s} words, eps = log s / log N = "
                         f"{float(eps):.4g}, and eps' = {eps1}")
    heads = _heads(N, eps, eps1, ctx.params["heads_scale"])
    ledger = Ledger()
    try:
        run: TransformerRun = run_protocol(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=N,
                                           machines=direct.machines, block=direct.block, base=heads + 1,
                                           memory=s, ledger=ledger, tag=tag)
    except (DecodingError, RelayError, RelayOverflowError) as exc:
        return Measurement(evidence="independent", reference="the protocol run directly",
                           agree=False, error_bits=0.0, counts={"decoding_failures": ledger.total("decode_failure")},
                           reasons=[f"the transformer stopped: {exc}"])
    reasons = []
    if direct.vector() != reference:
        reasons.append("the protocol run directly differs from the reference answer")
    wrong = sum(a != b for a, b in zip(run.outputs, direct.vector()))
    if wrong:
        reasons.append(f"the transformer's output differs from the protocol's at {wrong} of {N} tokens")
    size = size_from_ledger(_only(ledger, tag))  # the arrays the heads executed, not the layout's capacity
    state = 1 + UNIT_NUMBERS * run.max_token_units  # a token's units in transit, three numbers each
    width = max(size["qk_dim"], size["v_dim"], state)  # the widest embedding any layer reads or writes
    R = direct_ledger.rounds("mpc_round")
    plan = run.plan
    derived = {"R": R, "D": plan.hops, "k": plan.base, "s": s, "eps": eps, "P": direct.machines,
               "block": direct.block, "B": plan.capacity}
    return Measurement(
        evidence="independent", reference="the protocol run directly",
        agree=not wrong, error_bits=math.inf if not wrong else 0.0,
        counts={"layers": size["layers"], "heads": size["heads"], "embedding_dim": width,
                "decoding_failures": ledger.total("decode_failure"),
                **({"sorting_rounds": direct_ledger.rounds("mpc_round", sort_tags)} if sort_tags else {})},
        counts_by_tag=direct_ledger.by_tag("mpc_round"), rounds=R, derived=derived, reasons=reasons,
        extra={**{k: (float(v) if isinstance(v, Fraction) else v) for k, v in derived.items()},
               "code": {"alpha": run.code.alpha, "base": run.code.base, "rows": run.code.rows,
                        "delta": run.code.delta, "width": run.code.width},
               "tokens": max(N, plan.tokens), "bundles_decoded": ledger.total("decode"), "max_alpha": run.max_alpha,
               "max_bundle_units": run.max_bundle_units, "max_token_units": run.max_token_units,
               "token_state_numbers": state, "qk_dim": size["qk_dim"], "value_dim": size["v_dim"],
               "width_measured": width, "width_declared": run.code.width},
    )


def _only(ledger: Ledger, prefix: str) -> Ledger:
    return Ledger([e for e in ledger.entries if e.tag.startswith(prefix)])


def grid_machines(N: int, protocol: str) -> int:
    """P for the report's sweep: about sqrt(N) machines (twice that for k-hop's 16 words per token), at most 64."""
    return min(64, 1 << (((N.bit_length() - 1) + 1) // 2 + (protocol == "khop")))


def sort_point(N: int) -> dict[str, Any]:
    """The bitonic sort at fixed eps = 1/2 (s = sqrt N for N a power of 4) on the least P it fits: s >= 6 N / P.

    eps' = 0.96 makes the relay's N^((eps'-eps)/4) heads reach 4 by N = 16384."""
    s = 1 << ((N.bit_length() - 1) // 2)
    return {"protocol": "sort", "N": N, "P": 1 << (6 * N // s - 1).bit_length(), "eps": 0.5, "eps1": 0.96}


def _thm_4_1_grid(quick: bool) -> list[dict[str, Any]]:
    """Quick: the sort at two sizes of its quick growth sweep (computed once for both), sum and k-hop at 256, 512."""
    sizes = (256, 512) if quick else (256, 1024, 4096)
    small = (256, 512) if quick else (256, 1024, 2048)
    return ([sort_point(n) for n in sizes] + [{"protocol": "sum", "N": n, "P": grid_machines(n, "sum")} for n in small]
            + [{"protocol": "khop", "N": n, "P": grid_machines(n, "khop")} for n in small])


def _thm_4_1_growth(quick: bool) -> list[dict[str, Any]]:
    """Quick: N = 64 ... 512, the least sizes the sort runs at (P <= N from N = 64 on) spanning 8x; s = 2^floor(
    log4 N), so eps = log s / log N is 1/2 at 64 and 256 and 3/7, 4/9 between (the width bound N^eps' does not
    move with it). The full sweep keeps eps = 1/2 exactly at powers of 4 up to 16384."""
    return [sort_point(n) for n in ((64, 128, 256, 512) if quick else (256, 1024, 4096, 16384))]


THM_4_1_PARAMS = [Param("protocol", str, "sort", "the MPC protocol to execute", choices=PROTOCOLS),
                   *_COMMON,
                   Param("k", int, 5, "hops for --protocol khop", minimum=0),
                   Param("alphabet", int, 4, "letters for --protocol khop", minimum=2)]


def _thm_4_1(ctx: CheckContext) -> Measurement:
    """Run an MPC protocol directly and inside the EMA transformer; outputs must be equal exactly."""
    name = ctx.params["protocol"]
    protocol, reference = protocol_case(ctx, name)
    m = run_in_transformer(ctx, protocol, reference, tag="thm_4_1")
    m.extra["protocol"] = name
    return m


# Thm B.10 and Cor B.14 are Thm 4.1's construction: a sweep measures a point the three share once (``shares``)
checker("anna.thm_4_1", evidence="independent", numerics=EXACT, params=THM_4_1_PARAMS, grid=_thm_4_1_grid,
        growth_grid=_thm_4_1_growth, shares="anna.thm_4_1", relations=_eps1_above_eps)(_thm_4_1)
for _claim in ("anna.thm_b_10", "anna.cor_b_14"):  # one case each in the report's sweep (a point of Thm 4.1's)
    checker(_claim, evidence="independent",
            numerics=EXACT, params=THM_4_1_PARAMS, growth_grid=_thm_4_1_growth, shares="anna.thm_4_1",
            relations=_eps1_above_eps,
            grid=lambda quick: [{"protocol": "khop", "N": 256 if quick else 1024, "P": 32 if quick else 64}])(_thm_4_1)


# ---------------------------------------------------------------- Thm 4.4 (= Cor D.3): low-rank inside ANNA

def _lowrank_layers(rng: np.random.Generator, L: int, d: int, rank: int) -> list[LowRankLayer]:
    return [LowRankLayer(rng.integers(-2, 3, size=(d, rank)), rng.integers(-2, 3, size=(d, rank)),
                         rng.integers(-2, 3, size=(d, d))) for _ in range(L)]


def _thm_4_4(ctx: CheckContext) -> Measurement:
    """A depth-L rank-r low-rank model: Lemma D.2's protocol inside the EMA transformer equals the model."""
    N, P, L, d, rank, mod = (ctx.params[x] for x in ("N", "P", "depth", "d", "rank", "modulus"))
    rng = np.random.default_rng(ctx.seed)
    X = rng.integers(0, mod, size=(N, d))
    layers = _lowrank_layers(rng, L, d, rank)
    want = [tuple(int(v) for v in row) for row in lowrank_reference(X, layers, mod)]
    protocol = partial(lowrank_protocol, X, layers, modulus=mod, machines=P, memory=_memory_for(ctx))
    m = run_in_transformer(ctx, protocol, want, tag="thm_4_4")
    m.derived["depth"] = L
    m.extra.update({"depth": L, "rank": rank, "d": d})
    return m


_THM_4_4_PARAMS = [*_COMMON,
                   Param("depth", int, 2, "low-rank layers L", minimum=1),
                   Param("d", int, 3, "model width (value dimension)", minimum=1),
                   Param("rank", int, 2, "feature rank r", minimum=1),
                   Param("modulus", int, 97, "each layer's token-wise map reduces mod this",
                         minimum=2, maximum=2 ** 31)]

def _thm_4_4_growth(quick: bool) -> list[dict[str, Any]]:
    """The growth sweep: N a power of 4 at eps = 1/2 exactly (s = sqrt N, so the bound's eps does not wobble
    with the rounding of log s / log N), P = 8 sqrt N machines of s/8 tokens (half the memory holds tokens,
    half the tree's partial matrices), width and rank 1 so that s = 8 already fits a binary tree.

    heads_scale = 3 puts the relay in its asymptotic regime over the sweep: k = 3 N^((eps'-eps)/4) + 1 grows
    as fast as P^(1/D) for D = 3, so the relay's depth D is the same at every size, as it is in the limit
    (for heads_scale = 1 it climbs from 4 to 5 at these sizes, a step the limit D -> 4 (1 - eps)/(eps'-eps)
    only reaches at astronomic N). Then the layers R D^2 + 2 move only with the tree depth R. The same sizes
    serve both grids. N = 16384 (P = 1024) takes 4 s, but there the relay's depth steps to D = 4 (R = 4, layers /
    bound 6.0, within the others' 5.1-10), out of the regime the sweep holds D in."""
    return [{"N": n, "P": 8 * isqrt(n), "eps": 0.5, "heads_scale": 3.0, "depth": 1, "d": 1, "rank": 1}
            for n in (64, 256, 1024, 4096)]


for _claim in ("anna.thm_4_4", "anna.cor_d_3", "anna.thm_d_1"):  # one construction: measured once per point
    checker(_claim, evidence="independent",
            numerics=EXACT, params=_THM_4_4_PARAMS, growth_grid=_thm_4_4_growth, shares="anna.thm_4_4",
            relations=_eps1_above_eps,
            grid=lambda quick: [{"N": n, "P": grid_machines(n, "lowrank"), "depth": L}
                                for n in ((256, 1024) if quick else (256, 1024, 4096)) for L in (1, 3)])(_thm_4_4)
