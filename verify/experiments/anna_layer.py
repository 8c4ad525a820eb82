"""Trained surrogate weights run with attnsim's Algorithm 1 in place of the softmax (§6, App. G).

Each layer's attention becomes :func:`attnsim.sim.anna.attention.anna_tables` (Algorithm 1) on the surrogate's
unit queries and keys, with tables of one of the two angular families (:data:`FAMILIES`). The paper's experiments
use "the angular LSH of Andoni et al. 2015", the cross-polytope family of that paper
(:class:`attnsim.sim.anna.lsh.CrossPolytopeLSH`); where it discusses Algorithm 1's weights the paper also calls it
"random hyperplane LSH", the family :class:`attnsim.sim.anna.lsh.HyperplaneLSH` draws. Which one ran is not
stated, so both are offered (docs/reconstructions.md). A query that collides with no key outputs 0
(docs/reconstructions.md).

Two reorganisations keep the paper's grid affordable without changing what Algorithm 1 computes:

* **One draw per run and layer, read at every (ell, z).** Table u's hashes are the first z of z_max
  i.i.d. hashes of the family, and the tables are the first ell of ell_max: every grid cell is an
  independent-hash Algorithm 1, and the cells of one run share their draws (common random numbers).
  Each point's codes are computed once per run (:class:`SharedDraw`) and sliced.
* **Every ell of a (run, z) from one pass over the tables.** Algorithm 1 adds each table's bucket to a query's
  running (sum, count) in table order, so its output with the first ell tables is the running total after
  table ell: :func:`anna_attention_prefixes` builds each table once and reads the totals at every ell asked
  for, the same additions in the same order as a separate call per ell (a test holds the bits equal).
* **All test sequences in one call.** Algorithm 1 runs on each sequence on its own; stacking the
  sequences and prefixing every code with the sequence's index (:class:`PerSequenceTable`) keeps
  every bucket inside one sequence, so one call equals one call per sequence (a test holds this).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from attnsim.sim.anna.attention import Retrieval, anna_tables
from attnsim.sim.anna.lsh import CrossPolytopeLSH, HyperplaneLSH, TableHash, draw_tables, table_codes
from attnsim.sim.ledger import Ledger

FAMILIES = {"cross-polytope": CrossPolytopeLSH, "hyperplane": HyperplaneLSH}
"""The angular hash families Algorithm 1 can run the trained weights with, by name."""


@dataclass
class SharedDraw:
    """``ell_max`` tables of ``z_max`` hashes each on R^dim, of one family of :data:`FAMILIES`, and the codes of
    the point sets they hashed last (:meth:`prime`), found again by identity."""

    tables: list[TableHash]
    _known: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list, repr=False)

    @classmethod
    def draw(cls, rng: np.random.Generator, dim: int, ell_max: int, z_max: int,
             family: str = "cross-polytope") -> "SharedDraw":
        """Draw the tables (Algorithm 1, line 1) of ``family`` from ``rng``."""
        return cls(draw_tables(FAMILIES[family](dim), ell_max, z_max, rng))

    def prime(self, *arrays: np.ndarray, z: int | None = None) -> None:
        """Hash ``arrays`` (the queries and keys of one layer) in one product, each distinct point once, with the
        first ``z`` hashes of every table (default all), and keep their codes."""
        points, back = np.unique(np.vstack(arrays), axis=0, return_inverse=True)  # equal points, equal codes
        tables = self.tables if z is None else [_first(t, z) for t in self.tables]
        codes = table_codes(tables, points)[:, back.reshape(-1)]
        cuts = np.cumsum([0] + [len(a) for a in arrays])
        self._known = [(a, codes[:, lo:hi]) for a, lo, hi in zip(arrays, cuts[:-1], cuts[1:])]

    def codes(self, x: np.ndarray) -> np.ndarray:
        """Every table's z_max codes of ``x`` (ell_max x rows x z_max)."""
        for known, codes in self._known:
            if known is x:
                return codes
        return table_codes(self.tables, x)


def _first(table: TableHash, z: int) -> TableHash:
    """A table cut to its first ``z`` hashes (a cross-polytope table's rotations are its first z dim rows, a
    hyperplane table's normals its first z rows)."""
    rows = z * table.a.shape[1] if table.rotations else z
    return TableHash(table.a[:rows], table.b[:z], table.w, rotations=table.rotations)


@dataclass(frozen=True)
class PerSequenceTable:
    """Table ``u`` of a :class:`SharedDraw` cut to its first ``z_used`` hashes, on stacked sequences of
    ``length`` points: code entry 0 is the point's sequence, so no bucket mixes two sequences."""

    draw: SharedDraw
    u: int
    z_used: int
    length: int
    sequences: int

    @property
    def z(self) -> int:
        """Entries per code: the sequence, then the z hashes."""
        return self.z_used + 1

    @property
    def alphabet(self) -> int:
        """Values one entry takes: a hash value (2 dim of them for a cross-polytope, 2 for a hyperplane) or a
        sequence index."""
        return max(int(self.draw.tables[0].alphabet or 2), self.sequences)

    def codes(self, x: np.ndarray, *, ledger: Ledger | None = None, tag: str = "hash") -> np.ndarray:
        """(sequence, h_1(x), ..., h_z(x)) per row of ``x``."""
        seq = np.arange(x.shape[0], dtype=np.int64)[:, None] // self.length
        codes = self.draw.codes(x)
        assert codes.shape[2] >= self.z_used, "the draw was primed with fewer hashes per table"
        return np.hstack([seq, codes[self.u, :, : self.z_used]])


def anna_attention(draw: SharedDraw, q: np.ndarray, k: np.ndarray, v: np.ndarray, length: int, ell: int,
                   z: int) -> np.ndarray:
    """Algorithm 1 on each sequence of ``length`` rows of the stacked ``q``, ``k``, ``v`` (rows x m each) with the
    first ``ell`` tables of ``draw`` cut to ``z`` hashes; rows that retrieve nothing are 0. Prime the draw
    with these very ``q`` and ``k`` arrays to hash them once for every (ell, z)."""
    tables = [PerSequenceTable(draw, u, z, length, len(q) // length) for u in range(ell)]
    return anna_tables(q, k, v, tables).output()


def anna_attention_prefixes(draw: SharedDraw, q: np.ndarray, k: np.ndarray, v: np.ndarray, length: int,
                            ells: Sequence[int], z: int) -> dict[int, np.ndarray]:
    """:func:`anna_attention` at every ``ell`` of ``ells`` at once: each of the first max(ells) tables is built and
    probed once (Algorithm 1 on that one table), and its (sum, count) added to the running totals in table order,
    as Algorithm 1 adds them; the totals after table ell are Algorithm 1's with the first ell tables."""
    wanted = set(ells)
    sums, counts = np.zeros((len(q), v.shape[1])), np.zeros(len(q), dtype=np.int64)
    out: dict[int, np.ndarray] = {}
    for u in range(max(wanted)):
        one = anna_tables(q, k, v, [PerSequenceTable(draw, u, z, length, len(q) // length)])
        sums += one.sums
        counts += one.counts
        if u + 1 in wanted:
            out[u + 1] = Retrieval(sums.copy(), counts.copy()).output()
    return out
