"""Lemma 3.1 in float64 against the head dimension d: the precision study's points that the front page's finding
reads (:mod:`attnsim.verify.findings.two_heads`).

Larger d spreads the scores, so a block's normaliser A grows like exp(max score), and the paper's decode
A' = p/(1 - p) of p = A/(A + 1) loses the bits of 1 - p; the stable decode (``decode = "stable"``) does not. Each
point is one ``two_heads.lemma_3_1`` check record in float64 (error bits against the reference, non-finite values
counted in the record).
"""

from __future__ import annotations

from typing import Any, Sequence

CLAIM = "two_heads.lemma_3_1"
DIMS = (4, 8, 16)
SIZE = {"N": 64, "M": 8}
DECODES = ("paper", "stable")


def float64_points(decodes: Sequence[str] = DECODES) -> list[tuple[dict[str, Any], str]]:
    """(parameters, numerics) of every point: ``SIZE`` at each d of ``DIMS``, for each decode the checker knows."""
    from attnsim.verify.registry import get_checker

    known = {p.name: p for p in get_checker(CLAIM).params}
    chosen = [d for d in decodes if "decode" in known or d == "paper"]
    return [({**SIZE, "d": d, **({"decode": dec} if "decode" in known else {})}, "float64")
            for dec in chosen for d in DIMS]
