"""Shared measuring step of the Two Heads checkers: run a construction and the reference, read the ledger.

``measure_model`` converts the case into the chosen numerics, gives the construction an
:class:`~attnsim.sim.oracle.Oracle` with a fresh ledger, computes the reference T(X) in the truth
numerics (``agreement.truth_numerics``), and returns a Measurement whose counts are read off the
ledger: oracle calls (``calls``), oracle rounds, processing entries by tag (``combine``: the recombination
outside the oracle, eq. (1) or the window sums, summed over heads and layers), and the longest and
widest call (``oracle_len``, ``oracle_dim``) — the sizes the claim's bound is about. In exact
numerics it also compares each layer's output before its grid-rounding ψ when the case records them
(``layer_record``): agreement then means every layer agrees exactly, not only the rounded output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from attnsim.sim.model import reference
from attnsim.sim.numerics import Array, Numerics, NumericsError, get_numerics
from attnsim.sim.numerics.arb import Arb
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.verify.agreement import asked_bits, compare, truth_numerics
from attnsim.verify.cases import Case
from attnsim.verify.decode_allowance import BlockDecode
from attnsim.verify.layer_record import layer_mismatches
from attnsim.verify.precision.certify import certify
from attnsim.verify.precision.certify import summary as certify_summary
from attnsim.verify.registry import CheckContext, Measurement, UsageError

Simulate = Callable[[Oracle, Array], Array]
REFERENCE_MODEL = "attnsim.sim.model.reference"
"""The reference every Two Heads model check compares with: the large transformer evaluated directly."""


EXACT_SECONDS = 30.0
"""Largest estimated time of the exact run an ``arb`` check adds for its containment test (beyond it: not run)."""


def exact_too_long(ctx: CheckContext) -> str | None:
    """Why the exact companion run of an arb check is skipped (its estimated time), or None."""
    from attnsim.verify.cost import estimate
    from attnsim.verify.precision.certify import EXACT_COMPANION

    est = estimate(ctx.claim, ctx.params, EXACT_COMPANION)
    if est.seconds <= EXACT_SECONDS:
        return None
    return (f"the {EXACT_COMPANION} run is estimated at {est.seconds:.0f} s (over {EXACT_SECONDS:g} s; "
            f"{est.time_driver} drives it): certified bits only")


def direct_bits(case: Case, nm: Numerics, ref: Array, truth: Numerics) -> float | None:
    """The bits the reference model keeps when it is evaluated directly in ``nm``, against ``ref`` (None when that
    evaluation fails in the format, e.g. by an overflow). A model whose outputs are sensitive to rounding loses
    these bits however it is computed, so no construction can be asked for more."""
    try:
        direct = reference(case.spec, case.weights, nm.array(case.X, "X"), nm)
    except NumericsError:
        return None
    return compare(direct, ref, nm, truth, None).error_bits


@dataclass(frozen=True)
class Asked:
    """The agreement a model check asks for (None: exact), and what was taken off the default to reach it."""

    min_bits: float | None
    decode_bits: float = 0.0  # the paper's decode (``BlockDecode.loss_bits``)
    floor_bits: float = 0.0  # the format's floor (``BlockDecode.floor_bits``)
    direct_bits: float | None = None  # the bits the model itself keeps in the format (:func:`direct_bits`)


def required_bits(ctx: CheckContext, case: Case, nm: Numerics, ref: Array, truth: Numerics,
                  decode: BlockDecode | None, rounding_bits: float) -> Asked:
    """The bits of agreement a model check asks for.

    ``--min-bits`` when given; else the format's default margin (``agreement.default_min_bits``) below the
    smaller of the format's precision and the bits the model itself keeps in it (:func:`direct_bits`), less
    ``rounding_bits`` (a rounding the construction adds by design) and, for a construction that decodes Lemma 3.1's
    Step 1 (``decode``: over key blocks, or as Thm 5.1's prefix differences), less what that decode may lose on this
    model: to p/(1 − p) the paper's way, and to the format's floor on rows of small sums (``agreement.asked_bits``,
    which refuses a precision too narrow for the model naming ``--numerics``).
    """
    if nm.exact or ctx.min_bits is not None:
        return Asked(None if nm.exact else ctx.min_bits)
    X = truth.array(case.X, "X")
    loss = 0.0 if decode is None else decode.loss_bits(case.spec, case.weights, X, truth)
    floor = 0.0 if decode is None else decode.floor_bits(case.spec, case.weights, X, truth, nm)
    kept = direct_bits(case, get_numerics(nm.name, ctx.seed), ref, truth)  # its own instance: its counters apart
    label = decode.label if decode else "the decode"
    asked = asked_bits(nm, kept, [
        (loss, f"{label} may lose {{bits}} bits on this model's sums (p/(1 - p) over sums up to A)"),
        (floor, "rows whose sums lie far below Step 1's synthetic token may lose {bits} bits to the format's "
                "smallest numbers")], rounding_bits)
    return Asked(asked, loss, floor, kept)


def measure_model(ctx: CheckContext, case: Case, oracle_spec: OracleSpec, simulate: Simulate,
                  derived: dict[str, Any], *, decode: BlockDecode | None = None,
                  rounding_bits: float = 0.0) -> Measurement:
    """Run ``simulate`` on an oracle and the reference model, compare, and read the ledger's counts.

    ``decode`` and ``rounding_bits`` set the agreement asked for (:func:`required_bits`)."""
    nm = get_numerics(ctx.numerics, ctx.seed)
    truth = truth_numerics(nm, ctx.seed)
    ref = reference(case.spec, case.weights, truth.array(case.X, "X"), truth)
    asked = required_bits(ctx, case, nm, ref, truth, decode, rounding_bits)
    min_bits = asked.min_bits
    oracle = Oracle(oracle_spec, nm)
    Y = simulate(oracle, nm.array(case.X, "X"))
    ag = compare(Y, ref, nm, truth, min_bits)
    clipped = nm.saturated
    if clipped and not ag.agree:  # the format's range, not the construction, lost the output
        raise UsageError(f"{nm.name}: {clipped} values were clipped to the format's range (the 'sat' option) and "
                         f"the output kept {max(ag.error_bits, 0.0):.1f} bits: the range is too narrow for this "
                         "construction's sums (without 'sat' it raises on the first); use a wider format",
                         param="numerics")
    led = oracle.ledger
    shape = led.max_shape("oracle")
    counts: dict[str, float] = {
        "calls": led.total("oracle"),
        "rounds": led.rounds("oracle"),
        "layer_mlp": led.total("processing", "layer_mlp"),
        "input_mlp": led.total("processing", "input_mlp"),
        "processing": led.total("processing"),
        "combine": sum(v for tag, v in led.by_tag("processing").items() if tag.endswith(".combine")),
        "oracle_len": shape[0] if shape else 0,
        "oracle_dim": shape[1] if len(shape) > 1 else 0,
    }
    layers_compared, layer_reasons, layer_bits = layer_mismatches(case) if nm.exact else (0, [], math.inf)
    extra: dict[str, Any] = {}
    if getattr(nm, "non_finite", None):  # float64: non-finite values created (e.g. p/(1 - p) with p = 1)
        extra["non_finite"] = dict(nm.non_finite)
        extra["summary"] = [f"non-finite intermediates (created per primitive): {nm.non_finite}"]
    if isinstance(nm, Arb):  # ball arithmetic: what the balls certify, and the reference and exact output inside
        extra["certified"], ball_reasons = certify(nm, Y, ref, truth, oracle_spec, case.X, simulate, ctx.seed,
                                                   exact_too_long(ctx))
        extra["summary"] = [certify_summary(extra["certified"])]
        layer_reasons = layer_reasons + ball_reasons
    agree = ag.agree and not layer_reasons
    return Measurement(
        evidence="independent", reference=REFERENCE_MODEL,
        agree=agree, error_bits=min(ag.error_bits, layer_bits), counts=counts,
        counts_by_tag={**led.by_tag("oracle"), **{f"processing:{k}": v for k, v in led.by_tag("processing").items()}},
        rounds=led.rounds("oracle"), derived=derived, length_convention=oracle_spec.length_convention,
        reasons=layer_reasons, extra={  # check.py adds its own reason when the output disagrees
            "oracle": oracle_spec.describe(), "min_bits": min_bits, "truth_numerics": truth.name,
            "decode_allowance_bits": round(asked.decode_bits, 2), "min_bits_given": ctx.min_bits,
            "decode_allowance_for": decode.label if decode else None,
            "floor_allowance_bits": round(asked.floor_bits, 2),
            "direct_bits": None if asked.direct_bits is None else round(asked.direct_bits, 2),
            "precision_bits": nm.bits,
            "flops_oracle": led.flops("oracle"), "flops_processing": led.flops("processing"),
            "mask": str(case.spec.mask), "H": case.spec.H, "L": case.spec.L,
            "layers_compared_before_rounding": layers_compared, **extra,
        },
    )
