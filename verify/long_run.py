"""One long layer on the batched engine: N tokens in O(N·M) memory, with sampled rows checked.

``run_layer`` builds a random one-layer float64 model (inputs N(0, 1); W^Q entries N(0, 1)/m and
W^K, W^V entries N(0, 1)/√m, so that scores are O(1) — the 1/√m scaling folded into W^Q), runs
two_heads.lemma_3_1 (paper or fused scheme) on :mod:`attnsim.sim.engine` under a serial or Dask
scheduler, reads the calls and rounds off the ledger, and checks ``check_rows`` rows chosen from
the seed against a direct per-row computation of attention in extended precision
(``numpy.longdouble``; only those rows' scores exist, never N × N). Errors are row-wise relative
L2, in bits (two_heads §1.1). Peak memory is the process's peak resident set size.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from typing import Any

import numpy as np

from attnsim.sim.engine.schedulers import DaskScheduler, make_scheduler
from attnsim.sim.engine.simulate import simulate
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.verify.dask_local import local_cluster, quiet_dask_logs
from attnsim.verify.procs import peak_rss
from attnsim.verify.registry import UsageError

SCHEMES = ("fused", "paper")


def random_layer(N: int, d: int, H: int, seed: int) -> tuple[TransformerSpec, Weights, np.ndarray]:
    """A random float64 layer of H heads on N tokens of width d."""
    spec = TransformerSpec(N, d, H, 1)
    rng = np.random.default_rng(seed)
    m = spec.m
    heads = tuple(HeadWeights(rng.standard_normal((m, m)) / m, rng.standard_normal((m, m)) / np.sqrt(m),
                              rng.standard_normal((m, m)) / np.sqrt(m)) for _ in range(H))
    return spec, Weights((LayerWeights(heads),)), rng.standard_normal((N, d))


def direct_rows(spec: TransformerSpec, weights: Weights, X: np.ndarray, rows: np.ndarray,
                chunk: int = 32) -> np.ndarray:
    """Attention output of the given rows, computed directly in numpy.longdouble."""
    Xl = X.astype(np.longdouble)
    out = np.empty((len(rows), spec.d), dtype=np.longdouble)
    for h, hw in enumerate(weights.layers[0].heads):
        cols = slice(h * spec.m, (h + 1) * spec.m)
        Xh = Xl[:, cols]
        K = Xh @ np.asarray(hw.WK, dtype=np.longdouble)
        V = Xh @ np.asarray(hw.WV, dtype=np.longdouble)
        Q = Xh[rows] @ np.asarray(hw.WQ, dtype=np.longdouble)
        for s in range(0, len(rows), chunk):
            sc = Q[s:s + chunk] @ K.T
            sc -= sc.max(axis=1, keepdims=True)
            w = np.exp(sc)
            out[s:s + chunk, cols] = (w @ V) / w.sum(axis=1, keepdims=True)
    return out


def error_bits(Y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-row bits of agreement, -log2(||y - t|| / ||t||) (inf where equal)."""
    diff = np.linalg.norm((Y.astype(np.longdouble) - ref).astype(np.float64), axis=1)
    norm = np.linalg.norm(ref.astype(np.float64), axis=1)
    rel = diff / np.where(norm > 0, norm, 1.0)
    with np.errstate(divide="ignore"):
        return -np.log2(rel)


def validate(N: int, M: int, d: int, H: int, check_rows: int, scheme: str, workers: int) -> None:
    """Raise a usage error naming the first bad parameter of a long run."""
    for name, v, lo in (("N", N, 1), ("M", M, 2), ("d", d, 1), ("H", H, 1), ("workers", workers, 1)):
        if v < lo:
            raise UsageError(f"--{name}: must be >= {lo}, got {v}")
    if d % H:
        raise UsageError(f"--H: the number of heads H={H} must divide d={d}")
    if not 0 <= check_rows <= N:
        raise UsageError(f"--check-rows: must be between 0 and N={N}, got {check_rows}")
    if scheme not in SCHEMES:
        raise UsageError(f"--scheme: must be one of {SCHEMES}, got {scheme!r}")


def run_layer(N: int, M: int, d: int, *, H: int = 1, scheme: str = "fused", scheduler: str = "serial",
              workers: int = 2, check_rows: int = 0, seed: int = 0) -> tuple[dict[str, Any], np.ndarray]:
    """Simulate one layer; returns a record (time, memory, calls, check) and the output."""
    validate(N, M, d, H, check_rows, scheme, workers)
    spec, weights, X = random_layer(N, d, H, seed)
    oracle = Oracle(OracleSpec(M + 1, dim=2 * spec.m + 2), get_numerics("float64", seed))
    with ExitStack() as stack:
        if scheduler == "local":  # quiet on an interrupt; its workers die with this process (see dask_local)
            sched = DaskScheduler(client=stack.enter_context(local_cluster(workers)))
        else:
            sched = make_scheduler(scheduler, workers)
        if isinstance(sched, DaskScheduler):
            stack.enter_context(quiet_dask_logs())
            stack.callback(sched.close)
        t0 = time.perf_counter()
        Y = simulate(spec, weights, X, oracle, b=M, scheme=scheme, scheduler=sched)
        seconds = time.perf_counter() - t0
    led = oracle.ledger
    record: dict[str, Any] = {
        "N": N, "M": M, "d": d, "H": H, "scheme": scheme, "scheduler": scheduler, "workers": workers,
        "seed": seed, "oracle": oracle.spec.describe(), "calls": led.total("oracle"),
        "calls_by_tag": led.by_tag("oracle"), "rounds": led.rounds("oracle"),
        "seconds": seconds, "peak_rss_mib": peak_rss() / 2**20,
        "direct_scores_gib": H * N * N * 8 / 2**30,
    }
    if check_rows:
        rows = np.sort(np.random.default_rng(seed + 1).choice(N, size=check_rows, replace=False))
        bits = error_bits(Y[rows], direct_rows(spec, weights, X, rows))
        record.update(check_rows=check_rows, min_error_bits=float(bits.min()),
                      median_error_bits=float(np.median(bits)))
    return record, Y
