"""Checkers of the exact unmasked Two Heads constructions.

* ``two_heads.lemma_3_1`` — one head, one layer (``worst_case.simulate``);
* ``two_heads.cor_3_2`` — H heads, L layers, one single-head single-layer call per job;
* ``two_heads.lemma_3_3`` — H'·L' independent single-head jobs in one packed call;
* ``two_heads.thm_3_4`` — H heads, L layers, H'·L' jobs per call (``multi_layer`` + ``packing``);
* ``two_heads.thm_1_1`` — Theorem 3.4, or Theorem 3.5 with ``--causal true``.

The packed oracle has a residual stream with per-instance output slots (``packing.py``): the
paper's model has none and Lemma 3.3 needs one (docs/reconstructions.md, "A residual stream for the packed
oracle"). The abstract "H'L' jobs per
call" count is measured beside it (``jobs``, ``abstract_calls``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from attnsim.sim.masks import Causal, Full
from attnsim.sim.numerics import Array, Numerics, backend_kind, get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.token_maps import Affine, GridAffine, TokenMap
from attnsim.sim.two_heads import causal as causal_construction
from attnsim.sim.two_heads.blocks import DECODES
from attnsim.sim.two_heads.jobs import HeadJob, run_one_per_call
from attnsim.sim.two_heads.multi_layer import full_head, simulate_layers
from attnsim.sim.two_heads.packing import abstract_calls, run_packed
from attnsim.sim.two_heads.worst_case import simulate
from attnsim.verify.agreement import asked_bits, compare, truth_numerics
from attnsim.verify.cases import INPUT_KINDS, Case, random_case
from attnsim.verify.cost import EXACT_KINDS
from attnsim.verify.decode_allowance import BlockDecode
from attnsim.verify.layer_record import record_layers
from attnsim.verify.model_check import measure_model
from attnsim.verify.registry import CheckContext, Measurement, Param, UsageError, checker, size_grid

NUMERICS = ("exact", "fraction", "symbolic", "mp", "arb", "float64", "float", "fixed")

COMMON = [
    Param("N", int, 64, "length of the large model's input", minimum=1),
    Param("M", int, 8, "oracle length (real tokens per block under the paper convention)", minimum=2),
    Param("d", int, 4, "embedding dimension of the large model", minimum=1),
    Param("scheme", str, "paper", "paper: two calls per block pair; fused: one", choices=("paper", "fused")),
    Param("length", str, "paper", "paper: oracle length M+1 (synthetic token extra); strict: M, blocks of M-1",
          choices=("paper", "strict")),
    Param("psi", str, "auto", "layer MLP: identity, affine (grid-rounded in exact numerics), quadratic "
          "(non-linear), auto (identity for L=1, else affine)", choices=("auto", "identity", "affine", "quadratic")),
    Param("input", str, "random", "input values: random (small) or large (integers up to 4)", choices=INPUT_KINDS),
    Param("input_file", str, None, "optional .npy file holding X (N × d)"),
]


def shape_params(N: int, M: int, d: int, H: int, L: int, Hp: int = 1, Lp: int = 1) -> list[Param]:
    """COMMON with other defaults, plus the heads and layers of the model and of the oracle."""
    defaults = {"N": N, "M": M, "d": d}
    out = [Param(p.name, p.type, defaults.get(p.name, p.default), p.help, p.minimum, p.choices) for p in COMMON]
    return out + [
        Param("H", int, H, "heads per layer of the large model (must divide d)", minimum=1),
        Param("L", int, L, "layers of the large model", minimum=1),
        Param("Hp", int, Hp, "heads per layer of the oracle (H')", minimum=1),
        Param("Lp", int, Lp, "layers of the oracle (L')", minimum=1),
    ]


def block_size(M: int, length: str) -> int:
    """Real tokens per block under the length convention; an error when none is left."""
    b = OracleSpec.block_size(M, length)
    if b < 1:
        raise UsageError(f"--M: M={M} leaves no real token per block under the {length} length convention")
    return b


def model_case(ctx: CheckContext, mask: Any) -> Case:
    """A random model; its affine layer MLPs are scaled by 1/d (see :func:`bounded_layers`). In exact
    numerics every layer MLP records its input, so each layer is compared before rounding (``layer_record``)."""
    p = ctx.params
    psi = "affine" if p["psi"] == "quadratic" else p["psi"]
    exact = backend_kind(ctx.numerics) in EXACT_KINDS
    grid = exact or backend_kind(ctx.numerics) == "arb"  # balls: the same grid case, so the exact run can compare
    case = random_case(p["N"], p["d"], p.get("H", 1), p.get("L", 1), mask, ctx.seed, layer_mlp=psi,
                       input_kind=p["input"], exact_kind=grid, input_file=p["input_file"])
    case = bounded_layers(case, quadratic=p["psi"] == "quadratic")
    return record_layers(case) if exact else case


def bounded_layers(case: Case, quadratic: bool) -> Case:
    """Replace each random affine ψ(x) = xA + c by x ↦ x(A/d) + c (or the quadratic map below).

    ``cases.random_affine`` has entries of A in [-1, 1], so every layer multiplies magnitudes by up to
    d and the exact numbers z**(D·score) of deeper layers grow to millions of bits. Scaling A by 1/d
    keeps scores small across layers; the construction treats ψ as a black box either way.
    ``quadratic`` makes ψ non-linear: x ↦ round((x A/d)∘(x A/d) + c), to show that any token-wise ψ works.
    """
    layers = []
    for layer in case.weights.layers:
        psi = layer.psi
        if isinstance(psi, Affine):
            A = np.vectorize(lambda v: v / case.spec.d, otypes=[object])(psi.A)
            grid = psi.denominator if isinstance(psi, GridAffine) else None
            psi = QuadraticMap(A, psi.c, grid) if quadratic else (GridAffine(A, psi.c, denominator=grid) if grid
                                                                  else Affine(A, psi.c))
        layers.append(replace(layer, psi=psi))
    return Case(case.spec, replace(case.weights, layers=tuple(layers)), case.X)


@dataclass(frozen=True, eq=False)
class QuadraticMap(TokenMap):
    """x ↦ (xA)∘(xA) + c, rounded to the grid (1/grid)Z when ``grid`` is set: a non-linear layer MLP."""

    A: np.ndarray
    c: np.ndarray
    grid: int | None
    name: str = "quadratic"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """(x A)² + c element-wise, rounded to the grid when one is set."""
        y = nm.matmul(x, nm.array(self.A, "ψ.A"))
        y = nm.add(nm.mul(y, y), nm.array(self.c[None, :], "ψ.c"))
        return nm.to_grid(y, self.grid) if self.grid else y


def base_derived(ctx: CheckContext, case: Case, b: int) -> dict[str, Any]:
    """Values of the formula symbols shared by the unmasked checkers (strict, fused, b, psi)."""
    p = ctx.params
    return {"strict": int(p["length"] == "strict"), "fused": int(p["scheme"] == "fused"), "b": b,
            "psi": sum(not layer.psi.is_identity for layer in case.weights.layers)}


def packed_spec(p: dict[str, Any], m: int, causal: bool) -> OracleSpec:
    """An oracle of H' heads, L' layers, width H'L'(3d/H + 3) = O(d H'L'/H), with a residual stream."""
    return OracleSpec(OracleSpec.max_len_for(p["M"], p["length"]), p["Hp"], p["Lp"], p["Hp"] * p["Lp"] * (3 * m + 3),
                      causal=causal, residual=True, length_convention=p["length"])


def add_job_counts(m: Measurement, oracle: Oracle, per_call: int) -> Measurement:
    """The abstract model's counts beside the real ones: single-head jobs and ⌈jobs/(H'L')⌉ per round."""
    jobs = [e.round for e in oracle.ledger.entries if e.kind == "job"]
    m.counts["jobs"] = len(jobs)
    m.counts["abstract_calls"] = abstract_calls(jobs, per_call)
    return m


