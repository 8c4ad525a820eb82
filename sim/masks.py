"""Attention masks of two_heads Defs 2.3–2.5 (1-based in the paper, 0-based here).

Each mask answers ``allowed(i, j)`` (may query i attend to key j) and ``materialize(N)`` (the N×N
boolean matrix, True = attend). ``block_count(N, b)`` counts the (query block, key block) pairs of
size-b blocks that contain at least one allowed entry — the tiles a blockwise method must visit.

``Causal().materialize(4)``::

    1 0 0 0
    1 1 0 0
    1 1 1 0
    1 1 1 1

``SlidingWindow(2).materialize(5)`` (query i sees i-1 and i)::

    1 0 0 0 0
    1 1 0 0 0
    0 1 1 0 0
    0 0 1 1 0
    0 0 0 1 1

``Sink(s=1, r=2).materialize(5)`` (the first token is always visible)::

    1 0 0 0 0
    1 1 0 0 0
    1 1 1 0 0
    1 0 1 1 0
    1 0 0 1 1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnsim.sim.errors import AttnsimError


class Mask:
    """A mask: which key j query i may attend to (0-based)."""
    name: str = "mask"
    causal: bool = False

    def allowed(self, i: int, j: int) -> bool:
        """Whether query ``i`` may attend to key ``j``."""
        raise NotImplementedError

    def materialize(self, n: int, m: int | None = None) -> np.ndarray:
        """Boolean (n × m) matrix of ``allowed`` for queries 0..n-1 and keys 0..m-1 (m defaults to n)."""
        i = np.arange(n)[:, None]
        j = np.arange(n if m is None else m)[None, :]
        return self._rule(i, j)

    def _rule(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def block_count(self, n: int, b: int) -> int:
        """Number of (query block, key block) pairs, blocks of size b, with an allowed entry."""
        if b < 1:
            raise AttnsimError(f"block size must be >= 1, got {b}")
        starts = range(0, n, b)
        full = self.materialize(n)
        return sum(bool(full[q:q + b, k:k + b].any()) for q in starts for k in starts)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Full(Mask):
    """No mask: every query sees every key."""

    name: str = "full"

    def allowed(self, i: int, j: int) -> bool:
        """Every key is allowed."""
        return True

    def _rule(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return np.broadcast_to(True, np.broadcast_shapes(i.shape, j.shape)).copy()


@dataclass(frozen=True)
class Causal(Mask):
    """two_heads Def 2.3: query i sees keys j <= i."""

    name: str = "causal"
    causal: bool = True

    def allowed(self, i: int, j: int) -> bool:
        """Keys j ≤ i are allowed (Def 2.3)."""
        return j <= i

    def _rule(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return j <= i


@dataclass(frozen=True)
class SlidingWindow(Mask):
    """two_heads Def 2.4: query i sees the r keys i-r+1..i."""

    r: int
    causal: bool = True

    def __post_init__(self) -> None:
        if self.r < 1:
            raise AttnsimError(f"r must be >= 1, got {self.r}", param="window")

    @property
    def name(self) -> str:  # type: ignore[override]
        """The mask's name with its window size."""
        return f"window(r={self.r})"

    def allowed(self, i: int, j: int) -> bool:
        """The last r keys up to i are allowed (Def 2.4)."""
        return i - self.r < j <= i

    def _rule(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return (j <= i) & (j > i - self.r)


@dataclass(frozen=True)
class Sink(Mask):
    """two_heads Def 2.5: query i sees the first s tokens (sinks) and its window of r keys."""

    s: int
    r: int
    causal: bool = True

    def __post_init__(self) -> None:
        if self.s < 1:
            raise AttnsimError(f"s must be >= 1, got {self.s}", param="sinks")
        if self.r < 1:
            raise AttnsimError(f"r must be >= 1, got {self.r}", param="window")

    @property
    def name(self) -> str:  # type: ignore[override]
        """The mask's name with its sink and window sizes."""
        return f"sink(s={self.s}, r={self.r})"

    def allowed(self, i: int, j: int) -> bool:
        """The first s keys and the last r keys up to i are allowed (Def 2.5)."""
        return j <= i and (j < self.s or j > i - self.r)

    def _rule(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return (j <= i) & ((j < self.s) | (j > i - self.r))
