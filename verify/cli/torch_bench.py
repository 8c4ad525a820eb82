"""``attnsim torch-bench``: the torch speed figure (simulation on torch SDPA / direct torch SDPA).

Kept as its own command until ``attnsim bench`` can call
:func:`attnsim.verify.bench.torch_sdpa.torch_sdpa_ratio` itself.
"""

from __future__ import annotations

import json
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    """Add the ``torch-bench`` command to ``app``."""
    @app.command("torch-bench")
    def torch_bench(N: int = typer.Option(8192, "--N", help="sequence length"),
                    M: int = typer.Option(512, "--M", help="oracle length (blocks of M tokens + 1 synthetic)"),
                    d: int = typer.Option(64, "--d", help="head width"),
                    repeats: int = typer.Option(3, help="interleaved repetitions (median)"),
                    engine: Optional[str] = typer.Option(None, help="engine or torch-oracle (default: engine "
                                                                    "when installed)"),
                    as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
        """Fused simulation through torch SDPA calls / one direct torch SDPA call, float64, CPU."""
        from attnsim.verify.bench.torch_sdpa import torch_sdpa_ratio

        r = torch_sdpa_ratio(N=N, M=M, d=d, repeats=repeats, engine=engine)
        if as_json:
            print(json.dumps(r, indent=2))
            return
        print(f"N={N} M={M} d={d} engine={r['engine']} threads={r['threads']} (median of {repeats})")
        print(f"direct torch SDPA: {r['direct_s']:.3f} s   simulation: {r['simulation_s']:.3f} s   "
              f"ratio {r['ratio']:.2f} (target <= {r['target']})   agreement {r['error_bits']:.1f} bits")
