"""A whole imported model simulated through oracle calls against its direct torch forward.

A GPT-2-shaped model with random weights (built from a ``GPT2Config``, nothing downloaded) is run
three ways at the same dtype (float64) and thread count: its own torch forward; Theorem 3.5's causal
construction (fused scheme) with every call on the torch SDPA oracle, outputs streamed into the
combination (``sink_runner``); and the same calls batched by ``attnsim.sim.engine.causal``, with the
heads of a layer on the same number of threads as the direct forward. Each side runs in a fresh
process so that its peak resident memory is its own; the figures are the ratios of the times to the
direct forward's, with every peak and the agreement in bits.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.torch.model_import import relative_error
from attnsim.verify.procs import in_fresh_process, peak_rss


def gpt2_model(N: int, embd: int, heads: int, layers: int, seed: int) -> Any:
    """A GPT-2-shaped model with random weights drawn from ``seed`` (float64, eval mode)."""
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(seed)
    cfg = GPT2Config(n_embd=embd, n_head=heads, n_layer=layers, n_positions=N, vocab_size=16,
                     bos_token_id=0, eos_token_id=0, attn_implementation="sdpa")
    return GPT2Model(cfg).double().eval()


def _side(which: str, N: int, M: int, embd: int, heads: int, layers: int, seed: int, threads: int,
          repeats: int, warm: bool) -> tuple[list[float], int, np.ndarray]:
    """Run one side ``repeats`` times in this (child) process, after one untimed run when ``warm``:
    (the timed runs' seconds, peak RSS bytes, output)."""
    import torch

    torch.set_num_threads(threads)
    from attnsim.sim.torch.model_import import from_gpt2

    imported = from_gpt2(gpt2_model(N, embd, heads, layers, seed), N)
    x = np.random.default_rng(seed).standard_normal((N, embd)) * 0.1
    probe = torch.zeros((1, 2, M, 8), dtype=torch.float64)  # first-call costs (kernels, thread pool) not timed
    torch.nn.functional.scaled_dot_product_attention(probe, probe, probe, is_causal=True)
    (probe[0, 0] @ probe[0, 0].T).sum()
    from attnsim.sim.engine.causal import simulate as batched
    from attnsim.sim.numerics import get_numerics
    from attnsim.sim.oracle import Oracle, OracleSpec
    from attnsim.sim.torch.oracle import TorchOracle
    from attnsim.sim.two_heads.causal import simulate
    from attnsim.sim.two_heads.jobs import stream_one_per_call

    spec, nm = imported.spec, get_numerics("float64", seed)
    ospec = OracleSpec(max_len=M + 1, dim=2 * spec.m + 2, causal=True)

    def simulation() -> Any:
        return simulate(spec, imported.weights, imported.model_input(x), TorchOracle(ospec, nm), b=M,
                        scheme="fused", sink_runner=stream_one_per_call)

    def engine() -> Any:
        return batched(spec, imported.weights, imported.model_input(x), Oracle(ospec, nm), b=M, threads=threads)

    run = {"direct": lambda: imported.torch_forward(x), "simulation": simulation, "engine": engine}[which]
    if warm:  # untimed, as every bench timing: first-touch pages, kernel and thread-pool start-up
        run()
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        Y = run()
        seconds.append(time.perf_counter() - t0)
    return seconds, peak_rss(), np.asarray(Y)


def run_side(which: str, *args: Any, repeats: int = 1) -> tuple[float, int, np.ndarray]:
    """One side in a fresh process — "direct" (the torch forward), "simulation" (Thm 3.5's calls one by
    one on :class:`TorchOracle`) or "engine" (the same calls batched, ``attnsim.sim.engine.causal``):
    (median seconds of ``repeats`` runs, its peak RSS in bytes, output)."""
    seconds, rss, out = run_side_samples(which, *args, repeats=repeats)
    return statistics.median(seconds), rss, out


def run_side_samples(which: str, *args: Any, repeats: int = 1,
                     warm: bool = False) -> tuple[list[float], int, np.ndarray]:
    """:func:`run_side` with the seconds of every run."""
    return in_fresh_process(_side, which, *args, repeats, warm)


#: the batched engine's whole-model time over the direct forward's that the bench holds it to
WHOLE_MODEL_TARGET = 1.2


def whole_model_ratio(N: int = 2048, M: int = 256, embd: int = 768, heads: int = 12, layers: int = 12,
                      seed: int = 0, threads: int | None = None, repeats: int = 1) -> dict[str, Any]:
    """Simulation time / direct forward time for a GPT-2-shaped model, each side's peak RSS, agreement.

    The headline figure is the batched engine's (``ratio``, ``seconds``, ``peak_rss``, ``error_bits``,
    held to ``target``); ``call_by_call`` holds the same figures for the calls one by one on
    :class:`TorchOracle`. Each side runs once untimed, then ``repeats`` times, in its own process; a
    ratio is of the medians, and its spread (``ratio_min``, ``ratio_max``) pairs the fastest run of one side with the
    slowest of the other."""
    try:
        import torch
    except ImportError:
        raise AttnsimError("the whole-model figure needs PyTorch: pip install -e '.[torch]'") from None
    if N % M:
        raise AttnsimError(f"--N: the whole-model figure needs N divisible by M, got N={N}, M={M}")
    threads = threads or torch.get_num_threads()
    args = (N, M, embd, heads, layers, seed, threads)
    if repeats < 1:
        raise AttnsimError(f"--repeats: must be >= 1, got {repeats}")
    s_direct, rss_direct, ref = run_side_samples("direct", *args, repeats=repeats, warm=True)
    t_direct = statistics.median(s_direct)

    def versus_direct(which: str) -> dict[str, Any]:
        seconds, rss, Y = run_side_samples(which, *args, repeats=repeats, warm=True)
        err = relative_error(Y, ref)
        return {"seconds": statistics.median(seconds), "ratio": statistics.median(seconds) / t_direct,
                "ratio_min": min(seconds) / max(s_direct), "ratio_max": max(seconds) / min(s_direct),
                "peak_rss": rss, "error_bits": float(-np.log2(err)) if err > 0 else float("inf")}

    eng, sim = versus_direct("engine"), versus_direct("simulation")
    n = N // M
    return {"figure": "GPT-2-shaped model: Thm 3.5 fused, batched by the engine / direct torch forward",
            "N": N, "M": M, "embd": embd, "heads": heads, "layers": layers, "threads": threads,
            "calls": n * n * heads * layers, "repeats": repeats, "target": WHOLE_MODEL_TARGET,
            "direct_s": t_direct, "direct_peak_rss": rss_direct, **eng, "call_by_call": sim}
