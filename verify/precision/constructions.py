"""The Two Heads constructions as the precision sweeps run them: sampled query rows, batched calls.

One single-head single-layer model (``identity`` layer MLP) per case, under the mask of the claim:

| claim | mask | jobs, combination (the construction's own functions) |
|---|---|---|
| two_heads.lemma_3_1 | none | ``blocks.head_jobs`` → ``blocks.combine`` |
| two_heads.thm_3_4 | none | ``blocks.head_jobs`` with ``plan.job_length`` (the equal-length jobs a packed
  call needs) → ``blocks.combine`` |
| two_heads.thm_3_5 | causal | ``causal.causal_head_jobs`` → ``causal.causal_combine`` |
| two_heads.thm_5_1 | sliding window r + s sinks | ``window.window_head_jobs`` → ``window.window_combine`` |

``paper`` and ``fused`` are the two schemes of each construction; ``direct`` is softmax attention
of the same model under the same mask, computed directly in the same format.

Jobs run one per oracle call through :func:`~attnsim.sim.engine.runner.run_batched` (stacked,
spec-checked, recorded). Thm 3.4 and Thm 3.5 run their jobs packed H'·L' per call
(``packing.run_packed``); packing only places each job in its own slot of a wider call whose other
weights are 0, so every rounded value is the one the single-job call produces
(tests/test_precision_claims.py compares both bit for bit on small cases).

Rows are independent, so at large N the error is measured on a seeded sample of *query groups*:
the blocks of M queries (Lemma 3.1, Thm 3.4, Thm 3.5) or Thm 5.1's first s + r queries and chunks
of C = M − s − r queries. Only the jobs of the sampled groups run; each still meets every key it
would meet in a full run, so the sampled rows equal the same rows of a full run (tested).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attnsim.sim.engine.runner import run_batched
from attnsim.sim.masks import Causal, Full, Mask, Sink, SlidingWindow
from attnsim.sim.model import HeadWeights, LayerWeights, Weights
from attnsim.sim.numerics import Numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.blocks import combine, head_jobs
from attnsim.sim.two_heads.causal import causal_combine, causal_head_jobs
from attnsim.sim.two_heads.window import chunk_size, window_combine, window_head_jobs
from attnsim.verify.cases import Case, random_case
from attnsim.verify.precision.truth import attention_truth
from attnsim.verify.registry import UsageError

CLAIMS = ("two_heads.lemma_3_1", "two_heads.thm_3_4", "two_heads.thm_3_5", "two_heads.thm_5_1")
CONSTRUCTIONS = ("paper", "fused", "direct")
CAUSAL_CLAIMS = ("two_heads.thm_3_5", "two_heads.thm_5_1")


@dataclass(frozen=True, eq=False)
class Setup:
    """One case at one N: model, block size, sampled query groups (start, size), rows and the truth."""

    N: int
    M: int
    case: Case
    q_blocks: tuple[int, ...]  # starts of the sampled query groups
    rows: np.ndarray
    truth: np.ndarray
    claim: str = "two_heads.lemma_3_1"
    window: int = 0
    sinks: int = 0

    @property
    def mask(self) -> Mask:
        """The case's mask."""
        return self.case.spec.mask

    def allowed_rows(self) -> np.ndarray | None:
        """The mask restricted to the sampled rows (None when unmasked)."""
        if isinstance(self.mask, Full):
            return None
        return self.mask.materialize(self.N)[self.rows]


