"""L-layer ANNA-transformers run by Algorithm 1 with fixed hash draws (the input of anna.thm_4_2 / Thm C.3).

A token's state is a tuple of exact words (integers or Fractions); layer l maps it, together with
the token's position, to a query point and a key point in R^m (token-wise maps, as the element-
wise assumption of Section 2 allows), a value tuple of ``mv`` exact words, and after attention to
the next state (``update``, the paper's psi between layers). The attention of every layer is
Algorithm 1 on that layer's ``hashes`` (one head: m H = m). :func:`run_stack` is the reference:
it evaluates the layers one after the other with :func:`attnsim.sim.anna.attention.anna_tables` and
returns every layer's (sums, counts), so an MPC simulation can be compared layer by layer,
exactly, before any rounding in ``update``.

:func:`clustered_stack` builds the test models: each layer puts the tokens into about N/4
clusters on the unit sphere (a token's cluster depends on its state, so layers interact), values
are the state itself, and ``update`` adds the floor of the attention output to the state.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import floor
from typing import Callable, Sequence

import numpy as np

from attnsim.sim.anna.attention import Retrieval, anna_tables
from attnsim.sim.anna.errors import require
from attnsim.sim.anna.lsh import ExactCode, TableHash
from attnsim.sim.ledger import Ledger

State = tuple
PointMap = Callable[[State, int], np.ndarray]


@dataclass(frozen=True)
class StackLayer:
    """One ANNA layer: token-wise query/key/value maps, Algorithm 1's tables, and the update psi."""

    query: PointMap
    key: PointMap
    value: Callable[[State, int], tuple]
    update: Callable[[State, int, tuple], State]
    hashes: tuple[TableHash, ...]


@dataclass(frozen=True)
class AnnaStack:
    """An L-layer ANNA-transformer over N tokens with value width ``mv``."""

    layers: tuple[StackLayer, ...]
    mv: int


def exact_row(sums: Sequence, count: int) -> tuple:
    """sums / count as Fractions (all zero when nothing was retrieved: the EMA convention)."""
    return tuple(Fraction(s) / count if count else Fraction(0) for s in sums)


Attend = Callable[..., Retrieval]


def run_stack(stack: AnnaStack, states: Sequence[State], *, ledger: Ledger | None = None,
              attend: Attend | None = None) -> tuple[list[State], list[Retrieval]]:
    """The reference: final states and every layer's (sums, counts).

    ``attend(q, k, v, ledger=, tag=)`` is the attention (default: Algorithm 1 on the layer's hashes;
    pass :func:`attnsim.sim.anna.attention.ema` for an exact-match stack).
    """
    xs = [tuple(s) for s in states]
    outs: list[Retrieval] = []
    for li, layer in enumerate(stack.layers):
        q = np.array([layer.query(x, i) for i, x in enumerate(xs)])
        k = np.array([layer.key(x, i) for i, x in enumerate(xs)])
        v = np.empty((len(xs), stack.mv), dtype=object)
        for i, x in enumerate(xs):
            v[i] = layer.value(x, i)
        if attend is None:
            got = anna_tables(q, k, v, layer.hashes, ledger=ledger, tag=f"stack.layer{li}")
        else:
            got = attend(q, k, v, ledger=ledger, tag=f"stack.layer{li}")
        outs.append(got)
        xs = [layer.update(x, i, exact_row(got.sums[i], int(got.counts[i]))) for i, x in enumerate(xs)]
    return xs, outs


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def clustered_stack(rng: np.random.Generator, N: int, m: int, r: float, tables: Sequence[Sequence[TableHash]],
                    mv: int = 2) -> tuple[AnnaStack, list[State]]:
    """A test model (module docstring) with one layer per entry of ``tables``, and its input states."""
    require(N >= 2, "N", f"must be >= 2, got {N}")
    require(m >= 2, "m", f"must be >= 2, got {m}")
    require(0 < r <= 2, "r", f"must be in (0, 2], got {r}")
    require(mv >= 1, "mv", f"must be >= 1, got {mv}")
    C = max(2, N // 4)
    layers = []
    for hashes in tables:
        centres = rng.standard_normal((C, m))
        jitter = rng.standard_normal((2, N, m))
        jitter *= (r / 8) / np.linalg.norm(jitter, axis=2, keepdims=True)

        def cluster(x: State, i: int, salt: int) -> int:
            return (floor(x[0]) * (2 * salt + 1) + i // 4 + salt) % C

        def query(x: State, i: int, centres=centres, jitter=jitter) -> np.ndarray:
            return _unit(_unit(centres[cluster(x, i, 0)]) + jitter[0, i])

        def key(x: State, i: int, centres=centres, jitter=jitter) -> np.ndarray:
            return _unit(_unit(centres[cluster(x, i, 1)]) + jitter[1, i])

        layers.append(StackLayer(query, key, value=lambda x, i: tuple(x),
                                 update=lambda x, i, out: tuple(a + floor(o) for a, o in zip(x, out)),
                                 hashes=tuple(hashes)))
    states = [tuple(int(t) for t in row) for row in rng.integers(-50, 51, size=(N, mv))]
    return AnnaStack(tuple(layers), mv), states


def exact_match_stack(rng: np.random.Generator, N: int, dim: int, alphabet: int, layers: int,
                      mv: int = 2) -> tuple[AnnaStack, list[State]]:
    """An L-layer EMA-transformer (anna.thm_c_1's input) and its input states.

    Query and key of layer l are ``dim`` integers in 0 .. alphabet - 1 computed from the state and
    the position (so equal queries and keys recur and every layer has matches); one
    :class:`attnsim.sim.anna.lsh.ExactCode` table makes Algorithm 1 compute EMA exactly.
    """
    require(N >= 2, "N", f"must be >= 2, got {N}")
    require(dim >= 1, "d", f"must be >= 1, got {dim}")
    require(alphabet >= 2, "alphabet", f"must be >= 2, got {alphabet}")
    code = (ExactCode(dim, alphabet),)
    out = []
    for li in range(layers):
        shift = rng.integers(alphabet, size=dim)

        def point(x: State, i: int, side: int, shift=shift) -> np.ndarray:
            base = floor(x[0]) + (i // 3 if side == 0 else i // 2)
            return np.array([(base * (t + 1) + shift[t]) % alphabet for t in range(dim)], dtype=np.int64)

        out.append(StackLayer(lambda x, i, point=point: point(x, i, 0), lambda x, i, point=point: point(x, i, 1),
                              value=lambda x, i: tuple(x),
                              update=lambda x, i, o: tuple(a + floor(b) for a, b in zip(x, o)), hashes=code))
    states = [tuple(int(t) for t in row) for row in rng.integers(0, alphabet, size=(N, mv))]
    return AnnaStack(tuple(out), mv), states
