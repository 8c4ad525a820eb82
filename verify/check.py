"""``check``: one claim, one case, one numerics → one record.

The checker (``attnsim.verify.claims``) measures; this module adds what theory predicts from
``paper_refs`` — the exact count of the scheme as implemented, the paper's bound, the containment
verdict — and decides. A record passes when the outputs agree, every measured count equals its
exact formula, every exact formula is within the paper's bound, and the checker gave no reason.
"""

from __future__ import annotations

import copy
import json
import math
from contextlib import contextmanager
from typing import Any, Iterator

from attnsim import __version__
from attnsim.paper_refs import Claim, Resource
from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.mpc import MPCLimitError
from attnsim.sim.numerics import backend_kind, get_numerics
from attnsim.theory.bounds import contained, contained_as
from attnsim.theory.formulas import FormulaError, as_number, evaluate
from attnsim.theory.notation import at
from attnsim.theory.symbolic import ResourceTheory, TheoryKey, analyse, analyse_upper, theory_key, upper_key
from attnsim.verify.cost import MAX_BITS
from attnsim.verify.guards import check_run
from attnsim.verify.guards import format_option as guard_numerics
from attnsim.verify.limits import arm_backstop
from attnsim.verify.registry import NO_NUMERICS, CheckContext, Checker, Measurement, UsageError, get_checker

RECORD_KEYS = ("claim", "label", "paper", "params", "numerics", "seed", "length_convention", "agree",
               "error_bits", "min_bits", "calls", "calls_by_tag", "predicted_calls", "rounds", "bound",
               "counts", "predicted", "bounds", "size", "containment", "verdict", "reasons", "evidence", "reference",
               "extra", "version", "varying")


