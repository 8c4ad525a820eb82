"""two_heads.claim_b_6 and two_heads.thm_3_5 — a causal head from calls to a causal oracle.

Blocks S_t of b tokens (b = M, or M − 1 under the strict length convention); o(i) is the in-block
offset of token i (0-based here, 1..M in the paper). A causal oracle masks by *row*, so a call that
puts query block t and key block t' side by side (row r = [x_key(t', r), x_query(t, r)]) only lets
a query see the keys whose offset is ≤ its own. Theorem 3.5 therefore splits every earlier key
block t' < t by offset (docs/reconstructions.md, "Causal blocks read by in-block offset"):

    A(1)_{i,t'} = Σ_{j∈S_t', o(j) ≤ o(i)} a_ij        A(2)_{i,t'} = Σ_{j∈S_t', o(j) > o(i)} a_ij

(and B(1), B(2) alike), and the own block t needs only A(1), the causal in-block sum.

Calls (each a single-head job; all of a head's jobs are independent, one round):

* **A(1)** — Claim B.6: the synthetic token goes **first** (a synthetic token at the end would be
  invisible under the causal mask): rows ``[0, 0, 1, 0]`` then ``[x_key, x_query, 1, 1]``. Queries
  [q, 1], keys [k, 1]: query row r + 1 sees the synthetic key (score 1, value 0) and the keys of
  offsets 0..r (scores <q,k> + 1, value 1), so p = A(1)/(A(1) + 1) and the layer MLP decodes
  A(1) = p/(1 − p). For t' = t this is Claim B.6 itself: the causal denominators of the block.
* **B(1)/A(1)** — the plain column-concatenated call ``[x_key, x_query]`` with W^Q, W^K, W^V.
* **A(2)** — the *reversed and shifted* layout, b + 1 rows: row m holds the query of offset b−1−m
  and the key of offset b−m, so row 0 carries the zero key (offset b does not exist) and row b
  carries no query::

      row 0:     [0,            x_query(b−1), 1, 0]
      row m:     [x_key(b−m),   x_query(b−1−m), 1, 1]      m = 1..b−1
      row b:     [x_key(0),     0,            1, 1]

  The query of offset o sits in row b−1−o and sees rows 0..b−1−o: the zero-key row (score 1,
  value 0, the synthetic token's role) and the keys of offsets > o. So p = A(2)/(A(2) + 1).
* **B(2)** — the same reversed layout with W^V: the zero-key row (score 0, weight 1, value 0) adds
  1 to the denominator, the call returns B(2)/(A(2) + 1) and the combination uses
  B(2) = out·(A(2) + 1) (the paper's display omits the shift row).
* **The empty set at offset b − 1** (the paper's offset M): no key of block t' has a larger offset,
  so A(2) = B(2) = 0. The paper's ratio B(2)/A(2) would be 0/0 there. We never form that ratio, and
  the combination sets A(2) and B(2) of that row to the constant 0 explicitly rather than reading
  the oracle's row (which also returns 0).

Combination (processing, tag ``….combine``): y_i = (Σ_{t'<t} (B(1) + B(2)) + B(1)_own) /
(Σ_{t'<t} (A(1) + A(2)) + A(1)_own).

Count per head, n = ⌈N/b⌉: 4·n(n−1)/2 + 2n = **2n²** (the paper's count). ``scheme="fused"`` (not in
the paper; checked exact) gives the normaliser calls the value [v, indicator] so one call
returns [B/(A+1), A/(A+1)]: 2 per earlier pair + 1 per own block = **n²**.

A partial last block (N not divisible by b) is always a *query* block, so every earlier key block is
full; the missing query rows are zero and their outputs are ignored. Under a causal oracle, rows
appended at the end of a job are invisible to its real queries, so jobs of different lengths can
share a packed call (``packing.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from attnsim.sim.errors import PreconditionError, require
from attnsim.sim.ledger import Ledger
from attnsim.sim.masks import Causal
from attnsim.sim.model import TransformerSpec, Weights
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.blocks import (
    block_starts,
    decode_A,
    decode_AB,
    layout_input,
    sort_parts,
    weights_step1,
    weights_step2,
)
from attnsim.sim.two_heads.jobs import HeadJob, JobRunner, StreamRunner
from attnsim.sim.two_heads.multi_layer import HeadBuilder, HeadFinish, simulate_layers
from attnsim.sim.two_heads.worst_case import block_preconditions


@dataclass(frozen=True)
class CausalPlan:
    """What a job's decoded output is: query rows (q0, bq), which part ('own', 'A1', 'A2'), kind, layout."""

    q0: int
    bq: int
    t: int      # key block index
    part: str   # "own" (t = query block), "low" (offsets <= o(i)), "high" (offsets > o(i), reversed)
    kind: str   # "A" normaliser, "R" ratio call, "AB" fused
    layout: P.Layout  # the call's rows (``plan.causal_layout``)


