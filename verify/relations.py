"""Domains that depend on another parameter: ``--P`` machines dividing the ``--N`` tokens they split, ``--K``
prefixes dividing the width ``--D``, ``--n_train`` at most ``--n``, and the like, checked before any work (after
the defaults are filled in), so a value outside them is one line naming its flag — never a run that only the
construction's own checks, deep inside the work, would stop.

Each relation is ``(param, other, why)``: ``param <= other``; ``strict`` relations (``param < other``) and
divisors (``other % param == 0``) are listed apart; last come a checker's own relations (``Checker.relations``: TinT's
heads H_sim among the counts that split the MLP rebuttal's width, eps' above the eps of the memory an MPC protocol
takes); and values a parameter cannot take in the numerics of the run (:data:`NOT_EXACT`). A relation applies to
every claim that takes both parameters, unless the claim is named in :data:`EXEMPT` for that parameter (it means
something else there).
The fuzz draws values that keep them (:mod:`attnsim.verify.fuzz`).
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from attnsim.sim.numerics import backend_kind
from attnsim.verify.cost import EXACT_KINDS
from attnsim.verify.registry import Checker, UsageError, load_checker

AT_MOST: tuple[tuple[str, str, str], ...] = (
    ("block", "N", "a machine holds at most the N tokens"),
    ("alphabet", "N", "N tokens use at most N letters"),
    ("k", "N", "a chain of hops visits at most the N tokens"),
    ("fan", "N", "a scan's tree node has at most the N tokens as children"),
    ("n_train", "n", "the training prefix lies inside the n tokens"),
    ("alpha", "q", "the alpha messages averaged come from distinct senders among the q"),
)

LESS_THAN: tuple[tuple[str, str, str], ...] = (
    ("window", "M", "the window must leave a query in each oracle call of M tokens"),
    ("sinks", "M", "the sinks must leave a query in each oracle call of M tokens"),
)

DIVIDES: tuple[tuple[str, str, str], ...] = (
    ("P", "N", "the machines split the N tokens in equal blocks"),
    ("K", "D", "the K prefixes split the width D"),
    ("H", "d", "each of the H heads gets d/H coordinates"),
)
"""``other % param == 0`` (so ``param <= other`` too, for positive values)."""

PADDED_AT_MOST: tuple[tuple[str, str, int, str], ...] = (
    ("M", "N", 64, "a short input is padded into the oracle, and an oracle longer than that has nothing more "
     "to simulate"),
)
"""``param <= max(other, floor)``: a value above ``other`` is still a case the constructions handle, up to the
floor (the single-token and short-input cases of the tests run M > N)."""

NOT_EXACT: tuple[tuple[str, str, str, str], ...] = (
    ("rope", "real", "quarter", "real rotation angles have irrational entries"),
)
"""``(param, value, instead, why)``: a value that exact numerics (:data:`~attnsim.verify.cost.EXACT_KINDS`) cannot
compute, and the value that takes its place there."""

EXEMPT: dict[str, frozenset[str]] = {
    "M": frozenset({"two_heads.lemma_3_3", "anna.prop_e_3"}),
    "alphabet": frozenset({"anna.def_ema", "anna.thm_c_1"}),
    "H": frozenset({"two_heads.thm_4_1"}),  # its H heads carry the halves input at widths of their own, not d/H
}


STEP = 1 / 64
"""How far a checker's relation moves eps' inside a strict bound: to eps + STEP above eps, to 1 - STEP below 1."""


def eps1_between(low: float, eps1: float, why: str) -> Iterator[tuple[str, str, float | None]]:
    """eps' must lie strictly between ``low`` and 1: the fault ``why``, with eps' moved STEP inside the bound it
    crossed (None where that is not inside), or nothing."""
    if not low < eps1 < 1:
        nearest = low + STEP if eps1 <= low else 1 - STEP
        yield "eps1", why, nearest if low < nearest < 1 else None


def applies(claim: str, name: str) -> bool:
    """Whether ``name``'s relations hold for ``claim`` (it is not in :data:`EXEMPT` for ``name``)."""
    return claim not in EXEMPT.get(name, ())


def broken(claim: str, params: Mapping[str, Any], numerics: str | None = None
           ) -> Iterator[tuple[str, str, Any]]:
    """Each relation of ``claim`` that ``params`` break, in the tables' order: the parameter at fault, what is wrong
    with it, and the nearest value that keeps the relation (None: none). ``params`` is read as the iteration goes,
    so a caller that moves a value meets the later relations with the value moved. ``numerics`` (the run's, None:
    not known) decides :data:`NOT_EXACT`."""
    def pair(name: str, other: str) -> tuple[Any, Any]:
        value, bound = params.get(name), params.get(other)
        return (None, None) if value is None or bound is None or not applies(claim, name) else (value, bound)

    for name, other, why in AT_MOST:
        value, bound = pair(name, other)
        if value is not None and value > bound:
            yield name, f"must be <= {other} = {bound} ({why}), got {value}", bound
    for name, other, why in LESS_THAN:
        value, bound = pair(name, other)
        if value is not None and value >= bound:
            yield name, f"must be < {other} = {bound} ({why}), got {value}", bound - 1
    for name, other, why in DIVIDES:
        value, whole = pair(name, other)
        if value is not None and (value < 1 or whole % value):
            least = min(value, whole)
            divisor = max(q for q in range(1, least + 1) if not whole % q) if least >= 1 else None
            yield name, f"must divide {other} = {whole} ({why}), got {value}", divisor
    for name, other, floor, why in PADDED_AT_MOST:
        value, bound = pair(name, other)
        if value is not None and value > max(bound, floor):
            top = max(bound, floor)
            yield name, f"must be <= max({other}, {floor}) = {top} ({why}), got {value}", top
    if numerics is not None and backend_kind(numerics) in EXACT_KINDS:
        for name, value, instead, why in NOT_EXACT:
            if params.get(name) == value:
                yield name, f"{why}: use --{name} {instead} in {numerics} numerics, or --numerics mp:BITS", instead
    own = load_checker(claim)  # its own module only: every checker module loads libraries this check may not need
    if own is not None and own.relations is not None:
        yield from own.relations(params)


def check_relations(claim: str, params: Mapping[str, Any], numerics: str | None = None) -> None:
    """Refuse the first parameter of ``claim`` (resolved ``params``, run in ``numerics``) outside its relation to
    another one."""
    for name, why, _ in broken(claim, params, numerics):
        raise UsageError(why, param=name)


def kept(chk: Checker, params: Mapping[str, Any], numerics: str | None = None) -> dict[str, Any]:
    """``params`` with each value that breaks a relation moved to the nearest one that keeps it (the bound, the
    largest divisor below), where that value lies in its own domain; otherwise it stays, and the check refuses
    it. The fuzz draws each parameter on its own, and for Lemma 3.3 the heads H divided the width d in fewer than
    two examples in three."""
    out = dict(params)
    domain = {p.name: p for p in chk.params}
    for name, _, nearest in broken(chk.claim, out, numerics):
        if nearest is not None and name in domain:
            try:
                out[name] = domain[name].parse(nearest)
            except UsageError:
                pass
    return out
