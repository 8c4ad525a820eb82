"""Call plans of the exact Two Heads constructions, as pure integer arithmetic written once.

Every construction of Lemma 3.1, Claim B.6, Theorem 3.5, Lemma 3.3 and Theorem 5.1 asks this module
which calls to make and what each call holds: the block of a query, the key range of a call, the
rows of its layout (real keys, real queries, padding rows, the synthetic token), the constant its
decoder assumes, the sign of its term in the recombination, and how jobs are packed into calls.

The functions are generic over an int-like type: the arithmetic goes through an ``ops`` object
(``ite``, ``min``, ``max``, floor ``div``/``mod``, ``all``/``any``). The constructions pass
:data:`INT` (Python ints); the prover (``attnsim prove``) passes one for solver terms, so the plan
that is proved for every size is the plan that runs. Positions and rows are 0-based.

A call's **layout** is a short list of row segments. A ``key`` segment puts token ``first + step·k``
in the key half of row ``lo + k``; ``query`` likewise in the query half (only the rows whose outputs
the recombination reads); ``pad`` rows hold no key (score 1 in a normaliser call, weight 1 in a
ratio call, value 0), and ``synth`` is the synthetic token (two_heads §3.0). ``units`` is the
number of such non-real rows the decoder assumes every used query sees: A = units·p/(1 − p) and
B = out·(A + units) (Lemma 3.1, Claim B.6, Thm 3.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

PAPER_STEPS = ("norm", "ratio")   # Lemma 3.1: Step 1 (normaliser), Step 2 (ratio)
FUSED_STEPS = ("fused",)          # one call returns [B/(A+u), A/(A+u)] (docs/reconstructions.md)


class Ops(Protocol):
    """The arithmetic a plan may use besides +, -, * and comparisons."""

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        """``a`` if ``c`` else ``b``."""

    def min(self, a: Any, b: Any) -> Any:
        """The smaller of a, b."""

    def max(self, a: Any, b: Any) -> Any:
        """The larger of a, b."""

    def div(self, a: Any, b: Any) -> Any:
        """Floor division by a positive ``b``."""

    def mod(self, a: Any, b: Any) -> Any:
        """The remainder of :meth:`div`."""

    def all(self, *cs: Any) -> Any:
        """Conjunction."""

    def any(self, *cs: Any) -> Any:
        """Disjunction."""


class IntOps:
    """:class:`Ops` on Python ints (what the constructions run)."""

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        """``a`` if ``c`` else ``b``."""
        return a if c else b

    def min(self, a: Any, b: Any) -> Any:
        """The smaller of a, b."""
        return min(a, b)

    def max(self, a: Any, b: Any) -> Any:
        """The larger of a, b."""
        return max(a, b)

    def div(self, a: Any, b: Any) -> Any:
        """Floor division."""
        return a // b

    def mod(self, a: Any, b: Any) -> Any:
        """Floor remainder."""
        return a % b

    def all(self, *cs: Any) -> Any:
        """Conjunction."""
        return all(cs)

    def any(self, *cs: Any) -> Any:
        """Disjunction."""
        return any(cs)


INT = IntOps()


@dataclass(frozen=True)
class Seg:
    """Rows [lo, hi) of a call, ``what`` one of key/query/pad/synth; key or query row lo + k holds token
    first + step·k."""

    what: str
    lo: Any
    hi: Any
    first: Any = 0
    step: int = 1


@dataclass(frozen=True)
class Layout:
    """One call: its length, row segments, the decoder's non-real units, its sign in the recombination."""

    rows: Any
    segs: tuple[Seg, ...]
    units: Any
    norm: bool
    sign: int = 1


# -- blocks (two_heads §2.3; Lemma 3.1) ------------------------------------------------------------

def block_start(t: Any, b: Any) -> Any:
    """First token of block t."""
    return t * b


def num_blocks(ops: Ops, N: Any, b: Any) -> Any:
    """n = ⌈N/b⌉ blocks of b consecutive tokens (the last may be partial)."""
    return ops.div(N + b - 1, b)


def block_len(ops: Ops, N: Any, b: Any, start: Any) -> Any:
    """Tokens in the block starting at ``start``: min(b, N − start)."""
    return ops.min(b, N - start)


def steps(fused: bool) -> tuple[str, ...]:
    """The calls per block pair or part: Step 1 and Step 2, or one fused call."""
    return FUSED_STEPS if fused else PAPER_STEPS


def pair_count(n: Any, fused: bool) -> Any:
    """Calls of one unmasked head (Lemma 3.1): (2 − fused)·n²."""
    return len(steps(fused)) * n * n


