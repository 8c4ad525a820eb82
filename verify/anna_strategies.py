"""Public hypothesis strategies for the ANNA paper (Liu et al.): LSH point sets at the radii, Match2 and k-hop
inputs with their edge cases, and inputs of the MPC protocols. Re-exported by :mod:`attnsim.verify.strategies`.

- :func:`lsh_point_sets` — queries and keys on the unit sphere, each query with one key placed just inside the
  near radius r, strictly between r and cr, or just outside cr (Def. 3.1's (c, r)-ANN: the first must be found,
  the last may not be returned for the first);
- :func:`match2_inputs` — Match2 sequences (§5): self-matches (2x = 0 mod the modulus), the values 0 and the
  modulus itself, missing targets, and random ones, with the reference labels;
- :func:`khop_inputs` — k-hop strings (App. F) where a hop finds no earlier occurrence (the sink), one letter
  repeated, periodic strings, random ones, with k;
- :func:`mpc_inputs` — integer vectors for the MPC protocols (sort, prefix sum) with a machine count and a
  memory that fits exactly, loosely, or with one machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from attnsim.sim.anna.tasks import match2_labels

PAIR_KINDS = ("inside_r", "between", "outside_cr")
MATCH2_KINDS = ("self_match", "zero_and_modulus", "missing_target", "random")
KHOP_KINDS = ("sink", "one_letter", "periodic", "random")


@dataclass(frozen=True, eq=False)
class PointSet:
    """N queries and N keys (rows, unit vectors in R^m); key i is placed at ``distances[i]`` from query i, of
    the kind ``kinds[i]`` (one of :data:`PAIR_KINDS`) for radii r and c·r."""

    queries: np.ndarray
    keys: np.ndarray
    kinds: tuple[str, ...]
    distances: np.ndarray
    r: float
    c: float


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@st.composite
def lsh_point_sets(draw: st.DrawFn, max_N: int = 16, m: int = 8, r: float = 0.2, c: float = 3.0,
                   margin: float = 0.05) -> PointSet:
    """Point sets for (c, r)-ANN: each query's partner is within ``margin`` (relative) inside r, strictly
    between r and cr, or within ``margin`` outside cr (capped at the sphere's diameter 2)."""
    if not (m >= 2 and 0 < r and c > 1 and c * r < 2):
        raise ValueError(f"need m >= 2, r > 0, c > 1 and c*r < 2 on the unit sphere; got m={m}, r={r}, c={c}")
    N = draw(st.integers(1, max_N))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    kinds = tuple(draw(st.lists(st.sampled_from(PAIR_KINDS), min_size=N, max_size=N)))
    eps = st.floats(1e-6, margin)
    dist = []
    for kind in kinds:
        if kind == "inside_r":
            dist.append(r * (1 - draw(eps)))
        elif kind == "between":
            dist.append(draw(st.floats(r, c * r, exclude_min=True, exclude_max=True)))
        else:
            dist.append(min(2.0, c * r * (1 + draw(eps))))
    q = np.stack([_unit(rng.standard_normal(m)) for _ in range(N)])
    keys = []
    for qi, delta in zip(q, dist):
        u = rng.standard_normal(m)
        u = _unit(u - (u @ qi) * qi)  # orthogonal to the query
        theta = 2 * math.asin(delta / 2)  # chord delta on the unit sphere
        keys.append(math.cos(theta) * qi + math.sin(theta) * u)
    return PointSet(q, np.stack(keys), kinds, np.array(dist), r, c)


@dataclass(frozen=True, eq=False)
class Match2Input:
    """A Match2 sequence ``x`` of integers, its ``modulus``, the reference ``labels`` and the edge case ``kind``."""

    x: np.ndarray
    modulus: int
    labels: np.ndarray
    kind: str


@st.composite
def match2_inputs(draw: st.DrawFn, max_N: int = 16, moduli: tuple[int, ...] = (5, 8, 37)) -> Match2Input:
    """A Match2 input of one of :data:`MATCH2_KINDS`."""
    modulus = draw(st.sampled_from(moduli))
    N = draw(st.integers(1, max_N))
    kind = draw(st.sampled_from(MATCH2_KINDS))
    letters = st.integers(1, modulus - 1)
    if kind == "self_match":  # x with 2x = 0 (mod modulus): 0, and modulus/2 when it is an integer
        selfish = [0] + ([modulus // 2] if modulus % 2 == 0 else [])
        x = draw(st.lists(st.one_of(st.sampled_from(selfish), letters), min_size=N, max_size=N))
        x[draw(st.integers(0, N - 1))] = draw(st.sampled_from(selfish))
    elif kind == "zero_and_modulus":
        x = draw(st.lists(st.sampled_from([0, modulus]), min_size=N, max_size=N))
    elif kind == "missing_target":  # one side of each complementary pair only: nobody finds a partner
        lonely = [v for v in range(1, modulus) if 2 * v % modulus and v < modulus - v]
        x = draw(st.lists(st.sampled_from(lonely), min_size=N, max_size=N))
    else:
        x = draw(st.lists(letters, min_size=N, max_size=N))
    arr = np.array(x, dtype=np.int64)
    return Match2Input(arr, modulus, match2_labels(arr, modulus), kind)


@dataclass(frozen=True, eq=False)
class KHopInput:
    """A k-hop string ``s`` (letters 0..alphabet-1), the number of hops ``k`` and the edge case ``kind``."""

    s: np.ndarray
    k: int
    alphabet: int
    kind: str


@st.composite
def khop_inputs(draw: st.DrawFn, max_N: int = 16, max_k: int = 4, alphabet: int = 4) -> KHopInput:
    """A k-hop input of one of :data:`KHOP_KINDS` (``sink``: every letter distinct, so every hop is the sink)."""
    kind = draw(st.sampled_from(KHOP_KINDS))
    k = draw(st.integers(1, max_k))
    if kind == "sink":
        N = draw(st.integers(1, alphabet))
        s = draw(st.permutations(range(alphabet)))[:N]
    else:
        N = draw(st.integers(1, max_N))
        if kind == "one_letter":
            s = [draw(st.integers(0, alphabet - 1))] * N
        elif kind == "periodic":
            period = draw(st.integers(1, alphabet))
            s = [i % period for i in range(N)]
        else:
            s = draw(st.lists(st.integers(0, alphabet - 1), min_size=N, max_size=N))
    return KHopInput(np.array(s, dtype=np.int64), k, alphabet, kind)


@dataclass(frozen=True, eq=False)
class MPCInput:
    """An integer vector ``x`` for an MPC protocol, with ``machines`` and the local ``memory`` in words
    (None: the protocol's own minimum), and the ``kind`` of fit."""

    x: np.ndarray
    machines: int
    memory: int | None
    kind: str


@st.composite
def mpc_inputs(draw: st.DrawFn, max_N: int = 32, max_machines: int = 8, bound: int = 100) -> MPCInput:
    """An MPC input laid out in equal blocks: a power-of-two machine count dividing N (the bitonic sort's
    layout) — one machine, one value per machine, or a split — with random, sorted, reverse-sorted or constant
    values (duplicates among them)."""
    kind = draw(st.sampled_from(("one_machine", "one_value_per_machine", "split")))
    powers = [p for p in (1, 2, 4, 8, 16, 32) if p <= min(max_machines, max_N)]
    machines = 1 if kind == "one_machine" else draw(st.sampled_from(powers))
    block = 1 if kind == "one_value_per_machine" else draw(st.integers(1, max(1, max_N // machines)))
    N = machines * block
    order = draw(st.sampled_from(("random", "sorted", "reversed", "constant")))
    x = draw(st.lists(st.integers(-bound, bound), min_size=N, max_size=N))
    if order == "sorted":
        x = sorted(x)
    elif order == "reversed":
        x = sorted(x, reverse=True)
    elif order == "constant":
        x = [x[0]] * N
    return MPCInput(np.array(x, dtype=np.int64), machines, None, f"{kind}, {order}")
