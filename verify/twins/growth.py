"""Growth twins: every bounded resource of every claim with a checker, its measurement multiplied by a factor
that grows with the claim's size, must be caught by the growth verdict (:mod:`attnsim.verify.growth`) over the
claim's own quick growth sweep.

The twin reports ``measured x sqrt(n)`` (n the claim's limit variable): the measurement itself, never lifted
to the bound, so a twin is caught only where the claim's sweep has the power to see sqrt(n) on top of what it
measured. A sweep that sits where the bound is still loose (measured / bound falling faster than n^-1/2) or
whose four ratios scatter too much for an interval hides it; such a twin is reported ``missed``, and the fix is
the sweep (sizes in the asymptotic regime, more points, or the fit against the proof's exact count that
:func:`attnsim.verify.growth.judge` runs where paper_refs has one), never the twin. A resource measured 0 at
every size cannot be inflated by any factor: its twin is reported missed, saying so. :func:`inflated` with a
constant factor is the contrast (:func:`constant_contrast`): a constant must not fail a big-O bound whose
constant the paper does not state.
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
from attnsim.verify.registry import CheckContext, Measurement, all_checkers
from attnsim.verify.twins import GROWTH_PREFIX as PREFIX
from attnsim.verify.twins import twin

_MEASURED: dict[str, Measurement] = {}  # one teeth run's unbroken measurements, shared by a claim's growth twins


def _measure(fn: Callable[[CheckContext], Measurement], ctx: CheckContext) -> Measurement:
    key = json.dumps([ctx.claim, ctx.params, ctx.numerics, ctx.seed, ctx.min_bits], sort_keys=True, default=str)
    if key not in _MEASURED:
        _MEASURED[key] = fn(ctx)
    return copy.deepcopy(_MEASURED[key])


@contextmanager
def inflated(claim_id: str, resource: str, factor: Callable[[float], float], var: str | None = None) -> Iterator[None]:
    """While active, ``claim_id``'s checker reports ``resource`` as ``measured * factor(size)``, the size being the
    claim's limit variable of that record (:func:`attnsim.verify.check.record_size`), or the value of ``var`` (a
    parameter sweep's variable) at its parameters."""
    from attnsim.theory.formulas import as_number, evaluate
    from attnsim.verify import check

    claim = get_claim(claim_id)
    chk = all_checkers()[claim_id]

    def broken(ctx: CheckContext) -> Measurement:
        m = _measure(chk.fn, ctx)
        measured = m.counts.get(resource)
        values = check._formula_values(ctx.params, m.derived)
        size = (check.record_size(claim, values) if var is None
                else as_number(evaluate(var, claim.definitions, values)))
        if measured is None or size is None:
            return m
        m.counts[resource] = float(measured) * factor(float(size))
        return m

    patched = dataclasses.replace(chk, fn=broken)
    original = check.get_checker
    with mock.patch.object(check, "get_checker", lambda cid: patched if cid == claim_id else original(cid)):
        yield


CONSTANT = 7.0
"""The contrast's constant factor: a big-O bound whose constant the paper does not state must not fail on it."""


def constant_contrast(claim_id: str, resource: str, seed: int = 0, sweep: str | None = None) -> str | None:
    """The growth verdict of ``resource`` reported as measured x :data:`CONSTANT` (over the parameter sweep
    ``sweep`` when given); None where the paper states the bound's constant (a constant factor may then rightly
    fail it)."""
    if get_claim(claim_id).resources[resource].stated_by:
        return None
    from attnsim.verify.growth import judge_broken

    return judge_broken(claim_id, resource, lambda: inflated(claim_id, resource, lambda n: CONSTANT),
                        seed, sweep).verdict


def resource_of(name: str) -> str:
    """The resource a growth twin's name inflates (``growth:rounds``; in a parameter sweep ``growth:rounds@gap``)."""
    return name[len(PREFIX):].split("@")[0]


def sweep_of(name: str) -> str | None:
    """The parameter sweep a growth twin is judged over (None: the claim's growth sweep in its limit variable)."""
    return name.split("@")[1] if "@" in name else None


def _register() -> None:
    for claim_id in all_checkers():
        claim = get_claim(claim_id)
        for name, res in claim.resources.items():
            if not res.bound:
                continue
            what = (f"{name} reported as measured x sqrt(n), n = {claim.limit}: it outgrows what the scheme "
                    f"spends by a growing factor (bound O({res.bound}))")
            twin(claim_id, PREFIX + name, what, kind="growth")(lambda c=claim_id, r=name: inflated(c, r, math.sqrt))
        for sweep, ps in all_checkers()[claim_id].param_sweeps:
            for name in ps.resources:
                what = (f"{name} reported as measured x {ps.var} over the {sweep} sweep: it grows one power of "
                        f"{ps.var} faster than the scheme spends (bound O({claim.resources[name].bound}))")
                twin(claim_id, f"{PREFIX}{name}@{sweep}", what, kind="growth")(
                    lambda c=claim_id, r=name, v=ps.var: inflated(c, r, lambda x: x, v))


_register()
