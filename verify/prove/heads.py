"""The three head plans of Two Heads as call families, with the witnesses a proof needs.

A head plan (``sim/two_heads/plan.py``) is a set of call *families* — a layout kind such as
Theorem 3.5's ``high.norm`` — each indexed by a few integers (block indices, a chunk) over a
*domain*. For the proof the prover adds, per family, a *rank* (the position of an index in the
construction's enumeration) and, per (query, key) pair, *witnesses*: the calls meant to see it. The
rank and witnesses are proof certificates, not plan: each is checked against the plan's own
functions (enumeration, layouts), so a wrong certificate fails the proof, never passes it.

Sizes are solver integers: N, M, b = M − strict, and the window r and sinks s for Theorem 5.1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import z3

from attnsim.sim.two_heads import plan as P
from attnsim.verify.prove.z3kit import Z3


@dataclass(frozen=True)
class Sizes:
    """The solver's size variables and the variant (length convention, scheme, sinks) being proved."""

    N: Any
    M: Any
    r: Any
    s: Any
    strict: int
    fused: bool
    sinks: bool = False
    length: Any = None  # Theorem 3.4: every job padded to min(N, b) + 1 rows

    @property
    def b(self) -> Any:
        """Real tokens per block."""
        return self.M - self.strict

    @property
    def max_len(self) -> Any:
        """The oracle's length: M + 1 (paper convention) or M (strict)."""
        return self.M + 1 - self.strict

    def hyps(self, window: bool, min_M: int) -> list[Any]:
        """What the sizes satisfy: N ≥ 1, M at least the construction's minimum, and for a window
        r ≥ 1, s ≥ 1 with sinks (0 without), s + r < b."""
        out = [self.N >= 1, self.M >= min_M, self.b >= 1]
        if window:
            out += [self.r >= 1, self.s >= 1 if self.sinks else self.s == 0, self.s + self.r < self.b]
        return out


@dataclass(frozen=True)
class Family:
    """Calls of one layout kind: ``domain(sz, idx)``, ``layout(sz, idx)``, ``rank(sz, idx)`` (a call number)."""

    name: str
    step: str
    arity: int
    domain: Callable[[Sizes, tuple], Any]
    layout: Callable[[Sizes, tuple], P.Layout]
    rank: Callable[[Sizes, tuple], Any]


@dataclass(frozen=True)
class HeadPlan:
    """A head's families, whether the oracle is causal, the large model's mask and the witnesses."""

    name: str
    families: tuple[Family, ...]
    causal: bool
    allowed: Callable[[Sizes, Any, Any], Any]
    witnesses: Callable[[Sizes, Any, Any], list[tuple[str, tuple]]]
    # the enumeration: count(sz) -> calls; decode(sz, c) -> (family name per concrete case, idx) cases
    count: Callable[[Sizes], Any]
    decode: Callable[[Sizes, Any], list[tuple[Any, str, tuple]]]
    window: bool = False
    rowed: bool = False  # enumerated per query block (Theorem 3.5): decode's query block is ROW


ROW = z3.Int("tq")


def _n(sz: Sizes) -> Any:
    return P.num_blocks(Z3, sz.N, sz.b)


def _blen(sz: Sizes, t: Any) -> Any:
    return P.block_len(Z3, sz.N, sz.b, P.block_start(t, sz.b))


# -- Lemma 3.1 (and Theorem 3.4 with equal job lengths) --------------------------------------------

def pair_plan(fused: bool) -> Callable[[Sizes], HeadPlan]:
    """Lemma 3.1's head: n² block pairs, one family per step."""
    names = P.steps(fused)
    per = len(names)

    def fam(si: int, step: str) -> Family:
        return Family(f"pair.{step}", step, 2,
                      lambda sz, x: z3.And(x[0] >= 0, x[0] < _n(sz), x[1] >= 0, x[1] < _n(sz)),
                      lambda sz, x: P.pair_layout(Z3, _blen(sz, x[0]), _blen(sz, x[1]), P.block_start(x[0], sz.b),
                                                  P.block_start(x[1], sz.b), step, sz.length),
                      lambda sz, x: (x[0] * _n(sz) + x[1]) * per + si)

    def decode(sz: Sizes, c: Any) -> list[tuple[Any, str, tuple]]:
        tq, tk, si = P.pair_index(Z3, _n(sz), fused, c)
        return [(si == k, f"pair.{step}", (tq, tk)) for k, step in enumerate(names)]

    def build(sz: Sizes) -> HeadPlan:
        return HeadPlan("lemma_3_1", tuple(fam(k, s) for k, s in enumerate(names)), False,
                        lambda sz, i, j: z3.BoolVal(True),
                        lambda sz, i, j: [(f"pair.{s}", (i / sz.b, j / sz.b)) for s in names],
                        lambda sz: P.pair_count(_n(sz), fused), decode)

    return build


# -- Theorem 3.5 (and Claim B.6) -------------------------------------------------------------------

def _row_rank(sz: Sizes, pi: int, si: int, per: int, x: tuple) -> Any:
    tq, tk = x
    return (2 * tq if pi == 2 else 2 * tk + pi) * per + si


