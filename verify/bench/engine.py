"""``attnsim bench``: every speed figure as a ratio of two timings taken in the same run.

Timings are medians of ``repeats`` (≥ 5) runs, and the two sides of a ratio are run alternately, so
a machine's load or clock drift affects both alike. Figures:

* ``gemm``            numpy float64 GEMM (n × n · n × n), GFLOP/s — the machine's yardstick;
* ``fused/direct``    two_heads.lemma_3_1, fused scheme, on the engine vs direct numpy attention
                      (one layer, one head; both get the same X and weights; target ≤ 1.2 at
                      N = 4096, M = 256, d = 64; the float64 figures take ``FLOAT_RUNS`` ×
                      ``repeats`` runs);
* ``paper/direct``    the same with the paper's two-call scheme;
* ``fused/paper``;
* ``sim/torch``       the fused scheme vs ``torch.nn.functional.scaled_dot_product_attention`` on CPU
                      in float64 (only when torch is installed; otherwise a stated skip);
* ``fraction/flint``  exact arithmetic: the ``fraction`` numerics over the ``exact`` (python-flint)
                      numerics, for direct attention (``reference``) and for the Lemma 3.1 fused
                      simulation, both at N = 128, M = 16, d = 4 (outputs asserted equal);
* ``torch oracle``    fused Thm 3.4 with every call's attention on torch SDPA vs one direct SDPA call,
                      float64, CPU, N = 8192, M = 512, d = 64 (``torch_sdpa.torch_sdpa_ratio``), twice:
                      batched by the engine (target ≤ 1.5) and call by call on ``TorchOracle`` (no
                      target); skipped with a reason without torch;
* ``whole model``     a GPT-2-shaped model through Thm 3.5's calls, call by call on ``TorchOracle`` and
                      batched by the engine, vs its direct torch forward, each side in its own
                      process, with every peak resident set;
* ``dask/serial``     the fused scheme on a 2-worker Dask LocalCluster vs the serial engine
                      (cluster start-up not timed).

Achieved GFLOP/s count attention as 4·N²·d flops per head (halved for causal masks: none here),
against the GEMM rate measured at start-up. Speed is only ever reported as such ratios.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from typing import Any, Callable

import numpy as np

from attnsim.sim.engine.schedulers import DaskScheduler, Serial
from attnsim.sim.engine.scratch import scratch_space
from attnsim.sim.engine.simulate import simulate
from attnsim.sim.masks import Full
from attnsim.sim.model import reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import worst_case
from attnsim.verify.cases import random_case
from attnsim.verify.dask_local import local_cluster
from attnsim.verify.long_run import random_layer


def timed_samples(fns: dict[str, Callable[[], Any]], repeats: int, warm: bool = True) -> dict[str, list[float]]:
    """Seconds of each run of each function, the functions run alternately ``repeats`` times (after
    one untimed warm-up run each when ``warm``), so the i-th runs of two functions saw the same load.

    Round i starts at the i-th function (mod their number), so that no function always runs right
    after the same other one: a run that follows a different workload can be slower (caches, the
    allocator's free memory), and a fixed order would charge that to one side only."""
    for fn in fns.values() if warm else ():  # warm-up (imports, caches, page faults)
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for i in range(repeats):
        for k in names[i % len(names):] + names[:i % len(names)]:
            t0 = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t0)
    return times


def timed(fns: dict[str, Callable[[], Any]], repeats: int, warm: bool = True) -> dict[str, float]:
    """Median seconds of each function (see :func:`timed_samples`)."""
    return {k: statistics.median(v) for k, v in timed_samples(fns, repeats, warm).items()}


def ratio_spread(samples: dict[str, list[float]], a: str, b: str) -> dict[str, float]:
    """Median, min and max of the paired ratios a_i / b_i of alternating runs."""
    r = [x / y for x, y in zip(samples[a], samples[b])]
    return {"median": statistics.median(r), "min": min(r), "max": max(r)}


