"""A long-context GPT-2 simulated by short attention calls on torch SDPA (not a test).

A GPT-2-small-shaped model (E = 768, 12 heads, 12 layers) with random weights — built from a
``GPT2Config``, nothing downloaded — is imported as attnsim's large transformer
(``attnsim.sim.torch.model_import.from_gpt2``), the import is verified against the torch forward on a
short prefix (≤ 1e-10 row-wise relative), and the model is then simulated at sequence length N
through a causal oracle of length M + 1 whose calls run on ``scaled_dot_product_attention``
(``attnsim.sim.torch.oracle.TorchOracle``; Theorem 3.5's causal construction ``attnsim.sim.two_heads.causal``
with the fused scheme, n² calls per head and layer).
It prints the calls, the times and the agreement with the direct torch forward.

    python examples/gpt2_long_context.py                      # N = 8192, M = 512, 12 layers
    python examples/gpt2_long_context.py --N 2048 --layers 2  # minutes on two CPU cores

Needs the torch extra: ``pip install -e '.[torch]'``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


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
    a = ap.parse_args()

    import torch
    from transformers import GPT2Config, GPT2Model

    from attnsim.sim.numerics import get_numerics
    from attnsim.sim.oracle import OracleSpec
    from attnsim.sim.torch.model_import import from_gpt2, relative_error
    from attnsim.sim.torch.oracle import TorchOracle
    from attnsim.sim.two_heads.causal import simulate
    from attnsim.sim.two_heads.jobs import run_one_per_call

    torch.manual_seed(a.seed)
    cfg = GPT2Config(n_embd=a.embd, n_head=a.heads, n_layer=a.layers, n_positions=a.N, vocab_size=16,
                     bos_token_id=0, eos_token_id=0, attn_implementation="sdpa")
    model = GPT2Model(cfg).double().eval()
    x = np.random.default_rng(a.seed).standard_normal((a.N, a.embd)) * 0.1

    probe = min(a.N, 256)
    err_import = from_gpt2(model, probe).verify(x[:probe])
    print(f"import verified on the first {probe} tokens: reference vs torch {err_import:.2e} (row-wise relative)")

    imported = from_gpt2(model, a.N)
    spec = imported.spec
    t0 = time.perf_counter()
    ref = imported.torch_forward(x)
    t_direct = time.perf_counter() - t0

    nm = get_numerics("float64", a.seed)
    oracle = TorchOracle(OracleSpec(max_len=a.M + 1, dim=2 * spec.m + 2, causal=True), nm, device=a.device)
    def runner(oracle, jobs):  # one round per layer; say when each ends (the full run takes many minutes)
        out = run_one_per_call(oracle, jobs)
        print(f"  layer {oracle.round}/{a.layers}: {len(out)} calls, {time.perf_counter() - t0:.0f} s", flush=True)
        return out

    t0 = time.perf_counter()
    Y = simulate(spec, imported.weights, imported.model_input(x), oracle, b=a.M, scheme="fused", runner=runner,
                 stream=True)
    t_sim = time.perf_counter() - t0

    err = relative_error(Y, ref)
    n = a.N // a.M
    print(f"GPT-2 shape: E={a.embd}, H={a.heads}, L={a.layers}; N={a.N}, oracle length M+1={a.M + 1}, "
          f"head block width m={spec.m}, oracle dim {oracle.spec.dim}")
    print(f"oracle calls: {oracle.ledger.total('oracle')} (= n^2·H·L with n = {n}: {n * n * a.heads * a.layers}), "
          f"rounds: {oracle.ledger.rounds()}, longest call {oracle.ledger.max_shape()}")
    print(f"time: direct torch forward {t_direct:.1f} s, simulation {t_sim:.1f} s (ratio {t_sim / t_direct:.2f})")
    print(f"agreement with the direct torch forward: {err:.2e} row-wise relative = {-np.log2(err):.1f} bits")


if __name__ == "__main__":
    main()
