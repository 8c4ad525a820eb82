"""What a call of a plan sees, as solver formulas over the plan's own layouts (``plan.Layout``).

A call's layout lists row segments (real keys, used queries, padding rows, the synthetic token). On a
causal oracle a query row sees the key rows at or above it, otherwise every row. From the segments:

* :func:`seen` — how many (query row, key row) pairs of the call hold query token i and real key
  token j with the key visible to the query (0 or 1 when the plan is right);
* :func:`nonreal_seen` — how many padding and synthetic rows a query row sees: what the decoder's
  constant ``units`` must equal, so that no pad or synthetic token is ever counted as a real key;
* :func:`tiles` — the key-side segments cover the call's rows exactly once, inside the call;
* :func:`in_range` — every real key and used query is a token of the input.
"""

from __future__ import annotations

from typing import Any

import z3

from attnsim.sim.two_heads.plan import Layout, Seg

KEY_SIDE = ("key", "pad", "synth")


def _size(seg: Seg) -> Any:
    return z3.If(seg.hi > seg.lo, seg.hi - seg.lo, 0)


def _holds(seg: Seg, token: Any) -> tuple[Any, Any]:
    """(the segment holds ``token``, its row)."""
    if seg.step == 1:
        return z3.And(token >= seg.first, token < seg.first + _size(seg)), seg.lo + (token - seg.first)
    return z3.And(token <= seg.first, token > seg.first - _size(seg)), seg.lo + (seg.first - token)


def seen(lay: Layout, causal: bool, i: Any, j: Any) -> Any:
    """Number of (query row, key row) pairs with query token i, real key token j, the key visible."""
    terms = []
    for q in (s for s in lay.segs if s.what == "query"):
        for k in (s for s in lay.segs if s.what == "key"):
            has_q, rq = _holds(q, i)
            has_k, rk = _holds(k, j)
            visible = rk <= rq if causal else z3.BoolVal(True)
            terms.append(z3.If(z3.And(has_q, has_k, visible), 1, 0))
    return z3.Sum(*terms) if terms else z3.IntVal(0)


def query_row(lay: Layout, row: Any) -> Any:
    """The row is a used query row of the call."""
    return z3.Or(*[z3.And(row >= s.lo, row < s.hi) for s in lay.segs if s.what == "query"])


def nonreal_seen(lay: Layout, causal: bool, row: Any) -> Any:
    """Padding and synthetic rows visible to query row ``row``."""
    end = row + 1 if causal else lay.rows
    terms = []
    for s in lay.segs:
        if s.what in ("pad", "synth"):
            hi = z3.If(s.hi < end, s.hi, end)
            lo = z3.If(s.lo > 0, s.lo, 0)
            terms.append(z3.If(hi > lo, hi - lo, 0))
    return z3.Sum(*terms) if terms else z3.IntVal(0)


def tiles(lay: Layout) -> Any:
    """Key-side segments lie inside [0, rows), do not overlap, and cover all ``rows`` rows."""
    side = [s for s in lay.segs if s.what in KEY_SIDE]
    inside = [z3.Or(s.hi <= s.lo, z3.And(s.lo >= 0, s.hi <= lay.rows)) for s in side]
    apart = [z3.Or(a.hi <= a.lo, b.hi <= b.lo, a.hi <= b.lo, b.hi <= a.lo)
             for n, a in enumerate(side) for b in side[n + 1:]]
    return z3.And(*inside, *apart, z3.Sum(*[_size(s) for s in side]) == lay.rows)


def in_range(lay: Layout, N: Any) -> Any:
    """Every real key and used query token lies in [0, N); query rows inside the call."""
    out = []
    for s in lay.segs:
        if s.what in ("key", "query"):
            lo, hi = (s.first, s.first + _size(s)) if s.step == 1 else (s.first - _size(s) + 1, s.first + 1)
            out.append(z3.Or(s.hi <= s.lo, z3.And(lo >= 0, hi <= N, s.lo >= 0, s.hi <= lay.rows)))
    return z3.And(*out)
