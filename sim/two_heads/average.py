"""two_heads.thm_4_1 — the average case: each query block attends to a random disjoint M-subset of keys.

One uniformly random permutation τ of the N positions is drawn **once** and shared by both steps
(the paper re-says "pick a random permutation" at Step 2, but its analysis needs the same τ;
docs/reconstructions.md, "One permutation for both steps of Thm 4.1"). With blocks S_t of b consecutive positions (b
= M; the last block may be shorter):

* **Permutation** (Lemma A.3, one lookup per block): x_i ↦ [x_i, x_τ(i)]. An exact lookup through
  softmax attention is impossible (every attention weight is positive; Lemma A.3 is exact only after
  rounding), so attnsim realises it as the direct gather the paper's footnote recommends (``randperm``)
  and writes one ledger entry of kind ``"lookup"`` (tag ``thm_4_1.permute``) per block — the N/M
  calls the paper counts. Oracle calls (2N/M) and calls with the lookups (3N/M) are both reported.
* **Step 1** (one call per block): Lemma 3.1's Step-1 layout with query block S_t and key block
  τ(S_t): rows ``[x_τ(j), x_i, 1, indicator]`` plus the synthetic row; the layer MLP decodes
  Â_i = Σ_{j∈S_t} a_{i,τ(j)} = p/(1 − p). (N/|S_t|)·Â_i is the unbiased estimate of the row's
  softmax denominator; it is returned for the analysis only (processing, tag ``thm_4_1.denominator``).
* **Step 2** (one call per block): rows ``[x_τ(j), x_i]`` with W^Q'' = [0; W^Q], W^K'' = [W^K; 0],
  W^V'' = [W^V; 0]; its output Σ_{S_t} b_{i,τ(j)} / Σ_{S_t} a_{i,τ(j)} — the self-normalised
  estimator — **is** the construction's output (docs/reconstructions.md,
  "One permutation for both steps of Thm 4.1").

The paper proves the case H = L = 1 (Cor 3.2 / Lemma 3.3 lift it); :func:`simulate` refuses other
shapes with a reason. The input and layer MLPs are applied token-wise as processing, as in
``worst_case``.

Many seeds. :func:`estimate` is the same estimator in vectorised float64 numpy (scores of each block
against its sampled keys in one batched product). The checker runs the oracle path for one τ and
:func:`estimate` for every τ; a test holds the two equal on the same τ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnsim.sim.errors import require
from attnsim.sim.masks import Full
from attnsim.sim.model import TransformerSpec, Weights
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads.blocks import block_starts, decode_A, weights_step1, weights_step2
from attnsim.sim.two_heads.jobs import HeadJob, JobRunner, run_one_per_call
from attnsim.sim.two_heads.worst_case import apply_token_map

TAG = "thm_4_1"


@dataclass(frozen=True, eq=False)
class AverageRun:
    """Result of the average-case construction: the output and Step 1's denominator estimates."""
    Y: Array             # the output: Step 2's self-normalised estimates (N × m)
    denominators: Array  # Step 1's (N/|S_t|)·Â_i, estimates of Σ_j a_ij (N × 1)


def preconditions(spec: TransformerSpec, oracle: Oracle, b: int, tau: np.ndarray) -> list[tuple[str, str]]:
    """Reasons the construction cannot run, as (what, why) pairs; empty when it can."""
    o = oracle.spec
    reasons: list[tuple[str, str]] = []
    if spec.H != 1 or spec.L != 1:
        reasons.append(("H, L", f"Theorem 4.1 is proved for one head and one layer; got H={spec.H}, L={spec.L}"))
    if not isinstance(spec.mask, Full):
        reasons.append(("mask", f"the average case is for unmasked models; got {spec.mask}"))
    if o.causal:
        reasons.append(("oracle", "needs a non-causal oracle"))
    if b < 1 or b + 1 > o.max_len:
        reasons.append(("M", f"a block of {b} tokens plus the synthetic token must fit the oracle length {o.max_len}"))
    if 2 * spec.m + 2 > o.dim:
        reasons.append(("dim", f"oracle dim {o.dim} < 2·d + 2 = {2 * spec.m + 2}"))
    t = np.asarray(tau)
    if t.shape != (spec.N,) or not np.array_equal(np.sort(t), np.arange(spec.N)):
        reasons.append(("tau", f"must be a permutation of the {spec.N} positions"))
    return reasons


def permute(nm: Numerics, oracle: Oracle, X: Array, tau: np.ndarray, b: int) -> Array:
    """X[τ]: the Lemma A.3 lookups, done as a gather and counted one per block (kind ``lookup``)."""
    for s in block_starts(X.shape[0], b):
        rows = min(b, X.shape[0] - s)
        oracle.ledger.record("lookup", f"{TAG}.permute", round=oracle.round, shape=(rows, 2 * X.shape[1]))
    return X[np.asarray(tau)]


