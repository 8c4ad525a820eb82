"""L-layer ANNA-transformers run by Algorithm 1 with fixed hash draws (the input of anna.thm_4_2 / Thm C.3).

A token's state is a tuple of exact words (integers or Fractions); layer l maps it, together with
the token's position and a head h, to a query point and a key point in R^m (token-wise maps, as the
element-wise assumption of Section 2 allows) and a value tuple of ``mv`` exact words, and after
attention to the next state (``update``, the paper's psi between layers, which sees the H heads' rows
one after the other: sum_h Attn_h W_h with arbitrary token-wise maps). Head h of a layer is Algorithm 1
on its own ell tables, ``hashes[h ell : (h + 1) ell]`` (Section 2: an H-head layer; m H is the width
Thm 4.2 bounds). :func:`run_stack` is the reference: it evaluates the layers one after the other with
:func:`attnsim.sim.anna.attention.anna_tables` and returns every (layer, head)'s (sums, counts), so an
MPC simulation can be compared head by head, exactly, before any rounding in ``update``.

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
PointMap = Callable[[State, int, int], np.ndarray]
"""(state, position, head) -> a point of R^m."""


@dataclass(frozen=True)
class StackLayer:
    """One ANNA layer of ``heads`` heads: token-wise query/key/value maps (per head), Algorithm 1's tables
    (``len(hashes) / heads`` per head, head-major), and the update psi of the heads' rows."""

    query: PointMap
    key: PointMap
    value: Callable[[State, int, int], tuple]
    update: Callable[[State, int, tuple], State]
    hashes: tuple[TableHash, ...]
    heads: int = 1

    def tables(self, h: int) -> tuple[TableHash, ...]:
        """Head h's tables."""
        ell = len(self.hashes) // self.heads
        return self.hashes[h * ell:(h + 1) * ell]


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
    """The reference: final states and every (layer, head)'s (sums, counts), layer-major.

    ``attend(q, k, v, ledger=, tag=)`` is the attention (default: Algorithm 1 on the head's tables;
    pass :func:`attnsim.sim.anna.attention.ema` for an exact-match stack).
    """
    xs = [tuple(s) for s in states]
    outs: list[Retrieval] = []
    for li, layer in enumerate(stack.layers):
        heads = []
        for h in range(layer.heads):
            q = np.array([layer.query(x, i, h) for i, x in enumerate(xs)])
            k = np.array([layer.key(x, i, h) for i, x in enumerate(xs)])
            v = np.empty((len(xs), stack.mv), dtype=object)
            for i, x in enumerate(xs):
                v[i] = layer.value(x, i, h)
            tag = f"stack.layer{li}.head{h}"
            heads.append(anna_tables(q, k, v, layer.tables(h), ledger=ledger, tag=tag) if attend is None
                         else attend(q, k, v, ledger=ledger, tag=tag))
        outs.extend(heads)
        xs = [layer.update(x, i, sum((exact_row(g.sums[i], int(g.counts[i])) for g in heads), ()))
              for i, x in enumerate(xs)]
    return xs, outs


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def clustered_stack(rng: np.random.Generator, N: int, m: int, r: float, tables: Sequence[Sequence[TableHash]],
                    mv: int = 2, heads: int = 1) -> tuple[AnnaStack, list[State]]:
    """A test model (module docstring) with one layer per entry of ``tables`` (``heads`` heads sharing a layer's
    tables head-major), and its input states. Head h clusters the tokens with its own centres and salt; the
    update adds the floor of the heads' summed rows (W_h = identity) to the state."""
    require(N >= 2, "N", f"must be >= 2, got {N}")
    require(m >= 2, "m", f"must be >= 2, got {m}")
    require(0 < r <= 2, "r", f"must be in (0, 2], got {r}")
    require(mv >= 1, "mv", f"must be >= 1, got {mv}")
    require(heads >= 1, "heads", f"must be >= 1, got {heads}")
    C = max(2, N // 4)
    layers = []
    for hashes in tables:
        require(len(hashes) % heads == 0 and len(hashes) >= heads, "hashes",
                f"{len(hashes)} tables do not split evenly over {heads} heads")
        centres = rng.standard_normal((heads, C, m))
        jitter = rng.standard_normal((heads, 2, N, m))
        jitter *= (r / 8) / np.linalg.norm(jitter, axis=3, keepdims=True)

        def cluster(x: State, i: int, salt: int) -> int:
            return (floor(x[0]) * (2 * salt + 1) + i // 4 + salt) % C

        def query(x: State, i: int, h: int, centres=centres, jitter=jitter) -> np.ndarray:
            return _unit(_unit(centres[h, cluster(x, i, 2 * h)]) + jitter[h, 0, i])

        def key(x: State, i: int, h: int, centres=centres, jitter=jitter) -> np.ndarray:
            return _unit(_unit(centres[h, cluster(x, i, 2 * h + 1)]) + jitter[h, 1, i])

        def update(x: State, i: int, out: tuple) -> State:
            return tuple(a + floor(sum(out[t::mv])) for t, a in enumerate(x))

        layers.append(StackLayer(query, key, value=lambda x, i, h: tuple(x), update=update, hashes=tuple(hashes),
                                 heads=heads))
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

        out.append(StackLayer(lambda x, i, h, point=point: point(x, i, 0), lambda x, i, h, point=point: point(x, i, 1),
                              value=lambda x, i, h: tuple(x),
                              update=lambda x, i, o: tuple(a + floor(b) for a, b in zip(x, o)), hashes=code))
    states = [tuple(int(t) for t in row) for row in rng.integers(0, alphabet, size=(N, mv))]
    return AnnaStack(tuple(out), mv), states
