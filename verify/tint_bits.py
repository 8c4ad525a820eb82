"""The bits of agreement a TinT check asks for by default.

Every TinT check that runs in mp or float64 sets the bits it asks at float64: 40 for a module, 30 for an SGD step
and for finite differences. That leaves room for what its computation loses by design (the attention backward keeps
about 38 of 53 bits on tiny-relu). Its references run in float64 (torch autograd), which caps what it can keep, or
in the check's own arithmetic (the rows' math written out); above 53 bits it asks the same. The loss is relative,
the same at every precision: in mp at P < 53 bits a check asks for its float64 default less the 53 − P bits the
format lacks, and a precision that leaves under 1 bit is refused naming ``--numerics``.
Fuzzing found the case: ``attnsim check tint.attn_backward --case tiny-relu --numerics mp:30`` kept 15.0 bits
(5.2 at mp:20, 23.7 at mp:40, 38.4 to 38.8 at mp:53, by the CPU), and was failed against the fixed 30.

A finite difference at step 1/N loses log2 N more (:func:`finite_difference_bits`): both TinT's step and torch's
difference in float64, whose rounding error then is about 2^-53 N relative. 30 bits leave room for N up to about
2^13; ``attnsim check tint.ln_backward --halvings 16`` (N up to 3,276,800) kept 28.3 bits and was failed against
the fixed 30.
"""

from __future__ import annotations

import math

from attnsim.sim.numerics import get_numerics
from attnsim.sim.numerics.floating import Float64
from attnsim.sim.tint.arith import get_arith
from attnsim.verify.agreement import default_min_bits
from attnsim.verify.registry import CheckContext, UsageError

REFERENCE_BITS = Float64.bits
"""The precision of the references the TinT checks compare with (float64)."""


def asked_bits(ctx: CheckContext, at_float64: float) -> float:
    """``--min-bits`` when given; else ``at_float64`` less the bits ``ctx.numerics`` lacks against float64 (the
    module docstring). Exact numerics compare with ``==`` and ignore it."""
    if ctx.min_bits is not None:
        return ctx.min_bits
    ar = get_arith(ctx.numerics)  # TinT's own reading of the name (a bare "mp" is mp:200)
    if ar.kind != "mp" or ar.ctx.prec >= REFERENCE_BITS:
        return at_float64
    bits = ar.ctx.prec
    asked = at_float64 - (REFERENCE_BITS - bits)
    if asked < 1:
        raise UsageError(f"{ctx.numerics}: this check asks {at_float64:g} bits of float64's {REFERENCE_BITS}; "
                         f"{bits} bits lack {REFERENCE_BITS - bits} of them, which leaves under 1 bit to ask for "
                         "(docs/precision.md, Agreement); use more bits (or ask for some with --min-bits)",
                         param="numerics")
    return asked


def finite_difference_bits(ctx: CheckContext, at_float64: float, largest_n: int) -> float:
    """:func:`asked_bits` for a check whose finite differences step by 1/N up to ``largest_n``: capped at float64's
    default ask (its precision less the default margin, docs/precision.md) less the log2 N bits the difference's
    rounding costs, and less what a narrower mp lacks. A cap under 1 bit is refused naming ``fd_scale``."""
    asked = asked_bits(ctx, at_float64)
    if ctx.min_bits is not None:
        return asked
    room = default_min_bits(get_numerics("float64", 0))
    assert room is not None
    cap = room - math.log2(largest_n) - (at_float64 - asked)
    if cap < 1:
        shown = str(largest_n) if largest_n < 10 ** 12 else f"2^{math.log2(largest_n):.1f}"
        raise UsageError(f"the finite differences at N = {shown} lose log2 N = {math.log2(largest_n):.1f} of "
                         f"float64's {REFERENCE_BITS} bits, which leaves under 1 bit to ask for (docs/precision.md, "
                         "Agreement); lower --fd-scale or --halvings (or ask for some with --min-bits)",
                         param="fd_scale")
    return min(asked, cap)
