"""The output identity of each exact Two Heads construction, run on the real code with symbolic entries.

For a claim and a variant (scheme, length convention, sinks), the construction the checker runs —
its real layouts (``blocks.layout_input``), weights (``weights_step1``/``weights_step2``), oracle
(``sim.oracle.Oracle``, with its limits), decoders, packing and combination (``combine``,
``causal_combine``, ``window_combine``), heads and layer MLP — is run in :mod:`~attnsim.verify.prove.atoms`
numerics: every input entry, weight and ψ coefficient a free symbol, exp as independent atoms. The
output must equal the reference model (``sim.model.reference``, which shares no code with the
construction) as rational functions. The sizes are chosen so that every call shape occurs: at least
three blocks with a partial last one (so full and partial query and key blocks, padding rows, and a
combination over several key blocks), two heads of width 2 and an affine ψ (so a head that reads
another head's columns, or a skipped ψ, changes the output); for Theorem 5.1 three chunks, two full
and a partial last one, and a model of N = s + r tokens (no chunk).

With the plan's obligations (coverage, units, layout, limit for every size), this makes the output
proved for every size; the loops that run the calls (the combination's sum over key blocks, the
layer loop of ``multi_layer.simulate_layers``) are checked at these sizes only, which is the part
not proved for every size (docs/proofs.md).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

import numpy as np

from attnsim.sim.masks import Causal, Full, Mask, Sink, SlidingWindow
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights, reference
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.token_maps import Affine, TokenMap
from attnsim.sim.two_heads import causal, window
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.jobs import HeadJob, run_one_per_call
from attnsim.sim.two_heads.multi_layer import full_head, simulate_layers
from attnsim.sim.two_heads.packing import run_packed
from attnsim.sim.two_heads.worst_case import simulate as simulate_worst_case
from attnsim.verify.prove.atoms import AtomNumerics, Field, Rat, same, symbol_names, symbols

LAYERS = 2  # the layer loop: layer 1 with an arbitrary ψ (``Generic``), the last layer with an affine ψ
M_OF = {"paper": 2, "strict": 3}  # b = 2 real tokens per block either way
WINDOW_M = {"paper": 4, "strict": 5}  # b = 4: with r = 1 and s = 1 a chunk holds 2 queries


@dataclass
class OutputRow:
    """One output identity: the claim, variant, the sizes run, whether it holds, seconds."""

    claim: str
    variant: str
    sizes: dict[str, Any]
    status: str  # "proved" (the identity holds) or "failed"
    seconds: float
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return asdict(self)


@dataclass(frozen=True)
class Setup:
    """What one output identity runs: the model's sizes and mask, the oracle, the construction."""

    N: int
    M: int
    mask: Mask
    oracle: Callable[[int], OracleSpec]  # m -> the oracle spec
    run: Callable[[TransformerSpec, Weights, Any, Oracle], Any]
    H: int = 2
    m: int = 2
    L: int = LAYERS


@dataclass(frozen=True, eq=False)
class Generic(TokenMap):
    """An arbitrary token-wise map g (the layer MLP ψ of every layer but the last): each distinct input row
    gets a row of fresh symbols, equal rows the same symbols. An identity that holds with g uninterpreted
    holds for every ψ; it also hands the next layer polynomial inputs, so its scores stay polynomials."""

    F: Field
    name: str = "generic"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """g applied to each row."""
        out = np.empty(x.shape, dtype=object)
        for t in range(x.shape[0]):
            key = "|".join(repr(v) for v in x[t])
            row = self.F.generic.setdefault(key, [Rat(self.F, g) for g in self.F.take_generic(x.shape[1])])
            out[t] = row
        return out


def _model(F: Field, N: int, H: int, m: int, L: int, mask: Mask) -> tuple[TransformerSpec, Weights, Any]:
    d = H * m
    layers = []
    for li in range(L):
        heads = tuple(HeadWeights(*(symbols(F, f"{w}{h}l{li}", (m, m)) for w in ("q", "k", "v"))) for h in range(H))
        psi = Affine(symbols(F, "A", (d, d)), symbols(F, "c", (d,))) if li == L - 1 else Generic(F)
        layers.append(LayerWeights(heads, psi=psi))
    return TransformerSpec(N, d, H, L, mask), Weights(tuple(layers)), symbols(F, "x", (N, d))


def _names(N: int, H: int, m: int, L: int) -> list[str]:
    d = H * m
    out = symbol_names("x", (N, d)) + symbol_names("A", (d, d)) + symbol_names("c", (d,))
    return out + [n for li in range(L) for h in range(H) for w in ("q", "k", "v")
                  for n in symbol_names(f"{w}{h}l{li}", (m, m))]


