"""Bench figure: the fused simulation on the torch oracle / direct torch SDPA.

Both sides compute one attention head of length N and width d in float64 on the CPU, measured in
the same run (interleaved repetitions, median), never in a timed test:

* **direct** — q, k, v = X W^Q, X W^K, X W^V and one ``scaled_dot_product_attention`` call;
* **simulation** — two_heads.thm_3_4 with H = L = H' = L' = 1 (= Lemma 3.1, fused scheme: one call
  per block pair) through an oracle of length M + 1 whose calls run on torch SDPA: the batched
  engine (``attnsim.sim.engine``) with :class:`~attnsim.sim.torch.backend.TorchBackend`
  when it is installed, else ``worst_case.simulate`` with :class:`~attnsim.sim.torch.oracle.TorchOracle`.
  The time covers everything: building the block inputs, the calls, and the combination (eq. 1).

The target of the issue is ratio ≤ 1.5 at N = 8192, M = 512, d = 64.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import OracleSpec

TARGET = 1.5


def _case(N: int, d: int, seed: int) -> tuple[TransformerSpec, Weights, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    W = [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(3)]
    spec = TransformerSpec(N=N, d=d)
    return spec, Weights((LayerWeights((HeadWeights(W[0] / np.sqrt(d), W[1], W[2]),)),)), X


def _simulator(engine: str, spec: TransformerSpec, weights: Weights, M: int) -> Callable[[np.ndarray], Any]:
    nm = get_numerics("float64", 0)
    ospec = OracleSpec(max_len=M + 1, dim=2 * spec.d + 2)
    if engine == "engine":
        from attnsim.sim.engine.schedulers import Serial
        from attnsim.sim.engine.simulate import simulate as engine_simulate
        from attnsim.sim.oracle import Oracle
        from attnsim.sim.torch.backend import register

        register()
        return lambda X: engine_simulate(spec, weights, X, Oracle(ospec, nm), b=M, scheme="fused",
                                         scheduler=Serial("torch"))
    from attnsim.sim.torch.oracle import TorchOracle
    from attnsim.sim.two_heads.worst_case import simulate

    return lambda X: simulate(spec, weights, X, TorchOracle(ospec, nm), b=M, scheme="fused")


def default_engine() -> str:
    """``engine`` when the batched engine is installed, else ``torch-oracle``."""
    try:
        import attnsim.sim.engine.simulate  # noqa: F401
    except ImportError:
        return "torch-oracle"
    return "engine"


def torch_sdpa_ratio(N: int = 8192, M: int = 512, d: int = 64, repeats: int = 3, seed: int = 0,
                     engine: str | None = None) -> dict[str, Any]:
    """Median times of the simulation and of direct SDPA, their ratio, and the output agreement in bits."""
    for name, v in (("N", N), ("M", M), ("d", d), ("repeats", repeats)):
        if v < 1:
            raise AttnsimError(f"--{name}: must be >= 1, got {v}")
    try:
        import torch
    except ImportError:
        raise AttnsimError("attnsim bench --torch needs PyTorch: pip install -e '.[torch]'") from None
    engine = engine or default_engine()
    if engine not in ("engine", "torch-oracle"):
        raise AttnsimError(f"--engine: must be engine or torch-oracle, got {engine!r}")
    spec, weights, X = _case(N, d, seed)
    hw = weights.layers[0].heads[0]
    Xt = torch.from_numpy(X)
    Wt = [torch.from_numpy(np.asarray(w, dtype=np.float64)) for w in (hw.WQ, hw.WK, hw.WV)]

    def direct() -> np.ndarray:
        q, k, v = (Xt @ w for w in Wt)
        # (1, 1, N, d): the 4-d form takes torch's fused CPU kernel, as the oracle's calls do
        return torch.nn.functional.scaled_dot_product_attention(q[None, None], k[None, None], v[None, None],
                                                                scale=1.0)[0, 0].numpy()

    sim = _simulator(engine, spec, weights, M)
    t_direct, t_sim, Y, ref = [], [], None, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        ref = direct()
        t1 = time.perf_counter()
        Y = sim(X)
        t2 = time.perf_counter()
        t_direct.append(t1 - t0)
        t_sim.append(t2 - t1)
    err = float(np.max(np.linalg.norm(Y - ref, axis=1) / np.linalg.norm(ref, axis=1)))
    td, ts = statistics.median(t_direct), statistics.median(t_sim)
    paired = [s / d for s, d in zip(t_sim, t_direct)]
    return {"figure": "fused thm_3_4 on torch SDPA / direct torch SDPA", "N": N, "M": M, "d": d,
            "engine": engine, "repeats": repeats, "threads": torch.get_num_threads(),
            "direct_s": td, "simulation_s": ts, "ratio": ts / td, "target": TARGET,
            "ratio_min": min(paired), "ratio_max": max(paired),
            "meets_target": ts / td <= TARGET, "error_bits": float(-np.log2(err)) if err > 0 else float("inf")}
