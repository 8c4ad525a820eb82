"""Report material for two_heads: imported PyTorch models and FlexAttention block counts.

With torch absent the section states why it is skipped.
The imported-model table shows, per module kind, the row-wise relative error of the attnsim reference
against the torch forward (must be ≤ 1e-10) and the bits of agreement of the simulation through the
torch oracle (Lemma 3.1 fused / Thm 3.4 with one head per call for unmasked models, Thm 3.5 with the fused
scheme for GPT-2) with the torch forward.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def imported_models_table(seed: int = 0) -> str:
    """A table of imported torch modules (MultiheadAttention, GPT-2): import error, and the simulation on the
    torch oracle against torch's forward, in bits."""
    import torch
    from transformers import GPT2Config, GPT2Model

    from attnsim.sim.numerics import get_numerics
    from attnsim.sim.oracle import OracleSpec
    from attnsim.sim.torch.model_import import import_module, relative_error
    from attnsim.sim.torch.oracle import TorchOracle
    from attnsim.sim.two_heads import causal as causal_construction
    from attnsim.sim.two_heads import worst_case
    from attnsim.sim.two_heads.jobs import run_one_per_call

    torch.manual_seed(seed)
    N, E, H, M = 64, 32, 4, 16
    x = np.random.default_rng(seed).standard_normal((N, E))
    modules = [("MultiheadAttention", torch.nn.MultiheadAttention(E, H)),
               ("TransformerEncoderLayer", torch.nn.TransformerEncoderLayer(E, H, 64, activation="gelu")),
               ("GPT2Model (2 layers)", GPT2Model(GPT2Config(n_embd=E, n_head=H, n_layer=2, n_positions=N,
                                                             vocab_size=8, bos_token_id=0, eos_token_id=0)))]
    nm = get_numerics("float64", seed)
    lines = ["| module | N | E | H | L | import error (row-wise rel.) | simulation | calls | agreement (bits) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, mod in modules:
        im = import_module(mod, N)
        err = im.verify(x)
        causal = im.spec.mask.causal
        oracle = TorchOracle(OracleSpec(max_len=M + 1, dim=2 * im.spec.m + 2, causal=causal), nm)
        if causal:
            Y = causal_construction.simulate(im.spec, im.weights, im.model_input(x), oracle, b=M, scheme="fused",
                                             runner=run_one_per_call)
            how = "thm_3_5 one head per call, fused"
        else:
            Y = worst_case.simulate(im.spec, im.weights, im.model_input(x), oracle, b=M, scheme="fused")
            how = "thm_3_4 one head per call, fused"
        bits = -np.log2(relative_error(Y, im.torch_forward(x)))
        lines.append(f"| {name} | {N} | {E} | {H} | {im.spec.L} | {err:.2e} | {how} | "
                     f"{oracle.ledger.total('oracle')} | {bits:.1f} |")
    return "\n".join(lines)


def torch_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """The torch section of the report (a note when torch or transformers is missing)."""
    head = ["### Imported PyTorch models, the torch oracle and FlexAttention", ""]
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        return "\n".join(head + [f"_Skipped: the torch extra is not installed ({exc}); "
                                 f"pip install -e '.[torch]'._", ""])
    from attnsim.verify.report.flex_blocks import section

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # its matrices are 64 × 32: more threads cost ~8x the CPU (spinning), same numbers
    try:
        return "\n".join(head + [imported_models_table(), "", section(quick)])
    finally:
        torch.set_num_threads(threads)
