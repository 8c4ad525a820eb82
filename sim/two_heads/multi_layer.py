"""A whole model, one layer of T at a time, from per-head job builders (two_heads.thm_3_4, thm_3_5, thm_5_1).

:func:`simulate_layers` is the driver shared by the packed constructions: in every layer of the
large model it asks a *head builder* for each head's single-head jobs, hands all jobs of the layer to
a :class:`~attnsim.sim.two_heads.jobs.JobRunner` in one round (``packing.run_packed`` packs H'·L'
per call, Lemma 3.3), lets each head recombine its results (processing, ledger tag ``….combine``),
concatenates the heads, adds the residual if the large model has one (a layer's ``pre`` map, e.g.
pre-LN, is applied token-wise before the heads as in ``worst_case.py``), and applies ψ_ℓ token-wise
as processing (tag ``layer_mlp``, one entry per chunk of b tokens, as in ``worst_case.py``). The
paper simulates "one layer at a time of T" (proof of Thm 3.4): jobs of different layers never share a
call, so the count is Σ_ℓ ⌈jobs_ℓ/(H'L')⌉.

:func:`full_head` is the unmasked head of Theorem 3.4: Lemma 3.1's block-pair jobs
(``blocks.head_jobs``) made equally long (``plan.job_length`` rows, the padding of ``plan.pair_layout``),
because an unmasked oracle cannot pad a job inside a packed call. That padding is exact (our
reconstruction; the paper packs Step-1 and Step-2 jobs together without saying how their lengths, M + 1 and M, agree):

* a Step-1 job (and a fused job) gets extra rows ``[0, 0, 1, 0]`` — exactly like the synthetic token,
  score 1 and value 0 — so p = A/(A + 1 + k) and the decode becomes A = (1 + k)p/(1 − p);
* a Step-2 job gets extra all-zero rows — score 0, weight 1, value 0 — so it returns B/(A + k) and
  the combination uses B = out·(A + k).

This is the padding ``blocks.py`` already uses for a partial last block, extended to the call length
min(N, b) + 1.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Callable, Iterable, Iterator, Protocol, Sequence

from attnsim.sim.errors import PreconditionError
from attnsim.sim.ledger import Ledger
from attnsim.sim.model import TransformerSpec, Weights
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.blocks import combine, head_jobs
from attnsim.sim.two_heads.jobs import HeadJob, JobRunner, StreamRunner
from attnsim.sim.two_heads.worst_case import apply_token_map, sum_heads

# finish(nm, ledger, results of the head's jobs, round) -> the head's output (N × d/H)
HeadFinish = Callable[[Numerics, Ledger, Sequence[Array], int], Array]


class HeadAccumulator(Protocol):
    """A head's combination step fed one call output at a time (a streamed round, ``sink_runner``)."""

    def fold(self, index: int, out: Array) -> None:
        """Take the output of the head's ``index``-th job into the running sums."""

    def close(self, nm: Numerics, ledger: Ledger, round: int) -> Array:
        """The head's output (N × d/H) once every job's output has been folded in."""


class Collected:
    """A batch ``finish`` as an accumulator: it keeps the outputs and combines them at the end."""

    def __init__(self, finish: HeadFinish) -> None:
        """Wrap the head's batch combination ``finish``."""
        self.finish = finish
        self.outputs: dict[int, Array] = {}

    def fold(self, index: int, out: Array) -> None:
        """Keep the output of job ``index``."""
        self.outputs[index] = out

    def close(self, nm: Numerics, ledger: Ledger, round: int) -> Array:
        """Combine the kept outputs in job order."""
        return self.finish(nm, ledger, [self.outputs[i] for i in range(len(self.outputs))], round)
# build(nm, X_h, W^Q, W^K, W^V, tag) -> (jobs, finish); jobs may be a generator (built when consumed);
# finish may be a HeadAccumulator (the streamed combination of a head, used with ``sink_runner``)
HeadBuilder = Callable[[Numerics, Array, Array, Array, Array, str],
                       tuple[Iterable[HeadJob], "HeadFinish | HeadAccumulator"]]


