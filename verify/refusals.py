"""Refused draws of a randomized route, decided by their probability.

Our sort for Lemma C.2 of Liu et al. (App. C) is randomized: its output is exact and its rounds are the same for
every draw, but its loads hold only with high probability, and the referee MPC machine refuses a round that would
overload a machine. A refused draw has no output. One refused draw does not show that the route is refused more
often than paper_refs' target (``refusal_target`` of ``anna.lemma_c_2``), so a check that runs the route on one
draw and meets a refusal runs a batch of fresh draws of the route's own random choices on the same input, and
decides the chance of a refusal over that batch alone: the draw that started it is left out, since it was chosen
for being refused. The record fails when the batch's 95% Clopper-Pearson interval lies above the target, or when
every draw of the batch is refused (nothing was compared).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar

import numpy as np

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.mpc import MPCLimitError, MPCLoadError
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.stats import binomial_interval, interval_above, rate_upper

R = TypeVar("R")

TARGET_CLAIM = "anna.lemma_c_2"
"""The claim whose definitions hold ``refusal_target``: the sort's own lemma."""


def refusal_target() -> float:
    """The chance of a refused draw that our sort is held to (paper_refs, ``anna.lemma_c_2``'s definitions)."""
    return float(as_number(evaluate("refusal_target", get_claim(TARGET_CLAIM).definitions, {})))


REFUSAL_DRAWS = 36
"""Draws a batch runs: the fewest whose 95% Clopper-Pearson interval, with no draw refused, lies at or below the
refusal target (1/10), so that a batch with no refusal shows the target. A literal, so that importing the checkers
runs no scipy; tests/anna/test_mpc_splitter_sort.py recomputes it from the target."""


def draw_seed(seed: int, draw: int) -> int:
    """The route's seed for ``draw``: ``seed`` itself for draw 0 (the record's own draw), else a fresh seed derived
    from (seed, draw), so that the draws of a batch are independent of each other and of draw 0."""
    if draw == 0:
        return seed
    return int(np.random.SeedSequence([seed, draw]).generate_state(1, np.uint64)[0] >> 1)


@dataclass(frozen=True)
class Refused:
    """A draw the referee refused, with the referee's words; ``load``: for a load over s (what an unlucky draw may
    meet), not for a fault such as a message to a machine that does not exist (a fault on any draw)."""

    reason: str
    load: bool = True


def refused(exc: MPCLimitError) -> Refused:
    """The referee's refusal ``exc`` as a refused draw."""
    return Refused(str(exc), load=isinstance(exc, MPCLoadError))


@dataclass(frozen=True)
class Refusals:
    """``refused`` of a batch of ``draws`` draws refused, held against ``target``. ``ran``: the draws run (fewer than
    ``draws`` when the batch stopped once its decision was settled); ``first`` the first refusal's words."""

    refused: int
    draws: int
    target: float
    first: str | None = None
    ran: int | None = None

    @property
    def run(self) -> int:
        """The draws that were run."""
        return self.draws if self.ran is None else self.ran

    @property
    def upper(self) -> float | None:
        """The one-sided 95% upper bound on the chance of a refusal (None for a batch stopped early)."""
        return rate_upper(self.refused, self.draws) if self.run == self.draws else None

    @property
    def above(self) -> tuple[float, float] | None:
        """The two-sided 95% interval of the batch when it lies above the target (the draws contradict it), else
        None. For a batch stopped early the refusals counted are a floor on the batch's, and the interval's lower
        end only rises with them."""
        return interval_above(self.refused, self.draws, self.target)

    @property
    def decision(self) -> str:
        """The decision in words: above the target, shown below it, or neither."""
        if self.above is not None:
            return "above the target" + ("" if self.run == self.draws else
                                         f" (settled after {self.run} of {self.draws} draws)")
        if self.run < self.draws:
            return (f"not above the target (settled after {self.run} of {self.draws} draws: whatever the others "
                    "gave, the interval would reach the target)")
        if self.upper is not None and self.upper <= self.target:
            return "shown below the target"
        return "consistent with the target, not shown below it (too few draws)"

    def reasons(self, what: str = "draws") -> list[str]:
        """Why the record fails on its refusals (empty when it does not)."""
        if self.refused == self.draws:
            return [f"the referee refused a round of every one of {self.draws} {what}: no output was compared "
                    f"({self.first})"]
        if self.above is None:
            return []
        lo, hi = self.above
        of = f"{self.refused} of {self.draws} {what}" if self.run == self.draws else \
            f"{self.refused} of the first {self.run} of {self.draws} {what}"
        return [f"refusal: the referee refused {of}; the 95% Clopper-Pearson interval [{lo:.3g}, {hi:.3g}] of "
                f"{self.refused} of {self.draws} lies above the target {self.target:g}: {self.first}"]

    def extra(self) -> dict[str, Any]:
        """The record's account of the draws and their decision."""
        return {"draws": self.draws, "draws_run": self.run, "refused_draws": self.refused,
                **({"refusal_ci95": list(binomial_interval(self.refused, self.draws, method="exact")),
                    "refusal_upper95": self.upper} if self.run == self.draws else {}),
                "refusal_target": self.target, "refusal_decision": self.decision,
                "refusal_decides": "fail when the 95% interval of refused draws lies above the target, or when "
                                   "every draw is refused",
                **({"first_refusal": self.first} if self.first else {})}