def pair_index(ops: Ops, n: Any, fused: bool, c: Any) -> tuple[Any, Any, Any]:
    """Call c of a head as (query block, key block, step index): query-block major, steps adjacent."""
    per = len(steps(fused))
    cell = ops.div(c, per)
    return ops.div(cell, n), ops.mod(cell, n), ops.mod(c, per)


def pair_layout(ops: Ops, bq: Any, bk: Any, q0: Any, k0: Any, step: str, length: Any = None) -> Layout:
    """Lemma 3.1's call on a query block (first token q0, bq tokens) and a key block (k0, bk): rows
    [x_key, x_query], a partial key block padded to R = max(bq, bk) rows, then the synthetic token
    (Step 1, fused) and, with ``length`` (Theorem 3.4's equal job lengths), padding up to that length."""
    R = ops.max(bq, bk)
    norm = step != "ratio"
    end = R + 1 if norm else R
    rows = end if length is None else length
    segs = [Seg("query", 0, bq, q0), Seg("key", 0, bk, k0), Seg("pad", bk, R)]
    if norm:
        segs.append(Seg("synth", R, R + 1))
    segs.append(Seg("pad", end, rows))
    return Layout(rows, tuple(segs), rows - bk, norm)


# -- causal blocks (Claim B.6, Theorem 3.5) -------------------------------------------------------

CAUSAL_PARTS = ("low", "high")  # per earlier key block; the own block is part "own"


def causal_row_count(tq: Any, fused: bool) -> Any:
    """Calls of query block tq: 2 parts per earlier key block and the own block, each (2 − fused) calls."""
    return len(steps(fused)) * (2 * tq + 1)


def causal_row_call(ops: Ops, tq: Any, fused: bool, c: Any) -> tuple[Any, Any, Any]:
    """Call c of query block tq as (key block, part index: 0 low, 1 high, 2 own, step index)."""
    per = len(steps(fused))
    pair = ops.div(c, per)
    own = pair >= 2 * tq
    return ops.ite(own, tq, ops.div(pair, 2)), ops.ite(own, 2, ops.mod(pair, 2)), ops.mod(c, per)


def causal_layout(b: Any, bq: Any, bk: Any, q0: Any, k0: Any, part: str, step: str) -> Layout:
    """Theorem 3.5's call for a query block (first token q0, bq tokens) and a key block (k0, bk)
    (Claim B.6 for ``own`` normalisers).

    ``low``/``own``: row r holds key offset r and query offset r, so a causal oracle shows a query the
    keys of offsets ≤ its own; normalisers put the synthetic token first. ``high``: b + 1 rows,
    reversed and shifted — row m holds key offset b − m and query offset b − 1 − m, row 0 the zero key
    (one unit in both calls), so a query sees the keys of larger offsets.
    """
    norm = step != "ratio"
    if part == "high":
        segs = (Seg("pad", 0, 1), Seg("key", b + 1 - bk, b + 1, k0 + bk - 1, -1),
                Seg("query", b - bq, b, q0 + bq - 1, -1))
        return Layout(b + 1, segs, 1, norm)
    first = 1 if norm else 0
    segs = (Seg("synth", 0, first), Seg("key", first, first + bk, k0), Seg("query", first, first + bq, q0))
    return Layout(first + bk, segs, first, norm)


# -- sliding window and sinks (Theorem 5.1) -------------------------------------------------------

WINDOW_PARTS = ("head", "P", "S")


def num_chunks(ops: Ops, N: Any, b: Any, r: Any, s: Any) -> Any:
    """Chunks of C = b − s − r queries after the first s + r (0 when N ≤ s + r)."""
    C = b - s - r
    return ops.ite(N > s + r, ops.div(N - s - r + C - 1, C), 0)


def chunk_start(b: Any, r: Any, s: Any, k: Any) -> Any:
    """The first query of chunk k: s + r + k·(b − s − r)."""
    return s + r + k * (b - s - r)


def window_count(chunks: Any, fused: bool) -> Any:
    """Calls of one window head: (2 − fused)·(1 + 2·chunks)."""
    return len(steps(fused)) * (1 + 2 * chunks)


def window_index(ops: Ops, fused: bool, c: Any) -> tuple[Any, Any, Any]:
    """Call c as (part index: 0 head, 1 P, 2 S; chunk; step index)."""
    per = len(steps(fused))
    cell = ops.div(c, per)
    head = cell == 0
    return ops.ite(head, 0, 1 + ops.mod(cell - 1, 2)), ops.ite(head, 0, ops.div(cell - 1, 2)), ops.mod(c, per)


