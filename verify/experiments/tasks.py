"""The two experiments' data (App. G): Match2 with balanced batches, and 1-hop induction heads.

Labels come from attnsim's task references (``attnsim.sim.anna.tasks``): Match2 from
:func:`~attnsim.sim.anna.tasks.match2_labels` via the balanced generator
:func:`~attnsim.sim.anna.tasks.match2_batch` (our reading of the paper's Algorithm 3, given in prose only),
and k-hop labels from :func:`~attnsim.sim.anna.tasks.hop_labels`, which follows the generator of
Sanford et al. 2024.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attnsim.sim.anna.tasks import SINK, hop_labels, match2_batch, match2_labels

BINS = 4
"""Match2 batches are balanced over four bins of the share of ones: [0, 1/4), [1/4, 1/2), [1/2, 3/4), [3/4, 1]."""


def share_bin(labels: np.ndarray) -> np.ndarray:
    """Each row's bin of the share of ones (0 .. 3)."""
    return np.minimum(BINS - 1, (BINS * labels.mean(axis=-1)).astype(np.int64))


@dataclass(frozen=True)
class Match2Data:
    """A fixed Match2 training set, balanced over the four bins, and minibatches drawn a quarter per bin."""

    x: np.ndarray
    y: np.ndarray

    @classmethod
    def draw(cls, rng: np.random.Generator, size: int, N: int, modulus: int) -> "Match2Data":
        """``size`` sequences (a multiple of 4), a quarter in each bin; tokens are x_i - 1 (x_i in 1..M-1)."""
        x, y = match2_batch(rng, size, N=N, modulus=modulus, max_tries=200 * size)
        assert np.array_equal(y, np.stack([match2_labels(r, modulus) for r in x]))
        return cls(x - 1, y)

    def batches(self, rng: np.random.Generator, batch: int) -> tuple[np.ndarray, np.ndarray]:
        """``batch`` sequences (a multiple of 4) drawn with replacement, ``batch / 4`` from each bin."""
        rows = np.concatenate([rng.choice(members, batch // BINS) for members in self.bin_members])
        return self.x[rows], self.y[rows]

    @cached_property
    def bin_members(self) -> tuple[np.ndarray, ...]:
        """The rows of each bin, in order (found once: every minibatch draws from them)."""
        bins = share_bin(self.y)
        return tuple(np.flatnonzero(bins == b) for b in range(BINS))


LETTER_OFFSET = 2
"""Induction-heads input tokens: 0 and 1 are the hop counts k, 2 .. 2 + |Sigma| - 1 the letters."""


def induction_classes(alphabet: int) -> int:
    """Output classes: the letters, then ``~`` (no earlier occurrence), then the blank under the hop token."""
    return alphabet + 2


def induction_batch(rng: np.random.Generator, batch: int, *, N: int, alphabet: int,
                    hops: tuple[int, ...] = (0, 1)) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` fresh sequences X = (k, X') with X' of length N - 1 (no two equal neighbours) and targets
    (blank, the k-hop labels of X'); k is drawn uniformly from ``hops`` per sequence (App. G.2)."""
    first = rng.integers(alphabet, size=(batch, 1))
    steps = rng.integers(1, alphabet, size=(batch, N - 2))
    s = np.cumsum(np.hstack([first, steps]), axis=1) % alphabet
    k = rng.choice(np.asarray(hops), size=batch)
    labels = np.stack([hop_labels(row, int(kk)) for row, kk in zip(s, k)])
    labels = np.where(labels == SINK, alphabet, labels)
    x = np.hstack([k[:, None], s + LETTER_OFFSET])
    y = np.hstack([np.full((batch, 1), alphabet + 1), labels])
    return x.astype(np.int64), y.astype(np.int64)
