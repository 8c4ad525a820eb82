"""A batched executor for single-head jobs: one round of oracle calls as stacked tensor operations.

The precision sweeps run two_heads.lemma_3_1 at N = 4096 (2·128² = 32 768 oracle calls per
evaluation, several evaluations per bisection). :func:`run_batched` is a
:class:`~attnsim.sim.two_heads.jobs.JobRunner` that gives the same outputs as
:func:`~attnsim.sim.two_heads.jobs.run_one_per_call` — each call still goes through the oracle's
spec checks and is written to its ledger with the same tag, round, shape and flops — but evaluates
jobs of equal shapes together: the numerics' primitives act on a leading batch axis element by
element, so in a fixed-width numerics every rounded value is the one the call-by-call run produces
(tests/test_precision.py compares them bit for bit). The oracle's layer MLP (``decode``) is token-wise,
so it is applied to the stacked rows of a group at once; jobs share a group when their decode is
the same function with equal captured values (e.g. blocks.decode_A(pad) for one pad).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

import numpy as np

from attnsim.sim.errors import OracleSpecError
from attnsim.sim.numerics import Array
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads.jobs import HeadJob, run_one_per_call

CHUNK = 2048  # jobs evaluated together (bounds peak memory at about CHUNK · (M+1)² floats per array)


def _decode_key(f: Any) -> Any:
    if f is None:
        return None
    cells = tuple(c.cell_contents for c in (f.__closure__ or ()))
    try:
        hash(cells)
    except TypeError:
        return id(f)
    return (f.__code__, cells)


def _refuse(oracle: Oracle, job: HeadJob, what: str) -> OracleSpecError:
    return OracleSpecError(f"oracle refused call '{job.tag}': {what} ({oracle.spec.describe()})")


def _validate(oracle: Oracle, job: HeadJob) -> None:
    spec = oracle.spec
    n, width = job.Z.shape
    if n > spec.max_len:
        raise _refuse(oracle, job, f"sequence length {n} exceeds max_len {spec.max_len}")
    if width > spec.dim:
        raise _refuse(oracle, job, f"layer 0 input width {width} exceeds dim {spec.dim}")
    if job.WQ.shape[0] != width or job.WK.shape[0] != width or job.WV.shape[0] != width:
        raise _refuse(oracle, job, "layer 0 head 0: weights must have as many rows as the input is wide")
    if job.WQ.shape[1] != job.WK.shape[1]:
        raise _refuse(oracle, job, "layer 0 head 0: W^Q and W^K widths differ")
    if max(job.WQ.shape[1], job.WV.shape[1]) > spec.dim:
        raise _refuse(oracle, job, f"layer 0 head 0: head width exceeds dim {spec.dim}")


def run_batched(oracle: Oracle, jobs: Sequence[HeadJob]) -> list[Array]:
    """Every job as its own (recorded) oracle call, all in one round, evaluated in stacked groups."""
    if oracle.spec.heads != 1 or any(j.Z.dtype == object for j in jobs):
        return run_one_per_call(oracle, jobs)
    if not jobs:
        return []
    nm = oracle.nm
    oracle.round += 1
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, job in enumerate(jobs):
        _validate(oracle, job)
        n, width = job.Z.shape
        kq, kv = job.WQ.shape[1], job.WV.shape[1]
        oracle.ledger.record("oracle", job.tag, round=oracle.round, shape=(n, width),
                             flops=2 * n * width * (2 * kq + kv) + 2 * n * n * (kq + kv))
        groups[(job.Z.shape, job.WQ.shape, job.WV.shape, _decode_key(job.decode))].append(i)
    out: list[Array | None] = [None] * len(jobs)
    for idx in groups.values():
        for s in range(0, len(idx), CHUNK):
            part = [jobs[i] for i in idx[s:s + CHUNK]]
            Z = np.stack([j.Z for j in part])
            n = Z.shape[1]
            allowed = np.tril(np.ones((n, n), dtype=bool)) if oracle.spec.causal else None
            q = nm.matmul(Z, np.stack([j.WQ for j in part]))
            k = nm.matmul(Z, np.stack([j.WK for j in part]))
            v = nm.matmul(Z, np.stack([j.WV for j in part]))
            H = nm.attention(q, k, v, allowed)
            if part[0].decode is not None:
                flat = part[0].decode(nm, H.reshape(-1, H.shape[-1]))
                H = flat.reshape(len(part), n, flat.shape[-1])
            if H.shape[-1] > oracle.spec.dim:
                raise _refuse(oracle, part[0], f"output width {H.shape[-1]} exceeds dim {oracle.spec.dim}")
            for j, i in enumerate(idx[s:s + CHUNK]):
                out[i] = H[j]
    return out  # type: ignore[return-value]