def gemm_gflops(n: int, repeats: int) -> float:
    """This machine's float64 GEMM speed on n × n matrices in GFLOP/s (median of ``repeats`` runs)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    return 2 * n**3 / timed({"gemm": lambda: a @ b}, repeats)["gemm"] / 1e9


def direct_attention(X: np.ndarray, WQ: np.ndarray, WK: np.ndarray, WV: np.ndarray) -> np.ndarray:
    """softmax(Q Kᵀ) V written plainly in numpy (the baseline)."""
    q, k, v = X @ WQ, X @ WK, X @ WV
    s = q @ k.T
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    return (s @ v) / s.sum(axis=1, keepdims=True)


def float_figures(N: int, M: int, d: int, repeats: int, threads: int = 1) -> dict[str, Any]:
    """Engine against direct attention at one size: times, ratios and memory.

    ``threads``: the engine's scheduler threads. The default, one batch at a time with BLAS on every
    core, is how the direct baseline uses the machine too; on two cores it was also the faster
    setting (fused/direct median 1.18–1.21 against 1.38–1.43 with two scheduler threads and
    single-threaded BLAS, 15 alternating runs, three times)."""
    spec, weights, X = random_layer(N, d, 1, 0)
    hw = weights.layers[0].heads[0]
    nm = get_numerics("float64", 0)
    serial = Serial(threads=threads)

    def sim(scheme: str, sched=serial) -> np.ndarray:
        return simulate(spec, weights, X, Oracle(OracleSpec(M + 1, dim=2 * d + 2), nm), b=M, scheme=scheme,
                        scheduler=sched)

    fns: dict[str, Callable[[], Any]] = {
        "direct": lambda: direct_attention(X, hw.WQ, hw.WK, hw.WV),
        "fused": lambda: sim("fused"),
        "paper": lambda: sim("paper"),
    }
    with scratch_space():  # the engine's scratch kept from run to run, as in a sweep of simulations
        samples = timed_samples(fns, repeats)
    t = {k: statistics.median(v) for k, v in samples.items()}
    flops = 4 * N * N * d
    out: dict[str, Any] = {
        "N": N, "M": M, "d": d, "scheduler_threads": threads, "runs": repeats,
        "target": FUSED_TARGET if (N, M, d) == TARGET_SIZE else None, "seconds": t,
        "spread": {"fused/direct": ratio_spread(samples, "fused", "direct"),
                   "paper/direct": ratio_spread(samples, "paper", "direct")},
        "fused/direct": t["fused"] / t["direct"], "paper/direct": t["paper"] / t["direct"],
        "fused/paper": t["fused"] / t["paper"],
        "gflops": {k: flops / v / 1e9 for k, v in t.items()},
    }
    out["torch"] = torch_figure(X, hw, t["fused"], repeats)
    return out


def torch_figure(X: np.ndarray, hw: Any, fused_seconds: float, repeats: int) -> dict[str, Any]:
    """The fused simulation on torch against one direct torch SDPA call (skipped without torch)."""
    try:
        import torch
    except ImportError:
        return {"skipped": "torch is not installed (pip install attnsim[torch])"}
    x = torch.from_numpy(X)
    wq, wk, wv = (torch.from_numpy(np.asarray(w, dtype=np.float64)) for w in (hw.WQ, hw.WK, hw.WV))

    def sdpa() -> Any:
        q, k, v = (x @ w for w in (wq, wk, wv))
        # attnsim has no 1/sqrt(d) scaling: scale=1; (1, 1, N, d) takes torch's fused CPU kernel
        return torch.nn.functional.scaled_dot_product_attention(q[None, None], k[None, None], v[None, None],
                                                                scale=1.0)

    t = timed({"sdpa": sdpa}, repeats)["sdpa"]
    return {"seconds": t, "sim/torch": fused_seconds / t, "threads": torch.get_num_threads()}


def exact_figures(N: int, M: int, d: int, repeats: int) -> dict[str, Any]:
    """fraction / flint at length N: direct attention (``reference``) and the Lemma 3.1 fused simulation.

    Both backends get the same case and the same base z (the default, 2); the simulation's outputs of
    the two are asserted to be the same rationals, so the ratio compares two runs of one computation.
    """
    case = random_case(N, d, 1, 1, Full(), seed=0)
    flint_nm, frac_nm = get_numerics("exact", 0), get_numerics("fraction", 0)
    Xs = {nm.name: nm.array(case.X, "X") for nm in (flint_nm, frac_nm)}
    outs: dict[str, np.ndarray] = {}

    def ref(nm):
        return lambda: reference(case.spec, case.weights, Xs[nm.name], nm)

    def sim(nm):
        def run() -> None:
            outs[nm.name] = worst_case.simulate(case.spec, case.weights, Xs[nm.name],
                                                Oracle(OracleSpec(M + 1, dim=2 * d + 2), nm), b=M, scheme="fused")
        return run

    t_ref = timed({"flint": ref(flint_nm), "fraction": ref(frac_nm)}, repeats, warm=False)
    t_sim = timed({"flint": sim(flint_nm), "fraction": sim(frac_nm)}, repeats, warm=False)
    got = [flint_nm.to_fraction_or_float(x) for x in outs[flint_nm.name].reshape(-1)]
    if got != list(outs[frac_nm.name].reshape(-1)):
        raise RuntimeError("bench: the exact (flint) and fraction simulations gave different rationals")
    return {"N": N, "M": M, "d": d, "z": str(flint_nm.z_fraction), "reference_seconds": t_ref,
            "simulation_seconds": t_sim, "reference fraction/flint": t_ref["fraction"] / t_ref["flint"],
            "simulation fraction/flint": t_sim["fraction"] / t_sim["flint"]}


def dask_figure(N: int, M: int, d: int, repeats: int, workers: int = 2) -> dict[str, Any]:
    """The engine on a local Dask cluster against the serial engine."""
    spec, weights, X = random_layer(N, d, 1, 0)
    nm = get_numerics("float64", 0)

    def sim(sched) -> Callable[[], Any]:
        return lambda: simulate(spec, weights, X, Oracle(OracleSpec(M + 1, dim=2 * d + 2), nm), b=M,
                                scheme="fused", scheduler=sched)

    with local_cluster(workers) as client, DaskScheduler(client=client) as dask:
        t = timed({"serial": sim(Serial(threads=workers)), "dask": sim(dask)}, repeats)
    return {"N": N, "M": M, "d": d, "workers": workers, "seconds": t, "dask/serial": t["dask"] / t["serial"]}


#: the float64 figures run this many times ``repeats`` alternating runs: each takes about 0.1 s, and
#: a median of 5 such short runs moved by ±10% between consecutive benches on a 2-core machine
FLOAT_RUNS = 3

#: the fused engine's time over direct attention's that the bench holds it to, at the quick size
FUSED_TARGET = 1.2
TARGET_SIZE = (4096, 256, 64)


def bench_sizes(quick: bool) -> list[tuple[int, int, int]]:
    """(N, M, d) of the float64 figures."""
    return [(4096, 256, 64)] if quick else [(4096, 256, 64), (4096, 128, 64), (8192, 512, 64)]


def bench_steps(quick: bool, dask: bool) -> int:
    """How many figures :func:`run_bench` measures (for a progress bar)."""
    return 5 + len(bench_sizes(quick)) + int(dask)  # GEMM, sizes, exact, torch oracle, cost model, whole model


def run_bench(quick: bool = True, repeats: int = 5, dask: bool = True,
              step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every figure of ``attnsim bench``; ``step(name)`` is called as each one is done."""
    done = step or (lambda name: None)
    if repeats < 5:
        from attnsim.verify.registry import UsageError

        raise UsageError(f"--repeats: medians need at least 5 runs, got {repeats}")
    threads = os.cpu_count() or 1
    rec: dict[str, Any] = {
        "machine": {"cpus": threads, "platform": platform.platform(), "numpy": np.__version__,
                    "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"), "threads": thread_settings()},
        "repeats": repeats, "quick": quick,
        "gemm_gflops": gemm_gflops(1024 if quick else 2048, repeats),
    }
    done("numpy GEMM")
    rec["float64"] = []
    for N, M, d in bench_sizes(quick):  # a run takes a tenth of a second: FLOAT_RUNS times the repeats
        rec["float64"].append(float_figures(N, M, d, FLOAT_RUNS * repeats))
        done(f"float64 N={N} M={M}")
    rec["exact"] = exact_figures(128, 16, 4, repeats)
    done("exact")
    rec["torch_oracle"] = torch_oracle_figure(repeats, "engine")
    rec["torch_per_call"] = torch_oracle_figure(repeats, "torch-oracle")
    done("torch oracle")
    rec["cost_model"] = cost_model_figure(quick, repeats)
    done("cost model")
    rec["whole_model"] = whole_model_figure(quick)
    done("whole model")
    if dask:
        rec["dask"] = dask_figure(4096 if quick else 8192, 256, 64, repeats)
        done("Dask")
    return rec


