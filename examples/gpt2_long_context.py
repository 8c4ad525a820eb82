"""A long-context GPT-2 simulated by short attention calls on torch SDPA (not a test).

A GPT-2-small-shaped model (E = 768, 12 heads, 12 layers) with random weights — built from a
``GPT2Config``, nothing downloaded — is imported as attnsim's large transformer
(``attnsim.sim.torch.model_import.from_gpt2``), the import is verified against the torch forward on a
short prefix (≤ 1e-10 row-wise relative), and the model is then simulated at sequence length N
through a causal oracle of length M + 1 whose calls run on ``scaled_dot_product_attention``
(``attnsim.sim.torch.oracle.TorchOracle``; Theorem 3.5's causal construction ``attnsim.sim.two_heads.causal``
with the fused scheme, n² calls per head and layer).
Each call's output is folded into the running sums of eq. (1) the moment the oracle returns it
(``sink_runner``), so a layer holds O(N·d) state plus the calls in flight, never a round's outputs.
It prints the calls, the times, the peak resident memory and the agreement with the direct torch forward.
With ``--batched`` the same calls run batched by ``attnsim.sim.engine.causal`` (numpy, float64,
the heads of a layer side by side) instead of one by one on the torch oracle.

    python examples/gpt2_long_context.py                      # N = 8192, M = 512, 12 layers
    python examples/gpt2_long_context.py --batched            # the same calls, batched
    python examples/gpt2_long_context.py --N 2048 --layers 2  # minutes on two CPU cores

Needs the torch extra: ``pip install -e '.[torch]'``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def peak_rss_mib() -> float:
    """The largest resident set this process has had, in MiB."""
    from attnsim.verify.procs import peak_rss

    return peak_rss() / 2**20


def release_free_memory() -> None:
    """Hand memory freed by the last layer back to the OS (glibc keeps it per thread arena otherwise,
    and the resident set then counts a layer's temporaries twice)."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def main() -> None:
    """Parse the command line, simulate the model on a long context and print the agreement in bits."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, default=8192)
    ap.add_argument("--M", type=int, default=512)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--embd", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda when a GPU is present")
    ap.add_argument("--batched", action="store_true",
                    help="run the calls batched by attnsim.sim.engine.causal instead of one by one on the torch oracle")
    ap.add_argument("--reference", default=None,
                    help="an .npz file keeping the direct forward's output, time and peak RSS for these settings "
                         "(computed and written when absent, reused when its settings match)")
    a = ap.parse_args()

    import torch

    from attnsim.sim.engine.causal import simulate as batched
    from attnsim.sim.numerics import get_numerics
    from attnsim.sim.oracle import Oracle, OracleSpec
    from attnsim.sim.torch.model_import import from_gpt2, relative_error
    from attnsim.sim.torch.oracle import TorchOracle
    from attnsim.sim.two_heads.causal import simulate
    from attnsim.sim.two_heads.jobs import stream_one_per_call
    from attnsim.verify.bench.whole_model import gpt2_model, run_side

    # The direct torch forward runs in its own process (same seed, same weights, same input), so
    # the peak memory printed below is the simulation's, not the direct forward's N × N work.
    threads = torch.get_num_threads()
    settings = np.array([a.N, a.embd, a.heads, a.layers, a.seed])
    cached = None
    if a.reference and os.path.exists(a.reference):
        with np.load(a.reference) as f:
            if np.array_equal(f["settings"], settings):
                cached = (float(f["seconds"]), int(f["rss"]), f["output"])
    if cached is None:
        t_direct, rss_direct, ref = run_side("direct", a.N, a.M, a.embd, a.heads, a.layers, a.seed, threads)
        if a.reference:
            np.savez(a.reference, settings=settings, seconds=t_direct, rss=rss_direct, output=ref)
    else:
        t_direct, rss_direct, ref = cached
        print(f"direct forward read from {a.reference} (same N, E, H, L, seed)")
    print(f"direct torch forward (own process): {t_direct:.1f} s, peak RSS {rss_direct / 2**20:.0f} MiB")

    model = gpt2_model(a.N, a.embd, a.heads, a.layers, a.seed)
    x = np.random.default_rng(a.seed).standard_normal((a.N, a.embd)) * 0.1
    probe = min(a.N, 256)
    err_import = from_gpt2(model, probe).verify(x[:probe])
    print(f"import verified on the first {probe} tokens: reference vs torch {err_import:.2e} (row-wise relative)")

    del err_import
    release_free_memory()
    imported = from_gpt2(model, a.N)
    spec = imported.spec
    nm = get_numerics("float64", a.seed)
    ospec = OracleSpec(max_len=a.M + 1, dim=2 * spec.m + 2, causal=True)
    oracle = Oracle(ospec, nm) if a.batched else TorchOracle(ospec, nm, device=a.device)

    def sink_runner(oracle, jobs, sink):  # one round per layer; say when each ends (the full run takes minutes)
        n_calls = stream_one_per_call(oracle, jobs, sink)
        release_free_memory()
        print(f"  layer {oracle.round}/{a.layers}: {n_calls} calls, {time.perf_counter() - t0:.0f} s, "
              f"peak RSS so far {peak_rss_mib():.0f} MiB", flush=True)
        return n_calls

    t0 = time.perf_counter()
    if a.batched:
        Y = batched(spec, imported.weights, imported.model_input(x), oracle, b=a.M, threads=threads)
    else:
        Y = simulate(spec, imported.weights, imported.model_input(x), oracle, b=a.M, scheme="fused",
                     sink_runner=sink_runner)
    t_sim = time.perf_counter() - t0

    err = relative_error(Y, ref)
    n = a.N // a.M
    print(f"GPT-2 shape: E={a.embd}, H={a.heads}, L={a.layers}; N={a.N}, oracle length M+1={a.M + 1}, "
          f"head block width m={spec.m}, oracle dim {oracle.spec.dim}")
    print(f"oracle calls: {oracle.ledger.total('oracle')} (= n^2·H·L with n = {n}: {n * n * a.heads * a.layers}), "
          f"rounds: {oracle.ledger.rounds()}, longest call {oracle.ledger.max_shape()}")
    path = "batched by the engine" if a.batched else "call by call on the torch oracle"
    print(f"time: direct torch forward {t_direct:.1f} s, simulation ({path}) {t_sim:.1f} s "
          f"(ratio {t_sim / t_direct:.2f})")
    print(f"agreement with the direct torch forward: {err:.2e} row-wise relative = {-np.log2(err):.1f} bits")
    print(f"peak RSS: simulation (this process) {peak_rss_mib():.0f} MiB, direct forward {rss_direct / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
