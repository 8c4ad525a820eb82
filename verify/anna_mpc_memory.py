"""The memory of ANNA's MPC claims as paper_refs defines it, and what the checkers read off it: a definition at a
record's parameters, the least scale of s that fits a protocol, the label of the regime a run lies in (s below N or
not), and the largest load off a run's ledger. Shared by the checkers of Lemma C.2 (verify/claims/anna_sort.py),
Thm 4.2 / C.1 (verify/claims/anna_mpc_small.py) and Thm 4.1 / the k-hop protocol (verify/claims/anna.py)."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from attnsim.paper_refs import get as get_claim
from attnsim.sim.ledger import Ledger
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.registry import CheckContext


def defined(claim: str, name: str, params: Mapping[str, Any], fixed: Mapping[str, int] | None = None) -> int:
    """``claim``'s definition ``name`` in paper_refs at ``params``, with the definitions named in ``fixed`` (the
    memory s, say) taken at the values given instead of their formulas."""
    definitions = get_claim(claim).definitions
    if fixed:
        definitions = {k: v for k, v in definitions.items() if k not in fixed}
    return int(as_number(evaluate(name, definitions, {**params, **(fixed or {})})))


def memory_words(ctx: CheckContext) -> int:
    """s, the local memory of every machine: the claim's definition of s in paper_refs at these parameters."""
    return defined(ctx.claim, "s", ctx.params)


def least_s_scale(claim: str, params: Mapping[str, Any], fits: Callable[[int], bool]) -> float | None:
    """A scale at or above the drawn ``s_scale`` (whose memory does not fit) at which the claim's memory s fits:
    the memory is found first, as an integer, by doubling s and then bisecting between the last that did not fit and
    the first that did (the least that fits where ``fits`` holds from some s on); the scale is then the least with
    six significant digits above (s - 1) / N^eps', kept only if the claim's definition of s at it fits. None where
    none does. Only integers are bisected: each new float scale costs sympy tens of milliseconds to evaluate."""
    memory = defined(claim, "s", params)
    low, high = memory, memory
    while not fits(high):
        if high > 2 ** 40:
            return None
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid, high)
    below = (high - 1) / params["N"] ** params["eps1"]  # the scale must lie above it (s is a ceiling)
    step = 10.0 ** (math.floor(math.log10(below)) - 5)
    for scale in (float(f"{(math.floor(below / step) + k) * step:.6g}") for k in (1, 2)):
        if fits(defined(claim, "s", {**params, "s_scale": scale})):
            return scale
    return None


def max_load(ledger: Ledger) -> int:
    """The most words any machine received in one round, read off the ledger."""
    return max((e.amount for e in ledger.entries if e.kind == "mpc_load"), default=0)


def in_sublinear_memory(s: int, N: int) -> bool:
    """Whether a run lies in the range its statement is about, local memory O(N^eps') with eps' < 1, below N at the
    run's size; a run at s >= N is partial evidence (``extra.in_stated_range``), however many machines it uses."""
    return s < N


def regime(s: int, N: int) -> str:
    """The label every small-memory record carries: whether s lies below N."""
    return "small memory (s < N)" if in_sublinear_memory(s, N) else "large memory (s >= N)"
