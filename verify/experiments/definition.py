"""Where the theory meets the Match2 experiment: the ANNA definition (§3) on the trained keys.

For each test query with a partner (some x_j with x_i + x_j = 0 mod M) the surrogate is meant to attend to
its partners' keys. With r_i the distance to the farthest partner key and d_i the distance to the nearest
other key, the definition's (c, r) conditions can hold for the exact-match weights (uniform on the partners)
only when d_i > r_i: attnsim's definition checker (:func:`attnsim.sim.anna.constraints.check_anna`) decides it
with r = r_i, c = 1. For Algorithm 1 the checker is run on the weights its collision counts imply
(w_ij = c_ij / sum_j' c_ij'), with r = r_i and c halfway into the gap (1 + d_i/r_i)/2, so that N(q_i, c r)
holds exactly the partners: a violation is a far key retrieved or a partner missed. The measured failure
rate is the share of (run, query) pairs, and of (run, sequence) pairs (the definition asks all queries at
once), that break it. The proof's predicted eta at these (ell, z) is not computed here: it needs the
cross-polytope family's collision probability at every query's own r_i and c r_i.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from attnsim.sim.anna.attention import collision_counts
from attnsim.sim.anna.constraints import RationalWeights, check_anna, distances
from attnsim.sim.anna.lsh import CrossPolytopeLSH, draw_tables
from attnsim.verify.experiments.surrogate import Surrogate


def _row(weights: RationalWeights, i: int) -> RationalWeights:
    return RationalWeights(weights.num[i:i + 1], weights.den[i:i + 1])


def definition_rates(model: Surrogate, tokens: np.ndarray, modulus: int, cells: Sequence[tuple[int, int]],
                     runs: int, seed: int) -> dict[str, Any]:
    """The share of partnered queries whose trained keys meet the (c, r) conditions, and per (ell, z) cell the
    share of (run, query) and (run, sequence) pairs in which Algorithm 1's weights break the definition."""
    with torch.no_grad():
        q, k, _ = model.blocks[0].qkv(model.embed(torch.as_tensor(tokens)))
    q, k = q.double().numpy(), k.double().numpy()
    x = tokens + 1
    gaps: list[tuple[int, int, float, float]] = []  # (sequence, query, r_i, d_i) of queries with a gap
    partnered = 0
    for b in range(len(tokens)):
        partner = (x[b][:, None] + x[b][None, :]) % modulus == 0
        dist = distances(q[b], k[b])
        exact = RationalWeights.from_counts(partner.astype(np.int64))
        for i in np.flatnonzero(partner.any(axis=1)):
            partnered += 1
            r = float(dist[i, partner[i]].max())
            d = float(dist[i, ~partner[i]].min()) if (~partner[i]).any() else np.inf
            if not check_anna(_row(exact, i), q[b][i:i + 1], k[b], r=r, c=1.0, ell=1):
                gaps.append((b, int(i), r, d))
    cell_rates = []
    for ell, z in cells:
        broken_queries, broken_sequences = 0, 0
        for run in range(runs):
            tables = draw_tables(CrossPolytopeLSH(q.shape[2]), ell, z, np.random.default_rng([seed, 7, run]))
            broken = set()
            weights = {b: RationalWeights.from_counts(collision_counts(q[b], k[b], tables))
                       for b in {g[0] for g in gaps}}
            for b, i, r, d in gaps:
                c = (1 + d / r) / 2 if np.isfinite(d) and r > 0 else 2.0
                if check_anna(_row(weights[b], i), q[b][i:i + 1], k[b], r=r, c=c, ell=ell):
                    broken_queries += 1
                    broken.add(b)
            broken_sequences += len(broken)
        sequences = len({g[0] for g in gaps})
        cell_rates.append({"ell": ell, "z": z,
                           "query_rate": broken_queries / max(1, runs * len(gaps)),
                           "sequence_rate": broken_sequences / max(1, runs * sequences)})
    ratios = [d / r for _, _, r, d in gaps if r > 0 and np.isfinite(d)]
    return {"sequences": len(tokens), "partnered": partnered, "with_gap": len(gaps),
            "median_gap": float(np.median(ratios)) if ratios else None, "runs": runs, "cells": cell_rates}


def definition_lines(rates: dict[str, Any], beta: float) -> list[str]:
    """The rates as printed lines."""
    share = rates["with_gap"] / max(1, rates["partnered"])
    gap = f"median d/r {rates['median_gap']:.3f}" if rates["median_gap"] is not None else "no gap"
    lines = [f"ANNA definition on the trained β = {beta:g} keys ({rates['sequences']} test sequences): the (c, r) "
             f"conditions hold for {rates['with_gap']} of {rates['partnered']} queries that have a partner "
             f"({share:.1%}; {gap}).",
             f"Algorithm 1 breaks the definition ({rates['runs']} runs; per query / per sequence, on those queries):"]
    lines += [f"  ℓ = {c['ell']}, z = {c['z']}: {c['query_rate']:.3f} / {c['sequence_rate']:.3f}"
              for c in rates["cells"]]
    lines.append("  (the proof's predicted η at these (ℓ, z) is not computed: it needs the cross-polytope collision "
                 "probability at every query's own r and c r)")
    return lines
