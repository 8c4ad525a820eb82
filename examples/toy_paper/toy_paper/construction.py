"""Proposition 1 of the toy paper: the mean of N numbers from ceil(N/M) block means.

The oracle averages at most M numbers and counts its calls; it refuses a longer input, as attnsim's
oracles refuse calls outside their spec. The construction never sees the claim's bound.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from attnsim.sim.errors import AttnsimError


class MeanOracle:
    """Averages at most ``M`` numbers per call; ``calls`` counts the calls."""

    def __init__(self, M: int) -> None:
        """An oracle of length ``M``."""
        self.M = M
        self.calls = 0

    def __call__(self, xs: Sequence[Fraction]) -> Fraction:
        """The mean of ``xs`` (one call)."""
        if not 1 <= len(xs) <= self.M:
            raise AttnsimError(f"a call of length {len(xs)} exceeds the oracle's length {self.M}", param="M")
        self.calls += 1
        return sum(xs, Fraction(0)) / len(xs)


def blocks(N: int, M: int) -> list[range]:
    """The blocks of positions, each at most ``M`` long."""
    return [range(i, min(i + M, N)) for i in range(0, N, M)]


def block_mean(xs: Sequence[Fraction], oracle: MeanOracle) -> Fraction:
    """The mean of ``xs`` from one oracle call per block and a combination weighted by block sizes."""
    parts = [(len(b), oracle([xs[i] for i in b])) for b in blocks(len(xs), oracle.M)]
    return sum((Fraction(k) * m for k, m in parts), Fraction(0)) / len(xs)
