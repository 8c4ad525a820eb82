"""Locality-sensitive hash families and their collision probabilities (§3.1, Algorithm 1, Thm 3.4 / A.1).

A family ``H`` of maps R^m -> Z is (r, cr, p1, p2)-sensitive when points within r collide with
probability >= p1 and points farther than cr with probability <= p2. Algorithm 1 (anna.alg_1)
concatenates ``z`` draws into one table hash ``g = (h_1, ..., h_z)`` and uses ``ell`` tables.

Three families are provided:

* :class:`HyperplaneLSH` -- random hyperplanes (Charikar's SimHash), an angular family:
  ``h(x) = [<a, x> >= 0]`` with ``a ~ N(0, I)``; two vectors at angle theta collide with
  probability ``1 - theta/pi``. On the unit sphere, Euclidean distance d means
  theta = 2 asin(d/2). (The paper's experiments use the cross-polytope family of Andoni et al.
  2015; hyperplanes are the default because their collision probability has this closed form.)
* :class:`PStableLSH` -- the Gaussian (2-stable) family of Datar et al. 2004 for l2:
  ``h(x) = floor((<a, x> + b) / w)`` with ``a ~ N(0, I)``, ``b ~ U[0, w)``.
* :class:`CrossPolytopeLSH` -- the cross-polytope family of Andoni et al. 2015, the hash the
  paper's analysis and experiments refer to (Section 3.1, App. G): rotate by a Gaussian matrix
  ``A`` and return the closest of the 2 dim signed unit vectors, ``h(x) = argmax_{+-e_i} <+-e_i, A x>``
  (code i for +e_i, dim + i for -e_i). Its collision probability has no elementary closed form.

The families' collision probabilities (p1, p2) live in ``attnsim.theory.lsh`` only: a construction
does not know the quantities its parameters are chosen from.

Identical points always get identical codes, whatever the draw: this is what lets Algorithm 1
reproduce exact-match attention at r = 0 (App. B).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from attnsim.sim.anna.errors import AnnaInputError, as_matrix, require
from attnsim.sim.ledger import Ledger


@dataclass(frozen=True)
class TableHash:
    """One table's hash g = (h_1, ..., h_z): projections ``a`` (z x m), offsets ``b``, width ``w``.

    ``w is None`` marks a hyperplane (sign) hash; otherwise the p-stable floor hash. With
    ``rotations`` set the table is a cross-polytope hash: ``a`` stacks the z rotation matrices
    (z * dim rows) and each code entry is in 0 .. 2 dim - 1.
    """

    a: np.ndarray
    b: np.ndarray
    w: float | None
    rotations: bool = False

    @property
    def z(self) -> int:
        """Number of concatenated hash functions in this table."""
        return int(self.a.shape[0] // self.a.shape[1]) if self.rotations else int(self.a.shape[0])

    @property
    def alphabet(self) -> int | None:
        """Number of values one code entry takes (None: unbounded, the p-stable floor hash)."""
        if self.rotations:
            return 2 * int(self.a.shape[1])
        return 2 if self.w is None else None

    def packed(self, x: np.ndarray) -> list[int]:
        """Each row's z code entries as one integer sum_t code_t * alphabet^t (one word of O(z log alphabet) bits)."""
        return self.pack(self.codes(x))

    def pack(self, codes: np.ndarray) -> list[int]:
        """Rows of this table's codes (:meth:`codes`) as one integer each, as :meth:`packed` gives them."""
        A = self.alphabet
        require(A is not None, "hashes", "a p-stable code is unbounded and cannot be packed into one word")
        weights = [A**t for t in range(self.z)]
        if A**self.z <= 2**62:  # every packed code is below A^z: exact in int64
            return (codes @ np.array(weights, dtype=np.int64)).tolist()
        return [sum(int(c) * w_ for c, w_ in zip(row, weights)) for row in codes]

    def codes(self, x: np.ndarray, *, ledger: Ledger | None = None, tag: str = "hash") -> np.ndarray:
        """Integer codes, one row of z entries per row of ``x``; records z * len(x) hash evaluations."""
        return _hashed([self], x, ledger, tag)[0]

    @property
    def kind(self) -> tuple:
        """What tables of one family share: the shape of ``a`` and the kind of hash (sign, floor, cross-polytope)."""
        return self.a.shape, self.w is None, self.rotations


