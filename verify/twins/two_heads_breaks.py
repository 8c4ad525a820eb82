"""Breaks of the Two Heads constructions (Lemma 3.1's blocks, eq. (1), the synthetic token, the masks),
shared by the ``two_heads_*`` twin modules; no twins are registered here.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np

from attnsim.sim import oracle as oracle_module
from attnsim.sim.ledger import Entry, Ledger
from attnsim.sim.masks import Causal, Sink, SlidingWindow
from attnsim.sim.two_heads import blocks, causal
from attnsim.verify.twins.breaks import oracle_unlimited, together, wrapped


def block_shift() -> Any:
    """Every block after the first starts one token late (a block boundary off by one)."""
    return wrapped(blocks.block_starts, lambda f, N, b: [s + 1 if s else 0 for s in f(N, b)])


def pad_off() -> Any:
    """Step 1's decode counts one padding row too many: A = (2 + k)p/(1 − p) instead of (1 + k)p/(1 − p)."""
    return wrapped(blocks.decode_A, lambda f, pad: f(pad + 1))


def stable_pad_off() -> Any:
    """The stable decode counts one padding row too many: A = (2 + k)p/q instead of (1 + k)p/q."""
    return wrapped(blocks.decode_A_stable, lambda f, pad: f(pad + 1))


def _complement_everywhere(f: Any, nm: Any, WQ: Any, WK: Any, WV: Any, decode: str = "paper") -> Any:
    Wq, Wk, Wv = f(nm, WQ, WK, WV, decode)
    if decode == "stable":
        Wv = Wv.copy()
        Wv[-1, -1] = nm.const(0, (1, 1))[0, 0]  # the column no longer subtracts the indicator: 1 on every row
    return Wq, Wk, Wv


def stable_complement_everywhere() -> Any:
    """The stable decode's complement column is the constant 1 on real keys too (the indicator left out), so
    q = 1 and the decode reads A + 1 + k where it wants A."""
    return wrapped(blocks.weights_step1, _complement_everywhere)


def stable_decode_subtracts() -> Any:
    """The stable decode ignores the complement column and computes q = 1 − p, as the paper's decode does:
    equal in exact arithmetic, and the bits are lost again (caught only by a precision check)."""

    def decoder(f: Any, pad: int) -> Any:
        def decode(nm: Any, H: Any) -> Any:
            p = H[:, :1]
            return f(pad)(nm, np.concatenate([p, nm.sub(nm.ones(p.shape), p)], axis=1))
        return decode

    return wrapped(blocks.decode_A_stable, decoder)


def _drop_last(f: Any, nm: Any, parts: Any) -> Any:
    A, B = f(nm, parts)
    last = list(A)[-1]
    del A[last], B[last]
    return A, B


def _double_last(f: Any, nm: Any, parts: Any) -> Any:
    A, B = f(nm, parts)
    last = list(A)[-1]
    A[last], B[last] = nm.add(A[last], A[last]), nm.add(B[last], B[last])
    return A, B


def drop_term() -> Any:
    """Eq. (1)'s recombination leaves out the last key block's term A, B."""
    return wrapped(blocks.sort_parts, _drop_last)


def double_term() -> Any:
    """Eq. (1)'s recombination counts the last key block's term A, B twice."""
    return wrapped(blocks.sort_parts, _double_last)


@contextmanager
def combine_unrecorded() -> Iterator[None]:
    """The recombination outside the oracle (eq. (1), the window sums) is done but not written to the ledger."""
    original = Ledger.record

    def record(self: Ledger, kind: str, tag: str, **kw: Any) -> Entry:
        if kind == "processing" and tag.endswith(".combine"):
            return Entry(kind, tag, int(kw.get("round", 0)))
        return original(self, kind, tag, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


def _heavier_synthetic(job: Any, row: int) -> Any:
    Z = job.Z.copy()
    Z[row, -2] = Z[row, -2] + Z[row, -2]
    return dataclasses.replace(job, Z=Z)


def synthetic_weight() -> Any:
    """The synthetic token of Step 1 scores 2 instead of 1 (its weight is e² where the decode assumes e)."""
    def build(f: Any, *a: Any, **k: Any) -> Any:
        jobs, plans = f(*a, **k)
        return [_heavier_synthetic(j, -1) if j.tag.endswith((".step1", ".fused")) else j for j in jobs], plans
    return wrapped(blocks.head_jobs, build)


def synthetic_first_weight() -> Any:
    """The causal layouts' leading synthetic token scores 2 instead of 1."""
    def build(f: Any, nm: Any, Zkq: Any, bk: int) -> Any:
        Z = f(nm, Zkq, bk).copy()
        Z[0, -2] = Z[0, -2] + Z[0, -2]
        return Z
    return wrapped(causal.synthetic_first, build)


def longer_blocks() -> Any:
    """The construction uses blocks of b + 1 (the oracle's limits stay in place)."""
    def build(f: Any, *a: Any, **k: Any) -> Any:
        a = list(a)
        a[5] += 1
        return f(*a, **k)
    return wrapped(blocks.head_jobs, build)


def long_blocks() -> Any:
    """The oracle lets over-long and over-wide calls through, and the construction uses blocks of b + 1."""
    return together(oracle_unlimited(), longer_blocks())


def long_causal_blocks() -> Any:
    """The oracle lets over-long calls through, and the causal construction uses blocks of b + 1."""
    def build(f: Any, *a: Any, **k: Any) -> Any:
        a = list(a)
        a[5] += 1
        return f(*a, **k)
    return together(oracle_unlimited(), wrapped(causal.iter_causal_head_jobs, build))


@contextmanager
def reference_mask_off(kind: str) -> Iterator[None]:
    """The reference's mask boundary off by one: causal sees one future token, the window one more key,
    the sinks one more token."""
    rules = {
        "causal": (Causal, lambda self, i, j: j <= i + 1),
        "window": (SlidingWindow, lambda self, i, j: (j <= i) & (j > i - self.r - 1)),
        "sink": (Sink, lambda self, i, j: (j <= i) & ((j <= self.s) | (j > i - self.r))),
    }
    cls, rule = rules[kind]
    with mock.patch.object(cls, "_rule", rule):
        yield


class _TrilOffByOne:
    """numpy as the oracle module sees it, except that ``tril`` keeps one diagonal more."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def tril(m: Any, k: int = 0) -> Any:
        return np.tril(m, k + 1)


def oracle_mask_off() -> Any:
    """The causal oracle's mask lets every row see the next row too."""
    return mock.patch.object(oracle_module, "np", _TrilOffByOne())
