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


# two_heads exact constructions: (claim, case); small enough for exact numerics in tests
TWO_HEADS_EXACT_CASES = [
    ("two_heads.cor_3_2", NamedCase("cor_multi_layer_partial", dict(N=10, M=4, d=4, H=2, L=2))),
    ("two_heads.cor_3_2", NamedCase("cor_symbolic_two_heads", dict(N=4, M=2, d=2, H=2, L=1), numerics="symbolic")),
    (
        "two_heads.cor_3_2",
        NamedCase("cor_fused_strict", dict(N=9, M=4, d=4, H=2, L=2, scheme="fused", length="strict")),
    ),
    ("two_heads.lemma_3_3", NamedCase("pack_full", dict(M=4, d=4, H=2, Hp=2, Lp=2))),
    ("two_heads.lemma_3_3", NamedCase("pack_causal_partial", dict(M=5, d=6, H=3, Hp=2, Lp=3, jobs=5, causal=True))),
    ("two_heads.lemma_3_3", NamedCase("pack_symbolic", dict(M=3, d=2, H=2, Hp=2, Lp=1), numerics="symbolic")),
    ("two_heads.lemma_3_3", NamedCase("pack_float64", dict(M=6, d=4, H=2, Hp=3, Lp=2), numerics="float64")),
    ("two_heads.thm_3_4", NamedCase("t34_partial", dict(N=13, M=4, d=4, H=2, L=2, Hp=2, Lp=2))),
    ("two_heads.thm_3_4", NamedCase("t34_strict", dict(N=10, M=4, d=4, H=2, L=2, Hp=3, Lp=1, length="strict"))),
    (
        "two_heads.thm_3_4",
        NamedCase("t34_fused_quadratic", dict(N=9, M=3, d=4, H=2, L=3, Hp=1, Lp=2, scheme="fused", psi="quadratic")),
    ),
    ("two_heads.thm_3_4", NamedCase("t34_single_token", dict(N=1, M=4, d=2, H=1, L=2, Hp=2, Lp=2))),
    (
        "two_heads.thm_3_4",
        NamedCase("t34_symbolic_two_layers", dict(N=4, M=2, d=1, H=1, L=2, Hp=1, Lp=2), numerics="symbolic"),
    ),
    ("two_heads.thm_3_4", NamedCase("t34_mp", dict(N=12, M=4, d=4, H=2, L=2, Hp=2, Lp=2), numerics="mp:200")),
    ("two_heads.thm_3_4", NamedCase("t34_float64", dict(N=24, M=4, d=4, H=2, L=2, Hp=2, Lp=2), numerics="float64")),
    ("two_heads.claim_b_6", NamedCase("b6_partial", dict(N=11, M=4, d=2))),
    ("two_heads.claim_b_6", NamedCase("b6_strict", dict(N=7, M=3, d=2, length="strict"))),
    ("two_heads.claim_b_6", NamedCase("b6_symbolic", dict(N=5, M=3, d=1), numerics="symbolic")),
    ("two_heads.claim_b_6", NamedCase("b6_float64", dict(N=20, M=8, d=4), numerics="float64")),
    ("two_heads.thm_3_5", NamedCase("t35_partial", dict(N=13, M=4, d=4, H=2, L=2, Hp=2, Lp=2))),
    ("two_heads.thm_3_5", NamedCase("t35_strict", dict(N=11, M=4, d=4, H=2, L=2, Hp=2, Lp=1, length="strict"))),
    (
        "two_heads.thm_3_5",
        NamedCase("t35_fused_quadratic", dict(N=10, M=3, d=4, H=2, L=3, Hp=2, Lp=2, scheme="fused", psi="quadratic")),
    ),
    ("two_heads.thm_3_5", NamedCase("t35_one_block", dict(N=4, M=4, d=2, H=1, L=2, Hp=1, Lp=1))),
    (
        "two_heads.thm_3_5",
        NamedCase("t35_symbolic_two_layers", dict(N=5, M=2, d=1, H=1, L=2, Hp=2, Lp=1), numerics="symbolic"),
    ),
    ("two_heads.thm_3_5", NamedCase("t35_mp", dict(N=12, M=4, d=4, H=2, L=2, Hp=2, Lp=2), numerics="mp:200")),
    ("two_heads.thm_3_5", NamedCase("t35_float64", dict(N=24, M=4, d=4, H=2, L=2, Hp=2, Lp=2), numerics="float64")),
    ("two_heads.thm_5_1", NamedCase("w_window", dict(N=19, M=5, d=4, H=2, L=2, Hp=2, Lp=1, window=2))),
    ("two_heads.thm_5_1", NamedCase("w_sinks", dict(N=21, M=6, d=4, H=2, L=2, Hp=2, Lp=2, window=2, sinks=2))),
    (
        "two_heads.thm_5_1",
        NamedCase(
            "w_fused_strict",
            dict(N=15, M=6, d=2, H=1, L=2, Hp=1, Lp=1, window=1, sinks=3, scheme="fused", length="strict"),
        ),
    ),
    ("two_heads.thm_5_1", NamedCase("w_largest_window", dict(N=12, M=5, d=2, H=1, L=1, Hp=1, Lp=1, window=4))),
    ("two_heads.thm_5_1", NamedCase("w_short_input", dict(N=3, M=6, d=2, H=1, L=2, Hp=2, Lp=1, window=2, sinks=2))),
    (
        "two_heads.thm_5_1",
        NamedCase("w_quadratic", dict(N=14, M=5, d=4, H=2, L=3, Hp=2, Lp=2, window=2, sinks=1, psi="quadratic")),
    ),
    (
        "two_heads.thm_5_1",
        NamedCase(
            "w_symbolic_two_layers", dict(N=6, M=4, d=1, H=1, L=2, Hp=1, Lp=2, window=1, sinks=1), numerics="symbolic"
        ),
    ),
    (
        "two_heads.thm_5_1",
        NamedCase("w_mp", dict(N=16, M=5, d=4, H=2, L=2, Hp=2, Lp=1, window=2, sinks=1), numerics="mp:200"),
    ),
    (
        "two_heads.thm_5_1",
        NamedCase("w_float64", dict(N=40, M=8, d=4, H=2, L=2, Hp=2, Lp=1, window=3, sinks=1), numerics="float64"),
    ),
    ("two_heads.thm_1_1", NamedCase("t11_causal", dict(N=9, M=4, d=4, H=2, L=2, Hp=2, Lp=2, causal=True))),
    ("two_heads.thm_1_4", NamedCase("t14", dict(N=13, M=5, d=2, H=1, L=2, Hp=1, Lp=2, window=1, sinks=1))),
]