def _project(tables: Sequence[TableHash], x: np.ndarray) -> np.ndarray:
    """The codes of the rows of ``x`` under tables of one :attr:`TableHash.kind` (tables x rows x z), from one
    stacked product of the tables' projections with ``x`` (a small product per table, as each table alone)."""
    first, n = tables[0], x.shape[0]
    a = first.a[None] if len(tables) == 1 else np.stack([t.a for t in tables])
    proj = (a @ x.astype(np.float64).T).transpose(0, 2, 1)
    if first.rotations:
        d = first.a.shape[1]
        blocks = proj.reshape(len(tables), n, first.z, d)
        idx = np.argmax(np.abs(blocks), axis=3)
        neg = np.take_along_axis(blocks, idx[..., None], axis=3)[..., 0] < 0
        out = idx + d * neg
    elif first.w is None:
        out = proj >= 0
    else:
        b = np.stack([t.b for t in tables])[:, None, :]
        w = np.array([t.w for t in tables])[:, None, None]
        out = np.floor((proj + b) / w)
    return out.astype(np.int64)


def _hashed(tables: Sequence[TableHash], x: np.ndarray, ledger: Ledger | None, tag: str) -> np.ndarray:
    """:func:`_project` of the validated ``x``, with each table's ledger entry of z * rows hash evaluations."""
    x = as_matrix(x, "points")
    dim = tables[0].a.shape[1]
    if x.shape[1] != dim:
        raise AnnaInputError(f"points: dimension {x.shape[1]} does not match the hash dimension {dim}")
    out = _project(tables, x)
    if ledger is not None:
        n, z = out.shape[1], out.shape[2]
        for _ in tables:
            ledger.record("hash", tag, shape=(n, z), amount=n * z, flops=2 * n * z * dim)
    return out


def table_codes(hashes: Sequence[TableHash | ExactCode], x: np.ndarray, *, ledger: Ledger | None = None,
                tag: str = "hash") -> np.ndarray:
    """Every table's codes of ``x`` (ell x rows x z): for each table g what ``g.codes(x)`` gives, with its ledger
    entry. Draws of one family (Algorithm 1, line 1: :class:`TableHash` of one :attr:`~TableHash.kind`) are
    projected in one product; other tables one by one."""
    hashes = list(hashes)
    require(len({g.z for g in hashes}) == 1, "hashes", "every table must concatenate the same number z of hashes")
    if all(isinstance(g, TableHash) for g in hashes) and len({g.kind for g in hashes}) == 1:
        return _hashed(hashes, x, ledger, tag)
    return np.stack([g.codes(x, ledger=ledger, tag=tag) for g in hashes])


def code_keys(codes: np.ndarray, levels: Sequence[int] | None = None) -> np.ndarray:
    """Each row of integer codes as one opaque sortable scalar, for table look-ups: equal rows, equal keys.

    With ``levels`` (entry t of every row lies in 0 .. levels[t] - 1) whose product is below 2^63, a row's key is
    its number in that mixed radix (an int64, quick to sort and search); otherwise the row's bytes (a numpy void).
    Rows compared with each other must be keyed with the same ``levels``."""
    c = np.ascontiguousarray(codes, dtype=np.int64)
    radix = None if levels is None else _radix(tuple(levels))
    if radix is not None:
        top, place = radix
        require(len(top) == c.shape[1] and bool(c.min(initial=0) >= 0 and (c < top).all()), "codes",
                "an entry lies outside its levels")
        return c @ place
    return c.view(np.dtype((np.void, c.dtype.itemsize * c.shape[1]))).ravel()


