"""Growth twins: every bounded resource of every claim with a checker, inflated by a factor that grows with
the claim's size, must be caught by the growth verdict (:mod:`attnsim.verify.growth`) over the claim's
quick growth sweep.

The factor is ``sqrt(n)``: a log factor (``1 + ln n``) is the smaller growth a big-O bound must not absorb
either, and the growth verdict catches it on a smooth sweep (tests), but four sizes of a ratio that moves in
steps (a ceiling, a tree depth) leave an interval too wide to tell ``1 + ln n`` from noise. A resource
measured below its bound is first lifted to the bound (``max(measured, C bound)``, C the resource's frozen or
stated constant; without one, the largest measured / bound of the unbroken sweep, at least 1): inflating a count
that sits far below its bound by less than the slack breaks nothing, so only the lifted count is a broken
variant; and a count whose ratio to its bound wanders between sizes (a prime code base, a width whose ratio
falls from 2 to 0.1 over the sweep) would hide sqrt(n) over four sizes, so it is lifted to that band.
:func:`inflated` with a constant factor is the contrast the tests use: a constant must not fail a big-O bound
whose constant the paper does not state.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from contextlib import contextmanager
from typing import Callable, Iterator
from unittest import mock

from attnsim.paper_refs import get as get_claim
from attnsim.theory.formulas import FormulaError, as_number, evaluate
from attnsim.verify.registry import CheckContext, Measurement, all_checkers
from attnsim.verify.twins import twin

PREFIX = "growth:"
_MEASURED: dict[str, Measurement] = {}  # one teeth run's unbroken measurements, shared by a claim's growth twins


def _measure(fn: Callable[[CheckContext], Measurement], ctx: CheckContext) -> Measurement:
    key = json.dumps([ctx.claim, ctx.params, ctx.numerics, ctx.seed, ctx.min_bits], sort_keys=True, default=str)
    if key not in _MEASURED:
        _MEASURED[key] = fn(ctx)
    return copy.deepcopy(_MEASURED[key])


@contextmanager
def inflated(claim_id: str, resource: str, factor: Callable[[float], float], lift: bool = True) -> Iterator[None]:
    """While active, ``claim_id``'s checker reports ``resource`` as ``max(measured, C * bound) * factor(size)``
    with C the resource's constant in paper_refs, else the band of the unbroken sweep (module docstring;
    ``lift=False``: ``measured * factor(size)``), the size being the claim's limit variable."""
    from attnsim.verify import check

    claim = get_claim(claim_id)
    chk = all_checkers()[claim_id]
    bound = claim.resources[resource].bound or "0"
    bands: dict[int, float] = {}

    def bound_at(ctx: CheckContext, m: Measurement) -> float:
        return float(as_number(evaluate(bound, claim.definitions, check._formula_values(ctx.params, m.derived))))

    def band(seed: int) -> float:
        """C: the resource's constant in paper_refs, else the largest measured / bound over the unbroken quick
        growth sweep (the measurements the sweep reuses from :func:`_measure`), at least 1."""
        if claim.resources[resource].constant is not None:
            return claim.resources[resource].constant
        if seed not in bands:
            from attnsim.verify.growth import growth_points

            ratios = [1.0]
            for pt in growth_points(claim_id, True, seed):
                ctx = CheckContext(claim_id, chk.resolve(dict(pt.params)),
                                   check.check_numerics(chk, pt.numerics, None), pt.seed, None)
                try:
                    m = _measure(chk.fn, ctx)
                    if m.counts.get(resource) is not None:
                        ratios.append(float(m.counts[resource]) / bound_at(ctx, m))
                except Exception:  # noqa: BLE001 - a point that fails here fails in the sweep too, which records it
                    continue
            bands[seed] = max(ratios)
        return bands[seed]

    def broken(ctx: CheckContext) -> Measurement:
        m = _measure(chk.fn, ctx)
        measured = m.counts.get(resource)
        size = check.record_size(claim, check._formula_values(ctx.params, m.derived))
        if measured is None or size is None:
            return m
        base = float(measured)
        if lift:
            try:
                base = max(base, band(ctx.seed) * bound_at(ctx, m))
            except FormulaError:
                pass
        m.counts[resource] = base * factor(float(size))
        return m

    patched = dataclasses.replace(chk, fn=broken)
    original = check.get_checker
    with mock.patch.object(check, "get_checker", lambda cid: patched if cid == claim_id else original(cid)):
        yield


CONSTANT = 7.0
"""The contrast's constant factor: a big-O bound whose constant the paper does not state must not fail on it."""


def constant_contrast(claim_id: str, resource: str, seed: int = 0) -> str | None:
    """The growth verdict of ``resource`` reported as measured x :data:`CONSTANT` (not lifted); None where the
    paper states the bound's constant (a constant factor may then rightly fail it)."""
    if get_claim(claim_id).resources[resource].stated_by:
        return None
    from attnsim.verify.growth import judge_broken

    return judge_broken(claim_id, resource, lambda: inflated(claim_id, resource, lambda n: CONSTANT, lift=False),
                        seed).verdict


def resource_of(name: str) -> str:
    """The resource a growth twin's name inflates."""
    return name[len(PREFIX):]


def _register() -> None:
    for claim_id in all_checkers():
        claim = get_claim(claim_id)
        for name, res in claim.resources.items():
            if not res.bound:
                continue
            what = (f"{name} reported as max(measured, C bound) x sqrt(n), n = {claim.limit}: it outgrows "
                    f"O({res.bound})")
            twin(claim_id, PREFIX + name, what, kind="growth")(lambda c=claim_id, r=name: inflated(c, r, math.sqrt))


_register()
