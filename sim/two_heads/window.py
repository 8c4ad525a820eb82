"""two_heads.thm_5_1 — sliding window r (and s attention sinks) in O(N/M) calls to a causal oracle.

Query i (0-based) of a window head sees keys i−r < j ≤ i (two_heads Def 2.4) and, with sinks, also
j < s (Def 2.5). With b real tokens per call (b = M, or M − 1 under the strict convention) and chunk
size C = b − s − r (M − r without sinks), the scheme as implemented (docs/reconstructions.md,
"Sliding window and sinks, chunk by chunk"; checked exact):

* **The first s + r queries** (r without sinks) see their whole causal prefix, so they are handled
  directly, as the paper does: Claim B.6 on tokens 0..s+r−1 (1 call) and the plain causal call
  (1 call) give A and B/A, and y = B/A (one fused call gives both).
* **Chunks.** The queries s+r, s+r+1, … are cut into chunks of C. Chunk c holds queries
  q0..q0+C−1 with q0 = s + r + c·C; its *local window* is tokens q0−r..q0+C−1 (the queries and their
  r predecessors, never overlapping the sinks). Per chunk, on Z = [sink tokens 0..s−1; local window]
  (at most b rows, plus the synthetic token):

  - **P** — local causal prefix over Z: Claim B.6's layout (synthetic token first) gives
    A_P(i) = Σ_{j∈Z, j ≤ i} a_ij (1 call) and the plain causal call gives B_P/A_P (1 call);
  - **S** — the prefix shifted by r over the local window only: row m holds the key of local token
    m and the query of local token m + r (a row re-arrangement, allowed processing; the paper's
    "W^Q projects to {q_{r+1}, …}" is this), so query i sees local keys q0−r..i−r: A_S (1 call) and
    B_S/A_S (1 call);
  - sinks + window = P − S: A = A_P − A_S, B = B_P − B_S and y_i = B/A (processing).

  The prefix sums are local to each oracle window, not global. Subtracting them is
  exact in rationals and cancels in floating point.

Count per head: 2 + 4·⌈(N − s − r)/C⌉ (``scheme="fused"``: value [v, indicator] makes
every normaliser call return B too, 1 + 2·⌈(N − s − r)/C⌉); O(N/M) for constant r and s. A window or sink set that
leaves no query per chunk (s + r ≥ b) is refused, naming r, s and M.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from attnsim.sim.errors import PreconditionError
from attnsim.sim.ledger import Ledger
from attnsim.sim.masks import Sink, SlidingWindow
from attnsim.sim.model import TransformerSpec, Weights
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.blocks import (
    SCHEMES,
    decode_A,
    decode_AB,
    layout_input,
    sort_parts,
    weights_step1,
    weights_step2,
)
from attnsim.sim.two_heads.causal import synthetic_first
from attnsim.sim.two_heads.jobs import HeadJob, JobRunner
from attnsim.sim.two_heads.multi_layer import HeadBuilder, HeadFinish, simulate_layers


def window_of(mask: object) -> tuple[int, int]:
    """(r, s) of a SlidingWindow (s = 0) or Sink mask."""
    if isinstance(mask, Sink):
        return mask.r, mask.s
    if isinstance(mask, SlidingWindow):
        return mask.r, 0
    raise PreconditionError(f"mask: Theorem 5.1 is for sliding-window (and sink) models; got {mask}")


def chunk_size(b: int, r: int, s: int, M: int) -> int:
    """C = b − s − r, refused with a message naming r, s and M when no query would fit."""
    C = b - s - r
    if C < 1:
        raise PreconditionError(
            f"window r={r} plus sinks s={s} leave no query per chunk: need s + r < {b} "
            f"real tokens per oracle call (M={M}); the window and sinks must be smaller than the block",
            param="window/sinks")
    return C


@dataclass(frozen=True)
class WindowPlan:
    """Query rows [q0, q0 + nq), which part ('head', 'P', 'S'), kind ('A', 'R', 'AB'), and the call's layout
    (``plan.window_layout``: its query segment says which output row lands on which token)."""

    q0: int
    nq: int
    part: str
    kind: str
    layout: P.Layout

    @property
    def units(self) -> int:
        """The call's non-real rows (``plan.Layout.units``)."""
        return self.layout.units

    @property
    def sign(self) -> int:
        """The part's sign in the combination (``plan.Layout.sign``)."""
        return self.layout.sign


