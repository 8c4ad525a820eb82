"""One experiment end to end, as the command line and the report run it: train, evaluate, draw, compare; and
where the theory meets the Match2 experiment: the ANNA definition (§3) on the trained keys.

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

from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch
from rich.console import Console

from attnsim.sim.anna.attention import collision_counts
from attnsim.sim.anna.constraints import RationalWeights, check_anna, distances
from attnsim.sim.anna.lsh import CrossPolytopeLSH, draw_tables
from attnsim.verify.experiments import compare, figures, induction, match2
from attnsim.verify.experiments.surrogate import Surrogate

FIGURES = {match2.ID: ("fig1a_match2.png", figures.match2_figure),
           induction.ID: ("fig1b_induction.png", figures.induction_figure)}


def config_for(experiment: str, *, quick: bool, steps: int | None, runs: int | None, tests: int | None,
               seed: int, betas: tuple[float, ...] | None = None) -> Any:
    """The experiment's configuration: the default (or quick) one with the given overrides (``betas``: Match2's
    temperatures; they must include the figure's)."""
    base = {match2.ID: (match2.Match2Config(), match2.QUICK), induction.ID: (induction.InductionConfig(),
                                                                             induction.QUICK)}[experiment]
    config = base[1] if quick else base[0]
    changes = {"steps": steps, "runs": runs, "tests": tests, "betas": betas}
    return replace(config, seed=seed, **{k: v for k, v in changes.items() if v is not None})


def run_experiment(experiment: str, config: Any, out: Path, console: Console | None, *,
                   reuse: bool = True, figures_to: Path | None = None) -> dict[str, Any]:
    """Run (or read back) ``experiment`` at ``config`` with its cache under ``out``; draw its figure into
    ``figures_to`` (default ``out``); return the result with its comparison rows and the figure's path.
    torch's global settings (threads, deterministic kernels) are as they were afterwards."""
    root = Path(out) / "cache"
    module = match2 if experiment == match2.ID else induction
    with torch_settings_kept():
        result = module.run(config, root, console, reuse=reuse)
    name, draw = FIGURES[experiment]
    figure = draw(result, Path(figures_to or out) / name)
    rows = compare.match2_rows(result) if experiment == match2.ID else compare.induction_rows(result)
    return {**result, "figure": str(figure), "comparison": [r.__dict__ for r in rows]}


DEFINITION_CELLS = ((1, 1), (8, 1), (16, 1), (8, 2), (16, 2))
"""The (ell, z) cells at which Algorithm 1's weights are held against the ANNA definition."""


def match2_definition(config: Any, out: Path) -> dict[str, Any] | None:
    """The ANNA definition on the trained keys of the figure's beta (:mod:`.definition`), on every eighth test
    sequence (a spread over the four bins); None when no verified checkpoint of that model is stored."""
    from attnsim.verify.experiments.tasks import Match2Data
    from attnsim.verify.experiments.training import load

    recipe = match2.recipe(config, config.figure_beta)
    state = load(recipe, Path(out) / "cache", config.steps)
    if state is None:
        return None
    model = Surrogate(recipe.shape)
    model.load_state_dict(state["model"])
    model.eval()
    test = Match2Data.draw(np.random.default_rng([config.seed, 2]), config.tests, config.N, config.modulus)
    with torch_settings_kept():
        return definition_rates(model, test.x[::8], config.modulus, DEFINITION_CELLS, config.runs, config.seed)


@contextmanager
def torch_settings_kept() -> Iterator[None]:
    """Training sets one thread and deterministic kernels for the whole process; put them back afterwards."""
    import torch

    threads, strict = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(strict)


def comparison_table(result: dict[str, Any]) -> list[list[str]]:
    """The comparison rows as table cells."""
    return [compare.Row(**r).cells() for r in result["comparison"]]


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
