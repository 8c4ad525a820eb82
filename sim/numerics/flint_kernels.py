"""Exact attention through python-flint matrices (the ``exact`` numerics' fast path).

The ``exact`` numerics puts scores on the grid (1/D)Z and gives a score s the weight z**(D·s) with
z = p/q. Any row-constant factor cancels in attention (``Numerics.weights``), so row i is scaled by
q**kmax_i · p**(−kmin_i), where k = D·s: every weight becomes the *integer*
p**(k − kmin_i) · q**(kmax_i − k). Then

* scores are one ``fmpq_mat`` product, and their exponents come from one ``numer_denom``;
* the integer weights are built by indexing cached power tables (numpy object arrays, no Python
  loop over entries; with an integer base — the default z = 2 — q = 1 and only p's table is used), or,
  for exponents past :data:`TABLE_TOP`, from one power per distinct exponent
  and the numerators are one ``fmpz_mat`` product with the values over their common denominator;
* the row sums are one ``fmpz_mat`` product with a column of ones; each output entry is then
  one ``fmpq(numerator, row sum · denominator)``,

so the big rationals are never added one by one: the only gcds on big numbers are the n·d_v
canonicalisations of the outputs (the per-entry path does one per addition). The result is the same
rational as the generic path (rationals are canonical), so ``simulated == reference`` is unaffected.
A score off the grid returns None and the caller falls back to the generic path (which names the
offending score); a score exponent beyond 2**63, or weights that would not fit in the memory the process may
still take, is a NumericsError naming the numerics.
"""

from __future__ import annotations

import math

import numpy as np

from attnsim.sim.numerics.base import NumericsError
from attnsim.sim.numerics.memory_room import refuse_past_room

try:
    import flint
except ImportError:  # pragma: no cover
    flint = None


def round_to_grid(a: np.ndarray, denominator: int) -> np.ndarray:
    """Each fmpq rounded to the nearest multiple of 1/denominator, ties to even (as ``round`` of a
    Fraction), with integer division only: no Fraction and no gcd of the (often huge) entries."""
    out = np.empty(a.shape, dtype=object)
    flat, src = out.reshape(-1), a.reshape(-1)
    for i, x in enumerate(src):
        n, d = x.p * denominator, x.q
        fl, rem = divmod(n, d)
        twice = 2 * rem
        r = fl + 1 if twice > d else fl if twice < d else fl + (fl & 1)
        flat[i] = flint.fmpq(r, denominator)
    return out


TABLE_TOP = 4096
"""Exponents up to this are read off a cached table of every power of the base (at most TABLE_TOP²/2 · log2 base
bits: 1 MiB for z = 2). Larger exponents are built one distinct exponent at a time, so memory follows the
weights a call needs and never the square of its largest exponent (a score span of 5·10^5 grid units made a
table of 60 GB)."""


ALWAYS_FITS = 1 << 26
"""Weights needing at most this many bytes (64 MiB) are built without asking for the memory room (two /proc reads)."""


def _table(base: int, top: int, cache: dict[int, np.ndarray]) -> np.ndarray:
    """base**0 .. base**top (top <= TABLE_TOP) as a numpy object array of fmpz (cached, grown by doubling)."""
    table = cache.get(base)
    if table is None or len(table) <= top:
        old = [flint.fmpz(1)] if table is None else list(table)
        size = min(max(2 * len(old), top + 1), TABLE_TOP + 1)
        while len(old) < size:
            old.append(old[-1] * base)
        table = np.empty(size, dtype=object)
        table[:] = old
        cache[base] = table
    return table


def _powers_at(base: int, exps: np.ndarray, cache: dict[int, np.ndarray]) -> np.ndarray:
    """base**e for every e >= 0 of ``exps``, as an object array of fmpz of the same shape."""
    top = int(exps.max(initial=0))
    if top <= TABLE_TOP:
        return _table(base, top, cache)[exps]
    distinct, where = np.unique(exps, return_inverse=True)
    values = np.empty(len(distinct), dtype=object)
    b = flint.fmpz(base)
    values[:] = [b ** int(e) for e in distinct]
    return values[where.reshape(exps.shape)]


