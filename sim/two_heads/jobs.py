"""Single-head jobs and the simplest way to run them: one oracle call per job.

A :class:`HeadJob` is what one single-layer single-head oracle would compute: an input Z already
arranged by allowed processing (padding fixed numbers, concatenating, §1.1), the head's
W^Q, W^K, W^V, and the oracle's layer MLP ``decode`` (e.g. p ↦ p/(1-p), Lemma 3.1). Constructions
produce jobs; an executor turns them into oracle calls. :func:`run_one_per_call` is the executor
for an oracle with one head and one layer (two_heads.lemma_3_1, two_heads.cor_3_2); packing H'·L'
jobs into one call is Lemma 3.3 (``packing.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Protocol

from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer

Decode = Callable[[Numerics, Array], Array]


@dataclass(frozen=True, eq=False)
class HeadJob:
    """One single-head job: its input Z, weights, an optional decoder of its output, and its RoPE width."""
    tag: str
    Z: Array
    WQ: Array
    WK: Array
    WV: Array
    decode: Decode | None = None
    rope_dims: int = 0

    @property
    def width(self) -> int:
        """Width of the job's input."""
        return int(self.Z.shape[1])

    @property
    def out_width(self) -> int:
        """Width of the job's output."""
        return int(self.WV.shape[1])


class JobRunner(Protocol):
    """How a construction's single-head jobs reach the oracle (one call each, packed, or batched)."""

    def __call__(self, oracle: Oracle, jobs: Iterable[HeadJob]) -> list[Array]:
        """Run ``jobs`` as one round on ``oracle``; outputs in job order."""


def run_one_per_call(oracle: Oracle, jobs: Iterable[HeadJob]) -> list[Array]:
    """Every job as its own call to a single-head single-layer oracle, all in one round.

    ``jobs`` may be a generator (a streamed round, ``multi_layer.simulate_layers(stream=True)``):
    the calls are handed on one by one, so no job input is held longer than the oracle needs it.
    """
    return oracle.run(OracleCall(job.tag, job.Z, (OracleLayer((OracleHead(job.WQ, job.WK, job.WV, job.rope_dims),),
                                                               job.decode),))
                      for job in jobs)
