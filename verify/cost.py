"""What a check will cost: memory and time estimated from its parameters and numerics, before any work.

Every checker has a model in :data:`attnsim.verify.cost_models.MODELS`: a sum of terms ``c · Π (p / ref_p)^e``
for memory (MiB) and for time (seconds), stated at a reference size ``ref`` in the numerics ``nm`` (measured on
a two-core machine, rounded up). Terms marked ``numeric`` scale with the numerics: memory with the bytes
of one number (:func:`entry_bytes`: an exact weight z**(D·s) has D·s·log2 z bits, an ``mp:BITS`` number
BITS/8 bytes) and time with the seconds of one operation (:func:`op_seconds`). Terms marked ``approx`` are
counted only in runs of approximate numerics (their reference, in mp). The model is coarse on purpose — it
exists to turn a size that would take the machine into one line naming the parameter that drives it, not to
predict a run to the second — but it is fitted at sizes that take seconds to minutes, where a run is refused
or not, rather than at the defaults, where start-up dominates.

A parameter that is not given (the command line's early check, before the checkers are loaded) is
taken at its reference size; after the checker's defaults are filled in, every value is known.

The numerics themselves have caps no estimate needs (:func:`numerics_width`): the score-grid
denominator D ≤ :data:`MAX_GRID`, D·log2 z ≤ :data:`MAX_UNIT_BITS` (a base z of a thousand digits makes
every weight megabytes, and GMP aborts the process when it cannot allocate), 2 ≤ BITS ≤ :data:`MAX_BITS`.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any, Mapping

from attnsim.sim.numerics.arb import MAX_BITS
from attnsim.sim.numerics.arb import MIN_BITS as ARB_MIN_BITS
from attnsim.verify.cost_models import DEFAULT_MODEL, MODELS, Model, Term
from attnsim.verify.limits import Estimate, human
from attnsim.verify.registry import UsageError

MAX_GRID = 4096
"""Largest score-grid denominator D of the exact kinds of numerics."""

MAX_UNIT_BITS = 1 << 17
"""Largest D·log2 z (bits of the exact weight of a score 1) of the exact kinds."""

OBJECT_BYTES = 112
"""A Python number inside an object array: the object, its pointer and allocator slack."""

EXACT_KINDS = ("exact", "fraction", "symbolic")
"""The kinds of numerics that compute exactly (compared with ``==``): every other kind rounds."""
SEEDED_BASE_BITS = 32.0
"""Bits of p and q of a seeded base z = p/q (a 16-bit q, p ≤ 2q: about 31, rounded up)."""

_DECIMAL = re.compile(r"^\s*([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?\s*$")
_RATIO = re.compile(r"^\s*([0-9]+)\s*/\s*([0-9]+)\s*$")
_LOG2_10 = math.log2(10)


def base_bits(text: str, option: str, name: str) -> float:
    """Bits of numerator and denominator of the base z written ``text`` (after ``kind:D:``), read from its
    digits without building the number (``1e1000000000`` must not be built to be refused)."""
    if text == "seeded":
        return SEEDED_BASE_BITS
    ratio = _RATIO.match(text)
    if ratio:
        return max(1.0, (len(ratio.group(1).lstrip("0")) + len(ratio.group(2).lstrip("0"))) * _LOG2_10)
    dec = _DECIMAL.match(text)
    if not dec or not (dec.group(1) or dec.group(2)):
        raise UsageError(f"{option}: {name}: the base z must be 'seeded', an integer, a decimal or p/q")
    whole, frac, exp = dec.group(1), dec.group(2) or "", dec.group(3) or "0"
    if len(exp.lstrip("+-")) > 6:
        raise UsageError(f"{option}: {name}: the base z has an exponent of {len(exp)} digits")
    e = int(exp)
    digits = len(whole.lstrip("0")) + len(frac) + abs(e)
    return max(1.0, digits * _LOG2_10)


def numerics_width(name: str, option: str = "--numerics") -> tuple[str, int]:
    """(kind, argument) of a numerics name after the caps on D, D·log2 z and BITS; the argument is D, BITS or 0."""
    kind, _, arg = name.partition(":")
    if not name.strip():
        raise UsageError(f"{option}: empty; choose e.g. exact, mp:200 or float64")
    if not name.isascii():
        raise UsageError(f"{option}: {name!r} has non-ASCII characters")
    if kind in EXACT_KINDS:
        head, _, base = arg.partition(":")
        if not head:
            return kind, 64
        if not head.isdigit():
            raise UsageError(f"{option}: {name}: the score-grid denominator D must be a positive integer")
        D = int(head)
        if not 1 <= D <= MAX_GRID:
            raise UsageError(f"{option}: {name}: D={D} is outside 1..{MAX_GRID} (a weight z**(D·s) has D·s·log2 z "
                             f"bits; at D={D} one weight of a score 64 takes {human(D * 64 / 8)})")
        unit = D * (base_bits(base, option, name) if base else 1.0)
        if unit > MAX_UNIT_BITS:
            raise UsageError(f"{option}: {name}: D·log2 z = {unit:.3g} bits, above {MAX_UNIT_BITS}: the weight of a "
                             f"score 1 alone would take {human(unit / 8)}, of a score 64 {human(unit * 8)}")
        return kind, D
    if kind in ("mp", "arb"):
        if not arg.isdigit():
            raise UsageError(f"{option}: {name}: expected {kind}:BITS with BITS a positive integer, e.g. {kind}:200")
        bits, lo = int(arg), (2 if kind == "mp" else ARB_MIN_BITS)
        if not lo <= bits <= MAX_BITS:
            why = (" (a ball must hold the constants and grid inputs exactly)" if kind == "arb" and bits < lo
                   else " (the largest working precision)" if bits > MAX_BITS else "")
            raise UsageError(f"{option}: {name}: BITS={bits} is outside {lo}..{MAX_BITS}{why}")
        return kind, bits
    return kind, 0


def unit_bits(numerics: str) -> float:
    """Bits of the exact weight of a score 1 (D·log2 z) in an exact kind; 0 in the others."""
    kind, D = numerics_width(numerics)
    if kind not in EXACT_KINDS:
        return 0.0
    base = numerics.split(":", 2)[2] if numerics.count(":") >= 2 else ""
    return D * (base_bits(base, "--numerics", numerics) if base else 1.0)


def entry_bytes(numerics: str, score: float) -> float:
    """Bytes of one softmax weight in ``numerics`` when scores reach ``score`` (in units of the grid)."""
    kind, arg = numerics_width(numerics)
    if kind in EXACT_KINDS:
        return OBJECT_BYTES + unit_bits(numerics) * score / 8
    if kind in ("mp", "arb"):
        return OBJECT_BYTES + arg / 8 * (2 if kind == "arb" else 1)
    if kind == "float64":
        return 8.0
    return 16.0  # fixed-width formats: float64 values and a rounding scratch copy


def _power_of_two_base(numerics: str) -> bool:
    """Whether the base z of an exact kind is a power of two (the default z = 2, or e.g. 4, 1/2): its weights are
    powers of two, which GMP multiplies and adds as shifts, however many bits they span."""
    base = numerics.split(":", 2)[2] if numerics.count(":") >= 2 else ""
    if not base:
        return True
    if len(base) > 40 or base == "seeded":
        return False
    try:
        z = Fraction(base.replace(" ", ""))
    except (ValueError, ZeroDivisionError):
        return False
    return all(v > 0 and v & (v - 1) == 0 for v in (z.numerator, z.denominator))


def op_seconds(numerics: str, score: float) -> float:
    """Seconds of one scalar operation (a product, a sum or an exponential on average) in ``numerics`` when one
    softmax row's scores spread over ``score`` (:func:`typical_score`): only their ratios enter an estimate.
    Measured on the two-core machine: a flint rational product and sum 0.16 µs; an mpmath product and sum 2.7,
    5.0 and 17 µs at 200, 1000 and 4000 bits, an exponential 5.5, 45 and 550 µs (attention mixes about 2d products
    to each exponential). Lemma 3.1's construction ran about 28 times slower in mp:200 than in exact.

    An exact weight spans w = D·log2 z·score bits. With a base that is not a power of two its numbers are dense,
    and an operation costs about 1 + (w / 5000)^2 times the narrow one: Lemma 3.1 at N = 64, M = 8 took 0.6, 5.8
    and 45 CPU s at d = 8, 16 and 32 in exact:64:65/64 (w = 17k, 49k and 139k), 2.6 and 36 s at d = 8 and 16 in
    exact:64:seeded (42k, 118k), and Thm 3.4's multi-head case 8.8 s in exact:64:seeded at d = 8 (15k). Before,
    one formula served every base and read the spread as d: it estimated the d = 32 run above at 2.4 s."""
    kind, arg = numerics_width(numerics)
    if kind == "symbolic":
        return 1e-4
    if kind in EXACT_KINDS:
        width = unit_bits(numerics) * score
        if _power_of_two_base(numerics):
            return 1e-7 * (1 + (width / 1e4) ** 1.5)
        return 1e-7 * (1 + (width / 5e3) ** 2)
    if kind in ("mp", "arb"):  # arb's C kernels are faster; mp's time bounds them
        return 2e-6 + 1e-9 * arg + 5e-6 * (arg / 1000) ** 1.8
    if kind == "float64":
        return 1e-8
    return 2e-7


def typical_score(d: float, heads: float = 1.0) -> float:
    """How far one softmax row's scores spread in the default cases (``verify.cases``: inputs on a 1/2 grid and
    weights on a 1/4 grid, both in [-1, 1]) with heads of width m = d / heads: about 0.9 m^1.5 (the median row's
    range, measured over five seeds at N = 64: 1.9, 6.1, 20, 57, 173 and 496 at m = 2 to 64)."""
    return max(1.0, 0.9 * (d / max(heads, 1.0)) ** 1.5)


def param_int(params: Mapping[str, Any], *names: str, default: int) -> int:
    """The first of ``names`` that ``params`` holds as an integer, else ``default``."""
    for name in names:
        v = params.get(name)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return default


def _values(model: Model, params: Mapping[str, Any]) -> dict[str, Any]:
    vals = dict(model.ref)
    for name in model.ref:
        v = params.get(name)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            vals[name] = float(v) if name in model.inputs else max(float(v), 1.0)
        elif isinstance(v, str) and isinstance(model.ref[name], str):  # a name (a case's), not a garbled size
            vals[name] = v
    return model.derive(vals) if model.derive else vals


def _measured_kind_factor(model: Model, numerics: str, score: float) -> float:
    """The time factor of ``numerics`` from the model's measured ratios between kinds (:attr:`Model.kinds`),
    scaled within mp and arb by the precision (the ratios are measured at 200 bits)."""
    assert model.kinds is not None and model.nm is not None
    kind, base = numerics_width(numerics)[0], numerics_width(model.nm)[0]
    factor = model.kinds.get(kind, model.kinds[base]) / model.kinds[base]
    if kind in ("mp", "arb"):
        factor *= op_seconds(numerics, score) / op_seconds(f"{kind}:200", score)
    return factor


def _sum(terms: tuple[Term, ...], vals: dict[str, float], ref: dict[str, float],
         factor: float, exact: bool) -> tuple[float, str | None]:
    """The terms' total and the parameter that drives the largest term (None: the numerics); ``exact``: the run's
    numerics are exact (its ``approx`` terms are left out)."""
    total, best, driver = 0.0, -1.0, None
    for t in terms:
        if t.approx and exact:
            continue
        growth = {n: (vals[n] / ref[n]) ** e for n, e in t.exps.items()}
        value = t.coef * math.prod(growth.values()) * (factor if t.numeric else 1.0)
        total += value
        if value > best:
            best = value
            top = max(growth, key=lambda n: growth[n], default=None)
            driver = None if t.numeric and factor > max(growth.values(), default=1.0) else top
    return total, driver


def estimate(claim: str, params: Mapping[str, Any], numerics: str | None) -> Estimate:
    """Memory and time of ``claim`` at ``params`` in ``numerics`` (None: the model's), with the drivers."""
    from attnsim.verify.registry import flag

    model = MODELS.get(claim, DEFAULT_MODEL)
    vals = _values(model, params)
    mem_factor = time_factor = 1.0
    nm = numerics or model.nm
    if model.nm is not None and nm is not None:
        s = typical_score(vals.get("d", 4.0), vals.get("H", 1.0))
        mem_factor = entry_bytes(nm, s) / entry_bytes(model.nm, s)
        time_factor = op_seconds(nm, s) / op_seconds(model.nm, s)
        if model.kinds is not None:
            time_factor = _measured_kind_factor(model, nm, s)
    exact = nm is None or numerics_width(nm)[0] in EXACT_KINDS
    mib, mem_driver = _sum(model.mem, vals, model.ref, mem_factor, exact)
    seconds, time_driver = _sum(model.time, vals, model.ref, time_factor, exact)
    given = {k: v for k, v in vals.items() if k in params}  # the others stand at the model's reference sizes
    shown = ", ".join(f"{k}={v}" if isinstance(v, str)
                      else f"{k}={int(v) if float(v).is_integer() else v:g}" if isinstance(v, float) and v < 1e15
                      else f"{k}={v:.3g}" for k, v in given.items())
    sizes = ", ".join(x for x in (shown, nm if nm and model.nm else "") if x)
    detail = (f"{sizes}; estimated from the claim's cost model" if sizes
              else "estimated from the claim's cost model at its reference sizes")
    mem_driver, time_driver = (model.flags.get(d, d) if d else d for d in (mem_driver, time_driver))
    return Estimate(mib * 2 ** 20, flag(mem_driver) if mem_driver else "--numerics", detail, seconds,
                    flag(time_driver) if time_driver else "--numerics")
