"""Checker of Theorem 1.1 of the ICML version of TinT (paper_refs/tint.toml, ``tint.thm_1_1``).

One forward pass of the built network must (a) leave in its prefix area the auxiliary weights after the simulated
SGD step and (b) evaluate the updated model, both held against the independent reference (torch autograd in
float64; the exact tape in rationals), and (c) do so at the width the theorem states: the module width D_sim is
measured from the built modules' arrays and held against (S + 1) D_aux from paper_refs through theory.
"""

from __future__ import annotations

from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import CASES, case
from attnsim.sim.tint.layers import BlockDiag
from attnsim.sim.tint.network import Network
from attnsim.verify.registry import CheckContext, Measurement, Param, checker
from attnsim.verify.tint_bits import asked_bits
from attnsim.verify.tint_independent import step_against_reference

CHECKED = ("one forward pass of the built network leaves the simulated SGD step's weights and the updated model's "
           "logits, each against the independent reference, at module width (S + 1) D_aux read off its arrays")
NOT_CHECKED = ("the theorem's parameter count: only its opening (L, D_aux, H_aux, T_aux, S; §3 forward, §4 simulated "
               "gradient, evaluation) is available to us, not the count it concludes with, so there is no formula to "
               "hold the built network's count against; tint.size and tint.under_2b hold that count against Table 3's "
               "formulas and the abstract's 2 billion instead")
"""What a record of this claim checks, and the part of the statement it cannot (the claim is partial: paper_refs
``weakened``)."""


def module_width(net: Network) -> int:
    """The width of the window every module computes in, read off a block-diagonal map's array (blocks x size)."""
    for lay in net.module_layers():
        for layer in getattr(lay.op, "layers", ()):
            maps = getattr(layer, "maps", None)
            if maps:
                bd = next(m for m in maps["q"] if isinstance(m, BlockDiag))
                return int(bd.W.shape[0] * bd.W.shape[1])
    raise ValueError("the network has no attention module to read its width from")


@checker("tint.thm_1_1", evidence="independent",
         params=[Param("case", str, "gpt2-d64", "named case", choices=tuple(CASES))],
         grid=lambda quick: [{"case": "tiny-relu"}] + ([] if quick else [{"case": "gpt2-d64"}, {"case": "opt-d64"}]),
         numerics=("exact", "float64"), default_numerics="float64")
def check_thm_1_1(ctx: CheckContext) -> Measurement:
    """Forward pass, simulated gradient, descent and evaluation in one forward pass, at width (S + 1) D_aux."""
    need = asked_bits(ctx, 30.0)
    c = case(ctx.params["case"])
    ar = get_arith(ctx.numerics)
    r = ex.sgd_step(c, ar)
    v = step_against_reference(c, ar, r.weights, r.got, r.logits, 1000, False)
    agree = v.equal if ctx.numerics == "exact" else v.bits >= need
    reasons = [v.partial] if v.partial else []
    return Measurement(agree=agree and not reasons, error_bits=v.bits, counts={"width": module_width(r.net)},
                       derived={"D": c.aux.D, "K": c.tint.K}, reasons=reasons, evidence=v.evidence,
                       reference=v.reference,
                       extra={"min_bits": need, "step_bits": v.step_bits, **v.extra, "partial": v.partial,
                              "test_loss": r.test_loss,
                              "layers": c.aux.layers, "heads": c.aux.heads, "T_aux": c.aux.positions,
                              "S": c.tint.S(c.aux), "checked": CHECKED, "not_checked": NOT_CHECKED})