def fewest_refusals_above(draws: int, target: float) -> int:
    """The fewest refused draws of ``draws`` whose 95% interval lies above ``target`` (``draws`` + 1 if none)."""
    return next((k for k in range(draws + 1) if interval_above(k, draws, target) is not None), draws + 1)


@dataclass(frozen=True)
class Redrawn(Generic[R]):
    """What a record ran after its own draw was refused: the batch's runs and their refusals; ``fault``: the
    referee's words when a draw of the batch was refused for a fault, not a load (the batch stops there)."""

    trigger: str
    runs: list[R]
    refusals: Refusals
    fault: str | None = None

    def reasons(self, what: str = "redraws") -> list[str]:
        """Why the record fails on the batch (empty when it does not)."""
        fault = [f"the referee refused a round of a redraw for a fault, not a load: {self.fault}"] if self.fault else []
        return fault + self.refusals.reasons(what)

    def extra(self) -> dict[str, Any]:
        """The record's account: the refusal that started the batch, and the batch's draws."""
        return {"first_draw_refused": self.trigger, "redraws": self.refusals.extra()}


def redraw(attempt: Callable[[int], R | Refused], draws: int, trigger: str) -> Redrawn[R]:
    """After draw 0 was refused for a load (``trigger``, the referee's words), run draws 1 .. ``draws`` of
    ``attempt`` and count their refusals against the target; every run that was not refused is returned for the
    caller to compare with its reference. The batch stops as soon as its decision is settled: when its refusals
    already lie above the target, or when, with at least one run to compare, the draws left could no longer put
    them there (a batch draw takes as long as the record's own, so a refusal costs up to ``draws`` of them). It
    stops at a refusal for a fault, which fails the record whatever the other draws give."""
    target = refusal_target()
    enough = fewest_refusals_above(draws, target)
    runs: list[R] = []
    loads: list[str] = []
    ran = 0
    for t in range(1, draws + 1):
        got = attempt(t)
        ran = t
        if isinstance(got, Refused) and not got.load:
            return Redrawn(trigger, runs, Refusals(len(loads), draws, target, loads[0] if loads else None, ran),
                           fault=got.reason)
        if isinstance(got, Refused):
            loads.append(got.reason)
        else:
            runs.append(got)
        if len(loads) >= enough or (runs and len(loads) + draws - t < enough):
            break
    return Redrawn(trigger, runs, Refusals(len(loads), draws, target, loads[0] if loads else None, ran))


def runs_deciding_refusals(first: R | Refused, attempt: Callable[[int], R | Refused], draws: int,
                           exact_loads: str | None = None, what: str = "redraws"
                           ) -> tuple[list[R], list[str], dict[str, Any]]:
    """The runs a record compares, its reasons to fail on refusals, and its account of them, given its own draw
    ``first``: that draw alone when it ran; nothing and a failure when it was refused for a fault, or for a load of
    a route whose loads are exact (``exact_loads`` names it); else the runs of a batch of ``draws`` redraws, decided
    by :func:`redraw`."""
    if not isinstance(first, Refused):
        return [first], [], {"first_draw_refused": None}
    if not first.load:
        return [], [f"the referee refused a round for a fault, not a load: {first.reason}"], \
            {"first_draw_refused": first.reason}
    if exact_loads:
        why = f"a run sorted by the {exact_loads}, which draws nothing, so no redraw can excuse it"
        return [], [f"the referee refused a round of {why}: {first.reason}"], {"first_draw_refused": first.reason}
    again = redraw(attempt, draws, first.reason)
    return again.runs, again.reasons(what), again.extra()
