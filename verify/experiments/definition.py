"""Where the theory meets the Match2 experiment: the ANNA definition (§3) on the trained keys, and the eta that the
proof of Thm 3.4 / A.1 predicts at the grid's (ell, z) against the failure rate Algorithm 1 shows.

For each test query with a partner (some x_j with x_i + x_j = 0 mod M) the surrogate is meant to attend to
its partners' keys. With r_i the distance to the farthest partner key and d_i the distance to the nearest
other key, the definition's (c, r) conditions can hold for the exact-match weights (uniform on the partners)
only when d_i > r_i: attnsim's definition checker (:func:`attnsim.sim.anna.constraints.check_anna`) decides it
with r = r_i, c = 1. For Algorithm 1 the checker is run on the weights its collision counts imply
(w_ij = c_ij / sum_j' c_ij'), with r = r_i and c halfway into the gap (1 + d_i/r_i)/2, so that N(q_i, c r)
holds exactly the partners: a violation is a far key retrieved or a partner missed. The measured failure
rate is the share of (run, query) pairs, and of (run, sequence) pairs (the definition asks all queries at
once), that break it.

The prediction is the proof's union bound (:func:`attnsim.theory.lsh.pair_union_bound`, paper_refs'
``eta_union`` per pair) with the cross-polytope family's collision probability P(distance) in dimension m
(:func:`collision_probability`: Monte Carlo of the family's own law, code shared with nothing Algorithm 1 runs):
per query, ell |far| p2^z + |near| (1 - p1^z)^ell with p1 = P(r_i), p2 = P(c r_i) (the proof's form), and the
same sum with each key's own P(||q_i - k_j||) (sharper, still a union bound); per sequence, the sum over its
queries, capped at 1. A union bound is an upper bound: the measured rate must not exceed it (up to the runs'
sampling error).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from attnsim.sim.anna.attention import collision_counts
from attnsim.sim.anna.constraints import RationalWeights, check_anna, distances
from attnsim.sim.anna.lsh import CrossPolytopeLSH, draw_tables
from attnsim.theory.lsh import pair_union_bound, proof_parameters
from attnsim.verify.experiments import match2
from attnsim.verify.experiments.surrogate import Surrogate
from attnsim.verify.lsh_sensitivity import cross_polytope_collisions
from attnsim.verify.stats import binomial_interval

DEFINITION_CELLS = ((1, 1), (8, 1), (16, 1), (8, 2), (16, 2))
"""The (ell, z) cells at which Algorithm 1's weights are held against the ANNA definition."""
P_GRID = 101
"""Distances 0, 0.02, ..., 2 at which the cross-polytope collision probability is estimated (then interpolated)."""
P_SAMPLES = 20_000
"""Correlated Gaussian pairs per distance (standard error at most 0.0036)."""


def collision_probability(dim: int) -> Callable[[np.ndarray], np.ndarray]:
    """P(u): the cross-polytope family's collision probability for unit vectors at distance u in R^dim, estimated
    at :data:`P_GRID` distances (:func:`attnsim.verify.lsh_sensitivity.cross_polytope_collisions`) and
    interpolated linearly."""
    grid = np.linspace(0.0, 2.0, P_GRID)
    prob = np.array([cross_polytope_collisions(dim, float(u), P_SAMPLES) / P_SAMPLES for u in grid])
    return lambda u: np.interp(np.asarray(u, dtype=np.float64), grid, prob)


def trained_model(config: match2.Match2Config, out: Path) -> Surrogate | None:
    """The figure's beta surrogate at ``config.steps`` from its verified checkpoint under ``out``, or None."""
    from attnsim.verify.experiments.training import load

    recipe = match2.recipe(config, config.figure_beta)
    state = load(recipe, Path(out) / "cache", config.steps)
    if state is None:
        return None
    model = Surrogate(recipe.shape)
    model.load_state_dict(state["model"])
    return model.eval()