def _refuse_past_room(a: np.ndarray, b: np.ndarray, p: int, qd: int, grid: int, dv: int) -> None:
    """Refuse weights p**a · qd**b (and the n·dv numerators they make) that would not fit in the memory this
    process may still take (:func:`attnsim.sim.numerics.memory_room.refuse_past_room`): GMP would end the process."""
    lp, lq = math.log2(p), (math.log2(qd) if qd != 1 else 0.0)
    top = int(max(a.max(initial=0), b.max(initial=0)))
    weight_bits = float(a.sum()) * lp + float(b.sum()) * lq
    numerator_bits = a.shape[0] * dv * top * (lp + lq)
    need = 3 * weight_bits / 8 + 2 * numerator_bits / 8  # the weights, their matrix copy, the products
    if need > ALWAYS_FITS:
        refuse_past_room(need, f"exact: scores in one attention row span up to {top / grid:g} (exponents D·s up to "
                               f"{top}), so the integer weights z**(D·s)")


def flint_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, allowed: np.ndarray | None,
                    p: int, qd: int, grid: int, cache: dict[int, np.ndarray]) -> np.ndarray | None:
    """softmax-by-z attention of 2-D object arrays of fmpq; None when a score is off the grid."""
    n, dk = q.shape
    nk, dv = v.shape
    S = flint.fmpq_mat(n, dk, list(q.reshape(-1))) * flint.fmpq_mat(dk, nk, list(k.T.reshape(-1)))
    num, den = (S * grid).numer_denom()
    if den != 1:
        return None
    try:
        K = np.fromiter(map(int, num.entries()), dtype=np.int64, count=n * nk).reshape(n, nk)
    except OverflowError:
        raise NumericsError(f"exact: a score exponent D·s beyond 2**63 (scores up to "
                            f"{max(abs(int(x)) for x in num.entries()) / grid}): no weight z**(D·s) fits "
                            "in memory") from None
    if allowed is not None:
        allowed = np.broadcast_to(allowed, (n, nk))
        kmin = np.where(allowed, K, K.max()).min(axis=1, keepdims=True)
        kmax = np.where(allowed, K, K.min()).max(axis=1, keepdims=True)
        empty = ~allowed.any(axis=1, keepdims=True)
        kmin, kmax = np.where(empty, 0, kmin), np.where(empty, 0, kmax)
        K = np.where(allowed, K, kmin)
    else:
        kmin, kmax = K.min(axis=1, keepdims=True), K.max(axis=1, keepdims=True)
    a, b = K - kmin, kmax - K
    _refuse_past_room(a, b, p, qd, grid, dv)
    W = _powers_at(p, a, cache)
    if qd != 1:  # an integer base z needs no denominator powers
        W = W * _powers_at(qd, b, cache)
    if allowed is not None:
        W = np.where(allowed, W, flint.fmpz(0))
    Wm = flint.fmpz_mat(n, nk, list(W.reshape(-1)))
    rows = Wm * flint.fmpz_mat(nk, 1, [1] * nk)
    vnum, vden = flint.fmpq_mat(nk, dv, list(v.reshape(-1))).numer_denom()
    numer = Wm * vnum  # integer weights times integer values; one common denominator vden
    sums = np.empty(n, dtype=object)
    sums[:] = [x * vden for x in rows.entries()]
    out = np.empty((n, dv), dtype=object)
    flat = out.reshape(-1)
    zero = flint.fmpq(0)
    for i, (s, x) in enumerate(zip(np.repeat(sums, dv), numer.entries())):
        flat[i] = flint.fmpq(x, s) if s != 0 else zero  # a row with no allowed key outputs 0
    return out