def window_head_jobs(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array, b: int, r: int, s: int,
                     scheme: str, tag: str) -> tuple[list[HeadJob], list[WindowPlan]]:
    """The head's first s + r queries and, per chunk, P and S (2 calls each, or 1 fused), in the plan's
    order (``plan.window_index``) and layouts (``plan.window_layout``)."""
    N = X.shape[0]
    fused = scheme == "fused"
    w_norm = weights_step1(nm, WQ, WK, WV if fused else None)
    w_ratio = weights_step2(nm, WQ, WK, WV)
    kind, decoder = ("AB", decode_AB) if fused else ("A", decode_A)
    names = P.steps(fused)
    jobs: list[HeadJob] = []
    plans: list[WindowPlan] = []
    for c in range(P.window_count(P.num_chunks(P.INT, N, b, r, s), fused)):
        pi, k, si = P.window_index(P.INT, fused, c)
        part, step = P.WINDOW_PARTS[pi], names[si]
        lay = P.window_layout(P.INT, N, b, r, s, part, k, step)
        rows = P.query_rows(lay)
        q0 = 0 if part == "head" else P.chunk_start(b, r, s, k)
        Z = layout_input(nm, X, X, lay)
        if step == "ratio":
            jobs.append(HeadJob(f"{tag}.{part}.ratio", Z, *w_ratio))
            plans.append(WindowPlan(q0, len(rows), part, "R", lay))
        else:
            jobs.append(HeadJob(f"{tag}.{part}.{'fused' if fused else 'norm'}", synthetic_first(nm, X, lay),
                                *w_norm, decode=decoder(lay.units - 1)))
            plans.append(WindowPlan(q0, len(rows), part, kind, lay))
    return jobs, plans


def window_combine(nm: Numerics, ledger: Ledger, N: int, m: int, plans: Sequence[WindowPlan],
                   results: Sequence[Array], tag: str, round: int) -> Array:
    """First rows y = B/A; chunk rows y = (B_P − B_S)/(A_P − A_S): each part's term with its layout's
    sign (processing, one entry per chunk)."""
    A, B = sort_parts(nm, (((plan.q0, plan.part), plan.kind, out[P.query_rows(plan.layout)], plan.units)
                           for plan, out in zip(plans, results)))
    sign = {(plan.q0, plan.part): plan.sign for plan in plans}
    lands = {(plan.q0, plan.part): P.query_tokens(plan.layout) for plan in plans}
    Y = nm.zeros((N, m))
    for q0 in sorted({k[0] for k in A}):
        num = den = None
        for key in sorted(k for k in A if k[0] == q0):
            tb, ta = B[key], A[key]
            if num is None:
                zero_b, zero_a = nm.zeros(tb.shape), nm.zeros(ta.shape)
                num, den = (tb, ta) if sign[key] > 0 else (nm.sub(zero_b, tb), nm.sub(zero_a, ta))
            elif sign[key] > 0:
                num, den = nm.add(num, tb), nm.add(den, ta)
            else:
                num, den = nm.sub(num, tb), nm.sub(den, ta)
        Y[lands[key]] = nm.safe_div(num, den)
        ledger.record("processing", f"{tag}.combine", round=round, shape=num.shape, flops=4 * num.shape[0] * (m + 1))
    return Y


def window_head(b: int, r: int, s: int, scheme: str) -> HeadBuilder:
    """Head builder of Theorem 5.1 for :func:`~attnsim.sim.two_heads.multi_layer.simulate_layers`."""

    def build(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array, tag: str) -> tuple[list[HeadJob], HeadFinish]:
        N, m = X.shape
        jobs, plans = window_head_jobs(nm, X, WQ, WK, WV, b, r, s, scheme, tag)

        def finish(nm: Numerics, ledger: Ledger, results: Sequence[Array], round: int) -> Array:
            return window_combine(nm, ledger, N, m, plans, results, tag, round)

        return jobs, finish

    return build


def preconditions(spec: TransformerSpec, oracle: Oracle, b: int, M: int, scheme: str) -> list[tuple[str, str]]:
    """Reasons Theorem 5.1's construction cannot run, as (what, why) pairs."""
    o = oracle.spec
    reasons: list[tuple[str, str]] = []
    if scheme not in SCHEMES:
        reasons.append(("scheme", f"must be one of {SCHEMES}, got {scheme!r}"))
    try:
        r, s = window_of(spec.mask)
        chunk_size(b, r, s, M)
    except PreconditionError as exc:
        reasons.append(("window", str(exc)))
    if not o.causal:
        reasons.append(("oracle", "Theorem 5.1 needs a causal oracle"))
    if b + 1 > o.max_len:
        reasons.append(("M", f"{b} tokens plus the synthetic token exceed the oracle length {o.max_len}"))
    return reasons


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int, M: int,
             scheme: str = "paper", runner: JobRunner, tag: str = "thm_5_1") -> Array:
    """Window/sink T(X) from O(N/M) calls per head to a causal oracle (exact in exact arithmetic)."""
    reasons = preconditions(spec, oracle, b, M, scheme)
    if reasons:
        raise PreconditionError("; ".join(why if what == "window" else f"{what}: {why}" for what, why in reasons))
    r, s = window_of(spec.mask)
    return simulate_layers(spec, weights, X, oracle, b=b, build_head=window_head(b, r, s, scheme), runner=runner,
                           tag=tag)