def measure_packed(ctx: CheckContext, case: Case, spec: OracleSpec, derived: dict[str, Any],
                   construct: Callable[[Oracle, Array], Array], decode: BlockDecode | None = None) -> Measurement:
    """Run a packed construction ``construct(oracle, X)`` and add the abstract counts (``decode``: see
    ``model_check.required_bits``)."""
    seen: list[Oracle] = []

    def run(oracle: Oracle, X):
        seen.append(oracle)
        return construct(oracle, X)

    m = measure_model(ctx, case, spec, run, derived, decode=decode)
    return add_job_counts(m, seen[0], spec.heads * spec.layers)


def block_decode(p: dict[str, Any], b: int, window: bool = False) -> BlockDecode:
    """The decode a Two Heads construction runs with parameters ``p`` over blocks of ``b`` keys: the paper's
    p/(1 − p) or the stable one (``--decode``), one call per block or fused (``--scheme``)."""
    return BlockDecode(b, window=window, fused=p.get("scheme") == "fused", paper=p.get("decode", "paper") == "paper")


# -- Lemma 3.1 -------------------------------------------------------------------------------------
def _lemma_3_1_grid(quick: bool) -> list[dict]:
    pts = [dict(N=N, M=M, d=2, scheme=s) for N in (8, 16, 32) for M in (4,) for s in ("paper", "fused")]
    pts += [dict(N=13, M=4, d=2, scheme=s, decode="stable") for s in ("paper", "fused")]
    pts += [dict(N=20, M=4, d=2, length="strict"), dict(N=13, M=4, d=3, psi="affine"),
            dict(N=16, M=4, d=2, numerics="mp:200"), dict(N=64, M=8, d=4, numerics="float64")]
    if not quick:
        pts += [dict(N=N, M=8, d=4, scheme=s) for N in (64, 128) for s in ("paper", "fused")]
        pts += [dict(N=8, M=4, d=2, numerics="symbolic")]
    return pts