@lru_cache(maxsize=64)
def _radix(levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """The levels and the place value of each entry (levels[0] * ... * levels[t - 1]) as int64 arrays; None when
    the levels' product reaches 2^63 (a key would not fit one int64)."""
    place = [1]
    for n in levels:
        place.append(place[-1] * n)
    if place[-1] >= 2**63:
        return None
    top, weights = np.array(levels, dtype=np.int64), np.array(place[:-1], dtype=np.int64)
    top.flags.writeable = weights.flags.writeable = False  # shared by every call with these levels
    return top, weights


def code_levels(hashes: Sequence[TableHash | ExactCode]) -> list[int] | None:
    """The levels of one code entry of every table, z times (for :func:`code_keys`); None when a table's entries
    are unbounded (the p-stable floor hash) or the tables' alphabets differ."""
    alphabets = {g.alphabet for g in hashes}
    if len(alphabets) != 1 or None in alphabets:
        return None
    return [alphabets.pop()] * hashes[0].z


@dataclass(frozen=True)
class HyperplaneLSH:
    """Random-hyperplane family on R^dim (angular)."""

    dim: int

    def __post_init__(self) -> None:
        require(isinstance(self.dim, int) and self.dim >= 1, "dim", f"must be a positive integer, got {self.dim!r}")

    def draw(self, rng: np.random.Generator, z: int) -> TableHash:
        """Draw one table of ``z`` random-hyperplane hashes."""
        require(z >= 1, "z", f"must be >= 1, got {z}")
        return TableHash(rng.standard_normal((z, self.dim)), np.zeros(z), None)


@dataclass(frozen=True)
class PStableLSH:
    """Gaussian p-stable family on R^dim with bucket width ``width``."""

    dim: int
    width: float = 1.0

    def __post_init__(self) -> None:
        require(isinstance(self.dim, int) and self.dim >= 1, "dim", f"must be a positive integer, got {self.dim!r}")
        require(math.isfinite(self.width) and self.width > 0, "width", f"must be a positive number, got {self.width}")

    def draw(self, rng: np.random.Generator, z: int) -> TableHash:
        """Draw one table of ``z`` p-stable (Gaussian projection, random offset) hashes."""
        require(z >= 1, "z", f"must be >= 1, got {z}")
        return TableHash(rng.standard_normal((z, self.dim)), rng.uniform(0, self.width, z), self.width)


@dataclass(frozen=True)
class CrossPolytopeLSH:
    """Cross-polytope family on R^dim (angular; Andoni et al. 2015): a Gaussian rotation, then the nearest +-e_i."""

    dim: int

    def __post_init__(self) -> None:
        require(isinstance(self.dim, int) and self.dim >= 2, "dim", f"must be an integer >= 2, got {self.dim!r}")

    def draw(self, rng: np.random.Generator, z: int) -> TableHash:
        """Draw one table's hash: z random rotations (cross-polytope), no offsets."""
        require(z >= 1, "z", f"must be >= 1, got {z}")
        return TableHash(rng.standard_normal((z * self.dim, self.dim)), np.zeros(z), None, rotations=True)


@dataclass(frozen=True)
class ExactCode:
    """The code of exact-match attention (EMA, App. B): a point's integer coordinates themselves.

    With this single "hash" Algorithm 1's buckets are the classes of equal keys, so one table
    computes EMA (App. B reads EMA as ANNA with r = 0: near means identical). Coordinates
    must be integers in 0 .. ``alphabet`` - 1; ``z`` is the dimension.
    """

    dim: int
    alphabet: int

    def __post_init__(self) -> None:
        require(isinstance(self.dim, int) and self.dim >= 1, "dim", f"must be a positive integer, got {self.dim!r}")
        require(isinstance(self.alphabet, int) and self.alphabet >= 2, "alphabet",
                f"must be an integer >= 2, got {self.alphabet!r}")

    @property
    def z(self) -> int:
        """The number of hash values per table."""
        return self.dim

    def codes(self, x: np.ndarray, *, ledger: Ledger | None = None, tag: str = "hash") -> np.ndarray:
        """The integer coordinates (checked to lie in 0 .. alphabet - 1)."""
        x = as_matrix(x, "points")
        require(x.shape[1] == self.dim, "points", f"dimension {x.shape[1]} does not match {self.dim}")
        out = np.asarray(x, dtype=np.int64)
        require(bool(np.all(out == x)) and int(out.min()) >= 0 and int(out.max()) < self.alphabet, "points",
                f"exact codes need integers in 0..{self.alphabet - 1}")
        return out

    def packed(self, x: np.ndarray) -> list[int]:
        """Each row as one integer sum_t x_t alphabet^t."""
        return self.pack(self.codes(x))

    def pack(self, codes: np.ndarray) -> list[int]:
        """Rows of codes (:meth:`codes`) as one integer each, as :meth:`packed` gives them."""
        return [sum(int(c) * self.alphabet**t for t, c in enumerate(row)) for row in codes]


Family = HyperplaneLSH | PStableLSH | CrossPolytopeLSH
FAMILIES = {"hyperplane": HyperplaneLSH, "cross-polytope": CrossPolytopeLSH}
"""The angular families by their command-line names (``--lsh``)."""


def draw_tables(family: Family, ell: int, z: int, rng: np.random.Generator) -> list[TableHash]:
    """``ell`` independent table hashes, each a concatenation of ``z`` draws (Algorithm 1, line 1)."""
    if not (isinstance(ell, (int, np.integer)) and ell >= 1):
        raise AnnaInputError(f"ell: the number of tables must be a positive integer, got {ell!r}")
    if not (isinstance(z, (int, np.integer)) and z >= 1):
        raise AnnaInputError(f"z: the concatenation length must be a positive integer, got {z!r}")
    return [family.draw(rng, int(z)) for _ in range(int(ell))]