def causal_plan(fused: bool) -> Callable[[Sizes], HeadPlan]:
    """Theorem 3.5's head: index (query block, key block); the enumeration is per query block
    (``plan.causal_row_call``, the row is :data:`ROW`), ranks are within a row."""
    names = P.steps(fused)
    per = len(names)
    parts = ("low", "high", "own")

    def fam(pi: int, si: int, step: str) -> Family:
        part = parts[pi]
        if pi == 2:
            dom = lambda sz, x: z3.And(x[0] >= 0, x[0] < _n(sz), x[1] == x[0])  # noqa: E731
        else:
            dom = lambda sz, x: z3.And(x[1] >= 0, x[1] < x[0], x[0] < _n(sz))  # noqa: E731
        return Family(f"{part}.{step}", step, 2, dom,
                      lambda sz, x: P.causal_layout(sz.b, _blen(sz, x[0]), _blen(sz, x[1]), P.block_start(x[0], sz.b),
                                                    P.block_start(x[1], sz.b), part, step),
                      lambda sz, x: (2 * x[0] if pi == 2 else 2 * x[1] + pi) * per + si)

    def decode(sz: Sizes, c: Any) -> list[tuple[Any, str, tuple]]:
        t, pi, si = P.causal_row_call(Z3, ROW, fused, c)
        return [(z3.And(pi == n, si == k), f"{p}.{s}", (ROW, t)) for n, p in enumerate(parts)
                for k, s in enumerate(names)]

    def build(sz: Sizes) -> HeadPlan:
        fams = tuple(fam(n, k, s) for n in range(3) for k, s in enumerate(names))
        return HeadPlan("thm_3_5", fams, True, lambda sz, i, j: j <= i,
                        lambda sz, i, j: [(f.name, (i / sz.b, j / sz.b)) for f in fams],
                        lambda sz: P.causal_row_count(ROW, fused), decode, rowed=True)

    return build


def b6_plan(fused: bool) -> Callable[[Sizes], HeadPlan]:
    """Claim B.6: one ``own`` normaliser call per block; the large mask is causal within a block."""

    def build(sz: Sizes) -> HeadPlan:
        fam = Family("own.norm", "norm", 1, lambda sz, x: z3.And(x[0] >= 0, x[0] < _n(sz)),
                     lambda sz, x: P.causal_layout(sz.b, _blen(sz, x[0]), _blen(sz, x[0]), P.block_start(x[0], sz.b),
                                                   P.block_start(x[0], sz.b), "own", "norm"),
                     lambda sz, x: x[0])
        return HeadPlan("claim_b_6", (fam,), True, lambda sz, i, j: z3.And(j <= i, i / sz.b == j / sz.b),
                        lambda sz, i, j: [("own.norm", (i / sz.b,))], lambda sz: _n(sz),
                        lambda sz, c: [(z3.BoolVal(True), "own.norm", (c,))])

    return build


# -- Theorem 5.1 -----------------------------------------------------------------------------------

def window_plan(fused: bool) -> Callable[[Sizes], HeadPlan]:
    """Theorem 5.1's head: the first s + r queries, then per chunk P (sign +1) and S (sign −1)."""
    names = P.steps(fused)
    per = len(names)

    def chunks(sz: Sizes) -> Any:
        return P.num_chunks(Z3, sz.N, sz.b, sz.r, sz.s)

    def fam(part: str, si: int, step: str) -> Family:
        pi = P.WINDOW_PARTS.index(part)
        if part == "head":
            dom = lambda sz, x: x[0] == 0  # noqa: E731
        else:
            dom = lambda sz, x: z3.And(x[0] >= 0, x[0] < chunks(sz))  # noqa: E731
        return Family(f"{part}.{step}", step, 1, dom,
                      lambda sz, x: P.window_layout(Z3, sz.N, sz.b, sz.r, sz.s, part, x[0], step),
                      lambda sz, x: (z3.IntVal(0) if pi == 0 else 2 * x[0] + pi) * per + si)

    def decode(sz: Sizes, c: Any) -> list[tuple[Any, str, tuple]]:
        pi, k, si = P.window_index(Z3, fused, c)
        return [(z3.And(pi == n, si == m), f"{p}.{s}", (k,))
                for n, p in enumerate(P.WINDOW_PARTS) for m, s in enumerate(names)]

    def witnesses(sz: Sizes, i: Any, j: Any) -> list[tuple[str, tuple]]:
        k = (i - sz.s - sz.r) / (sz.b - sz.s - sz.r)
        return [(f"{p}.{s}", (z3.IntVal(0),) if p == "head" else (k,)) for p in P.WINDOW_PARTS for s in names]

    def build(sz: Sizes) -> HeadPlan:
        fams = tuple(fam(p, k, s) for p in P.WINDOW_PARTS for k, s in enumerate(names))
        return HeadPlan("thm_5_1", fams, True,
                        lambda sz, i, j: z3.And(j <= i, z3.Or(j > i - sz.r, j < sz.s)),
                        witnesses, lambda sz: P.window_count(chunks(sz), fused), decode, window=True)

    return build
