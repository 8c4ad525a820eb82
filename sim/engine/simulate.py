"""two_heads.lemma_3_1 / cor_3_2 on the batched float64 engine: ``worst_case.simulate``, fast.

Same preconditions, same token maps (φ, a layer's ``pre`` map, ψ, the residual addition, all as
processing), one round per layer with every head's calls, eq. (1) per head, and the same ledger counts (calls per
tag, rounds, flops, shapes, the processing entries of the combination) as ``worst_case.simulate`` with
``run_one_per_call`` — but the calls are batches (``blockwise.head_batches``) run by a scheduler (serial or Dask).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from attnsim.sim.engine.batch import admit
from attnsim.sim.engine.blockwise import ColumnGroup, HeadAccumulator, head_batches, head_sources, record_combine
from attnsim.sim.engine.schedulers import Item, Scheduler, Serial
from attnsim.sim.engine.scratch import scratch_space
from attnsim.sim.errors import AttnsimError, require
from attnsim.sim.model import TransformerSpec, Weights, head_columns
from attnsim.sim.numerics import Array
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads.worst_case import apply_token_map, preconditions, sum_heads


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int,
             scheme: str = "paper", scheduler: Scheduler | None = None, tag: str = "lemma_3_1") -> Array:
    """T(X) from batched oracle calls (float64 only)."""
    nm = oracle.nm
    if nm.name != "float64":
        raise AttnsimError(f"the batched engine runs float64 only, got {nm.name}; "
                           f"use attnsim.sim.two_heads.worst_case.simulate for other numerics", param="numerics")
    if getattr(spec, "rope", None) is not None:
        raise AttnsimError("rope: the batched engine has no rotary embeddings; "
                           "use attnsim.sim.two_heads.worst_case.simulate")
    reasons = preconditions(spec, oracle, b, scheme)
    require(reasons)
    weights.validate(spec)
    scheduler = scheduler or Serial()
    X = apply_token_map(nm, oracle, weights.phi, nm.array(X, "X"), b, "input_mlp")
    for li, layer in enumerate(weights.layers):
        Xa = apply_token_map(nm, oracle, layer.pre, X, b, "pre_norm")
        oracle.round += 1
        arrays: dict[str, np.ndarray] = {}
        heads_w = []
        for h, hw in enumerate(layer.heads):
            arrays.update(head_sources(Xa[:, head_columns(spec, h)], h))
            heads_w.append((nm.array(hw.WQ, "W^Q"), nm.array(hw.WK, "W^K"), nm.array(hw.WV, "W^V")))

        def items() -> Iterator[Item]:
            for h, (WQ, WK, WV) in enumerate(heads_w):
                htag = f"{tag}.L{li}.H{h}" if spec.L * spec.H > 1 else tag
                for batch, group in head_batches(nm, h, spec.N, spec.m, WQ, WK, WV, b, scheme, htag):
                    admit(oracle, batch)
                    yield batch, group

        accs = [HeadAccumulator(spec.N, spec.m) for _ in range(spec.H)]
        group: ColumnGroup
        with scratch_space():
            for group, out in scheduler.run(items(), arrays, causal=oracle.spec.causal):
                accs[group.head].add(group, out)
        heads = []
        for acc in accs:
            heads.append(acc.result(nm))
            record_combine(oracle.ledger, spec.N, spec.m, b, tag, oracle.round)
        X = sum_heads(nm, oracle, spec, X, heads)
        X = apply_token_map(nm, oracle, layer.psi, X, b, "layer_mlp")
    return X