def torch_oracle_figure(repeats: int, engine: str) -> dict[str, Any]:
    """Fused Thm 3.4 with every call's attention on torch SDPA / one direct SDPA call (N = 8192, M = 512).

    ``engine="engine"``: the batched engine with the torch backend (each block projected once per
    head, the calls of a key block as one SDPA call) — the figure held to its target;
    ``engine="torch-oracle"``: :class:`~attnsim.sim.torch.oracle.TorchOracle`, every call projected and
    run on its own input, as an oracle that sees nothing but its calls must.
    """
    try:
        import torch  # noqa: F401
    except ImportError:
        return {"skipped": "torch is not installed (pip install attnsim[torch])"}
    from attnsim.verify.bench.torch_sdpa import torch_sdpa_ratio

    return torch_sdpa_ratio(8192, 512, 64, repeats=repeats, engine=engine)


def thread_settings() -> dict[str, Any]:
    """The thread counts every timing ran with (BLAS pools, torch), printed beside the figures."""
    out: dict[str, Any] = {}
    try:
        from threadpoolctl import threadpool_info

        out["blas"] = {i.get("internal_api", "?"): i.get("num_threads") for i in threadpool_info()}
    except ImportError:
        out["blas"] = "threadpoolctl not installed"
    try:
        import torch

        out["torch"] = torch.get_num_threads()
    except ImportError:
        pass
    return out


def cost_model_figure(quick: bool, repeats: int) -> dict[str, Any]:
    """The fitted call time t(M) and the predicted against the measured time at a held-out N."""
    from attnsim.verify.bench.cost_model import isolated_cost_model

    return isolated_cost_model(quick, repeats)


def whole_model_figure(quick: bool) -> dict[str, Any]:
    """A GPT-2-shaped model through oracle calls / its direct torch forward (skipped without torch)."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return {"skipped": "torch and transformers are not installed (pip install attnsim[torch])"}
    from attnsim.verify.bench.whole_model import whole_model_ratio

    if quick:
        # the full figure's shape and sizes with 2 of its 12 layers: each layer costs the same, so the
        # ratio is the full one's, in a sixth of the time; runs of a second vary more, hence 5 of them
        return whole_model_ratio(N=2048, M=256, embd=768, heads=12, layers=2, repeats=5)
    return whole_model_ratio(N=2048, M=256, embd=768, heads=12, layers=12, repeats=3)
