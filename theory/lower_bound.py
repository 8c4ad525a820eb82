"""two_heads.lower_bound: the unconditional information bound and the conditional (SETH) one.

Both are formulas in ``paper_refs/two_heads.toml`` (``[claims.extra]`` of ``two_heads.lower_bound``):

* ``information_bound`` — each oracle call returns at most ``oracle_len`` rows and the output has N
  rows, so calls >= ceil(N / oracle_len) for *every* construction, worst case or not;
* ``conditional_bound`` — under SETH, through Alman–Song (2023, Lemma 4.7), (N/M)^2 calls up to an
  N^{o(1)} factor in the worst case. It is reported, never asserted: it is asymptotic and conditional.
"""

from __future__ import annotations

from attnsim.paper_refs import get as get_claim
from attnsim.theory.formulas import as_number, evaluate

CLAIM = "two_heads.lower_bound"


def information_bound(N: int, oracle_len: int) -> int:
    """The fewest calls any construction can make to produce N rows from calls of ``oracle_len`` rows."""
    claim = get_claim(CLAIM)
    return int(as_number(evaluate(claim.extra["information_bound"], {}, {"N": N, "oracle_len": oracle_len})))


def conditional_bound(N: int, M: int) -> float:
    """The conditional (SETH) lower bound (N/M)^2 on calls at these N and M, from paper_refs."""
    claim = get_claim(CLAIM)
    return float(as_number(evaluate(claim.extra["conditional_bound"], {}, {"N": N, "M": M})))
