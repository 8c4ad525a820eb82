"""Public hypothesis strategies: fuzz a construction (ours or your own) against the reference model.

- :func:`masks` — Full, Causal, SlidingWindow(r), Sink(s, r) (two_heads Defs 2.3–2.5);
- :func:`model_specs` — ``TransformerSpec`` (N, d, H | d, L, a mask);
- :func:`oracle_specs` — ``OracleSpec`` (length, heads, layers, width, causal, length convention);
- :func:`inputs` / :func:`weights` / :func:`cases` — inputs and weights on the exact score grid:
  X in (1/2)Z ∩ [-1, 1] (or integers up to ``bound``), W^Q, W^K, W^V in (1/4)Z ∩ [-1, 1], so every
  score lies on (1/64)Z — the default grid of the ``exact`` numerics, where simulated == reference
  must hold with ``==``;
- :func:`score_patterns` — adversarial score matrices on a grid (1/D)Z with their mask: all ties, one
  dominant key per row, extreme magnitudes ±B, alternating signs, fully masked rows.

All values are ``fractions.Fraction`` (exactly representable in every numerics). Example: see
``docs/fuzzing.md``.

The other papers' strategies are here too: ANNA's point sets at the radii, Match2 and k-hop inputs and MPC
inputs (:mod:`attnsim.verify.anna_strategies`), TinT's small auxiliary models and their inputs
(:mod:`attnsim.verify.tint_strategies`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from attnsim.sim.masks import Causal, Full, Mask, Sink, SlidingWindow
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights
from attnsim.sim.oracle import OracleSpec
from attnsim.sim.token_maps import Identity
from attnsim.verify.anna_strategies import (
    KHopInput,
    Match2Input,
    MPCInput,
    PointSet,
    khop_inputs,
    lsh_point_sets,
    match2_inputs,
    mpc_inputs,
)
from attnsim.verify.cases import Case
from attnsim.verify.tint_strategies import AuxInput, aux_inputs, aux_models

__all__ = ["masks", "model_specs", "oracle_specs", "inputs", "weights", "cases", "score_patterns", "ScorePattern",
           "grid_values", "lsh_point_sets", "PointSet", "match2_inputs", "Match2Input", "khop_inputs", "KHopInput",
           "mpc_inputs", "MPCInput", "aux_models", "aux_inputs", "AuxInput"]

SCORE_KINDS = ("ties", "dominant", "extreme", "alternating", "masked_rows", "random")


def masks(max_window: int = 8, max_sinks: int = 3) -> st.SearchStrategy[Mask]:
    """Strategy for masks: full, causal, sliding window or sink."""
    return st.one_of(st.just(Full()), st.just(Causal()),
                     st.builds(SlidingWindow, st.integers(1, max_window)),
                     st.builds(Sink, st.integers(1, max_sinks), st.integers(1, max_window)))


@st.composite
def model_specs(draw: st.DrawFn, max_N: int = 24, max_d: int = 6, max_H: int = 2, max_L: int = 2,
                mask: st.SearchStrategy[Mask] | None = None, min_N: int = 1) -> TransformerSpec:
    """A large-model spec; d is a multiple of H."""
    H = draw(st.integers(1, max_H))
    d = H * draw(st.integers(1, max(1, max_d // H)))
    return TransformerSpec(draw(st.integers(min_N, max_N)), d, H, draw(st.integers(1, max_L)),
                           draw(mask if mask is not None else masks()))


@st.composite
def oracle_specs(draw: st.DrawFn, max_len: int = 16, max_heads: int = 2, max_layers: int = 2,
                 max_dim: int = 16, causal: bool | None = None) -> OracleSpec:
    """Strategy for oracle specs within the given limits."""
    return OracleSpec(draw(st.integers(2, max_len)), draw(st.integers(1, max_heads)), draw(st.integers(1, max_layers)),
                      draw(st.integers(1, max_dim)), draw(st.booleans()) if causal is None else causal,
                      length_convention=draw(st.sampled_from(("paper", "strict"))))


def grid_values(den: int, bound: int) -> st.SearchStrategy[Fraction]:
    """Fractions k/den with |k/den| <= bound."""
    return st.integers(-bound * den, bound * den).map(lambda k: Fraction(k, den))


def _matrix(draw: st.DrawFn, shape: tuple[int, int], values: st.SearchStrategy[Fraction]) -> np.ndarray:
    flat = draw(st.lists(values, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]))
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = flat
    return out


@st.composite
def inputs(draw: st.DrawFn, N: int, d: int, large: bool = False) -> np.ndarray:
    """X (N × d): entries in (1/2)Z ∩ [-1, 1], or integers in [-4, 4] with ``large``."""
    return _matrix(draw, (N, d), grid_values(1, 4) if large else grid_values(2, 1))


@st.composite
def weights(draw: st.DrawFn, spec: TransformerSpec) -> Weights:
    """Per layer and head W^Q, W^K, W^V (m × m, m = d/H) in (1/4)Z ∩ [-1, 1]; identity layer MLPs."""
    m = spec.m
    w = grid_values(4, 1)
    return Weights(tuple(
        LayerWeights(tuple(HeadWeights(_matrix(draw, (m, m), w), _matrix(draw, (m, m), w), _matrix(draw, (m, m), w))
                           for _ in range(spec.H)), Identity())
        for _ in range(spec.L)))


@st.composite
def cases(draw: st.DrawFn, specs: st.SearchStrategy[TransformerSpec] | None = None, large: bool = False) -> Case:
    """A whole case (spec, weights, X) for ``verify.model_check.measure_model`` or your own check."""
    spec = draw(specs if specs is not None else model_specs())
    return Case(spec, draw(weights(spec)), draw(inputs(spec.N, spec.d, large)))


@dataclass(frozen=True, eq=False)
class ScorePattern:
    """A score matrix on the grid and its allowed pattern, of a named kind."""
    kind: str
    scores: np.ndarray  # object array of Fractions on (1/D)Z
    allowed: np.ndarray  # bool, True = may attend


@st.composite
def score_patterns(draw: st.DrawFn, max_rows: int = 8, max_cols: int = 8, D: int = 64, B: int = 16,
                   kinds: tuple[str, ...] = SCORE_KINDS) -> ScorePattern:
    """An adversarial score matrix on (1/D)Z with |score| <= B and its mask (see the module docstring)."""
    kind = draw(st.sampled_from(kinds))
    n, m = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
    allowed = np.ones((n, m), dtype=bool)
    if kind == "ties":
        s = np.full((n, m), draw(grid_values(D, B)), dtype=object)
    elif kind == "dominant":
        s = np.full((n, m), Fraction(-B), dtype=object)
        for i in range(n):
            s[i, draw(st.integers(0, m - 1))] = Fraction(B)
    elif kind == "extreme":
        s = _matrix(draw, (n, m), st.sampled_from((Fraction(-B), Fraction(B))))
    elif kind == "alternating":
        s = np.array([[Fraction(B if (i + j) % 2 else -B) for j in range(m)] for i in range(n)], dtype=object)
    else:
        s = _matrix(draw, (n, m), grid_values(D, B))
    if kind == "masked_rows":
        rows = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        allowed[rows, :] = False
    return ScorePattern(kind, s, allowed)
