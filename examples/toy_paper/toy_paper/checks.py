"""The checker and broken twins of the toy paper's Proposition 1 (``toy_paper.block_mean``).

The reference is the plain mean of the inputs, computed without blocks or the oracle: the evidence is
independent. The twins break the block boundaries, the combination's weights and the call count.
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from fractions import Fraction
from typing import Iterator

from attnsim.verify.registry import CheckContext, Measurement, Param, checker
from attnsim.verify.twins import twin
from toy_paper import construction

CLAIM = "toy_paper.block_mean"


def _grid(quick: bool) -> list[dict]:
    return [dict(N=N, M=4) for N in ((7, 16) if quick else (7, 16, 33, 64))]


def _growth_grid(quick: bool) -> list[dict]:
    """Four sizes over 8x: enough for a growth verdict on the call count (attnsim growth)."""
    return [dict(N=N, M=4) for N in (16, 32, 64, 128)]


@checker(CLAIM, numerics=("exact",), default_numerics="exact", grid=_grid, growth_grid=_growth_grid, params=[
    Param("N", int, 16, "how many numbers", minimum=1), Param("M", int, 4, "oracle length", minimum=1)])
def check_block_mean(ctx: CheckContext) -> Measurement:
    """Proposition 1: block means combined by block sizes equal the mean, in ceil(N/M) calls."""
    N, M = ctx.params["N"], ctx.params["M"]
    rng = random.Random(ctx.seed)
    xs = [Fraction(rng.randint(-100, 100), rng.randint(1, 9)) for _ in range(N)]
    oracle = construction.MeanOracle(M)
    got = construction.block_mean(xs, oracle)
    want = sum(xs, Fraction(0)) / N
    return Measurement(agree=got == want, error_bits=float("inf") if got == want else 0.0,
                       counts={"calls": oracle.calls}, counts_by_tag={"block_mean": oracle.calls},
                       evidence="independent", reference="sum(xs) / N over the whole input (no blocks, no oracle)")


@twin(CLAIM, "last_block_dropped", "the blocks stop one block early", kind="construction")
@contextmanager
def _last_block_dropped() -> Iterator[None]:
    real = construction.blocks
    construction.blocks = lambda N, M: real(N, M)[:-1] or real(N, M)
    try:
        yield
    finally:
        construction.blocks = real


@twin(CLAIM, "unweighted_combination", "block means are averaged without their block sizes as weights",
      kind="construction", params={"N": 7, "M": 4})
@contextmanager
def _unweighted() -> Iterator[None]:
    real = construction.block_mean

    def unweighted(xs: list[Fraction], oracle: construction.MeanOracle) -> Fraction:
        means = [oracle([xs[i] for i in b]) for b in construction.blocks(len(xs), oracle.M)]
        return sum(means, Fraction(0)) / len(means)

    construction.block_mean = unweighted
    try:
        yield
    finally:
        construction.block_mean = real


@twin(CLAIM, "call_counted_twice", "the oracle counts each call twice", kind="ledger")
@contextmanager
def _counted_twice() -> Iterator[None]:
    real = construction.MeanOracle.__call__

    def twice(self: construction.MeanOracle, xs: list[Fraction]) -> Fraction:
        self.calls += 1
        return real(self, xs)

    construction.MeanOracle.__call__ = twice  # type: ignore[method-assign]
    try:
        yield
    finally:
        construction.MeanOracle.__call__ = real  # type: ignore[method-assign]
