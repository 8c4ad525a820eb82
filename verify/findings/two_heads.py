"""The finding of two_heads that a run computes: Lemma 3.1's float64 agreement in bits at d = 4, 8, 16
(:mod:`attnsim.verify.precision.dims`), for each decode the checker has."""

from __future__ import annotations

import math
from typing import Any, Sequence

from attnsim.verify.findings import Finding, finder, record_for
from attnsim.verify.precision.dims import CLAIM, DIMS, SIZE, float64_points


def _bits(r: dict[str, Any]) -> str:
    b = r.get("error_bits")
    return "exact" if b is not None and math.isinf(b) else "—" if b is None else f"{b:.1f}"


@finder("two_heads")
def lemma_3_1_float64_bits(records: Sequence[dict[str, Any]]) -> list[Finding]:
    """Per decode: the bits of agreement at each d, and how many values were not finite."""
    used = [record_for(records, CLAIM, params, numerics) for params, numerics in float64_points()]
    parts = []
    for dec in dict.fromkeys(r["params"].get("decode", "paper") for r in used):
        mine = [r for r in used if r["params"].get("decode", "paper") == dec]
        bad = sum(int(n) for r in mine for n in ((r.get("extra") or {}).get("non_finite") or {}).values())
        name = "the paper's decode" if dec == "paper" else f"the {dec} decode"
        parts.append(f"{name} agrees to {', '.join(_bits(r) for r in mine)} bits"
                     + (f" ({bad} non-finite values)" if bad else ""))
    text = (f"Lemma 3.1 in float64 at d = {', '.join(map(str, DIMS))} (N = {SIZE['N']}, M = {SIZE['M']}, random "
            f"inputs, seed 0): " + "; ".join(parts))
    return [Finding("two_heads", text, CLAIM, tuple(used))]
