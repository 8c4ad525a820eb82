"""Broken twins of the TinT rebuttal checkers (:mod:`attnsim.verify.claims.tint_rebuttal`).

They break the MLP TinT's inner step and its size formula, the size-growth table's built network (an
extra weight array in every backward block) and its per-unit formula, and the finite-difference study's
forward count and its variance estimate.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted, ledger_scaled, wrapped
from attnsim.verify.twins.tint_size import extra_array


def _mlp_step_negated(cfg: Any, ar: Any) -> tuple[tuple, dict]:
    return (dataclasses.replace(cfg, eta=-cfg.eta), ar), {}


@twin("tint.rebuttal_mlp_aux", "step_sign_flipped", "the MLP's TinT steps up the gradient (eta negated)",
      kind="construction")
@contextmanager
def _mlp_sign() -> Iterator[None]:
    with wrapped("attnsim.sim.tint.mlp_aux.build_mlp", args=_mlp_step_negated):
        yield


@twin("tint.rebuttal_mlp_aux", "total_formula_plus_one", "the MLP TinT's size formula is read one too high",
      kind="formula")
@contextmanager
def _mlp_formula() -> Iterator[None]:
    with formula_shifted("tint.rebuttal_mlp_aux", "total"):
        yield


@twin("tint.rebuttal_size_growth", "per_unit_formula_plus_one", "the per-unit size formula is read one too high",
      kind="formula")
@contextmanager
def _growth_formula() -> Iterator[None]:
    with formula_shifted("tint.rebuttal_size_growth", "per_unit"):
        yield


@twin("tint.rebuttal_size_growth", "backward_block_extra_array", "each backward block's activation module is built "
      "with an extra MX(d) weight array", kind="construction")
@contextmanager
def _growth_extra() -> Iterator[None]:
    with extra_array("backward_block"):
        yield


@twin("tint.rebuttal_fd_end_to_end", "spsa_forwards_doubled", "the ledger counts every SPSA forward pass twice",
      params={"samples": 1000}, kind="ledger")
@contextmanager
def _fd_ledger() -> Iterator[None]:
    with ledger_scaled("forward", lambda a: 2 * a, tag_prefix="spsa"):
        yield


def _variance_doubled(rows: list) -> list:
    return [(D, n, 2 * var) for D, n, var in rows]


@twin("tint.rebuttal_fd_end_to_end", "variance_doubled", "the SPSA variance is estimated twice too large",
      params={"samples": 1000}, kind="construction")
@contextmanager
def _fd_variance() -> Iterator[None]:
    with wrapped("attnsim.sim.tint.fd_end_to_end.variance_by_width", result=_variance_doubled):
        yield


@twin("tint.rebuttal_fd_end_to_end", "tint_step_not_shrinking", "TinT's per-layer difference keeps the step 0.1 "
      "whatever eps is asked, so its bias stops falling with eps", params={"samples": 1000}, kind="construction")
@contextmanager
def _fd_step_frozen() -> Iterator[None]:
    from attnsim.sim.tint.fd_end_to_end import Problem

    original = Problem.gradient

    def gradient(self: Problem, act_fd: float | None = None) -> Any:
        return original(self, None if act_fd is None else 0.1)

    with mock.patch.object(Problem, "gradient", gradient):
        yield