def claim_mask(claim: str, M: int, window: int | None, sinks: int | None) -> tuple[Mask, int, int]:
    """(mask, r, s) of a claim; --window/--sinks are refused for claims without a window."""
    if claim not in CLAIMS:
        raise UsageError(f"CLAIM: precision sweeps run {', '.join(CLAIMS)}; got {claim!r}")
    if claim != "two_heads.thm_5_1":
        if window is not None or sinks is not None:
            given = "--window" if window is not None else "--sinks"
            raise UsageError(f"{given}: only two_heads.thm_5_1 has a sliding window; {claim} has none")
        return (Causal() if claim in CAUSAL_CLAIMS else Full()), 0, 0
    r = max(1, M // 4) if window is None else window
    s = 1 if sinks is None else sinks
    if r < 1 or s < 0:
        raise UsageError(f"--window/--sinks: need window >= 1 and sinks >= 0; got window={r}, sinks={s}")
    if s + r >= M:
        raise UsageError(f"{'--window' if window is not None else '--sinks'}: window r={r} plus sinks s={s} leave "
                         f"no query in an oracle call of M={M} tokens (need r + s < M)")
    chunk_size(M, r, s, M)
    return (Sink(s, r) if s else SlidingWindow(r)), r, s


def query_groups(claim: str, N: int, M: int, r: int, s: int) -> list[tuple[int, int]]:
    """(start, size) of the query groups a construction combines independently."""
    if claim == "two_heads.thm_5_1":
        C = M - s - r
        head = min(N, s + r)
        return [(0, head)] + [(q0, min(C, N - q0)) for q0 in range(s + r, N, C)]
    return [(q0, min(M, N - q0)) for q0 in range(0, N, M)]


def make_setup(N: int, M: int, d: int = 4, seed: int = 0, sample_blocks: int | None = 16,
               input_kind: str = "random", score_scale: Fraction = Fraction(1), *,
               claim: str = "two_heads.lemma_3_1", window: int | None = None, sinks: int | None = None) -> Setup:
    """The seeded random case at N for ``claim``; ``score_scale`` multiplies W^Q, and so every score."""
    if N < 1 or M < 2 or d < 1:
        raise UsageError(f"--N/--M/--d: need N >= 1, M >= 2, d >= 1; got N={N}, M={M}, d={d}")
    mask, r, s = claim_mask(claim, M, window, sinks)
    case = random_case(N, d, 1, 1, mask, seed, layer_mlp="identity", input_kind=input_kind, exact_kind=False)
    if score_scale != 1:
        hw = case.weights.layers[0].heads[0]
        scaled = HeadWeights(hw.WQ * Fraction(score_scale), hw.WK, hw.WV)
        case = Case(case.spec, Weights((LayerWeights((scaled,), case.weights.layers[0].psi),)), case.X)
    groups = query_groups(claim, N, M, r, s)
    if sample_blocks and len(groups) > sample_blocks:
        pick = np.random.default_rng(seed + 1).choice(len(groups), size=sample_blocks, replace=False)
        groups = [groups[i] for i in sorted(pick)]
    rows = np.concatenate([np.arange(g, g + n) for g, n in groups])
    setup = Setup(N, M, case, tuple(g for g, _ in groups), rows, np.zeros(0), claim, r, s)
    truth = attention_truth(case.X, case.weights.layers[0].heads[0], rows, setup.allowed_rows())
    return Setup(N, M, case, setup.q_blocks, rows, truth, claim, r, s)


def run_construction(name: str, nm: Numerics, setup: Setup, decode: str = "paper") -> np.ndarray:
    """Output rows ``setup.rows`` of construction ``name`` (paper, fused or direct) in numerics ``nm``; ``decode``:
    Lemma 3.1's Step-1 decode (``blocks``: paper or stable) for the unmasked claims."""
    case = setup.case
    hw = case.weights.layers[0].heads[0]
    X = nm.array(case.X, "X")
    WQ, WK, WV = nm.array(hw.WQ, "W^Q"), nm.array(hw.WK, "W^K"), nm.array(hw.WV, "W^V")
    if name == "direct":
        q = nm.matmul(X[setup.rows], WQ)
        return nm.attention(q, nm.matmul(X, WK), nm.matmul(X, WV), setup.allowed_rows())
    if name not in ("paper", "fused"):
        raise UsageError(f"--constructions: unknown construction {name!r}; choose from {', '.join(CONSTRUCTIONS)}")
    N, d, M = case.spec.N, case.spec.d, setup.M
    claim = setup.claim
    oracle = Oracle(OracleSpec(M + 1, 1, 1, 2 * d + 2, causal=claim in CAUSAL_CLAIMS), nm)
    tag = claim.split(".")[1]
    sampled = set(setup.q_blocks)
    if claim == "two_heads.thm_3_5":
        jobs, plans = causal_head_jobs(nm, X, WQ, WK, WV, M, name, tag)
    elif claim == "two_heads.thm_5_1":
        jobs, plans = window_head_jobs(nm, X, WQ, WK, WV, M, setup.window, setup.sinks, name, tag)
    else:
        length = P.job_length(P.INT, N, M) if claim == "two_heads.thm_3_4" else None
        jobs, plans = head_jobs(nm, X, WQ, WK, WV, M, name, tag, length=length, decode=decode, queries=sampled)
    keep = [i for i, p in enumerate(plans) if p.q0 in sampled]
    jobs, plans = [jobs[i] for i in keep], [plans[i] for i in keep]
    results = run_batched(oracle, jobs)
    if claim == "two_heads.thm_3_5":
        Y = causal_combine(nm, oracle.ledger, N, d, M, plans, results, tag, oracle.round)
    elif claim == "two_heads.thm_5_1":
        Y = window_combine(nm, oracle.ledger, N, d, plans, results, tag, oracle.round)
    else:
        Y = combine(nm, oracle.ledger, N, d, plans, results, tag, oracle.round)
    return Y[setup.rows]
