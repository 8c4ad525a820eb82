"""Model cases: random large transformers and inputs on the exact score grid, from one seed.

Inputs have entries in (1/2)Z ∩ [-1, 1] (``random``) or integers in [-4, 4] (``large``: large score
magnitudes); W^Q, W^K, W^V have entries in (1/4)Z ∩ [-1, 1]. Scores then lie on (1/64)Z, the default
grid of the ``exact`` numerics, and every value is exactly representable in float64 and mp.

Layer MLPs: ``identity``, or ``affine`` — a random affine map, rounded back onto the (1/2)Z grid in
exact kinds of numerics so that deeper layers' scores stay on the grid (see ``token_maps``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attnsim.sim.masks import Mask
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights
from attnsim.sim.token_maps import Identity, random_affine
from attnsim.verify.inputs import read_npy
from attnsim.verify.registry import UsageError

INPUT_KINDS = ("random", "large")
LAYER_MLPS = ("auto", "identity", "affine")


@dataclass(frozen=True, eq=False)
class Case:
    """A model case: the spec, its weights and an input X of exact rationals."""
    spec: TransformerSpec
    weights: Weights
    X: np.ndarray  # object array of Fractions


def _grid(rng: np.random.Generator, shape: tuple[int, ...], lo: int, hi: int, den: int) -> np.ndarray:
    return np.vectorize(lambda v: Fraction(int(v), den), otypes=[object])(rng.integers(lo, hi + 1, size=shape))


def random_weights(spec: TransformerSpec, rng: np.random.Generator, layer_mlp: str, exact_kind: bool) -> Weights:
    """Random weights on the score grid for ``spec``, with the layer MLP ``layer_mlp``."""
    if layer_mlp not in LAYER_MLPS:
        raise UsageError(f"--psi: must be one of {LAYER_MLPS}, got {layer_mlp!r}")
    if layer_mlp == "auto":
        layer_mlp = "identity" if spec.L == 1 else "affine"
    layers = []
    m = spec.m
    for _ in range(spec.L):
        heads = tuple(HeadWeights(_grid(rng, (m, m), -4, 4, 4), _grid(rng, (m, m), -4, 4, 4),
                                  _grid(rng, (m, m), -4, 4, 4)) for _ in range(spec.H))
        psi = Identity() if layer_mlp == "identity" else random_affine(rng, spec.d, spec.d, 2 if exact_kind else None)
        layers.append(LayerWeights(heads, psi))
    return Weights(tuple(layers))


def load_input(path: str, spec: TransformerSpec) -> np.ndarray:
    """X from a .npy file of numbers (floats are taken exactly as binary fractions)."""
    arr = read_npy(path, (spec.N, spec.d))
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise UsageError(f"--input-file: non-finite value {arr[idx]} at index {idx} (NaN/inf are not inputs)")
    return np.vectorize(lambda v: Fraction(v.item() if hasattr(v, "item") else v), otypes=[object])(arr)


def random_case(N: int, d: int, H: int, L: int, mask: Mask, seed: int, *, layer_mlp: str = "auto",
                input_kind: str = "random", exact_kind: bool = True, residual: bool = False,
                input_file: str | None = None) -> Case:
    """A random model and input from one seed (or the input read from ``input_file``)."""
    spec = TransformerSpec(N, d, H, L, mask, residual)
    rng = np.random.default_rng(seed)
    weights = random_weights(spec, rng, layer_mlp, exact_kind)
    if input_file:
        X = load_input(input_file, spec)
    elif input_kind == "random":
        X = _grid(rng, (N, d), -2, 2, 2)
    elif input_kind == "large":
        X = _grid(rng, (N, d), -4, 4, 1)
    else:
        raise UsageError(f"--input: must be one of {INPUT_KINDS}, got {input_kind!r}")
    return Case(spec, weights, X)