def sampled_jobs(nm: Numerics, X: Array, Xtau: Array, WQ: Array, WK: Array, WV: Array, b: int
                 ) -> list[tuple[int, int, HeadJob, HeadJob]]:
    """(start, rows, Step-1 job, Step-2 job) for every query block S_t against keys τ(S_t)."""
    N, d = X.shape
    w1, w2 = weights_step1(nm, WQ, WK, None), weights_step2(nm, WQ, WK, WV)
    out = []
    for s in block_starts(N, b):
        rows = min(b, N - s)
        Zkq = np.concatenate([Xtau[s:s + rows], X[s:s + rows]], axis=1)
        extra = np.concatenate([nm.ones((rows, 1)), nm.ones((rows, 1))], axis=1)  # constant, indicator
        synthetic = np.concatenate([nm.zeros((1, 2 * d)), nm.ones((1, 1)), nm.zeros((1, 1))], axis=1)
        Z1 = np.concatenate([np.concatenate([Zkq, extra], axis=1), synthetic])
        out.append((s, rows, HeadJob(f"{TAG}.step1", Z1, *w1, decode=decode_A(0)),
                    HeadJob(f"{TAG}.step2", Zkq, *w2)))
    return out


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int, tau: np.ndarray,
             runner: JobRunner = run_one_per_call) -> AverageRun:
    """The average-case estimate of T(X) through the oracle (one head, one layer)."""
    reasons = preconditions(spec, oracle, b, tau)
    require(reasons)
    weights.validate(spec)
    nm = oracle.nm
    X = apply_token_map(nm, oracle, weights.phi, X, b, "input_mlp")
    hw = weights.layers[0].heads[0]
    WQ, WK, WV = nm.array(hw.WQ, "W^Q"), nm.array(hw.WK, "W^K"), nm.array(hw.WV, "W^V")
    Xtau = permute(nm, oracle, X, tau, b)
    plan = sampled_jobs(nm, X, Xtau, WQ, WK, WV, b)
    results = runner(oracle, [job for _, _, j1, j2 in plan for job in (j1, j2)])
    Y = nm.zeros((spec.N, WV.shape[1]))
    den = nm.zeros((spec.N, 1))
    for idx, (s, rows, _, _) in enumerate(plan):
        A_hat, ratio = results[2 * idx][:rows], results[2 * idx + 1][:rows]
        Y[s:s + rows] = ratio
        den[s:s + rows] = nm.div(nm.mul(A_hat, nm.const(spec.N, A_hat.shape)), nm.const(rows, A_hat.shape))
        oracle.ledger.record("processing", f"{TAG}.denominator", round=oracle.round, shape=(rows, 1), flops=2 * rows)
    Y = apply_token_map(nm, oracle, weights.layers[0].psi, Y, b, "layer_mlp")
    return AverageRun(Y, den)


# -- the same estimator, vectorised (float64) ---------------------------------------------------
def _block_softmax(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q k^T) v and log Σ exp(q k^T) for a batch of blocks (..., rows, ·).

    The head width is small, so the products are written as a sum over its coordinates: no BLAS
    call, whose thread pool costs more than the arithmetic at these shapes.
    """
    S = q[..., :, None, 0] * k[..., None, :, 0]
    for c in range(1, q.shape[-1]):
        S += q[..., :, None, c] * k[..., None, :, c]
    m = S.max(axis=-1, keepdims=True)
    S -= m
    np.exp(S, out=S)
    tot = S.sum(axis=-1)
    Y = np.stack([(S * v[..., None, :, c]).sum(axis=-1) for c in range(v.shape[-1])], axis=-1)
    return Y / tot[..., None], np.log(tot) + m[..., 0]


def estimate(q: np.ndarray, k: np.ndarray, v: np.ndarray, tau: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(Y, log of the Step-1 denominator estimates) for one τ; q, k, v are float64 (N × ·)."""
    N = q.shape[0]
    kt, vt = k[tau], v[tau]
    Y = np.empty((N, v.shape[1]))
    logden = np.empty(N)
    full = (N // b) * b
    if full:
        nb = N // b
        y, ld = _block_softmax(q[:full].reshape(nb, b, -1), kt[:full].reshape(nb, b, -1), vt[:full].reshape(nb, b, -1))
        Y[:full], logden[:full] = y.reshape(full, -1), ld.reshape(full) + np.log(N / b)
    if full < N:
        Y[full:], ld = _block_softmax(q[full:], kt[full:], vt[full:])
        logden[full:] = ld + np.log(N / (N - full))
    return Y, logden


def direct(q: np.ndarray, k: np.ndarray, v: np.ndarray, chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Full attention and log Σ_j a_ij in float64, in row chunks (the truth for the sweep)."""
    N = q.shape[0]
    Y, logden = np.empty((N, v.shape[1])), np.empty(N)
    for s in range(0, N, chunk):
        Y[s:s + chunk], logden[s:s + chunk] = _block_softmax(q[s:s + chunk], k, v)
    return Y, logden


@dataclass(frozen=True)
class Sweep:
    """Per seed: the worst row's relative error, the fraction of rows beyond eps, the worst
    relative error of the Step-1 denominator estimate."""

    max_error: np.ndarray
    row_fail_fraction: np.ndarray
    denominator_error: np.ndarray


def row_errors(Y: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Relative L2 error of each row (absolute where the true row is 0)."""
    norm = np.linalg.norm(truth, axis=1)
    diff = np.linalg.norm(Y - truth, axis=1)
    return np.where(norm > 0, diff / np.where(norm > 0, norm, 1.0), diff)


def sweep(q: np.ndarray, k: np.ndarray, v: np.ndarray, taus: list[np.ndarray], b: int, eps: float) -> Sweep:
    """Run the sampling estimator for each permutation and summarise its errors against the direct head."""
    truth, logden = direct(q, k, v)
    mx, frac, dens = [], [], []
    for tau in taus:
        Y, ld = estimate(q, k, v, tau, b)
        err = row_errors(Y, truth)
        mx.append(err.max())
        frac.append(float((err > eps).mean()))
        dens.append(float(np.abs(np.expm1(ld - logden)).max()))
    return Sweep(np.array(mx), np.array(frac), np.array(dens))
