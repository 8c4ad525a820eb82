"""The batched :class:`~attnsim.sim.two_heads.jobs.JobRunner`: one round of single-head jobs as stacked tensors.

``run_batched(oracle, jobs)`` is a drop-in for ``run_one_per_call``: one round, the same calls, the same
refusals (:func:`attnsim.sim.oracle.refusal`, checked for every job before any runs) and the same ledger
totals by tag, rounds, flops and shapes (consecutive calls with equal tag and shape share one entry whose
``amount`` counts them; a refused round records nothing). Jobs of equal shapes are then evaluated together:

* float64 numerics: jobs with the same input shape and the same weight arrays run as one batch on the
  engine (:func:`~attnsim.sim.engine.batch.execute`: stacked inputs, batched attention on ``backend``);
  each job's own layer MLP (``decode``) is then applied to its rows.
* other array numerics (fixed point and floating formats carried in float64): the numerics' own
  primitives act on a leading batch axis element by element, so every rounded value is the one the
  call-by-call run produces (tests/test_precision.py compares them bit for bit). The layer MLP is
  token-wise, so it is applied to the stacked rows of a group at once; jobs share a group when their
  decode is the same function with equal captured values (e.g. blocks.decode_A(pad) for one pad).

Numerics of Python objects (exact, symbolic, mp) and jobs with rotary embeddings run one call at a time
through ``run_one_per_call``.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import groupby
from typing import Any, Iterable

import numpy as np

from attnsim.sim.engine.backend import get_backend
from attnsim.sim.engine.batch import CallBatch, Gathered, execute
from attnsim.sim.numerics import Array
from attnsim.sim.oracle import Oracle, OracleHead, head_flops, refusal, refused
from attnsim.sim.two_heads.jobs import HeadJob, run_one_per_call

CHUNK = 2048  # jobs evaluated together by the numerics' primitives (peak memory about CHUNK · n² per array)


def run_batched(oracle: Oracle, jobs: Iterable[HeadJob], backend: str = "numpy") -> list[Array]:
    """Every job as its own (checked, recorded) oracle call, all in one round, evaluated in stacked groups."""
    jobs = list(jobs)
    if any(job.rope_dims or job.Z.dtype == object for job in jobs):
        return run_one_per_call(oracle, jobs)
    if not jobs:
        return []
    for job in jobs:
        n, width = job.Z.shape
        why = refusal(oracle.spec, length=n, layers=1, width=width,
                      heads=(OracleHead(job.WQ, job.WK, job.WV, job.rope_dims),))
        if why is not None:
            raise refused(oracle.spec, job.tag, why)
    oracle.round += 1
    if oracle.nm.name == "float64":
        results = _run_on_engine(oracle, jobs, backend)
    else:
        results = _run_in_numerics(oracle, jobs)
    _record(oracle, jobs)
    return results


def _record(oracle: Oracle, jobs: list[HeadJob]) -> None:
    """The jobs' ledger entries, in job order; a run of equal (tag, shape, flops) is one entry."""
    def key(job: HeadJob) -> tuple[str, tuple[int, int], int]:
        n, width = job.Z.shape
        return job.tag, (n, width), head_flops(n, width, job.WQ.shape[1], job.WV.shape[1])

    for (tag, shape, flops), run in groupby(jobs, key):
        calls = sum(1 for _ in run)
        oracle.ledger.record("oracle", tag, round=oracle.round, shape=shape, flops=calls * flops, amount=calls)


def _check_output(oracle: Oracle, job: HeadJob, y: Array) -> Array:
    why = refusal(oracle.spec, output=y.shape[-1])
    if why is not None:
        raise refused(oracle.spec, job.tag, why)
    return y


def _run_on_engine(oracle: Oracle, jobs: list[HeadJob], backend: str) -> list[Array]:
    """float64: jobs sharing input shape and weight arrays as one engine batch each."""
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
        out = execute(CallBatch(first.tag, inputs, first.WQ, first.WK, first.WV), {"Z": Z}, be, oracle.spec.causal)
        for j, i in enumerate(idx):
            y = jobs[i].decode(oracle.nm, out[j]) if jobs[i].decode is not None else out[j]
            results[i] = _check_output(oracle, jobs[i], y)
    return results  # type: ignore[return-value]


def _decode_key(f: Any) -> Any:
    if f is None:
        return None
    cells = tuple(c.cell_contents for c in (f.__closure__ or ()))
    try:
        hash(cells)
    except TypeError:
        return id(f)
    return (f.__code__, cells)


def _run_in_numerics(oracle: Oracle, jobs: list[HeadJob]) -> list[Array]:
    """Array numerics: jobs of equal shapes and decode stacked, CHUNK at a time, through the numerics."""
    nm = oracle.nm
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, job in enumerate(jobs):
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
            _check_output(oracle, part[0], H)
            for j, i in enumerate(idx[s:s + CHUNK]):
                out[i] = H[j]
    return out  # type: ignore[return-value]
