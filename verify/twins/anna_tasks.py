"""Broken twins of anna.thm_5_4_direct and anna.thm_5_6_direct (checkers in verify/claims/anna_tasks.py)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator
from unittest import mock

import numpy as np

from attnsim.sim.anna import hop_transformer as hop
from attnsim.sim.anna.lsh import PStableLSH
from attnsim.sim.anna.transformer import Layer, LSHAttention
from attnsim.verify.claims import anna_tasks
from attnsim.verify.twins import twin


@twin("anna.thm_5_4_direct", "descend_leftmost",
      "the trie descent moves to the leftmost child holding the letter, not the rightmost",
      params={"N": 64}, kind="construction")
@contextmanager
def _descend_leftmost() -> Iterator[None]:
    real = hop._descend

    def leftmost(F: int, level: int, mech) -> Layer:
        layer = real(F, level, mech)

        def mix(x: np.ndarray, outs: list[np.ndarray]) -> np.ndarray:
            hit = np.column_stack([hop._ints(o) for o in outs]) > 0
            y = x.copy()
            for i in np.flatnonzero(x[:, hop.LEVEL] == level + 1):
                y[i, hop.LEVEL], y[i, hop.NODE] = level, int(x[i, hop.NODE]) * F + int(np.flatnonzero(hit[i])[0])
            return y

        return Layer(layer.heads, mix)

    with mock.patch.object(hop, "_descend", leftmost):
        yield


@twin("anna.thm_5_4_direct", "trie_level_short", "the position trie is a level short: its top never covers the string",
      params={"N": 64}, kind="construction")
@contextmanager
def _trie_level_short() -> Iterator[None]:
    real = hop.trie_depth
    with mock.patch.object(hop, "trie_depth", lambda N, fan: max(1, real(N, fan) - 1)):
        yield


@twin("anna.thm_5_6_direct", "low_bit_dropped", "pointer doubling skips the lowest binary digit of k",
      params={"N": 64, "k": 5}, kind="construction")
@contextmanager
def _low_bit_dropped() -> Iterator[None]:
    real, calls = hop._doubling, []

    def doubling(bit: int, square: bool, mech) -> Layer:
        calls.append(bit)
        return real(0 if len(calls) == 1 else bit, square, mech)

    with mock.patch.object(hop, "_doubling", doubling):
        yield


@twin("anna.thm_5_6_direct", "wide_buckets", "Algorithm 1 with buckets 50 wide, so distinct positions and letters "
      "collide (their averages read as integers)", params={"N": 64, "k": 32, "mechanism": "alg1"}, kind="construction")
@contextmanager
def _wide_buckets() -> Iterator[None]:
    def wide(kind: str, seed: int = 0) -> LSHAttention:
        return LSHAttention.draw(PStableLSH(2, 50.0), 1, 1, seed)

    def truncated(out: np.ndarray) -> np.ndarray:  # a head output read as integers, fractions cut off
        return np.array([int(v) for v in out[:, 0]], dtype=np.int64)

    with mock.patch.object(anna_tasks, "hop_mechanism", wide), mock.patch.object(hop, "_ints", truncated):
        yield


@twin("anna.thm_5_6_direct", "sink_shifted", "pointer values lose their +1 shift: the sink and position 0 are confused",
      params={"N": 64, "k": 32}, kind="construction")
@contextmanager
def _sink_shifted() -> Iterator[None]:
    real = hop._lookup

    def lookup(col: int, mech, value: int):
        head = real(col, mech, value)
        return type(head)(head.query, head.key, lambda x: x[:, value:value + 1], head.mechanism)

    with mock.patch.object(hop, "_lookup", lookup):
        yield