def match2_definition(config: match2.Match2Config, out: Path) -> dict[str, Any] | None:
    """The ANNA definition on the trained keys of the figure's beta, on every eighth test sequence (a spread over
    the four bins); None when no verified checkpoint of that model is stored."""
    from attnsim.verify.experiments.tasks import Match2Data

    model = trained_model(config, out)
    if model is None:
        return None
    test = Match2Data.draw(np.random.default_rng([config.seed, 2]), config.tests, config.N, config.modulus)
    return definition_rates(model, test.x[::8], config.modulus, DEFINITION_CELLS, config.runs, config.seed)


def _row(weights: RationalWeights, i: int) -> RationalWeights:
    return RationalWeights(weights.num[i:i + 1], weights.den[i:i + 1])


def _gaps(q: np.ndarray, k: np.ndarray, tokens: np.ndarray, modulus: int) -> tuple[int, list[tuple]]:
    """The number of partnered queries, and (sequence, query, r_i, d_i, partner mask, distances) of those whose
    trained keys meet the (c, r) conditions with exact-match weights."""
    x = tokens + 1
    gaps: list[tuple] = []
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
                gaps.append((b, int(i), r, d, partner[i], dist[i]))
    return partnered, gaps


def _approx(r: float, d: float) -> float:
    """c halfway into the gap between the farthest partner (r) and the nearest other key (d)."""
    return (1 + d / r) / 2 if np.isfinite(d) and r > 0 else 2.0


def _predicted(gaps: list[tuple], ell: int, z: int, prob: Callable[[np.ndarray], np.ndarray]) -> dict[str, float]:
    """The proof's union bound per query and per sequence (capped at 1), in its (p1, p2) form and per pair."""
    worst, pairs = [], []
    for _, _, r, d, partner, dist in gaps:
        c = _approx(r, d)
        p1, p2 = (float(v) for v in prob(np.array([r, min(2.0, c * r)])))
        worst.append(pair_union_bound(ell, z, [p1] * int(partner.sum()), [p2] * int((~partner).sum())))
        pairs.append(pair_union_bound(ell, z, prob(dist[partner]).tolist(), prob(dist[~partner]).tolist()))
    seqs = sorted({g[0] for g in gaps})

    def per_sequence(values: list[float]) -> float:
        sums = {b: 0.0 for b in seqs}
        for g, v in zip(gaps, values):
            sums[g[0]] += v
        return float(np.mean([min(1.0, s) for s in sums.values()])) if sums else 0.0

    return {"query_proof": float(np.mean(np.minimum(1.0, worst))) if gaps else 0.0,
            "sequence_proof": per_sequence(worst),
            "query_pairs": float(np.mean(np.minimum(1.0, pairs))) if gaps else 0.0,
            "sequence_pairs": per_sequence(pairs)}


def definition_rates(model: Surrogate, tokens: np.ndarray, modulus: int, cells: Sequence[tuple[int, int]],
                     runs: int, seed: int) -> dict[str, Any]:
    """The share of partnered queries whose trained keys meet the (c, r) conditions, and per (ell, z) cell the
    share of (run, query) and (run, sequence) pairs in which Algorithm 1's weights break the definition, beside
    the eta the proof's union bound predicts there."""
    with torch.no_grad():
        q, k, _ = model.blocks[0].qkv(model.embed(torch.as_tensor(tokens)))
    q, k = q.double().numpy(), k.double().numpy()
    partnered, gaps = _gaps(q, k, tokens, modulus)
    prob = collision_probability(q.shape[2]) if gaps and cells else None
    cell_rates = []
    for ell, z in cells:
        broken_queries, broken_sequences = 0, 0
        for run in range(runs):
            tables = draw_tables(CrossPolytopeLSH(q.shape[2]), ell, z, np.random.default_rng([seed, 7, run]))
            broken = set()
            weights = {b: RationalWeights.from_counts(collision_counts(q[b], k[b], tables))
                       for b in {g[0] for g in gaps}}
            for b, i, r, d, _, _ in gaps:
                if check_anna(_row(weights[b], i), q[b][i:i + 1], k[b], r=r, c=_approx(r, d), ell=ell):
                    broken_queries += 1
                    broken.add(b)
            broken_sequences += len(broken)
        sequences = len({g[0] for g in gaps})
        cell_rates.append({"ell": ell, "z": z, "broken_queries": broken_queries, "queries": runs * len(gaps),
                           "broken_sequences": broken_sequences, "sequences": runs * sequences,
                           "query_rate": broken_queries / max(1, runs * len(gaps)),
                           "sequence_rate": broken_sequences / max(1, runs * sequences),
                           **(_predicted(gaps, ell, z, prob) if prob is not None else {})})
    ratios = [d / r for _, _, r, d, _, _ in gaps if r > 0 and np.isfinite(d)]
    return {"sequences": len(tokens), "length": int(tokens.shape[1]), "partnered": partnered, "with_gap": len(gaps),
            "median_gap": float(np.median(ratios)) if ratios else None, "runs": runs, "cells": cell_rates,
            "proof_choice": _proof_choice(gaps, prob, tokens.shape[1]) if prob is not None else None}


