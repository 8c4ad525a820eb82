"""Checkers of the exact Two Heads constructions (two_heads.lemma_3_1; issue 3 adds the rest)."""

from __future__ import annotations

from attnsim.sim.masks import Full
from attnsim.sim.numerics import backend_kind
from attnsim.sim.oracle import OracleSpec
from attnsim.sim.two_heads.worst_case import simulate
from attnsim.verify.cases import INPUT_KINDS, random_case
from attnsim.verify.model_check import measure_model
from attnsim.verify.registry import CheckContext, Measurement, Param, UsageError, checker

EXACT_KINDS = ("exact", "fraction", "symbolic")

COMMON = [
    Param("N", int, 64, "length of the large model's input", minimum=1),
    Param("M", int, 8, "oracle length (real tokens per block under the paper convention)", minimum=2),
    Param("d", int, 4, "embedding dimension of the large model", minimum=1),
    Param("scheme", str, "paper", "paper: two calls per block pair; fused: one", choices=("paper", "fused")),
    Param("length", str, "paper", "paper: oracle length M+1 (synthetic token extra); strict: M, blocks of M-1",
          choices=("paper", "strict")),
    Param("psi", str, "auto", "layer MLP: identity, affine (grid-rounded in exact numerics), auto",
          choices=("auto", "identity", "affine")),
    Param("input", str, "random", "input values: random (small) or large (integers up to 4)", choices=INPUT_KINDS),
    Param("input_file", str, None, "optional .npy file holding X (N × d)"),
]


def block_size(M: int, length: str) -> int:
    b = OracleSpec.block_size(M, length)
    if b < 1:
        raise UsageError(f"--M: M={M} leaves no real token per block under the {length} length convention")
    return b


def _lemma_3_1_grid(quick: bool) -> list[dict]:
    pts = [dict(N=N, M=M, d=2, scheme=s) for N in (8, 16, 32) for M in (4,) for s in ("paper", "fused")]
    pts += [dict(N=20, M=4, d=2, length="strict"), dict(N=13, M=4, d=3, psi="affine"),
            dict(N=16, M=4, d=2, numerics="mp:200"), dict(N=64, M=8, d=4, numerics="float64")]
    if not quick:
        pts += [dict(N=N, M=8, d=4, scheme=s) for N in (64, 128) for s in ("paper", "fused")]
        pts += [dict(N=8, M=4, d=2, numerics="symbolic")]
    return pts


@checker("two_heads.lemma_3_1", params=COMMON, grid=_lemma_3_1_grid,
         numerics=("exact", "fraction", "symbolic", "mp", "float64", "float", "fixed"))
def check_lemma_3_1(ctx: CheckContext) -> Measurement:
    p = ctx.params
    b = block_size(p["M"], p["length"])
    exact_kind = backend_kind(ctx.numerics) in EXACT_KINDS
    case = random_case(p["N"], p["d"], 1, 1, Full(), ctx.seed, layer_mlp=p["psi"], input_kind=p["input"],
                       exact_kind=exact_kind, input_file=p["input_file"])
    spec = OracleSpec(OracleSpec.max_len_for(p["M"], p["length"]), 1, 1, 2 * p["d"] + 2,
                      length_convention=p["length"])
    derived = {"strict": int(p["length"] == "strict"), "fused": int(p["scheme"] == "fused"),
               "psi": int(not case.weights.layers[0].psi.is_identity), "b": b}
    return measure_model(ctx, case, spec,
                         lambda oracle, X: simulate(case.spec, case.weights, X, oracle, b=b, scheme=p["scheme"]),
                         derived)