DECODE = Param("decode", str, "paper", "Step 1's decode: paper, A = p/(1-p); stable, A = p/q with q = 1 - p read "
               "from the same call (same calls, no bits lost to 1 - p)", choices=DECODES)


@checker("two_heads.lemma_3_1", evidence="independent",
         params=[*COMMON, DECODE], grid=_lemma_3_1_grid, numerics=NUMERICS,
         growth_grid=size_grid("N", (8, 16, 32, 64), M=4, d=2, psi="affine", numerics="float64"))
def check_lemma_3_1(ctx: CheckContext) -> Measurement:
    """Lemma 3.1 / B.1: one head from single-head calls, exact, with its call count."""
    p = ctx.params
    b = block_size(p["M"], p["length"])
    case = model_case(ctx, Full())
    spec = OracleSpec(OracleSpec.max_len_for(p["M"], p["length"]), 1, 1, 2 * p["d"] + 2,
                      length_convention=p["length"])
    return measure_model(ctx, case, spec,
                         lambda oracle, X: simulate(case.spec, case.weights, X, oracle, b=b, scheme=p["scheme"],
                                                    decode=p["decode"]),
                         base_derived(ctx, case, b), decode=block_decode(p, b))


# -- Corollary 3.2 ---------------------------------------------------------------------------------
COR_3_2_PARAMS = shape_params(24, 4, 4, 2, 2)[:-2]


def _cor_3_2_grid(quick: bool) -> list[dict]:
    pts = [dict(N=8, M=4, d=4, H=2, L=2), dict(N=13, M=4, d=4, H=2, L=2, scheme="fused")]
    if not quick:
        pts += [dict(N=N, M=4, d=4, H=2, L=1, psi="identity", numerics="float64") for N in (8, 16, 32, 64)]
        pts += [dict(N=10, M=4, d=4, H=2, L=2, length="strict")]
    return pts


@checker("two_heads.cor_3_2", evidence="independent",
         params=[*COR_3_2_PARAMS, DECODE], grid=_cor_3_2_grid, numerics=NUMERICS,
         growth_grid=size_grid("N", (8, 16, 32, 64), M=4, d=4, H=2, L=2, numerics="float64"))
def check_cor_3_2(ctx: CheckContext) -> Measurement:
    """Every head of every layer through Lemma 3.1, one job per call to a single-head oracle of width 2d/H + 2."""
    p = ctx.params
    b = block_size(p["M"], p["length"])
    case = model_case(ctx, Full())
    m = case.spec.m
    spec = OracleSpec(OracleSpec.max_len_for(p["M"], p["length"]), 1, 1, 2 * m + 2, length_convention=p["length"])
    return measure_model(ctx, case, spec, lambda oracle, X: simulate(
        case.spec, case.weights, X, oracle, b=b, scheme=p["scheme"], runner=run_one_per_call, tag="cor_3_2",
        decode=p["decode"]),
        base_derived(ctx, case, b), decode=block_decode(p, b))


