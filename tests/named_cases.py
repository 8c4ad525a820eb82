"""The shared table of named cases (tracr style): reused by unit, CLI and property tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NamedCase:
    name: str
    params: dict[str, Any]
    numerics: str = "exact"
    seed: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)


LEMMA_3_1_CASES = [
    NamedCase("tiny", dict(N=2, M=2, d=1)),
    NamedCase("N_equals_M", dict(N=8, M=8, d=2)),
    NamedCase("N_not_divisible", dict(N=13, M=4, d=3)),
    NamedCase("M_is_2", dict(N=7, M=2, d=2)),
    NamedCase("single_token", dict(N=1, M=4, d=2)),
    NamedCase("strict_length", dict(N=12, M=4, d=2, length="strict")),
    NamedCase("fused", dict(N=12, M=4, d=2, scheme="fused")),
    NamedCase("fused_partial_strict", dict(N=11, M=4, d=2, scheme="fused", length="strict")),
    NamedCase("affine_psi", dict(N=10, M=4, d=2, psi="affine")),
    NamedCase("large_scores", dict(N=12, M=4, d=3, input="large")),
    NamedCase("symbolic_small", dict(N=6, M=3, d=1), numerics="symbolic"),
    NamedCase("fraction_fallback", dict(N=8, M=4, d=2), numerics="fraction"),
    NamedCase("mp_200", dict(N=16, M=4, d=2), numerics="mp:200"),
    NamedCase("float64", dict(N=32, M=8, d=4), numerics="float64"),
]