def simulate_layers(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int,
                    build_head: HeadBuilder, runner: JobRunner | None = None, tag: str, stream: bool = False,
                    sink_runner: StreamRunner | None = None) -> Array:
    """T(X) layer by layer: all head jobs of a layer in one round of ``runner``.

    ``stream=True`` hands the runner the layer's jobs as one generator instead of a list, so a
    runner that consumes it call by call (``jobs.run_one_per_call``) never holds all job inputs of
    a layer at once (the N = 8192 GPT-2 example: ~8 GB of inputs per layer otherwise). The calls
    and the round are the same either way.

    ``sink_runner`` (instead of ``runner``) also streams the outputs: each call's output goes to its
    head's :class:`HeadAccumulator` the moment the oracle has it, so a round holds the running sums
    of eq. (1) and the calls in flight, never all its outputs. A head builder whose ``finish`` is a
    plain function is wrapped in :class:`Collected` (it keeps its outputs, as the batch path does).
    """
    if (runner is None) == (sink_runner is None):
        raise PreconditionError("runner: give exactly one of runner and sink_runner")
    if spec.rope is not None:
        raise PreconditionError("rope: rotary embeddings are supported by Lemma 3.1's construction only "
                                "(two_heads.rebuttal_rope), not by the packed, causal or window ones")
    weights.validate(spec)
    nm = oracle.nm
    X = apply_token_map(nm, oracle, weights.phi, X, b, "input_mlp")
    for li, layer in enumerate(weights.layers):
        Xa = apply_token_map(nm, oracle, layer.pre, X, b, "pre_norm")
        built = [build_head(nm, Xa[:, slice(*P.model_head_columns(h, spec.m))], nm.array(hw.WQ, "W^Q"),
                            nm.array(hw.WK, "W^K"), nm.array(hw.WV, "W^V"), f"{tag}.L{li}.H{h}")
                 for h, hw in enumerate(layer.heads)]
        counts = [0] * len(built)
        owner: list[tuple[int, int]] = []  # global call index -> (head, index among the head's jobs)

        def layer_jobs() -> Iterator[HeadJob]:
            for h, (head_jobs_h, _) in enumerate(built):
                for job in head_jobs_h:
                    owner.append((h, counts[h]))
                    counts[h] += 1
                    yield job

        if sink_runner is not None:
            accs = [f if hasattr(f, "fold") else Collected(f) for _, f in built]

            def sink(i: int, out: Array) -> None:
                h, j = owner[i]
                accs[h].fold(j, out)

            sink_runner(oracle, layer_jobs(), sink)
            heads = [acc.close(nm, oracle.ledger, oracle.round) for acc in accs]
            del accs, built, Xa  # the layer's inputs and sums are not needed past this point
        else:
            results = runner(oracle, layer_jobs() if stream else list(layer_jobs()))
            ends = list(accumulate(counts))
            heads = [finish(nm, oracle.ledger, results[e - c:e], oracle.round)
                     for (_, finish), c, e in zip(built, counts, ends)]
        X = sum_heads(nm, oracle, spec, X, heads)
        X = apply_token_map(nm, oracle, layer.psi, X, b, "layer_mlp")
    return X


def full_head(b: int, scheme: str, *, uniform: bool) -> HeadBuilder:
    """Head builder for an unmasked model: Lemma 3.1's jobs (equally long when ``uniform``) and eq. (1)."""

    def build(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array, tag: str) -> tuple[list[HeadJob], HeadFinish]:
        N, m = X.shape
        length = P.job_length(P.INT, N, b) if uniform else None
        jobs, plans = head_jobs(nm, X, WQ, WK, WV, b, scheme, tag, length=length)

        def finish(nm: Numerics, ledger: Ledger, results: Sequence[Array], round: int) -> Array:
            return combine(nm, ledger, N, m, plans, results, tag, round)

        return jobs, finish

    return build