def _formula_values(params: dict[str, Any], derived: dict[str, Any]) -> dict[str, Any]:
    values = {k: v for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    values.update({k: int(v) if isinstance(v, bool) else v for k, v in derived.items()})
    return values


def record_size(claim: Claim, values: dict[str, Any]) -> float | None:
    """The value of the claim's limit variable (``n``, ``N``, ``k`` ...) in a record: the size its growth
    is judged against (:mod:`attnsim.verify.growth`); None when the parameters do not determine it."""
    try:
        return as_number(evaluate(claim.limit, claim.definitions, values))
    except FormulaError:
        return None


def on_growth_sweep(chk: Checker, limit: str, params: dict[str, Any]) -> bool:
    """Whether ``params`` differ from a point of the claim's growth sweep (quick or full) in the size ``limit`` at
    most: where a frozen constant was fitted, and so where it says something (at eps' = 1/8 instead of the sweep's,
    say, a radix sort takes more passes a word, and the constant does not carry over)."""
    grid = chk.growth_grid or chk.grid
    others = {k: v for k, v in params.items() if k != limit}
    for quick in (True, False):
        for raw in (grid(quick) if grid else ()):
            point = chk.resolve({k: v for k, v in raw.items() if k not in ("numerics", "seed")})
            if {k: v for k, v in point.items() if k != limit} == others:
                return True
    return False


def bound_entry(res: Resource, definitions: dict[str, str], values: dict[str, Any], measured: Any,
                size: float | None, reasons: list[str], calibrated_here: bool = True) -> dict[str, Any]:
    """One bounded resource in a record: measured value, the bound's value, their ratio, and the guard.

    The bounds in paper_refs are big-O classes; whether measured / bound stays bounded as the size grows
    is the growth verdict's question (a sweep, :mod:`attnsim.verify.growth`). A single record is held
    against ``constant * bound``: the paper's constant where it states one (``stated_by``), else a
    constant fitted once at a calibration size and frozen in paper_refs (``calibrated_at``), checked at
    every larger size of its growth sweep's parameters (``calibrated_here``) — a regression guard beside the big-O
    verdict. ``guard`` says which applied: ``within``, ``exceeds``, ``at or below calibration size``, ``other
    parameters than its calibration's`` or ``no constant``. A bound with no measurement adds a failing reason.
    """
    name, formula = res.name, res.bound or ""
    try:
        value: Any = as_number(evaluate(formula, definitions, values))
    except FormulaError:
        value = None
    kind = "paper" if res.stated_by else ("frozen" if res.constant is not None else "none")
    entry = {"formula": formula, "value": value, "measured": measured, "ratio": None, "constant": kind,
             "C": res.constant, "calibrated_at": res.calibrated_at, "stated_by": res.stated_by,
             "guard": "no constant"}
    if measured is None:
        reasons.append(f"{name}: the bound {formula} has no measurement in this record")
        return entry
    if value not in (None, 0):
        entry["ratio"] = float(measured) / float(value)
    if res.upper:
        entry["upper"] = upper_entry(res, definitions, values, measured, reasons)
    if res.constant is None or value is None:
        return entry
    if kind == "frozen" and size is not None and res.calibrated_at is not None and size <= res.calibrated_at:
        entry["guard"] = "at or below calibration size"
        return entry
    if kind == "frozen" and not calibrated_here:
        entry["guard"] = "other parameters than its calibration's"
        return entry
    entry["guard"] = "within" if float(measured) <= res.constant * float(value) else "exceeds"
    if entry["guard"] == "exceeds":
        source = (f"the paper's constant ({res.stated_by})" if kind == "paper"
                  else f"a constant frozen at size {res.calibrated_at:g}")
        reasons.append(f"{name}: measured {measured} > {res.constant:g} x bound {formula} = "
                       f"{res.constant * float(value):.4g} ({source})")
    return entry


def upper_entry(res: Resource, definitions: dict[str, str], values: dict[str, Any], measured: Any,
                reasons: list[str]) -> dict[str, Any]:
    """The proof's own inequality at this record: the resource's exact upper formula (``upper`` in paper_refs: a
    table's capacity, a protocol's ceiling) evaluated here and held ``measured <= upper``; a measurement above it,
    or a formula that cannot be evaluated, adds a failing reason."""
    formula = res.upper or ""
    try:
        value: Any = as_number(evaluate(formula, definitions, values))
    except FormulaError as exc:
        reasons.append(f"{res.name}: cannot evaluate the proof's upper formula {formula} ({exc})")
        return {"formula": formula, "value": None, "held": False}
    held = float(measured) <= float(value)
    if not held:
        reasons.append(f"{res.name}: measured {measured} > the proof's upper formula {formula} = {value}")
    return {"formula": formula, "value": value, "held": held}


def agreement_reasons(m: Measurement, exact: bool) -> list[str]:
    """A checker's "agree" held against its own error bits: exact numerics agree only when equal (no finite
    error), approximate ones only at the bits they required; an agreement test that says more is too loose."""
    bits, need = m.error_bits, m.extra.get("min_bits")
    if m.agree is not True or bits is None:
        return []
    if exact and not math.isinf(bits):
        return [f"agreement: called equal in exact numerics, but the outputs differ (error bits {bits:.3g})"]
    if not exact and need is not None and bits < need:
        return [f"agreement: called equal at {bits:.3g} bits, below the required {need:g}"]
    return []


MAX_SEED = 2 ** 32 - 1
"""Largest ``--seed`` (every generator the checkers seed accepts it)."""


def check_numerics(chk: Checker, numerics: str | None, min_bits: float | None) -> str:
    """The numerics a check runs in (the checker's default when None), refused when the claim takes none,
    runs in none of that kind, or when ``--min-bits`` is given where no error is measured."""
    if not chk.numerics:
        if numerics is not None:
            raise UsageError(f"--numerics: {chk.claim} counts only and takes no --numerics; got {numerics!r}")
        if min_bits is not None:
            raise UsageError(f"--min-bits: {chk.claim} counts only and measures no error")
        return NO_NUMERICS
    numerics = chk.default_numerics if numerics is None else numerics
    guard_numerics(numerics, "--numerics")
    if backend_kind(numerics) not in chk.numerics:
        raise UsageError(f"--numerics: {chk.claim} runs in {', '.join(chk.numerics)}; got {numerics!r}")
    if min_bits is not None:
        if not (math.isfinite(min_bits) and 0 <= min_bits <= MAX_BITS):
            raise UsageError(f"--min-bits: must be a finite number in 0..{MAX_BITS}, got {min_bits}")
        if get_numerics(numerics).exact:
            raise UsageError(f"--min-bits: {numerics} is exact (outputs must be equal); it applies to approximate "
                             "numerics such as mp:200 or float64")
    return numerics


_SHARED: dict[str, Measurement] | None = None


@contextmanager
def measurements_shared() -> Iterator[None]:
    """Within: checkers registered with the same ``shares`` name (one construction, :func:`attnsim.verify.registry.
    checker`) measure each (parameters, numerics, seed) once; the other claims reuse a copy of that measurement
    and build their own records from it, judged against their own claims. A sweep's task runs inside; the
    broken variants never do (a patched run must measure afresh)."""
    global _SHARED
    before, _SHARED = _SHARED, {}
    try:
        yield
    finally:
        _SHARED = before


def share_key(chk: Checker, params: dict[str, Any], numerics: str | None, seed: int,
              min_bits: float | None = None) -> str | None:
    """The key under which claims sharing ``chk``'s construction reuse one measurement (None: not shared)."""
    if chk.shares is None:
        return None
    return json.dumps([chk.shares, params, numerics, seed, min_bits], sort_keys=True, default=repr)


def _measure(chk: Checker, ctx: CheckContext) -> Measurement:
    key = None if _SHARED is None else share_key(chk, ctx.params, ctx.numerics, ctx.seed, ctx.min_bits)
    if key is None:
        return chk.fn(ctx)
    if key not in _SHARED:
        _SHARED[key] = chk.fn(ctx)
    return copy.deepcopy(_SHARED[key])


def run_check(claim_id: str, given: dict[str, Any] | None = None, numerics: str | None = None,
              seed: int = 0, min_bits: float | None = None) -> dict[str, Any]:
    """Run ``claim_id`` with parameters ``given`` (defaults filled in) and return its record."""
    chk = get_checker(claim_id)
    params = chk.resolve(given or {})
    numerics = check_numerics(chk, numerics, min_bits)
    if not 0 <= seed <= MAX_SEED:
        raise UsageError(f"--seed: must lie in 0..{MAX_SEED}, got {seed}")
    check_run(claim_id, params, numerics if chk.numerics else None)  # caps, cost and input file, before any work
    try:
        claim = get_claim(claim_id)
    except KeyError:
        raise UsageError(f"CLAIM: {claim_id} has a checker but no entry in paper_refs") from None
    arm_backstop()  # the address-space limit follows what is loaded by now
    try:
        m = _measure(chk, CheckContext(claim_id, params, numerics, seed, min_bits))
    except MPCLimitError as exc:  # no checker expected it: the construction broke the MPC model on valid input
        m = Measurement(evidence=chk.evidence or "independent", reference="none: the run was refused", agree=None,
                        error_bits=None, reasons=[f"the referee MPC machine refused a round of the construction: "
                                                  f"{exc}"])
    values = _formula_values(params, m.derived)
    reasons = list(m.reasons)
    predicted: dict[str, Any] = {}
    bounds: dict[str, Any] = {}
    containment: dict[str, Any] = {}
    size = record_size(claim, values)
    frozen = any(r.constant is not None and not r.stated_by for r in claim.resources.values())
    calibrated_here = not frozen or on_growth_sweep(chk, claim.limit, params)
    for name, res in claim.resources.items():
        if res.exact:
            try:
                predicted[name] = as_number(evaluate(res.exact, claim.definitions, values))
            except FormulaError as exc:
                reasons.append(f"{name}: cannot evaluate the exact formula ({exc})")
                continue
            if name not in m.counts:
                reasons.append(f"{name}: the checker measured no such count")
            elif m.counts[name] != predicted[name]:
                reasons.append(f"{name}: measured {m.counts[name]} != exact formula {res.exact} = {predicted[name]}")
        if res.bound:
            bounds[name] = bound_entry(res, claim.definitions, values, m.counts.get(name), size, reasons,
                                       calibrated_here)
        c = contained(claim, name)
        if c is not None:
            containment[name] = {"verdict": c.verdict, "of": c.of, "leading_constant": c.leading_constant,
                                 "limit": c.limit_var,
                                 "leading_constant_here": at(c.leading_constant, values, claim.paper)
                                 if c.leading_constant is not None else None}
            if not c.finite:
                what = "exact count" if c.of == "exact" else "the proof's upper formula"
                reasons.append(f"{name}: {what} {c.exact} is not O({c.bound}) as {c.limit_var} grows")
            swept = sweep_containments(claim, chk, name, reasons)
            if swept:
                containment[name]["in_sweeps"] = swept
    if chk.numerics:
        reasons += agreement_reasons(m, get_numerics(numerics, seed).exact)
    if chk.evidence is not None and m.evidence != chk.evidence and not m.extra.get("partial"):
        reasons.append(f"evidence: the checker declares {chk.evidence}, its measurement says {m.evidence}")
    if m.agree is False:
        bits = "inf" if m.error_bits is not None and math.isinf(m.error_bits) else m.error_bits
        reasons.append(f"output does not agree with the reference (error bits {bits})")
    verdict = "pass" if not reasons else "fail"
    calls_bound = claim.resources.get("calls")
    return {
        "claim": claim_id, "label": claim.label, "paper": claim.paper, "params": params, "numerics": numerics,
        "seed": seed, "length_convention": m.length_convention, "agree": m.agree,
        "error_bits": m.error_bits, "min_bits": m.extra.get("min_bits"),
        "calls": m.counts.get("calls"), "calls_by_tag": m.counts_by_tag, "predicted_calls": predicted.get("calls"),
        "rounds": m.rounds, "bound": calls_bound.bound if calls_bound else None,
        "counts": m.counts, "predicted": predicted, "bounds": bounds,
        "size": {"var": claim.limit, "value": size}, "containment": containment,
        "verdict": verdict, "reasons": reasons, "evidence": m.evidence, "reference": m.reference, "extra": m.extra,
        "version": __version__, "varying": varying_paths(m, bounds),
    }


def sweep_containments(claim: Claim, chk: Checker, resource: str, reasons: list[str]) -> dict[str, Any]:
    """Per parameter sweep that judges ``resource``, its containment as the sweep's variable grows
    (:func:`attnsim.theory.bounds.contained_as`); a constant that grows without end there is a reason."""
    out: dict[str, Any] = {}
    for sweep, ps in chk.param_sweeps:
        if resource not in ps.resources:
            continue
        c = contained_as(claim, resource, ps.var, ps.varied())
        if c is None:
            continue
        out[sweep] = {"var": c.var, "varied": c.solved_for, "limit": c.limit, "verdict": c.verdict}
        if c.finite is False:
            reasons.append(f"{resource}: the constant lim count / bound as {claim.limit} grows, {c.limit}, is not "
                           f"finite as {c.var} grows (the {sweep} sweep)")
    return out


def varying_paths(m: Measurement, bounds: dict[str, Any]) -> list[str]:
    """The record paths that hold the measurement's run-to-run values (``Measurement.varying``)."""
    paths = []
    for name in m.varying:
        if name in m.counts:
            paths.append(f"counts.{name}")
            if name == "calls":
                paths.append("calls")
        if name in bounds:
            paths += [f"bounds.{name}.measured", f"bounds.{name}.ratio"]
        if name in m.extra:
            paths.append(f"extra.{name}")
    return paths


def theory_chunk(claim_ids: list[str], _cache: str | None = None) -> list[tuple[TheoryKey, ResourceTheory]]:
    """A task of the sweep's executors: the symbolic theory of every resource of ``claim_ids``, keyed for
    :func:`attnsim.theory.symbolic.remember`."""
    out = []
    for cid in claim_ids:
        claim = get_claim(cid)
        out += [(theory_key(claim, name), analyse(claim, name)) for name in claim.resources]
        out += [(upper_key(claim, name), t) for name in claim.resources
                for t in [analyse_upper(claim, name)] if t is not None]
    return out