def window_layout(ops: Ops, N: Any, b: Any, r: Any, s: Any, part: str, k: Any, step: str) -> Layout:
    """Theorem 5.1's calls on a causal oracle. ``head``: the first s + r tokens, causal prefix.
    ``P`` (sign +1): the sinks then the chunk's local window q0 − r .. q0 + nq − 1, causal prefix.
    ``S`` (sign −1): row m holds key q0 − r + m and query q0 + m, the local prefix shifted by r."""
    norm = step != "ratio"
    f = 1 if norm else 0
    synth = Seg("synth", 0, f)
    if part == "head":
        h = ops.min(N, s + r)
        return Layout(f + h, (synth, Seg("key", f, f + h, 0), Seg("query", f, f + h, 0)), f, norm)
    C = b - s - r
    q0 = chunk_start(b, r, s, k)
    nq = ops.min(C, N - q0)
    if part == "P":
        segs = (synth, Seg("key", f, f + s, 0), Seg("key", f + s, f + s + r + nq, q0 - r),
                Seg("query", f + s + r, f + s + r + nq, q0))
        return Layout(f + s + r + nq, segs, f, norm)
    segs = (synth, Seg("key", f, f + nq, q0 - r), Seg("query", f, f + nq, q0))
    return Layout(f + nq, segs, f, norm, sign=-1)


# -- packing (Lemma 3.3) and layers (Cor 3.2, Theorem 3.4) ----------------------------------------

def pack_count(ops: Ops, jobs: Any, per_call: Any) -> Any:
    """Calls for ``jobs`` independent jobs, ``per_call`` = H'·L' per call: ⌈jobs/per_call⌉."""
    return ops.div(jobs + per_call - 1, per_call)


def pack_slot(ops: Ops, k: Any, per_call: Any, layers: Any) -> tuple[Any, Any, Any]:
    """Job k's (call, oracle head, oracle layer): head-major slots, ``per_call`` jobs per call."""
    slot = ops.mod(k, per_call)
    return ops.div(k, per_call), ops.div(slot, layers), ops.mod(slot, layers)


def slot_index(head: Any, layer: Any, layers: Any) -> Any:
    """The job number inside a call of the slot (oracle head, oracle layer): the inverse of :func:`pack_slot`."""
    return head * layers + layer


def slot_columns(head: Any, layer: Any, layers: Any, w: Any, o: Any) -> tuple[Any, Any]:
    """First column of slot (head, layer)'s input and of its output in a packed call's residual stream,
    laid out head-major: head h owns columns [h·L'(w + o), (h + 1)·L'(w + o)), its L' input slots of
    width w first, then its L' output slots of width o (``packing.py``)."""
    block = layers * (w + o)
    return head * block + layer * w, head * block + layers * w + layer * o


def head_block(head: Any, layers: Any, w: Any, o: Any) -> tuple[Any, Any]:
    """Columns [lo, hi) of oracle head ``head``'s block in a packed call: what its weights may read."""
    block = layers * (w + o)
    return head * block, (head + 1) * block


def job_length(ops: Ops, N: Any, b: Any) -> Any:
    """Theorem 3.4's common job length: min(N, b) + 1 rows (a full block and the synthetic token), so
    Step-1, Step-2 and fused jobs can share an unmasked packed call."""
    return ops.min(N, b) + 1


def model_head_columns(head: Any, m: Any) -> tuple[Any, Any]:
    """Columns [lo, hi) of the large model's head ``head`` (width m = d/H) in a layer input (Def 2.2):
    what the constructions hand that head's jobs."""
    return head * m, (head + 1) * m


# -- what the constructions read off a layout (Python ints only) ----------------------------------

def seg_tokens(seg: Seg) -> tuple[range, range]:
    """(rows, tokens) of a key or query segment, as Python ranges."""
    n = max(0, seg.hi - seg.lo)
    return range(seg.lo, seg.lo + n), range(seg.first, seg.first + seg.step * n, seg.step)


def query_map(lay: Layout) -> list[tuple[int, int]]:
    """(token, row) of every used query of a call, in token order: where the call's result for a query lands."""
    return sorted((t, r) for s in lay.segs if s.what == "query" for r, t in zip(*seg_tokens(s)))


def query_rows(lay: Layout) -> list[int]:
    """The rows of the used queries, in token order."""
    return [r for _, r in query_map(lay)]


def query_tokens(lay: Layout) -> list[int]:
    """The tokens of the used queries, in order (the output rows of the large model a call's result goes to)."""
    return [t for t, _ in query_map(lay)]
