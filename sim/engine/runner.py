"""A :class:`~attnsim.sim.two_heads.jobs.JobRunner` for any construction's float64 jobs.

``run_batched(oracle, jobs)`` is a drop-in for ``run_one_per_call``: one round, the same calls,
the same ledger counts, but jobs with the same input shape and the same weight arrays run as one
batch on the engine (stacked inputs, batched attention). Each job's own layer MLP (``decode``) is
then applied to its rows. Other numerics, and jobs with rotary embeddings, fall back to
``run_one_per_call``.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from attnsim.sim.engine.backend import get_backend
from attnsim.sim.engine.batch import CallBatch, Gathered, admit, execute
from attnsim.sim.errors import OracleSpecError
from attnsim.sim.numerics import Array
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads.jobs import HeadJob, run_one_per_call


def run_batched(oracle: Oracle, jobs: Iterable[HeadJob], backend: str = "numpy") -> list[Array]:
    """Run float64 jobs as batches on ``backend``; other numerics (or RoPE) run one call per job."""
    jobs = list(jobs)
    if oracle.nm.name != "float64" or any(job.rope_dims for job in jobs):
        return run_one_per_call(oracle, jobs)
    if not jobs:
        return []
    oracle.round += 1
    groups: dict[tuple, list[int]] = {}
    for i, job in enumerate(jobs):
        groups.setdefault((job.Z.shape, id(job.WQ), id(job.WK), id(job.WV)), []).append(i)
    be = get_backend(backend)
    results: list[Array | None] = [None] * len(jobs)
    for idx in groups.values():
        first = jobs[idx[0]]
        n, w = first.Z.shape
        Z = np.concatenate([jobs[i].Z for i in idx])
        inputs = Gathered(("Z",), (w,), (np.arange(len(idx) * n).reshape(len(idx), n),))
        batch = CallBatch(first.tag, inputs, first.WQ, first.WK, first.WV)
        admit_tags(oracle, batch, [jobs[i].tag for i in idx])
        out = execute(batch, {"Z": Z}, be, oracle.spec.causal)
        for j, i in enumerate(idx):
            y = jobs[i].decode(oracle.nm, out[j]) if jobs[i].decode is not None else out[j]
            if y.shape[1] > oracle.spec.dim:
                raise OracleSpecError(f"oracle refused call '{jobs[i].tag}': output width {y.shape[1]} "
                                      f"exceeds dim {oracle.spec.dim} ({oracle.spec.describe()})")
            results[i] = y
    return results  # type: ignore[return-value]


def admit_tags(oracle: Oracle, batch: CallBatch, tags: list[str]) -> None:
    """Admit a batch whose calls may carry different tags: one ledger entry per tag run."""
    start = 0
    for k in range(1, len(tags) + 1):
        if k == len(tags) or tags[k] != tags[start]:
            sub = CallBatch(tags[start], Gathered(batch.inputs.sources, batch.inputs.widths,
                                                  tuple(ix[start:k] for ix in batch.inputs.index)),
                            batch.WQ, batch.WK, batch.WV)
            admit(oracle, sub)
            start = k
