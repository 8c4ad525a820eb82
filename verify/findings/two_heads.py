"""The findings of two_heads that a run computes: Lemma 3.1's float64 agreement in bits at d = 4, 8, 16
(:mod:`attnsim.verify.precision.dims`), for each decode the checker has; and the certified bits the authors'
rebuttal's 2^-N error needs, less N, over ``two_heads.rebuttal_log_bits``'s full growth sweep."""

from __future__ import annotations

import math
from typing import Any, Sequence

from attnsim.verify.findings import Finding, finder, record_for
from attnsim.verify.precision.certified_study import PER_N
from attnsim.verify.precision.dims import CLAIM, DIMS, SIZE, float64_points
from attnsim.verify.registry import get_checker


def _bits(r: dict[str, Any]) -> str:
    b = r.get("error_bits")
    return "exact" if b is not None and math.isinf(b) else "—" if b is None else f"{b:.1f}"


@finder("two_heads")
def lemma_3_1_float64_bits(records: Sequence[dict[str, Any]]) -> list[Finding]:
    """Per decode: the bits of agreement at each d, and how many values were not finite (measured: asking for 0
    bits, since by default the paper's decode is refused where it keeps none)."""
    used = [record_for(records, CLAIM, params, numerics, min_bits=0.0) for params, numerics in float64_points()]
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


@finder("two_heads")
def per_N_bits_beyond_N(records: Sequence[dict[str, Any]]) -> list[Finding]:
    """The certified bits needed for 2^-N minus N at each N of the full growth sweep (the run's records where it
    holds them): a constant excess says 2^-N takes N + O(1) bits, which no O(log N)-bit number can hold."""
    used = [record_for(records, PER_N, params, "none") for params in get_checker(PER_N).growth_grid(False)]
    sizes = [int(r["params"]["N"]) for r in used]
    bits = [(r.get("counts") or {}).get("bits") for r in used]
    if any(b is None for b in bits):
        missing = ", ".join(str(n) for n, b in zip(sizes, bits) if b is None)
        return [Finding("two_heads", f"the rebuttal's 2^-N error: no precision up to the search's cap certified it "
                                     f"at N = {missing}", PER_N, tuple(used))]
    excess = [int(b) - n for b, n in zip(bits, sizes)]
    lo, hi = min(excess), max(excess)
    need = f"N + {lo}" if lo == hi else f"N + {lo} … N + {hi}"
    text = (f"The authors' rebuttal's 2^-N relative error needs {need} certified bits for Lemma 3.1 at N = "
            f"{', '.join(map(str, sizes))} (ball arithmetic, {used[0]['params'].get('decode', 'paper')} decode; "
            f"bits − N = {', '.join(map(str, excess))}), so O(log N)-bit numbers cannot reach it")
    return [Finding("two_heads", text, PER_N, tuple(used))]
