"""The bits of agreement a TinT check asks for by default.

Every TinT check that runs in mp or float64 sets the bits it asks at float64: 40 for a module, 30 for an SGD step
and for finite differences. That leaves room for what its computation loses by design (the attention backward keeps
about 38 of 53 bits on tiny-relu). Its references run in float64 (torch autograd), which caps what it can keep, or
in the check's own arithmetic (the rows' math written out); above 53 bits it asks the same. The loss is relative,
the same at every precision: in mp at P < 53 bits a check asks for its float64 default less the 53 − P bits the
format lacks, and a precision that leaves under 1 bit is refused naming ``--numerics``.
Fuzzing found the case: ``attnsim check tint.attn_backward --case tiny-relu --numerics mp:30`` kept 15.0 bits
(5.2 at mp:20, 23.7 at mp:40, 38.8 at mp:53), and was failed against the fixed 30.
"""

from __future__ import annotations

from attnsim.sim.numerics.floating import Float64
from attnsim.sim.tint.arith import get_arith
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