# -- Lemma 3.3 -------------------------------------------------------------------------------------
LEMMA_3_3_PARAMS = [
    Param("M", int, 8, "length of every job (and of the oracle)", minimum=1),
    Param("d", int, 8, "width d of the large model; every job has width d/H", minimum=1),
    Param("H", int, 4, "heads of the large model (job width d/H)", minimum=1),
    Param("Hp", int, 2, "heads per layer of the oracle (H')", minimum=1),
    Param("Lp", int, 2, "layers of the oracle (L')", minimum=1),
    Param("jobs", int, None, "number of independent jobs (default H'·L')", minimum=1),
    Param("causal", bool, False, "causal jobs and a causal oracle"),
]


def _lemma_3_3_grid(quick: bool) -> list[dict]:
    pts = [dict(Hp=2, Lp=2), dict(Hp=3, Lp=2, jobs=7, causal=True), dict(Hp=1, Lp=3, numerics="float64")]
    if not quick:
        pts += [dict(Hp=4, Lp=4, jobs=16, numerics="mp:128")]
    return pts


def _grid(rng: np.random.Generator, shape: tuple[int, ...], den: int) -> np.ndarray:
    return np.vectorize(lambda v: Fraction(int(v), den), otypes=[object])(rng.integers(-den, den + 1, size=shape))


def _jobs_alone(nm: Numerics, raw: list[tuple[np.ndarray, ...]], allowed: np.ndarray | None) -> np.ndarray:
    """Each job's head computed alone by ``Numerics.attention`` in ``nm``, stacked (Lemma 3.3's reference)."""
    return np.concatenate([nm.attention(*(nm.matmul(nm.array(Z), nm.array(W)) for W in Ws), allowed)
                           for Z, *Ws in raw])


@checker("two_heads.lemma_3_3", evidence="independent",
         params=LEMMA_3_3_PARAMS, grid=_lemma_3_3_grid, numerics=NUMERICS,
         growth_grid=size_grid("jobs", (4, 8, 16, 32), Hp=2, Lp=2, numerics="float64"))
def check_lemma_3_3(ctx: CheckContext) -> Measurement:
    """Random independent single-head jobs, packed H'·L' per call, against each job computed alone."""
    p = ctx.params
    m, count = p["d"] // p["H"], p["jobs"] or p["Hp"] * p["Lp"]
    nm = get_numerics(ctx.numerics, ctx.seed)
    truth = truth_numerics(nm, ctx.seed)
    rng = np.random.default_rng(ctx.seed)
    raw = [(_grid(rng, (p["M"], m), 2), *(_grid(rng, (m, m), 4) for _ in range(3))) for _ in range(count)]
    spec = OracleSpec(p["M"], p["Hp"], p["Lp"], p["Hp"] * p["Lp"] * 2 * m, causal=p["causal"], residual=True)
    oracle = Oracle(spec, nm)
    jobs = [HeadJob(f"lemma_3_3.job{k}", *(nm.array(a) for a in job)) for k, job in enumerate(raw)]
    Y = np.concatenate(run_packed(oracle, jobs))
    allowed = np.tril(np.ones((p["M"], p["M"]), bool)) if p["causal"] else None
    ref = _jobs_alone(truth, raw, allowed)
    min_bits, kept = ctx.min_bits, None
    if min_bits is None and not nm.exact:  # no more than the jobs keep computed alone in the format
        kept = compare(_jobs_alone(get_numerics(ctx.numerics, ctx.seed), raw, allowed), ref, nm, truth, None).error_bits
        min_bits = asked_bits(nm, kept, [], kept_words="the jobs computed alone keep {bits} bits in this format")
    ag = compare(Y, ref, nm, truth, min_bits)
    shape = oracle.ledger.max_shape("oracle")
    m_ = Measurement(evidence="independent", reference="Numerics.attention of each job's head, in the truth numerics",
                     agree=ag.agree, error_bits=ag.error_bits,
                     counts={"calls": oracle.ledger.total("oracle"), "rounds": oracle.ledger.rounds("oracle"),
                             "oracle_len": shape[0] if shape else 0, "oracle_dim": shape[1] if shape else 0},
                     counts_by_tag=oracle.ledger.by_tag("oracle"), rounds=oracle.ledger.rounds("oracle"),
                     derived={"jobs": count, "m": m}, extra={
                         "oracle": spec.describe(), "min_bits": min_bits, "direct_bits": kept,
                         "precision_bits": nm.bits})
    return add_job_counts(m_, oracle, p["Hp"] * p["Lp"])


