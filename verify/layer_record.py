"""Exact checks of every layer, not only of the grid-rounded output.

In exact numerics a multi-layer case rounds each layer's output onto a grid (``GridAffine``, so the
next layer's scores stay on (1/D)Z). Rounding is many-to-one: a construction whose attention output
is slightly wrong — and with weights z**(D·s) the softmax is very peaked, so errors are often small —
still gives the same rounded model output, and ``simulated == reference`` would pass. (Measured: a
padding count off by one in Thm 3.4's decode is invisible in the rounded output at L = 2, while
float64 sees 7–10 bits of error.)

:func:`record_layers` wraps every layer MLP ψ_ℓ of a case in :class:`Recorded`, which keeps each
input it is given — the exact layer output *before* rounding. The simulation and the reference each
call ψ_ℓ once on the whole N × d layer output, simulation first (``model_check.measure_model``), so
:func:`layer_mismatches` compares the two inputs of each layer with ``==``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.token_maps import TokenMap


@dataclass(frozen=True, eq=False)
class Recorded(TokenMap):
    """ψ as given, keeping each input (as exact rationals) in ``seen``."""

    inner: TokenMap
    seen: list[Array] = field(default_factory=list)

    @property
    def name(self) -> str:  # type: ignore[override]
        """The wrapped map's name."""
        return self.inner.name

    @property
    def is_identity(self) -> bool:  # type: ignore[override]
        """Whether the wrapped map is the identity."""
        return self.inner.is_identity

    def out_dim(self, in_dim: int) -> int:
        """The wrapped map's output width."""
        return self.inner.out_dim(in_dim)

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """Record the input exactly, then apply the wrapped map."""
        self.seen.append(np.vectorize(nm.to_fraction_or_float, otypes=[object])(x) if x.size else x)
        return self.inner(nm, x)


def record_layers(case: Any) -> Any:
    """The case with every non-identity ψ_ℓ wrapped in :class:`Recorded` (the same maps otherwise)."""
    layers = tuple(layer if layer.psi.is_identity else replace(layer, psi=Recorded(layer.psi))
                   for layer in case.weights.layers)
    return replace(case, weights=replace(case.weights, layers=layers))


def _error_bits(sim: np.ndarray, ref: np.ndarray) -> float:
    """-log2 of the largest row-wise relative L2 error (as in ``agreement``), in float."""
    s, r = sim.astype(float), ref.astype(float)
    err = np.linalg.norm(s - r, axis=1) / np.maximum(np.linalg.norm(r, axis=1), 1e-300)
    return float(-np.log2(err.max())) if err.max() > 0 else 60.0


def layer_mismatches(case: Any) -> tuple[int, list[str], float]:
    """(layers compared, reasons, error bits of the worst differing layer — inf when none differs):
    each recorded ψ_ℓ input of the simulation against the reference's, with ``==``."""
    compared, reasons, bits = 0, [], math.inf
    for li, layer in enumerate(case.weights.layers):
        psi = layer.psi
        if not isinstance(psi, Recorded):
            continue
        if len(psi.seen) != 2:
            reasons.append(f"layer {li}: ψ was called {len(psi.seen)} times, expected once by the simulation "
                           "and once by the reference")
            continue
        sim, ref = psi.seen
        compared += 1
        if sim.shape != ref.shape or not (sim == ref).all():
            rows = sorted({int(i) for i in np.argwhere(sim != ref)[:, 0]}) if sim.shape == ref.shape else []
            reasons.append(f"layer {li}: exact output before ψ (grid rounding) differs"
                           + (f" in rows {rows[:5]}" if rows else f": shapes {sim.shape} and {ref.shape}"))
            bits = min(bits, _error_bits(sim, ref) if rows else 0.0)
    return compared, reasons, bits