def identity(setup: Setup) -> tuple[bool, str]:
    """Run the construction and the reference on symbolic entries; equal as rational functions?"""
    F = Field(_names(setup.N, setup.H, setup.m, setup.L), atoms=setup.L * setup.N * setup.N * setup.H + 4,
              generic=(setup.L - 1) * 2 * setup.N * setup.H * setup.m)
    nm = AtomNumerics(F)
    spec, weights, X = _model(F, setup.N, setup.H, setup.m, setup.L, setup.mask)
    Y = setup.run(spec, weights, nm.array(X), Oracle(setup.oracle(setup.m), nm))
    ref = reference(spec, weights, nm.array(X), nm)
    if same(Y, ref):
        return True, ""
    bad = [tuple(int(i) for i in ix) for ix in np.ndindex(*ref.shape) if Y.shape != ref.shape or not Y[ix] == ref[ix]]
    return False, f"output differs from the reference at (token, column) {bad[:4]}"


def _packed(m: int, M: int, length: str, causal_: bool) -> OracleSpec:
    return OracleSpec(OracleSpec.max_len_for(M, length), 2, 2, 4 * (3 * m + 3), causal=causal_, residual=True,
                      length_convention=length)


def setup(claim: str, scheme: str, length: str, sinks: bool | None) -> Setup:
    """The sizes and the construction ``claim``'s checker runs, for one variant."""
    short = claim.split(".", 1)[1]
    if short in ("thm_5_1", "thm_1_4"):
        M = WINDOW_M[length]
        b = OracleSpec.block_size(M, length)
        r, s = 1, 1 if sinks else 0
        C = b - s - r
        N = s + r + 2 * C + 1  # two full chunks and a partial third
        mask = Sink(s, r) if sinks else SlidingWindow(r)
        return Setup(N, M, mask, lambda m: _packed(m, M, length, True),
                     lambda spec, w, X, o: window.simulate(spec, w, X, o, b=b, M=M, scheme=scheme, runner=run_packed))
    M = M_OF[length]
    b = OracleSpec.block_size(M, length)
    N = 2 * b + 1  # three blocks, the last partial
    if short in ("thm_3_5",) or (short == "thm_1_1" and sinks):
        return Setup(N, M, Causal(), lambda m: _packed(m, M, length, True),
                     lambda spec, w, X, o: causal.simulate(spec, w, X, o, b=b, scheme=scheme, runner=run_packed))
    if short in ("thm_3_4", "thm_1_1"):
        return Setup(N, M, Full(), lambda m: _packed(m, M, length, False),
                     lambda spec, w, X, o: simulate_layers(spec, w, X, o, b=b, runner=run_packed, tag="thm_3_4",
                                                           build_head=full_head(b, scheme, uniform=True)))
    one = lambda m: OracleSpec(OracleSpec.max_len_for(M, length), 1, 1, 2 * m + 2,  # noqa: E731
                               length_convention=length)
    return Setup(N, M, Full(), one, lambda spec, w, X, o: simulate_worst_case(spec, w, X, o, b=b, scheme=scheme,
                                                                             runner=run_one_per_call))


def packing_identity() -> tuple[bool, str]:
    """Lemma 3.3: H'L' + 1 symbolic jobs (two calls, one slot left empty) packed, against each job alone."""
    Hp, Lp, rows, m = 2, 2, 3, 2
    count = Hp * Lp + 1
    names = [n for k in range(count) for p, shape in (("z", (rows, m)), ("q", (m, m)), ("k", (m, m)), ("v", (m, m)))
             for n in symbol_names(f"{p}{k}", shape)]
    F = Field(names, atoms=count * rows * rows + 4)
    nm = AtomNumerics(F)
    jobs = [HeadJob(f"job{k}", *(symbols(F, f"{p}{k}", s) for p, s in (("z", (rows, m)), ("q", (m, m)),
                                                                       ("k", (m, m)), ("v", (m, m)))))
            for k in range(count)]
    outs = run_packed(Oracle(OracleSpec(rows, Hp, Lp, Hp * Lp * 2 * m, residual=True), nm), jobs)
    for k, (job, out) in enumerate(zip(jobs, outs)):
        alone = nm.attention(nm.matmul(job.Z, job.WQ), nm.matmul(job.Z, job.WK), nm.matmul(job.Z, job.WV))
        if not same(out, alone):
            return False, f"job {k} (slot {P.pack_slot(P.INT, k, Hp * Lp, Lp)}) differs from the job run alone"
    return True, ""