def _proof_choice(gaps: list[tuple], prob: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, float] | None:
    """The proof's own (z, ell, eta) at N = ``n`` for the median query's radii: r the median r_i, c r halfway
    into the median gap (:func:`attnsim.theory.lsh.proof_parameters`); None when p1 <= p2 there."""
    r = float(np.median([g[2] for g in gaps]))
    ratio = float(np.median([g[3] / g[2] for g in gaps if g[2] > 0 and np.isfinite(g[3])] or [np.inf]))
    cr = min(2.0, r * _approx(r, r * ratio))
    p1, p2 = (float(v) for v in prob(np.array([r, cr])))
    if not 0 < p2 < p1 < 1:
        return None
    params = proof_parameters(n, p1, p2)
    return {"r": r, "cr": cr, "p1": p1, "p2": p2, "rho": params.rho, "z": params.z, "ell": params.ell,
            "eta": params.eta_bound}


def bound_holds(cell: dict[str, Any]) -> bool:
    """Whether the measured failure rates are consistent with the predicted eta (per pair, the sharper bound): the
    one-sided 97.5% Clopper-Pearson lower end of each measured rate is at most the prediction."""
    low_q = binomial_interval(cell["broken_queries"], cell["queries"])[0] if cell["queries"] else 0.0
    low_s = binomial_interval(cell["broken_sequences"], cell["sequences"])[0] if cell["sequences"] else 0.0
    return low_q <= cell["query_pairs"] and low_s <= cell["sequence_pairs"]


def definition_lines(rates: dict[str, Any], beta: float) -> list[str]:
    """The rates as printed lines."""
    share = rates["with_gap"] / max(1, rates["partnered"])
    gap = f"median d/r {rates['median_gap']:.3f}" if rates["median_gap"] is not None else "no gap"
    lines = [f"ANNA definition on the trained β = {beta:g} keys ({rates['sequences']} test sequences): the (c, r) "
             f"conditions hold for {rates['with_gap']} of {rates['partnered']} queries that have a partner "
             f"({share:.1%}; {gap}).",
             f"Algorithm 1 breaks the definition ({rates['runs']} runs, on those queries), measured against the η the "
             "proof's union bound predicts (cross-polytope P computed; (p1, p2) form / each pair's own P):",
             "  ℓ, z:  measured per query / per sequence  |  predicted per query  |  predicted per sequence"]
    for c in rates["cells"]:
        line = f"  ℓ = {c['ell']:2d}, z = {c['z']}:  {c['query_rate']:.3f} / {c['sequence_rate']:.3f}"
        if "query_proof" in c:
            held = "consistent: measured ≤ predicted" if bound_holds(c) else "MEASURED ABOVE THE BOUND (95% interval)"
            line += (f"  |  {c['query_proof']:.3f} / {c['query_pairs']:.3f}  |  {c['sequence_proof']:.3f} / "
                     f"{c['sequence_pairs']:.3f}  ({held})")
        lines.append(line)
    p = rates.get("proof_choice")
    if p is not None:
        lines.append(f"  the proof's own choice at the median query (r = {p['r']:.3f}, c r = {p['cr']:.3f}: "
                     f"p1 = {p['p1']:.3f}, p2 = {p['p2']:.3f}, ρ = {p['rho']:.3f}, N = {rates['length']}): "
                     f"z = {p['z']}, ℓ = {p['ell']}, η ≤ {p['eta']:.3f}")
    return lines