def synthetic_first(nm: Numerics, X: Array, lay: P.Layout) -> Array:
    """A causal normaliser call's input (Claim B.6 layout: the synthetic row [0, 0, 1, 0] first, then
    [x_key, x_query, 1, ind]), the rows of the plan's layout ``lay`` filled from X."""
    return layout_input(nm, X, X, lay)


def reversed_shifted(nm: Numerics, Xk: Array, Xq: Array, b: int) -> Array:
    """Rows m = 0..b: [x_key(b − m), x_query(b − 1 − m)] (zero where the offset does not exist), the
    plan's ``high`` layout (``plan.causal_layout``) on a key block Xk and a query block Xq."""
    return layout_input(nm, Xk, Xq, P.causal_layout(b, Xq.shape[0], Xk.shape[0], 0, 0, "high", "ratio"))


def causal_head_jobs(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array, b: int, scheme: str,
                     tag: str) -> tuple[list[HeadJob], list[CausalPlan]]:
    """All jobs of one causal head (paper: 4 per earlier block pair + 2 per own block; fused: 2 + 1)."""
    pairs = list(iter_causal_head_jobs(nm, X, WQ, WK, WV, b, scheme, tag))
    return [job for job, _ in pairs], [plan for _, plan in pairs]


def iter_causal_head_jobs(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array, b: int, scheme: str,
                          tag: str) -> Iterator[tuple[HeadJob, CausalPlan]]:
    """The jobs of :func:`causal_head_jobs` with their plans, one query block at a time in the plan's
    order (``plan.causal_row_call``)."""
    N = X.shape[0]
    fused = scheme == "fused"
    w_norm = weights_step1(nm, WQ, WK, WV if fused else None)
    w_ratio = weights_step2(nm, WQ, WK, WV)
    norm_kind, decoder = ("AB", decode_AB) if fused else ("A", decode_A)
    names = P.steps(fused)
    starts = block_starts(N, b)
    for tq, q0 in enumerate(starts):
        bq = P.block_len(P.INT, N, b, q0)
        for c in range(P.causal_row_count(tq, fused)):
            t, pi, si = P.causal_row_call(P.INT, tq, fused, c)
            part, step = ("low", "high", "own")[pi], names[si]
            k0 = starts[t]
            bk = P.block_len(P.INT, N, b, k0)
            lay = P.causal_layout(b, bq, bk, q0, k0, part, step)
            if step == "ratio":
                Z = (reversed_shifted(nm, X[k0:k0 + bk], X[q0:q0 + bq], b) if part == "high"
                     else layout_input(nm, X, X, lay))
                yield HeadJob(f"{tag}.{part}.ratio", Z, *w_ratio), CausalPlan(q0, bq, t, part, "R", lay)
            else:
                Z = layout_input(nm, X, X, lay) if part == "high" else synthetic_first(nm, X, lay)
                job = HeadJob(f"{tag}.{part}.{'fused' if fused else 'norm'}", Z, *w_norm, decode=decoder(lay.units - 1))
                yield job, CausalPlan(q0, bq, t, part, norm_kind, lay)


def _query_rows(plan: CausalPlan, out: Array, b: int) -> Array:
    """The rows of a job's output that belong to the queries of offsets 0..bq−1, in offset order."""
    return out[P.query_rows(plan.layout)]


