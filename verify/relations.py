"""Domains that depend on another parameter: ``--P`` machines dividing the ``--N`` tokens they split, ``--K``
prefixes dividing the width ``--D``, ``--n_train`` at most ``--n``, and the like, checked before any work (after
the defaults are filled in), so a value outside them is one line naming its flag — never a run that only the
construction's own checks, deep inside the work, would stop.

Each relation is ``(param, other, why)``: ``param <= other``; ``strict`` relations (``param < other``) and
divisors (``other % param == 0``) are listed apart. A relation applies to every claim that takes both
parameters, unless the claim is named in :data:`EXEMPT` for that parameter (it means something else there).
The fuzz draws values that keep them (:mod:`attnsim.verify.fuzz`).
"""

from __future__ import annotations

from typing import Any, Mapping

from attnsim.verify.registry import Checker, UsageError

AT_MOST: tuple[tuple[str, str, str], ...] = (
    ("block", "N", "a machine holds at most the N tokens"),
    ("alphabet", "N", "N tokens use at most N letters"),
    ("k", "N", "a chain of hops visits at most the N tokens"),
    ("fan", "N", "a scan's tree node has at most the N tokens as children"),
    ("n_train", "n", "the training prefix lies inside the n tokens"),
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

EXEMPT: dict[str, frozenset[str]] = {
    "M": frozenset({"two_heads.lemma_3_3", "anna.prop_e_3"}),
    "alphabet": frozenset({"anna.def_ema", "anna.thm_c_1"}),
    "H": frozenset({"two_heads.thm_4_1"}),  # its H heads carry the halves input at widths of their own, not d/H
}


def applies(claim: str, name: str) -> bool:
    """Whether ``name``'s relations hold for ``claim`` (it is not in :data:`EXEMPT` for ``name``)."""
    return claim not in EXEMPT.get(name, ())


def check_relations(claim: str, params: Mapping[str, Any]) -> None:
    """Refuse the first parameter of ``claim`` (resolved ``params``) outside its relation to another one."""
    for table, strict in ((AT_MOST, False), (LESS_THAN, True)):
        for name, other, why in table:
            value, bound = params.get(name), params.get(other)
            if value is None or bound is None or not applies(claim, name):
                continue
            if value > bound or (strict and value == bound):
                op = "<" if strict else "<="
                raise UsageError(f"must be {op} {other} = {bound} ({why}), got {value}", param=name)
    for name, other, why in DIVIDES:
        value, whole = params.get(name), params.get(other)
        if value is None or whole is None or not applies(claim, name):
            continue
        if value < 1 or whole % value:
            raise UsageError(f"must divide {other} = {whole} ({why}), got {value}", param=name)
    for name, other, floor, why in PADDED_AT_MOST:
        value, bound = params.get(name), params.get(other)
        if value is None or bound is None or not applies(claim, name):
            continue
        if value > max(bound, floor):
            raise UsageError(f"must be <= max({other}, {floor}) = {max(bound, floor)} ({why}), got {value}", param=name)


def kept(chk: Checker, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with each value that breaks a relation moved to the nearest one that keeps it (the bound, the
    largest divisor below), where that value lies in its own domain; otherwise it stays, and the check refuses
    it. The fuzz draws each parameter on its own, and for Lemma 3.3 the heads H divided the width d in fewer than
    two examples in three."""
    out = dict(params)
    domain = {p.name: p for p in chk.params}

    def move(name: str, value: int) -> None:
        try:
            out[name] = domain[name].parse(value)
        except UsageError:
            pass

    def ints(name: str, other: str) -> tuple[int, int] | None:
        value, bound = out.get(name), out.get(other)
        ok = isinstance(value, int) and isinstance(bound, int) and name in domain and applies(chk.claim, name)
        return (value, bound) if ok else None

    for name, other, _ in AT_MOST:
        if (pair := ints(name, other)) and pair[0] > pair[1]:
            move(name, pair[1])
    for name, other, _ in LESS_THAN:
        if (pair := ints(name, other)) and pair[0] >= pair[1]:
            move(name, pair[1] - 1)
    for name, other, _ in DIVIDES:
        if (pair := ints(name, other)) and pair[0] >= 1 and pair[1] >= 1 and pair[1] % pair[0]:
            move(name, max(q for q in range(1, min(pair) + 1) if not pair[1] % q))
    for name, other, floor, _ in PADDED_AT_MOST:
        if (pair := ints(name, other)) and pair[0] > max(pair[1], floor):
            move(name, max(pair[1], floor))
    return out
