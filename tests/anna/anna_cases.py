"""The shared table of named ANNA cases (tracr style), reused by unit, property and checker tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    name: str
    params: dict[str, Any]
    seed: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)


LSH_CASES = [
    Case("tiny_hyperplane", dict(N=4, m=2, ell=3, z=2, family="hyperplane")),
    Case("one_table", dict(N=16, m=4, ell=1, z=4, family="hyperplane")),
    Case("many_tables", dict(N=24, m=8, ell=40, z=10, family="hyperplane")),
    Case("pstable_wide", dict(N=20, m=3, ell=6, z=3, family="pstable", width=4.0)),
    Case("pstable_narrow", dict(N=20, m=3, ell=6, z=1, family="pstable", width=0.05)),
    Case("more_keys_than_queries", dict(N=12, Nk=30, m=4, ell=5, z=3, family="hyperplane")),
]

MATCH2_CASES = [
    Case("paper_setting", dict(N=32, modulus=37)),
    Case("even_modulus_self_match", dict(N=10, modulus=10)),
    Case("modulus_two", dict(N=6, modulus=2)),
    Case("large_modulus", dict(N=64, modulus=1009)),
    Case("single_token", dict(N=1, modulus=5)),
]

KHOP_CASES = [Case(f"k{k}_s{s}", dict(N=100, k=k, s=s)) for s in (64, 256) for k in (1, 2, 3, 5, 8, 13, 16)]

CHECKER_CASES = [
    Case("thm_5_2_small", dict(claim="anna.thm_5_2", N=12, modulus=37, examples=10)),
    Case("alg_1_small", dict(claim="anna.alg_1", N=16, seeds=5)),
    Case("alg_2_small", dict(claim="anna.alg_2", N=16, seeds=3)),
    Case("khop_small", dict(claim="anna.khop", N=64, k=5, strings=2, sort="letter", eps1=0.5, s_scale=6.0)),
    Case("thm_4_2_small", dict(claim="anna.thm_4_2", N=32, r=0.1, c=14.0, eps1=0.75, s_scale=200.0)),
    Case("lemma_d_2_small", dict(claim="anna.lemma_d_2", N=300)),
    Case("prop_e_3_fails", dict(claim="anna.prop_e_3", N=27, B=3, L=2)),
    Case("prop_e_3_covers", dict(claim="anna.prop_e_3", N=16, B=2, L=4)),
]