def causal_combine(nm: Numerics, ledger: Ledger, N: int, m: int, b: int, plans: Sequence[CausalPlan],
                   results: Sequence[Array], tag: str, round: int) -> Array:
    """y_i = Σ B / Σ A over own block, low and high parts (processing, one entry per query block)."""
    # low / own ratio calls return B/A; high ones B/(A + 1), because of the zero-key row
    A, B = sort_parts(nm, (((plan.q0, plan.t, plan.part), plan.kind, _query_rows(plan, out, b),
                            plan.layout.units) for plan, out in zip(plans, results)))
    for key in A:
        if key[2] == "high" and A[key].shape[0] == b:
            # offset b − 1 (the paper's offset M): the key set {o(j) > o(i)} is empty
            A[key][b - 1] = nm.zeros((1,))
            B[key][b - 1] = nm.zeros((m,))
    lands = {(plan.q0, plan.t, plan.part): P.query_tokens(plan.layout) for plan in plans}
    Y = nm.zeros((N, m))
    for q0 in sorted({k[0] for k in A}):
        keys = sorted(k for k in A if k[0] == q0)
        num, den = B[keys[0]], A[keys[0]]
        for k in keys[1:]:
            num, den = nm.add(num, B[k]), nm.add(den, A[k])
        Y[lands[keys[0]]] = nm.safe_div(num, den)
        ledger.record("processing", f"{tag}.combine", round=round, shape=num.shape,
                      flops=2 * num.shape[0] * len(keys) * (m + 1))
    return Y


class CausalAccumulator:
    """Theorem 3.5's combination fed one call output at a time: running Σ B and Σ A per query row.

    The same terms as :func:`causal_combine` (the part keys (query block, key block, low/high/own),
    the zero row at offset b − 1 of a full "high" part, the ratio calls' B = out·(A + shift)), summed
    as they arrive instead of after the round. Memory: N × (m + 1) running sums, plus, for the paper
    scheme, a normaliser or ratio output waiting for its partner (the two calls of a part are made
    one after the other). The processing entries are the batch path's: one per query block.
    """

    def __init__(self, nm: Numerics, N: int, m: int, b: int, plans: list[CausalPlan], tag: str,
                 cols: np.ndarray | None = None) -> None:
        """Zero sums for N query rows; ``plans`` fills in as the head's jobs are built.

        ``cols``: the value columns W^V can make non-zero (the others of B are exactly 0 in every
        call), so only those are summed; :meth:`close` puts the zero columns back.
        """
        self.nm, self.b, self.m, self.tag, self.plans = nm, b, m, tag, plans
        self.cols = np.arange(m) if cols is None else cols
        self.num, self.den = nm.zeros((N, len(self.cols))), nm.zeros((N, 1))
        self.waiting: dict[tuple[int, int, str], tuple[CausalPlan, Array]] = {}
        self.terms: dict[int, int] = {}  # query block start -> parts folded in

    def fold(self, index: int, out: Array) -> None:
        """Add job ``index``'s contribution to the running sums of its query rows."""
        plan, nm = self.plans[index], self.nm
        rows = _query_rows(plan, out, self.b)
        key = (plan.q0, plan.t, plan.part)
        if plan.kind == "AB":
            B, A = rows[:, :-1][:, self.cols], rows[:, -1:]
        else:
            other = self.waiting.pop(key, None)
            if other is None:
                self.waiting[key] = (plan, rows)
                return
            ratio_plan, ratio, A = (plan, rows, other[1][:, :1]) if plan.kind == "R" else (*other, rows[:, :1])
            ratio = ratio[:, self.cols]
            shift = ratio_plan.layout.units  # the ratio call's non-real rows: B = out·(A + shift)
            B = nm.mul(ratio, nm.add(A, nm.const(shift, A.shape)))
        if plan.part == "high" and A.shape[0] == self.b:
            # offset b − 1 (the paper's offset M): the key set {o(j) > o(i)} is empty
            A, B = A.copy(), B.copy()
            A[self.b - 1] = nm.zeros((1,))
            B[self.b - 1] = nm.zeros((len(self.cols),))
        q = P.query_tokens(plan.layout)
        self.num[q] = nm.add(self.num[q], B)
        self.den[q] = nm.add(self.den[q], A)
        self.terms[plan.q0] = self.terms.get(plan.q0, 0) + 1

    def close(self, nm: Numerics, ledger: Ledger, round: int) -> Array:
        """y = Σ B / Σ A, one processing entry per query block (as :func:`causal_combine`)."""
        if self.waiting:
            raise PreconditionError(f"{self.tag}: {len(self.waiting)} normaliser/ratio outputs never got "
                                    "their partner call")
        Y = nm.zeros((self.num.shape[0], self.m))
        for q0 in sorted(self.terms):
            bq = P.block_len(P.INT, self.num.shape[0], self.b, q0)
            Y[q0:q0 + bq, self.cols] = nm.safe_div(self.num[q0:q0 + bq], self.den[q0:q0 + bq])
            ledger.record("processing", f"{self.tag}.combine", round=round, shape=(bq, self.m),
                          flops=2 * bq * self.terms[q0] * (self.m + 1))
        return Y


