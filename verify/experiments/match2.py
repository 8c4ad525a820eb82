"""The Match2 experiment of App. G.1 (Fig. 1a): a one-layer surrogate trained, then run with Algorithm 1.

Paper: N = 32, M = 37, x_i in {1..36}, balanced batches; one layer, one head, m = 64, MLP 4m GeLU; Adam,
lr 0.01, cross-entropy, 10,000 examples, batch 32, 20,000 steps; beta in {0.1, 1, 10}; Algorithm 1 with
cross-polytope LSH over ell in 1..16, z in 1..6, 10 runs per cell, 256 test sequences. Reported: beta = 0.1
is best, and ell >= 8 with z = 1 gives 0 error.

The full (ell, z) grid is run for the figure's beta (0.1); the other betas are run at z = 1 over every ell,
the column the paper's claim about the best beta is read in. Each grid runs once per angular hash family of
``families``: the cross-polytope family of Andoni et al. 2015, which the paper cites, and random hyperplanes,
a name the paper also attaches to it (:data:`~.anna_layer.FAMILIES`; docs/reconstructions.md).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from attnsim.verify.experiments.evaluate import anna_grid, softmax_error
from attnsim.verify.experiments.store import code_hash, load_result, save_result
from attnsim.verify.experiments.surrogate import Shape
from attnsim.verify.experiments.tasks import Match2Data
from attnsim.verify.experiments.training import Recipe, train

ID = "anna.match2"


@dataclass(frozen=True)
class Match2Config:
    """Every setting of one Match2 experiment (defaults: the paper's)."""

    N: int = 32
    modulus: int = 37
    width: int = 64
    lr: float = 0.01
    batch: int = 32
    train_size: int = 10_000
    steps: int = 20_000
    betas: tuple[float, ...] = (0.1, 1.0, 10.0)
    figure_beta: float = 0.1
    ells: tuple[int, ...] = tuple(range(1, 17))
    zs: tuple[int, ...] = tuple(range(1, 7))
    runs: int = 10
    tests: int = 256
    seed: int = 0
    families: tuple[str, ...] = ("cross-polytope", "hyperplane")

    def as_dict(self) -> dict[str, Any]:
        """The configuration as JSON reads it back (tuples as lists)."""
        return json.loads(json.dumps(asdict(self)))


QUICK = Match2Config(train_size=128, steps=20, ells=(1, 8), zs=(1, 2), runs=2, tests=16)
"""The report's quick budget: a few CPU seconds, far too small to learn Match2 (it says so)."""


def recipe(config: Match2Config, beta: float) -> Recipe:
    """The training recipe of the surrogate with temperature ``beta``."""
    shape = Shape(vocab=config.modulus - 1, classes=2, length=config.N, width=config.width, layers=1, beta=beta,
                  positions=False)
    task = f"match2(N={config.N},M={config.modulus},size={config.train_size},data_seed={config.seed})"
    return Recipe(shape, task, config.lr, config.batch, config.seed)


def run(config: Match2Config, root: Path | None, console: Console | None = None, *,
        reuse: bool = True) -> dict[str, Any]:
    """Train every beta's surrogate (resuming from checkpoints under ``root``), evaluate it with its softmax
    and with Algorithm 1, and return the result (stored under ``root``; a stored one is returned as it is)."""
    code_hash()  # the code this result is computed by, read now
    if root is not None and reuse:
        done = load_result(root, ID, config.as_dict())
        if done is not None:
            return {**done, "from_cache": True}
    begin, cpu = time.perf_counter(), time.process_time()
    data_rng, test_rng = np.random.default_rng([config.seed, 0]), np.random.default_rng([config.seed, 2])
    data = Match2Data.draw(data_rng, config.train_size, config.N, config.modulus)
    test = Match2Data.draw(test_rng, config.tests, config.N, config.modulus)
    betas: dict[str, Any] = {}
    for beta in config.betas:
        trained = train(recipe(config, beta), data.batches, config.steps, root, console,
                        label=f"Match2 surrogate, beta = {beta:g}")
        zs = config.zs if beta == config.figure_beta else (1,)
        grids, seconds = {}, {}
        for family in config.families:
            t0 = time.perf_counter()
            errors = anna_grid(trained.model, test.x, test.y, [config.ells], zs, config.runs, config.seed, console,
                               label=f"Match2 Algorithm 1 grid, beta = {beta:g}, {family}", family=family)
            grids[family] = {"zs": list(zs), "anna_mean": errors.mean(axis=0).tolist(),
                             "anna_max": errors.max(axis=0).tolist()}
            seconds[family] = round(time.perf_counter() - t0, 2)
        betas[f"{beta:g}"] = {
            "beta": beta, "steps": trained.step, "resumed_from": trained.resumed_from,
            "train_seconds": round(trained.seconds, 2), "final_loss": float(np.mean(trained.losses[-100:])),
            "softmax_error": softmax_error(trained.model, test.x, test.y), "grids": grids,
            "anna_seconds": seconds}
    result = {"experiment": ID, "config": config.as_dict(), "betas": betas,
              "seconds": round(time.perf_counter() - begin, 1), "cpu_seconds": round(time.process_time() - cpu, 1),
              "from_cache": False}
    if root is not None:
        save_result(root, ID, config.as_dict(), result)
    return result


def with_steps(config: Match2Config, steps: int | None, **changes: Any) -> Match2Config:
    """``config`` with another training budget (None: unchanged) and other changed fields."""
    return replace(config, **({"steps": steps} if steps is not None else {}), **changes)
