"""Induction heads and k-hop as ANNA-transformers built from attention layers, our own construction.

Claims anna.thm_5_4_direct and anna.thm_5_6_direct (the paper's route is :mod:`attnsim.sim.anna.hop_route`).

Positions are 0-based and follow :mod:`attnsim.sim.anna.tasks`: sigma(i) = 1 + (the last t < i with
w_t = w_i), or the sink. Every layer is exact-match attention (EMA) or Algorithm 1 at r = 0 with
token-wise maps around it (the element-wise assumption of Section 2); no MPC machine is involved.
The reconstruction is stated in docs/anna_small_memory.md (section "Induction heads and k-hop").

**Predecessor search in an F-ary trie over positions.** Level-t nodes are the blocks of F^t
consecutive positions, D = ceil(log_F N) levels. A head that asks "does letter a occur in node n
of level t?" has query (a, n), key (w_j, j // F^t) and value 1: EMA returns 1 when some key
matches and 0 when none does. To find the last t <= p = i - 1 with w_t = a = w_i:

1. *locate* (one layer, D F heads): for every level t and child c, ask whether a occurs in the
   c-th child of the level-(t+1) ancestor of p, for the children strictly left of p's own branch
   (at level 0 also p itself). These nodes partition {0..p}; the answer lies in the lowest level
   with a hit, in its rightmost hit child;
2. *descend* (D - 1 layers, F heads each): layer r handles level D - 2 - r; a token whose current
   node sits one level above asks which of its F children contain a and moves to the rightmost.
   After the last layer the node is a position t, and sigma(i) = t + 1.

**k-hop** (Thm 5.6) then doubles pointers: A = sigma^(2^t), B = sigma^(k mod 2^t); layer t (for
every binary digit t of k, ``floor(log2 k) + 1`` layers) looks up A at A (one head) and, when
digit t is 1, A at B (a second head), each a position-keyed EMA with value A_j + 1 (0 = sink).
A last layer reads the letter at the final position (value w_j + 1, 0 = sink).

Layers: D + 1 for 1-hop, D + 2 + floor(log2 k) for k-hop; heads per layer at most D F; every
query and key has dimension 2 and every value dimension 1 -- all read off the ledger.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.lsh import PStableLSH
from attnsim.sim.anna.mpc_tree import levels
from attnsim.sim.anna.tasks import SINK
from attnsim.sim.anna.transformer import EMA, AnnaTransformer, Head, Layer, LSHAttention, Mechanism

NULL = -1
"""Query coordinate that no key has (letters and positions are >= 0)."""
W, POS, LEVEL, NODE, PA, PB = range(6)
"""State columns: letter, position, current trie level (-1: none), node id, pointers A and B."""


def hop_mechanism(kind: str, *, seed: int = 0) -> Mechanism:
    """``"ema"``, or ``"alg1"``: Algorithm 1 at r = 0 (one table, 4 narrow p-stable hashes on 2-dim integer points)."""
    require(kind in ("ema", "alg1"), "mechanism", f"must be 'ema' or 'alg1', got {kind!r}")
    return EMA() if kind == "ema" else LSHAttention.draw(PStableLSH(2, 1e-3), 1, 4, seed)


def _ints(out: np.ndarray) -> np.ndarray:
    """An exact N x 1 head output as integers (it is always 0 or a retrieved integer here)."""
    col = [Fraction(v) for v in out[:, 0]]
    require(all(v.denominator == 1 for v in col), "head output", "expected integer averages of equal values")
    return np.array([int(v) for v in col], dtype=np.int64)


def _pair(first: np.ndarray, second: np.ndarray, ok: np.ndarray) -> np.ndarray:
    return np.column_stack([np.where(ok, first, NULL), np.where(ok, second, NULL)])


def _ones(x: np.ndarray) -> np.ndarray:
    return np.ones((len(x), 1), dtype=np.int64)


def _locate(F: int, D: int, mech: Mechanism) -> Layer:
    heads = []
    for t in range(D):
        for c in range(F):
            def query(x: np.ndarray, t: int = t, c: int = c) -> np.ndarray:
                p = x[:, POS] - 1
                digit = (np.maximum(p, 0) // F**t) % F
                ok = (p >= 0) & ((c <= digit) if t == 0 else (c < digit))
                return _pair(x[:, W], (np.maximum(p, 0) // F ** (t + 1)) * F + c, ok)

            def key(x: np.ndarray, t: int = t) -> np.ndarray:
                return np.column_stack([x[:, W], x[:, POS] // F**t])

            heads.append(Head(query, key, _ones, mech))

    def mix(x: np.ndarray, outs: list[np.ndarray]) -> np.ndarray:
        hit = np.column_stack([_ints(o) for o in outs]).reshape(len(x), D, F) > 0
        y = x.copy()
        y[:, LEVEL] = NULL
        for i in range(len(x)):
            levels_hit = np.flatnonzero(hit[i].any(axis=1))
            if len(levels_hit):
                t = int(levels_hit[0])
                c = int(np.flatnonzero(hit[i, t])[-1])
                y[i, LEVEL], y[i, NODE] = t, ((int(x[i, POS]) - 1) // F ** (t + 1)) * F + c
        return y

    return Layer(tuple(heads), mix)


def _descend(F: int, level: int, mech: Mechanism) -> Layer:
    """Tokens whose node is on level ``level`` + 1 move to their rightmost child containing their letter."""
    heads = []
    for c in range(F):
        def query(x: np.ndarray, c: int = c) -> np.ndarray:
            return _pair(x[:, W], x[:, NODE] * F + c, x[:, LEVEL] == level + 1)

        def key(x: np.ndarray) -> np.ndarray:
            return np.column_stack([x[:, W], x[:, POS] // F**level])

        heads.append(Head(query, key, _ones, mech))

    def mix(x: np.ndarray, outs: list[np.ndarray]) -> np.ndarray:
        hit = np.column_stack([_ints(o) for o in outs]) > 0
        y = x.copy()
        for i in np.flatnonzero(x[:, LEVEL] == level + 1):
            y[i, LEVEL], y[i, NODE] = level, int(x[i, NODE]) * F + int(np.flatnonzero(hit[i])[-1])
        return y

    return Layer(tuple(heads), mix)


def _position_key(x: np.ndarray) -> np.ndarray:
    return np.column_stack([x[:, POS], np.zeros(len(x), dtype=np.int64)])


def _lookup(col: int, mech: Mechanism, value: int) -> Head:
    """Query position x[:, col] (sink: no query); the value is column ``value`` + 1 of the key token."""
    return Head(lambda x: _pair(x[:, col], np.zeros(len(x), dtype=np.int64), x[:, col] >= 0), _position_key,
                lambda x: x[:, value:value + 1] + 1, mech)


def _sigma_pointer(x: np.ndarray) -> np.ndarray:
    """After the trie layers: sigma(i) = t + 1 for the found position t, else the sink."""
    return np.where(x[:, LEVEL] == 0, x[:, NODE] + 1, SINK)


def _doubling(bit: int, square: bool, mech: Mechanism) -> Layer:
    heads = ([_lookup(PA, mech, PA)] if square else []) + ([_lookup(PB, mech, PA)] if bit else [])

    def mix(x: np.ndarray, outs: list[np.ndarray]) -> np.ndarray:
        y = x.copy()
        got = [_ints(o) - 1 for o in outs]
        if square:
            y[:, PA] = got.pop(0)
        if bit:
            y[:, PB] = got.pop(0)
        return y

    return Layer(tuple(heads), mix)


def _read(col: int, mech: Mechanism) -> Layer:
    return Layer((_lookup(col, mech, W),), lambda x, outs: np.column_stack([x, _ints(outs[0]) - 1]))


def _embed(x: object) -> np.ndarray:
    w = np.asarray(x, dtype=np.int64)
    require(w.ndim == 1 and len(w) >= 1, "string", "expected a non-empty 1-D string of letters")
    require(bool(np.all(w >= 0)), "string", "letters must be integers >= 0")
    out = np.zeros((len(w), 6), dtype=np.int64)
    out[:, W], out[:, POS] = w, np.arange(len(w))
    return out


def trie_depth(N: int, fan: int) -> int:
    """D = ceil(log_fan N): the levels of the position trie (at least 1)."""
    return max(1, levels(N, fan))


def _trie_layers(N: int, fan: int, mech: Mechanism) -> list[Layer]:
    require(N >= 2, "N", f"the string needs at least 2 letters, got {N}")
    require(fan >= 2, "fan", f"the trie needs fan >= 2, got {fan}")
    D = trie_depth(N, fan)
    return [_locate(fan, D, mech)] + [_descend(fan, lv, mech) for lv in range(D - 2, -1, -1)]


def induction_transformer(N: int, fan: int, mech: Mechanism) -> AnnaTransformer:
    """The 1-hop ANNA-transformer for strings of length N (anna.thm_5_4_direct): D + 1 layers."""
    def set_pointer(x: np.ndarray, outs: list[np.ndarray]) -> np.ndarray:
        y = x.copy()
        y[:, PA] = _sigma_pointer(x)
        return y

    layers = _trie_layers(N, fan, mech)
    last = layers[-1]
    layers[-1] = Layer(last.heads, lambda x, outs, last=last: set_pointer(last.mix(x, outs), []))
    return AnnaTransformer(embed=_embed, layers=tuple(layers) + (_read(PA, mech),),
                           readout=lambda x: x[:, -1].astype(np.int64))


def khop_transformer(N: int, k: int, fan: int, mech: Mechanism) -> AnnaTransformer:
    """The k-hop ANNA-transformer (anna.thm_5_6_direct): D + 2 + floor(log2 k) layers."""
    require(isinstance(k, int) and k >= 1, "k", f"must be a positive integer, got {k!r}")
    layers = _trie_layers(N, fan, mech)
    last = layers[-1]

    def start(x: np.ndarray, outs: list[np.ndarray], last: Layer = last) -> np.ndarray:
        y = last.mix(x, outs)
        y[:, PA], y[:, PB] = _sigma_pointer(y), y[:, POS]
        return y

    layers[-1] = Layer(last.heads, start)
    top = k.bit_length() - 1
    layers += [_doubling((k >> t) & 1, t < top, mech) for t in range(top + 1)]
    return AnnaTransformer(embed=_embed, layers=tuple(layers) + (_read(PB, mech),),
                           readout=lambda x: x[:, -1].astype(np.int64))

