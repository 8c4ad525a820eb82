"""Broken twins of what theory decides from paper_refs: a bound mistranscribed, the containment's limit taken
the wrong way round, a minimum-M condition of Thm 4.1 mistranscribed.

- **Bound mistranscribed** (an exponent or a term of a paper's bound dropped): the exact count is no longer in
  the bound's class, so the record's containment must fail. These twins are also what catches a containment
  made loose (a limit that is always called finite): with such a containment they pass.
- **Containment reversed** (``lim bound/exact`` in place of ``lim exact/bound``, :mod:`attnsim.theory.symbolic`):
  a count strictly below its bound (Lemma D.2's and Lemma C.2's machines, ``within bound (not tight)``) then
  reads as outside it. On a tight count the reversal is invisible, so these twins sit on claims with a
  count that is not tight.
- **Minimum-M mistranscribed** (Thm 4.1's second condition with D in place of D^2, a smaller minimum M where
  D < 1): the check holds ``[claims.extra.min_M]`` against the statement's own conditions
  (:func:`attnsim.theory.average_case.statement_mismatches`) and must fail on the difference.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Callable, Iterator
from unittest import mock

from attnsim.paper_refs import Claim
from attnsim.paper_refs import get as get_claim
from attnsim.theory import symbolic
from attnsim.verify.twins import twin
from attnsim.verify.twins.breaks import replaced
from attnsim.verify.twins.two_heads_approx import CHEAP


def _hop_gap_point(**fixed: object) -> dict:
    from attnsim.verify.claims.anna_hop_route import gap_point

    return gap_point(True, 0.08, **fixed)


def _mpc_gap_point() -> dict:
    from attnsim.verify.claims.anna_mpc_small import _gap_point_4_2

    return _gap_point_4_2(True, 1 / 8)


@contextmanager
def claim_edited(claim_id: str, edit: Callable[[Claim], Claim]) -> Iterator[None]:
    """Every loaded checker and :func:`~attnsim.verify.check.run_check` read ``claim_id`` as ``edit(claim)``."""
    def lookup(cid: str) -> Claim:
        claim = get_claim(cid)
        return edit(claim) if cid == claim_id else claim

    with replaced(get_claim, lookup):
        yield


def _swap(text: str, old: str, new: str, where: str) -> str:
    if old not in text:  # paper_refs changed: the twin must say so rather than break nothing
        raise ValueError(f"{where}: {old!r} is not in {text!r}")
    return text.replace(old, new)


def bound_edited(claim_id: str, resource: str, old: str, new: str) -> Callable[[], Iterator[None]]:
    """A break: ``resource``'s bound of ``claim_id`` read with ``old`` replaced by ``new``."""
    def edit(c: Claim) -> Claim:
        res = c.resources[resource]
        res = dataclasses.replace(res, bound=_swap(res.bound or "", old, new, f"{claim_id} {resource}.bound"))
        return dataclasses.replace(c, resources={**c.resources, resource: res})

    return lambda: claim_edited(claim_id, edit)


def min_M_edited(claim_id: str, name: str, old: str, new: str) -> Callable[[], Iterator[None]]:
    """A break: the minimum-M condition ``name`` of ``claim_id`` read with ``old`` replaced by ``new``."""
    def edit(c: Claim) -> Claim:
        conds = dict(c.extra["min_M"])
        conds[name] = _swap(conds[name], old, new, f"{claim_id} min_M.{name}")
        return dataclasses.replace(c, extra={**c.extra, "min_M": conds})

    return lambda: claim_edited(claim_id, edit)


@contextmanager
def containment_reversed() -> Iterator[None]:
    """Theory takes the limit of bound / exact where it should take exact / bound."""
    original = symbolic._analyse

    def reversed_(cid: str, resource: str, bound: str | None, exact: str | None, *rest: object) -> object:
        return original(cid, resource, exact, bound, *rest)

    with mock.patch.object(symbolic, "_analyse", reversed_):
        yield


_BOUNDS = (
    ("two_heads.lemma_3_1", "calls", "n**2", "n", {}, "the bound on calls, O(n^2), read as O(n) (exponent dropped)"),
    ("two_heads.thm_4_2", "oracle_dim", "d + log(n)", "d", {},
     "the bound on the oracle's width, O(d + log n), read as O(d) (the code length's term dropped)"),
    ("anna.alg_1", "hash_evaluations", "log(N)**2", "log(N)", {},
     "the bound on hash evaluations read with log N in place of log^2 N (a log factor dropped)"),
)
# The bound's power of eps' - eps mistranscribed: the count stays in the bound's class as N grows (its constant
# lim_N count / bound is finite at every gap) but that constant grows without end as the gap closes, which only the
# containment in the gap sweep's variable sees (a construction spending one power of 1/(eps'-eps) more).
_BOUNDS += (
    ("anna.thm_5_4", "layers", "(eps1 - eps)**2", "(eps1 - eps)", _hop_gap_point(),
     "the layer bound O(1/(eps (eps'-eps)^2)) read with eps' - eps to the first power"),
    ("anna.thm_5_6", "layers", "(eps1 - eps)**2", "(eps1 - eps)", _hop_gap_point(k=8),
     "the layer bound O(1/(eps (eps'-eps)^2) + log(k)/(eps'-eps)^2) read with eps' - eps to the first power in both "
     "terms"),
    ("anna.thm_4_2", "rounds", "layers/(eps1 - eps)", "layers", _mpc_gap_point(),
     "the round bound O(L/(eps'-eps)) read as O(L): the 1/(eps'-eps) dropped"),
)
for _claim, _res, _old, _new, _params, _what in _BOUNDS:
    twin(_claim, f"{_res}_bound_mistranscribed", _what, kind="formula", params=_params)(
        bound_edited(_claim, _res, _old, _new))

for _claim, _n in (("anna.lemma_d_2", 100),):
    twin(_claim, "containment_reversed", "the containment takes lim bound/exact for lim exact/bound: the machines, "
         "below their bound, read as outside it", kind="formula", params={"N": _n})(containment_reversed)

twin("two_heads.thm_4_1", "min_M_mistranscribed", "the second minimum-M condition is read with D where the paper "
     "has D^2 (a smaller minimum M, since D < 1)", kind="formula", params=CHEAP)(
    min_M_edited("two_heads.thm_4_1", "values", "D**2", "D"))