def claim_b_6_identity(length: str) -> tuple[bool, str]:
    """Claim B.6: the decoded denominators of every block against Σ_{j ≤ i in i's block} exp(<q_i, k_j>)."""
    M = M_OF[length]
    b = OracleSpec.block_size(M, length)
    N, m = 2 * b + 1, 2
    F = Field(symbol_names("x", (N, m)) + symbol_names("q", (m, m)) + symbol_names("k", (m, m)), atoms=N * N + 4)
    nm = AtomNumerics(F)
    X, WQ, WK = symbols(F, "x", (N, m)), symbols(F, "q", (m, m)), symbols(F, "k", (m, m))
    spec = OracleSpec(OracleSpec.max_len_for(M, length), 1, 1, 2 * m + 2, causal=True, length_convention=length)
    Y = causal.block_denominators(nm, X, WQ, WK, b, Oracle(spec, nm), run_one_per_call)
    w = nm.weights(nm.matmul(nm.matmul(X, WQ), nm.matmul(X, WK).T), None)
    for i in range(N):
        start = (i // b) * b
        want = sum(w[i, start:i + 1][1:], w[i, start])
        if not Y[i, 0] == want:
            return False, f"token {i}: decoded denominator differs"
    return True, ""


def variants(claim: str) -> list[tuple[str, dict[str, Any], str]]:
    """(variant label, parameters, the run it shares with other claims) of ``claim``'s output identities."""
    short = claim.split(".", 1)[1]
    if short == "lemma_3_3":
        return [("any", {}, "packing")]
    out = []
    for length in ("paper", "strict"):
        for scheme in ("paper", "fused"):
            if short == "claim_b_6" and scheme == "fused":
                continue
            base = {"scheme": scheme, "length": length}
            label = f"scheme={scheme} length={length}"
            if short in ("thm_5_1", "thm_1_4"):
                out += [(f"{label} sinks={'yes' if s else 'no'}", {**base, "sinks": s}, f"window:{scheme}:{length}:{s}")
                        for s in (False, True)]
            elif short == "thm_1_1":
                out += [(label, {**base, "causal": False}, f"packed:{scheme}:{length}"),
                        (label, {**base, "causal": True}, f"causal:{scheme}:{length}")]
            else:
                kind = {"lemma_3_1": "blocks", "cor_3_2": "blocks", "thm_3_4": "packed", "thm_3_5": "causal",
                        "claim_b_6": "b6"}[short]
                out.append((label, base, f"{kind}:{scheme}:{length}"))
    return out


def _both(first: tuple[bool, str], second: Callable[[], tuple[bool, str]], N: int) -> tuple[bool, str]:
    """The first identity's result if it failed, else the second's (run at N)."""
    if not first[0]:
        return first
    ok, why = second()
    return ok, "" if ok else f"at N = {N}: {why}"


def run_output(claim: str, variant: str, params: dict[str, Any]) -> OutputRow:
    """One claim's output identity in one variant (``params``: scheme, length, sinks)."""
    start = time.perf_counter()
    scheme, length = params.get("scheme", "paper"), params.get("length", "paper")
    short = claim.split(".", 1)[1]
    if short == "lemma_3_3":
        sizes: dict[str, Any] = {"jobs": 5, "Hp": 2, "Lp": 2, "M": 3}
        work: Callable[[], tuple[bool, str]] = packing_identity
    elif short == "claim_b_6":
        b = OracleSpec.block_size(M_OF[length], length)
        sizes = {"N": 2 * b + 1, "M": M_OF[length], "d": 2}
        work = lambda: claim_b_6_identity(length)  # noqa: E731
    else:
        st = setup(claim, scheme, length, params.get("sinks") or params.get("causal"))
        sizes = {"N": st.N, "M": st.M, "d": st.H * st.m, "H": st.H, "L": st.L}
        if isinstance(st.mask, (Sink, SlidingWindow)):
            sizes.update(window=st.mask.r, sinks=getattr(st.mask, "s", 0))
        if st.oracle(st.m).heads > 1:
            sizes.update(Hp=2, Lp=2)
        work = lambda: identity(st)  # noqa: E731
        if isinstance(st.mask, (Sink, SlidingWindow)):  # and a model no longer than s + r (no chunk at all)
            short = replace(st, N=st.mask.r + getattr(st.mask, "s", 0))
            work = lambda: _both(identity(st), lambda: identity(short), short.N)  # noqa: E731
    try:
        ok, why = work()
    except Exception as exc:  # noqa: BLE001 - a crash or refusal of the real code is a failed identity, shown
        ok, why = False, f"{type(exc).__name__}: {exc}"
    return OutputRow(claim, variant, sizes, "proved" if ok else "failed", round(time.perf_counter() - start, 3), why)
