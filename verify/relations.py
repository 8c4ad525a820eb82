"""Domains that depend on another parameter: ``--P`` machines at most the ``--N`` tokens they split, ``--K``
prefixes at most the width ``--D`` they divide, and the like, checked before any work (after the defaults are
filled in), so a value far outside them is one line naming its flag — never a run that only the construction's
own checks, deep inside the work, would stop.

Each relation is ``(param, other, why)``: ``param <= other``; ``strict`` relations (``param < other``) are
listed apart. A relation applies to every claim that takes both parameters, unless the claim is named in
:data:`EXEMPT` for that parameter (it means something else there) or :data:`ONLY` limits it to others.
"""

from __future__ import annotations

from typing import Any, Mapping

from attnsim.verify.registry import UsageError

AT_MOST: tuple[tuple[str, str, str], ...] = (
    ("P", "N", "the machines split the N tokens"),
    ("block", "N", "a machine holds at most the N tokens"),
    ("alphabet", "N", "N tokens use at most N letters"),
    ("k", "N", "a chain of hops visits at most the N tokens"),
    ("fan", "N", "a scan's tree node has at most the N tokens as children"),
    ("K", "D", "the K prefixes divide the width D"),
    ("n_train", "n", "the training prefix lies inside the n tokens"),
    ("H", "d", "each of the H heads gets d/H coordinates"),  # two_heads.lemma_3_3 only (ONLY below)
)

LESS_THAN: tuple[tuple[str, str, str], ...] = (
    ("window", "M", "the window must leave a query in each oracle call of M tokens"),
    ("sinks", "M", "the sinks must leave a query in each oracle call of M tokens"),
)

PADDED_AT_MOST: tuple[tuple[str, str, int, str], ...] = (
    ("M", "N", 64, "a short input is padded into the oracle, and an oracle longer than that has nothing more "
     "to simulate"),
)
"""``param <= max(other, floor)``: a value above ``other`` is still a case the constructions handle, up to the
floor (the single-token and short-input cases of the tests run M > N)."""

EXEMPT: dict[str, frozenset[str]] = {
    "M": frozenset({"two_heads.lemma_3_3", "anna.prop_e_3"}),
    "alphabet": frozenset({"anna.def_ema", "anna.thm_c_1"}),
}

ONLY: dict[str, frozenset[str]] = {"H": frozenset({"two_heads.lemma_3_3"})}
"""Relations that hold for the named claims only (elsewhere the parameter means something else)."""


def check_relations(claim: str, params: Mapping[str, Any]) -> None:
    """Refuse the first parameter of ``claim`` (resolved ``params``) outside its relation to another one."""
    for table, strict in ((AT_MOST, False), (LESS_THAN, True)):
        for name, other, why in table:
            value, bound = params.get(name), params.get(other)
            if value is None or bound is None or claim in EXEMPT.get(name, ()) or claim not in ONLY.get(name, (claim,)):
                continue
            if value > bound or (strict and value == bound):
                op = "<" if strict else "<="
                raise UsageError(f"must be {op} {other} = {bound} ({why}), got {value}", param=name)
    for name, other, floor, why in PADDED_AT_MOST:
        value, bound = params.get(name), params.get(other)
        if value is None or bound is None or claim in EXEMPT.get(name, ()):
            continue
        if value > max(bound, floor):
            raise UsageError(f"must be <= max({other}, {floor}) = {max(bound, floor)} ({why}), got {value}", param=name)