# -- Theorem 3.4 and Theorem 1.1 -------------------------------------------------------------------
THM_3_4_PARAMS = shape_params(24, 4, 4, 2, 2, 2, 2)


def _thm_3_4_grid(quick: bool) -> list[dict]:
    pts = [dict(N=16, M=4, d=4, H=2, L=2, Hp=2, Lp=2), dict(N=13, M=4, d=4, H=2, L=2, Hp=2, Lp=1, scheme="fused"),
           dict(N=5, M=3, d=1, H=1, L=1, Hp=1, Lp=2, numerics="symbolic")]
    sizes = (8, 16, 32, 64) if quick else (8, 16, 32, 64, 128, 256)
    pts += [dict(N=N, M=4, d=4, H=2, L=1, Hp=2, Lp=2, psi="identity", numerics="float64") for N in sizes]
    if not quick:
        pts += [dict(N=48, M=8, d=8, H=4, L=3, Hp=2, Lp=2), dict(N=20, M=5, d=6, H=3, L=2, Hp=3, Lp=2, length="strict"),
                dict(N=12, M=4, d=4, H=2, L=2, Hp=2, Lp=2, psi="quadratic")]
    return pts


def thm_3_4_measure(ctx: CheckContext) -> Measurement:
    """Thm 3.4 / B.4: a whole unmasked model on the packed oracle."""
    p = ctx.params
    b = block_size(p["M"], p["length"])
    case = model_case(ctx, Full())
    spec = packed_spec(p, case.spec.m, causal=False)
    return measure_packed(ctx, case, spec, base_derived(ctx, case, b), lambda oracle, X: simulate_layers(
        case.spec, case.weights, X, oracle, b=b, build_head=full_head(b, p["scheme"], uniform=True),
        runner=run_packed, tag="thm_3_4"), decode=block_decode(p, b))


def thm_3_5_measure(ctx: CheckContext) -> Measurement:
    """Thm 3.5 / B.5: a whole causal model on the packed causal oracle."""
    p = ctx.params
    b = block_size(p["M"], p["length"])
    case = model_case(ctx, Causal())
    spec = packed_spec(p, case.spec.m, causal=True)
    return measure_packed(ctx, case, spec, base_derived(ctx, case, b), lambda oracle, X: causal_construction.simulate(
        case.spec, case.weights, X, oracle, b=b, scheme=p["scheme"], runner=run_packed), decode=block_decode(p, b))


@checker("two_heads.thm_3_4", evidence="independent", params=THM_3_4_PARAMS, grid=_thm_3_4_grid, numerics=NUMERICS,
         growth_grid=size_grid("N", (8, 16, 32, 64), M=4, d=4, H=2, L=2, Hp=2, Lp=2, numerics="float64"))
def check_thm_3_4(ctx: CheckContext) -> Measurement:
    """An unmasked L-layer H-head model, one layer at a time, H'·L' block-pair jobs per packed call."""
    return thm_3_4_measure(ctx)


def _thm_1_1_grid(quick: bool) -> list[dict]:
    return [dict(N=12, M=4, d=4, H=2, L=2, Hp=2, Lp=2, causal=c) for c in (False, True)]


@checker(
    "two_heads.thm_1_1", evidence="independent",
    params=THM_3_4_PARAMS + [Param("causal", bool, False, "causal model and oracle (Thm 3.5)")],
    grid=_thm_1_1_grid,
    numerics=NUMERICS,
    growth_grid=size_grid("N", (8, 16, 32, 64), M=4, d=4, H=2, L=2, Hp=2, Lp=2, numerics="float64"),
)
def check_thm_1_1(ctx: CheckContext) -> Measurement:
    """Theorem 3.4 (unmasked) or, with --causal true, Theorem 3.5."""
    return thm_3_5_measure(ctx) if ctx.params["causal"] else thm_3_4_measure(ctx)