def causal_head(b: int, scheme: str, *, online: bool = False) -> HeadBuilder:
    """Head builder of Theorem 3.5 for :func:`~attnsim.sim.two_heads.multi_layer.simulate_layers`.

    The jobs are a generator (each block pair's inputs built when the runner asks for them); the
    plans fill in as it is consumed, which happens before ``finish`` runs (and, with ``online``,
    before the :class:`CausalAccumulator` sees the job's output).
    """

    def build(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array,
              tag: str) -> tuple[Iterator[HeadJob], HeadFinish | CausalAccumulator]:
        N, m = X.shape
        plans: list[CausalPlan] = []

        def jobs() -> Iterator[HeadJob]:
            for job, plan in iter_causal_head_jobs(nm, X, WQ, WK, WV, b, scheme, tag):
                plans.append(plan)
                yield job

        if online:
            cols = np.flatnonzero(~nm.is_zero(WV).all(axis=0))
            return jobs(), CausalAccumulator(nm, N, m, b, plans, tag, cols)

        def finish(nm: Numerics, ledger: Ledger, results: Sequence[Array], round: int) -> Array:
            return causal_combine(nm, ledger, N, m, b, plans, results, tag, round)

        return jobs(), finish

    return build


def preconditions(spec: TransformerSpec, oracle: Oracle, b: int, scheme: str) -> list[tuple[str, str]]:
    """Reasons Theorem 3.5's construction cannot run, as (what, why) pairs."""
    o = oracle.spec
    reasons = block_preconditions(oracle, b, scheme)
    if not isinstance(spec.mask, Causal):
        reasons.append(("mask", f"this construction is for causal models; got {spec.mask}"))
    if not o.causal:
        reasons.append(("oracle", "needs a causal oracle (both the model and the oracle are causal in Thm 3.5)"))
    if b + 1 > o.max_len:
        reasons.append(("M", f"a block of {b} tokens plus the synthetic token exceeds the oracle length {o.max_len}"))
    return reasons


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int, scheme: str = "paper",
             runner: JobRunner | None = None, tag: str = "thm_3_5", stream: bool = False,
             sink_runner: StreamRunner | None = None) -> Array:
    """Causal T(X) from calls to a causal oracle (exact identity in exact arithmetic).

    ``stream``: hand the runner each layer's jobs as a generator (see ``simulate_layers``).
    ``sink_runner`` (instead of ``runner``, e.g. ``jobs.stream_one_per_call``): outputs are folded
    into running sums as they arrive (:class:`CausalAccumulator`), so memory stays O(N·d) per layer
    plus the calls in flight; the calls, rounds and ledger are the same.
    """
    reasons = preconditions(spec, oracle, b, scheme)
    require(reasons)
    build_head = causal_head(b, scheme, online=sink_runner is not None)
    return simulate_layers(spec, weights, X, oracle, b=b, build_head=build_head, runner=runner, tag=tag,
                           stream=stream, sink_runner=sink_runner)


def block_denominators(nm: Numerics, X: Array, WQ: Array, WK: Array, b: int, oracle: Oracle,
                       runner: JobRunner, tag: str = "claim_b_6") -> Array:
    """Claim B.6 on every block: one causal call per block returns Σ_{j ≤ i, j ∈ S_t} exp(<q_i, k_j>)."""
    if not oracle.spec.causal:
        raise PreconditionError("oracle: Claim B.6 needs a causal oracle")
    if b + 1 > oracle.spec.max_len:
        raise PreconditionError(f"M: a block of {b} tokens plus the synthetic token exceeds the oracle "
                                f"length {oracle.spec.max_len}")
    w_norm = weights_step1(nm, WQ, WK, None)
    jobs = []
    lays = []
    for q0 in block_starts(X.shape[0], b):
        bq = P.block_len(P.INT, X.shape[0], b, q0)
        lays.append(P.causal_layout(b, bq, bq, q0, q0, "own", "norm"))
        jobs.append(HeadJob(tag, synthetic_first(nm, X, lays[-1]), *w_norm, decode=decode_A(lays[-1].units - 1)))
    outs = runner(oracle, jobs)
    return np.concatenate([out[P.query_rows(lay)] for out, lay in zip(outs, lays)])
