"""The induction-heads experiment of App. G.2 (Fig. 1b): a two-layer surrogate, then Algorithm 1 in both layers.

Paper: X = (k, X') with X' a string of N - 1 = 99 letters over |Sigma| = 4 (no two equal neighbours),
k in {0, 1} in training and k = 1 at test, target (blank, the k-hop labels of X'); online fresh samples.
Two layers, one head, m = 128, MLP 4m GeLU; Adam, lr 0.01, batch 32, 400,000 steps; beta = 1 reported.
Algorithm 1 over ell_1 in {32, 40, ..., 96}, ell_2 in {4, 8, ..., 32}, z in {1..4} (one z for both layers),
error over all tokens of 100 test sequences, the mean of 10 runs, minimised over z. Reported: about 0.2 at
(ell_1, ell_2) = (32, 4) (random guessing 0.75), below 0.1 with more layer-1 tables. The grid runs once per
angular hash family of ``families`` (:data:`~.anna_layer.FAMILIES`; docs/reconstructions.md).

Our default budget is far smaller, because one training step costs about 0.14 CPU-seconds on an idle core
(400,000 steps would take about 16 CPU-hours), and one Algorithm 1 run over the grid re-hashes the layer-2
queries and keys for every (ell_1, z): DEFAULT_STEPS steps (about 7 CPU-minutes), DEFAULT_TESTS test sequences
and DEFAULT_RUNS runs per cell. At such a budget the paper's constant lr 0.01 does not learn (0.88 error after
1,500 steps, worse than guessing), so the default is lr 1e-3 after a DEFAULT_WARMUP-step linear warm-up
(docs/reconstructions.md); ``--steps``, ``--tests`` and ``--runs`` go to the paper's values. The surrogate's own
softmax error is reported beside Algorithm 1's, so each is read against what the surrogate reached.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from attnsim.verify.experiments.evaluate import anna_grid, softmax_error
from attnsim.verify.experiments.store import code_hash, load_result, save_result
from attnsim.verify.experiments.surrogate import Shape
from attnsim.verify.experiments.tasks import LETTER_OFFSET, induction_batch, induction_classes
from attnsim.verify.experiments.training import Recipe, train

ID = "anna.induction"
PAPER_STEPS = 400_000
DEFAULT_STEPS = 3_000
DEFAULT_LR = 1e-3
DEFAULT_WARMUP = 300
DEFAULT_TESTS = 20
DEFAULT_RUNS = 3


@dataclass(frozen=True)
class InductionConfig:
    """Every setting of one induction-heads experiment (defaults: the paper's, but for the budget)."""

    N: int = 100
    alphabet: int = 4
    width: int = 128
    lr: float = DEFAULT_LR
    warmup: int = DEFAULT_WARMUP
    batch: int = 32
    steps: int = DEFAULT_STEPS
    beta: float = 1.0
    ells1: tuple[int, ...] = tuple(range(32, 97, 8))
    ells2: tuple[int, ...] = tuple(range(4, 33, 4))
    zs: tuple[int, ...] = (1, 2, 3, 4)
    runs: int = DEFAULT_RUNS
    tests: int = DEFAULT_TESTS
    seed: int = 0
    families: tuple[str, ...] = ("cross-polytope", "hyperplane")

    def as_dict(self) -> dict[str, Any]:
        """The configuration as JSON reads it back (tuples as lists)."""
        return json.loads(json.dumps(asdict(self)))


QUICK = InductionConfig(N=16, width=32, steps=10, warmup=4, ells1=(2, 4), ells2=(1, 2), zs=(1, 2), runs=1, tests=4)
"""The report's quick budget: N = 16, m = 32, ten steps (a smoke run of the whole path, not the experiment)."""


def recipe(config: InductionConfig) -> Recipe:
    """The training recipe of the surrogate."""
    shape = Shape(vocab=LETTER_OFFSET + config.alphabet, classes=induction_classes(config.alphabet),
                  length=config.N, width=config.width, layers=2, beta=config.beta, positions=True)
    return Recipe(shape, f"induction(N={config.N},alphabet={config.alphabet},hops=0-1,online)", config.lr,
                  config.batch, config.seed, warmup=config.warmup)


def run(config: InductionConfig, root: Path | None, console: Console | None = None, *,
        reuse: bool = True) -> dict[str, Any]:
    """Train the surrogate (resuming under ``root``), evaluate it with its softmax and with Algorithm 1 in both
    layers over the grid, and return the result (stored under ``root``; a stored one is returned as it is)."""
    code_hash()  # the code this result is computed by, read now
    if root is not None and reuse:
        done = load_result(root, ID, config.as_dict())
        if done is not None:
            return {**done, "from_cache": True}
    begin, cpu = time.perf_counter(), time.process_time()
    batches = partial(induction_batch, N=config.N, alphabet=config.alphabet)
    trained = train(recipe(config), batches, config.steps, root, console, label="induction-heads surrogate")
    x, y = induction_batch(np.random.default_rng([config.seed, 2]), config.tests, N=config.N,
                           alphabet=config.alphabet, hops=(1,))
    grids, seconds = {}, {}
    for family in config.families:
        t0 = time.perf_counter()
        errors = anna_grid(trained.model, x, y, [config.ells1, config.ells2], config.zs, config.runs, config.seed,
                           console, label=f"induction-heads Algorithm 1 grid, {family}", family=family)
        mean = errors.mean(axis=0)  # z x ell_1 x ell_2
        grids[family] = {"anna_mean": mean.tolist(), "anna_best": mean.min(axis=0).tolist(),
                         "anna_best_z": [[config.zs[i] for i in row] for row in mean.argmin(axis=0).tolist()]}
        seconds[family] = round(time.perf_counter() - t0, 2)
    result = {"experiment": ID, "config": config.as_dict(), "steps": trained.step,
              "resumed_from": trained.resumed_from, "train_seconds": round(trained.seconds, 2),
              "final_loss": float(np.mean(trained.losses[-100:])), "softmax_error": softmax_error(trained.model, x, y),
              "grids": grids, "anna_seconds": seconds, "seconds": round(time.perf_counter() - begin, 1),
              "cpu_seconds": round(time.process_time() - cpu, 1), "from_cache": False}
    if root is not None:
        save_result(root, ID, config.as_dict(), result)
    return result
