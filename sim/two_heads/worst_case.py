"""two_heads.lemma_3_1 and two_heads.cor_3_2 — a whole (unmasked) model, layer by layer, head by head.

Each layer: every head's block-pair jobs (``blocks.head_jobs``) go to the oracle in one round, each
head is recombined by eq. (1) (processing), the heads are concatenated and the layer MLP ψ_ℓ is
applied. The paper applies ψ "with O(N/M) extra oracle calls"; an exact identity gather through
softmax attention is impossible (every weight is positive, and Lemma A.3's lookup is approximate),
so attnsim applies ψ token-wise as processing, one ledger entry (tag ``layer_mlp``) per chunk of b
tokens — the same n entries the paper counts as calls — and reports it apart from oracle calls.
The input MLP φ is handled the same way (tag ``input_mlp``), and so are a layer's ``pre`` map
(e.g. pre-LN, tag ``pre_norm``) and the residual addition of a model with a residual stream.
With rotary embeddings the oracle must have them too (``OracleSpec.rope``, same angles).

Preconditions are returned as reasons by :func:`preconditions` rather than raised deep inside.
"""

from __future__ import annotations

from attnsim.sim.errors import require
from attnsim.sim.masks import Full
from attnsim.sim.model import TransformerSpec, Weights
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle
from attnsim.sim.token_maps import TokenMap
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.blocks import DECODES, SCHEMES, block_starts, combine, head_jobs
from attnsim.sim.two_heads.jobs import JobRunner, run_one_per_call


def block_preconditions(oracle: Oracle, b: int, scheme: str) -> list[tuple[str, str]]:
    """Reasons shared by every block construction: a known scheme and at least one token per block."""
    reasons: list[tuple[str, str]] = []
    if scheme not in SCHEMES:
        reasons.append(("scheme", f"must be one of {SCHEMES}, got {scheme!r}"))
    if b < 1:
        reasons.append(("M", f"block size b = {b} < 1 (M too small for the "
                             f"{oracle.spec.length_convention} length convention)"))
    return reasons


def preconditions(spec: TransformerSpec, oracle: Oracle, b: int, scheme: str,
                  decode: str = "paper") -> list[tuple[str, str]]:
    """Reasons the construction cannot run, as (what, why) pairs; empty when it can."""
    o = oracle.spec
    reasons = block_preconditions(oracle, b, scheme)
    if decode not in DECODES:
        reasons.append(("decode", f"must be one of {DECODES}, got {decode!r}"))
    if not isinstance(spec.mask, Full):
        reasons.append(("mask", f"this construction is for unmasked models; got {spec.mask}"))
    if o.causal:
        reasons.append(("oracle", "needs a non-causal oracle"))
    if b + 1 > o.max_len:
        reasons.append(("M", f"a block of {b} tokens plus the synthetic token exceeds the oracle length {o.max_len}"))
    if 2 * spec.m + 2 > o.dim:
        reasons.append(("dim", f"oracle dim {o.dim} < 2·(d/H) + 2 = {2 * spec.m + 2}"))
    if spec.rope is not None and o.rope != spec.rope:
        reasons.append(("rope", f"the model uses {spec.rope}; the oracle must rotate with the same angles"))
    return reasons


def apply_token_map(nm: Numerics, oracle: Oracle, fmap: TokenMap, X: Array, b: int, tag: str) -> Array:
    """A token-wise map as processing, one ledger entry per chunk of b tokens."""
    if fmap.is_identity:
        return X
    out = fmap(nm, X)
    for s in block_starts(X.shape[0], b):
        rows = P.block_len(P.INT, X.shape[0], b, s)
        oracle.ledger.record("processing", tag, round=oracle.round, shape=(rows, X.shape[1]),
                             flops=2 * rows * X.shape[1] * out.shape[1])
    return out


def sum_heads(nm: Numerics, oracle: Oracle, spec: TransformerSpec, X: Array, heads: list[Array]) -> Array:
    """End of a simulated layer's attention (processing): the heads side by side, plus the residual X
    when the model has one. The heads are added one at a time into one new array and ``heads`` is
    emptied as they are, so a layer never holds the heads, their concatenation and the sum at once;
    ψ_ℓ comes next (:func:`apply_token_map`), after the caller has let go of X."""
    out = X.copy() if spec.residual else nm.zeros((X.shape[0], P.model_head_columns(len(heads), spec.m)[0]))
    h = 0
    while heads:
        head = heads.pop(0)
        cols = slice(*P.model_head_columns(h, spec.m))
        out[:, cols] = nm.add(out[:, cols], head) if spec.residual else head
        h += 1
    if spec.residual:
        oracle.ledger.record("processing", "residual", round=oracle.round, shape=out.shape, flops=out.size)
    return out


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int,
             scheme: str = "paper", runner: JobRunner = run_one_per_call, tag: str = "lemma_3_1",
             decode: str = "paper") -> Array:
    """T(X) from oracle calls (exact identity in exact arithmetic); ``decode``: the paper's Step-1 decode
    p/(1 − p) or the stable p/q (``blocks``), the same calls either way."""
    reasons = preconditions(spec, oracle, b, scheme, decode)
    require(reasons)
    weights.validate(spec)
    nm = oracle.nm
    X = apply_token_map(nm, oracle, weights.phi, X, b, "input_mlp")
    for li, layer in enumerate(weights.layers):
        jobs, plans, spans = [], [], []
        Xa = apply_token_map(nm, oracle, layer.pre, X, b, "pre_norm")
        for h, hw in enumerate(layer.heads):
            Xh = Xa[:, slice(*P.model_head_columns(h, spec.m))]
            j, p = head_jobs(nm, Xh, nm.array(hw.WQ, "W^Q"), nm.array(hw.WK, "W^K"), nm.array(hw.WV, "W^V"),
                             b, scheme, f"{tag}.L{li}.H{h}" if spec.L * spec.H > 1 else tag, spec.rope,
                             decode=decode)
            spans.append((len(jobs), len(jobs) + len(j)))
            jobs += j
            plans += p
        results = runner(oracle, jobs)
        heads = [combine(nm, oracle.ledger, spec.N, spec.m, plans[s:e], results[s:e], tag, oracle.round)
                 for s, e in spans]
        X = sum_heads(nm, oracle, spec, X, heads)
        X = apply_token_map(nm, oracle, layer.psi, X, b, "layer_mlp")
    return X
