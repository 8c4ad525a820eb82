"""A causal large model from a causal oracle, fused: two_heads.thm_3_5 with value columns [v, 1].

Used by the torch example (a causal GPT-2) until the paper-faithful ``two_heads.thm_3_5`` lands;
the layout is the digest's reading of Claim B.6 and Theorem 3.5 (§3.5), with the fused values of
Lemma 3.1 (``blocks.py``) so that each call returns B/(A + 1) and A/(A + 1) together:

* **own block t** (1 call, Claim B.6): rows ``[synthetic; x_1 .. x_b]`` with the synthetic token
  *first* (a causal oracle hides a last one); query row r sees the synthetic key (score 1, value 0)
  and keys 1..r (scores <q,k> + 1, values [v, 1]), so it outputs [B, A]/(A + 1) of its causal prefix;
* **earlier block t' < t, keys at offsets ≤ the query's** (1 call): rows ``[x_key_r, x_query_r, 1, 1]``
  after a synthetic row ``[0, 0, 1, 0]`` — the causal mask acts on row indices, i.e. in-block offsets;
* **earlier block, offsets >** (1 call): the reversed-and-shifted layout — key offset j in row b − j + 1,
  query offset o in row b − o, the synthetic (zero-key) row first — so query o sees exactly keys j > o.

The decode p ↦ (A, B) is the fused one of Lemma 3.1; eq. (1) sums A and B over all parts (processing).
Calls per head: n (own blocks) + 2·n(n−1)/2 (earlier blocks) = n², against the paper's 2n²
(two calls per part). N must be a multiple of the block size b (no partial blocks here).
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.errors import PreconditionError
from attnsim.sim.masks import Causal
from attnsim.sim.model import TransformerSpec, Weights, head_columns
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads.jobs import HeadJob, JobRunner, run_one_per_call
from attnsim.sim.two_heads.worst_case import apply_token_map


def preconditions(spec: TransformerSpec, oracle: Oracle, b: int) -> list[tuple[str, str]]:
    o = oracle.spec
    reasons: list[tuple[str, str]] = []
    if b < 1:
        reasons.append(("M", f"block size b = {b} < 1"))
    elif spec.N % b:
        reasons.append(("N", f"N = {spec.N} must be a multiple of the block size b = {b}"))
    if not isinstance(spec.mask, Causal):
        reasons.append(("mask", f"this construction is for causal models; got {spec.mask}"))
    if not o.causal:
        reasons.append(("oracle", "needs a causal oracle"))
    if b + 1 > o.max_len:
        reasons.append(("M", f"a block of {b} tokens plus the synthetic token exceeds the oracle length {o.max_len}"))
    if spec.rope is not None:
        reasons.append(("rope", "rotary embeddings are not supported by this construction"))
    if 2 * spec.m + 2 > o.dim:
        reasons.append(("dim", f"oracle dim {o.dim} < 2·(d/H) + 2 = {2 * spec.m + 2}"))
    return reasons


def _decode(nm: Numerics, H: Array) -> Array:
    """[B/(A+1), A/(A+1)] ↦ [B, A] (rows 1.., the synthetic row dropped by the caller)."""
    bv, p = H[:, :-1], H[:, -1:]
    total = nm.div(nm.ones(p.shape), nm.sub(nm.ones(p.shape), p))  # A + 1
    return np.concatenate([nm.mul(bv, total), nm.sub(total, nm.ones(p.shape))], axis=1)


def _own_weights(nm: Numerics, WQ: Array, WK: Array, WV: Array) -> tuple[Array, Array, Array]:
    """Rows [x, 1, ind]: queries [q, 1], keys [k, 1], values [v, ind]."""
    d, k = WQ.shape
    v = WV.shape[1]
    one = nm.ones((1, 1))
    Wq, Wk, Wv = nm.zeros((d + 2, k + 1)), nm.zeros((d + 2, k + 1)), nm.zeros((d + 2, v + 1))
    Wq[:d, :k], Wq[d:d + 1, k:] = WQ, one
    Wk[:d, :k], Wk[d:d + 1, k:] = WK, one
    Wv[:d, :v], Wv[d + 1:, v:] = WV, one
    return Wq, Wk, Wv


def _pair_weights(nm: Numerics, WQ: Array, WK: Array, WV: Array) -> tuple[Array, Array, Array]:
    """Rows [x_key, x_query, 1, ind]: queries read x_query, keys and values read x_key."""
    d, k = WQ.shape
    v = WV.shape[1]
    one = nm.ones((1, 1))
    w = 2 * d + 2
    Wq, Wk, Wv = nm.zeros((w, k + 1)), nm.zeros((w, k + 1)), nm.zeros((w, v + 1))
    Wq[d:2 * d, :k], Wq[2 * d:2 * d + 1, k:] = WQ, one
    Wk[:d, :k], Wk[2 * d:2 * d + 1, k:] = WK, one
    Wv[:d, :v], Wv[2 * d + 1:, v:] = WV, one
    return Wq, Wk, Wv


def head_jobs(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array, b: int,
              tag: str) -> tuple[list[HeadJob], list[tuple[int, bool]]]:
    """All calls of one causal head; plans: (query block start, reversed output rows)."""
    N, d = X.shape
    own, pair = _own_weights(nm, WQ, WK, WV), _pair_weights(nm, WQ, WK, WV)
    ones, zrow = nm.ones((b, 1)), nm.zeros((1, 2 * d))
    jobs: list[HeadJob] = []
    plans: list[tuple[int, bool]] = []
    for q0 in range(0, N, b):
        xq = X[q0:q0 + b]
        synth = np.concatenate([nm.zeros((1, d)), nm.ones((1, 1)), nm.zeros((1, 1))], axis=1)
        jobs.append(HeadJob(f"{tag}.own", np.concatenate([synth, np.concatenate([xq, ones, ones], axis=1)]),
                            *own, decode=_decode))
        plans.append((q0, False))
        for k0 in range(0, q0, b):
            xk = X[k0:k0 + b]
            head = np.concatenate([zrow, nm.ones((1, 1)), nm.zeros((1, 1))], axis=1)
            le = np.concatenate([xk, xq, ones, ones], axis=1)
            jobs.append(HeadJob(f"{tag}.earlier_le", np.concatenate([head, le]), *pair, decode=_decode))
            plans.append((q0, False))
            keys = np.concatenate([nm.zeros((1, d)), xk[::-1]])           # row ρ ≥ 1: key offset b − ρ
            queries = np.concatenate([xq[::-1], nm.zeros((1, d))])        # row ρ ≤ b − 1: query offset b − 1 − ρ
            ind = np.concatenate([nm.zeros((1, 1)), ones])
            gt = np.concatenate([keys, queries, nm.ones((b + 1, 1)), ind], axis=1)
            jobs.append(HeadJob(f"{tag}.earlier_gt", gt, *pair, decode=_decode))
            plans.append((q0, True))
    return jobs, plans


def combine(nm: Numerics, oracle: Oracle, N: int, m: int, b: int, plans: list[tuple[int, bool]],
            results: list[Array], tag: str) -> Array:
    """Eq. (1) over the parts of every query block (processing)."""
    num: dict[int, Array] = {}
    den: dict[int, Array] = {}
    for (q0, rev), out in zip(plans, results):
        rows = out[:b][::-1] if rev else out[1:b + 1]
        Bv, A = rows[:, :-1], rows[:, -1:]
        num[q0] = Bv if q0 not in num else nm.add(num[q0], Bv)
        den[q0] = A if q0 not in den else nm.add(den[q0], A)
    Y = nm.zeros((N, m))
    for q0 in sorted(num):
        Y[q0:q0 + b] = nm.safe_div(num[q0], den[q0])
        parts = sum(1 for p in plans if p[0] == q0)
        oracle.ledger.record("processing", f"{tag}.combine", round=oracle.round, shape=(b, m),
                             flops=2 * b * parts * (m + 1))
    return Y


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int,
             runner: JobRunner = run_one_per_call, tag: str = "causal_fused") -> Array:
    """T(X) of a causal model from causal oracle calls, one round per layer."""
    reasons = preconditions(spec, oracle, b)
    if reasons:
        raise PreconditionError("; ".join(f"{what}: {why}" for what, why in reasons))
    weights.validate(spec)
    nm = oracle.nm
    X = apply_token_map(nm, oracle, weights.phi, X, b, "input_mlp")
    for li, layer in enumerate(weights.layers):
        jobs, plans, spans = [], [], []
        Xa = apply_token_map(nm, oracle, layer.pre, X, b, "pre_norm")
        for h, hw in enumerate(layer.heads):
            j, p = head_jobs(nm, Xa[:, head_columns(spec, h)], nm.array(hw.WQ, "W^Q"), nm.array(hw.WK, "W^K"),
                             nm.array(hw.WV, "W^V"), b, f"{tag}.L{li}.H{h}" if spec.L * spec.H > 1 else tag)
            spans.append((len(jobs), len(jobs) + len(j)))
            jobs += j
            plans += p
        results = runner(oracle, jobs)
        heads = [combine(nm, oracle, spec.N, spec.m, b, plans[s:e], results[s:e], tag) for s, e in spans]
        Hcat = np.concatenate(heads, axis=1)
        if spec.residual:
            Hcat = nm.add(X, Hcat)
            oracle.ledger.record("processing", "residual", round=oracle.round, shape=Hcat.shape, flops=Hcat.size)
        X = apply_token_map(nm, oracle, layer.psi, Hcat, b, "layer_mlp")
    return X
