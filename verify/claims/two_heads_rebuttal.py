"""Checkers of what the Two Heads authors told reviewers, kind ``rebuttal``:

* ``two_heads.rebuttal_rope`` — the worst-case simulation stays exact with rotary embeddings: the
  oracle rotates by row, each block pair's relative rotation is folded into its W^K. Exact numerics
  use quarter-turn rotations (the rational rotations that keep scores on the exact grid; they repeat
  every 4 positions, so block sizes b ≡ 0 mod 4 would make every fold trivial); mp and
  float64 use the real base-10000 angles. The rotation identity <x R(i), y R(j)> = x R(i − j) y^T is
  checked exactly with Pythagorean angles (cos = 3/5) for all i, j < min(N, 24).
* ``two_heads.rebuttal_norm`` — a residual stream with pre- or post-layer-norm is simulated with the
  same number of calls. Layer norm needs a square root: mp/float64 use it; exact numerics use the
  root-free stand-in x − mean (labelled ``center``), rounded back onto the grid.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from attnsim.sim.masks import Full
from attnsim.sim.model import LayerWeights, Weights
from attnsim.sim.numerics import backend_kind, get_numerics
from attnsim.sim.oracle import OracleSpec
from attnsim.sim.rope import RoPE
from attnsim.sim.token_maps import Center, Compose, Grid, Identity, LayerNorm
from attnsim.sim.two_heads.worst_case import simulate
from attnsim.verify.cases import Case, random_case
from attnsim.verify.claims.two_heads_exact import block_decode, block_size
from attnsim.verify.cost import EXACT_KINDS
from attnsim.verify.model_check import measure_model
from attnsim.verify.registry import CheckContext, Measurement, Param, UsageError, checker, size_grid

ROPE_PARAMS = [
    Param("N", int, 56, "length of the large model's input", minimum=1),
    Param("M", int, 7, "oracle length (quarter turns repeat every 4 positions: a block size b with b % 4 == 0 "
          "makes every folded rotation the identity, so the default is 7)", minimum=2),
    Param("d", int, 4, "embedding dimension", minimum=1),
    Param("scheme", str, "paper", "paper or fused", choices=("paper", "fused")),
    Param("length", str, "paper", "paper or strict length convention", choices=("paper", "strict")),
    Param("rope", str, "auto", "rotation angles: auto (quarter in exact numerics, real otherwise), quarter, real",
          choices=("auto", "quarter", "real")),
]


def rotation_identity_holds(n: int, width: int, seed: int) -> bool:
    """<x R(i), y R(j)> == x R(i − j) y^T exactly, Pythagorean angles, all i, j < n."""
    nm = get_numerics("exact", seed)
    rope = RoPE("pythagorean")
    rng = np.random.default_rng(seed)
    x = nm.array(np.vectorize(lambda v: Fraction(int(v), 3), otypes=[object])(rng.integers(-6, 7, (1, width))))
    y = nm.array(np.vectorize(lambda v: Fraction(int(v), 5), otypes=[object])(rng.integers(-6, 7, (1, width))))
    R = {p: rope.rotation(nm, p, width) for p in range(-n + 1, n)}
    for i in range(n):
        for j in range(n):
            lhs = nm.matmul(nm.matmul(x, R[i]), np.swapaxes(nm.matmul(y, R[j]), 0, 1))
            rhs = nm.matmul(nm.matmul(x, R[i - j]), np.swapaxes(y, 0, 1))
            if lhs[0, 0] != rhs[0, 0]:
                return False
    return True


def _grid(quick: bool) -> list[dict]:
    pts = [dict(N=15, M=3, d=2), dict(N=13, M=5, d=2, scheme="fused"), dict(N=15, M=3, d=2, numerics="mp:200")]
    return pts + ([dict(N=56, M=7, d=4), dict(N=64, M=8, d=4, numerics="float64")] if not quick else [])


@checker("two_heads.rebuttal_rope", evidence="independent", params=ROPE_PARAMS, grid=_grid,
         numerics=("exact", "fraction", "symbolic", "mp", "float64"),
         growth_grid=size_grid("N", (6, 12, 24, 48), M=3, d=2, numerics="float64"))
def check_rope(ctx: CheckContext) -> Measurement:
    """The rebuttal on rotary embeddings: the worst-case simulation stays exact with RoPE."""
    p = ctx.params
    exact_kind = backend_kind(ctx.numerics) in EXACT_KINDS
    kind = p["rope"] if p["rope"] != "auto" else ("quarter" if exact_kind else "real")
    rope = RoPE(kind)
    b = block_size(p["M"], p["length"])
    base = random_case(p["N"], p["d"], 1, 1, Full(), ctx.seed, exact_kind=exact_kind)
    case = Case(replace(base.spec, rope=rope), base.weights, base.X)
    spec = OracleSpec(OracleSpec.max_len_for(p["M"], p["length"]), 1, 1, 2 * p["d"] + 2,
                      length_convention=p["length"], rope=rope)
    derived = {"strict": int(p["length"] == "strict"), "fused": int(p["scheme"] == "fused"), "b": b}
    # cos/sin are rounded to the working precision separately in R(i) and in R(r)R(Δ): allow 6 more bits.
    m = measure_model(ctx, case, spec, lambda o, X: simulate(case.spec, case.weights, X, o, b=b, scheme=p["scheme"]),
                      derived, decode=block_decode(p, b), rounding_bits=6)
    ok = rotation_identity_holds(min(p["N"], 24), max(p["d"], 2), ctx.seed)
    m.extra.update(rope=kind, rotation_identity_exact=ok)
    if not ok:
        m.reasons.append("the rotation identity <xR(i), yR(j)> = xR(i-j)y^T failed in exact arithmetic")
    return m


NORM_PARAMS = [
    Param("N", int, 32, "length", minimum=1), Param("M", int, 8, "oracle length", minimum=2),
    Param("d", int, 4, "embedding dimension", minimum=1), Param("H", int, 2, "heads", minimum=1),
    Param("L", int, 2, "layers", minimum=1),
    Param("norm", str, "pre", "pre-LN (normalise the attention input) or post-LN (normalise X + heads)",
          choices=("pre", "post")),
    Param("ln", str, "auto", "layernorm (needs sqrt: mp/float64), center (root-free exact stand-in), auto",
          choices=("auto", "layernorm", "center")),
    Param("scheme", str, "paper", "paper or fused", choices=("paper", "fused")),
]


def _norm_grid(quick: bool) -> list[dict]:
    pts = [dict(N=12, M=4, d=4, H=2, L=2, numerics="mp:200"),
           dict(N=12, M=4, d=4, H=2, L=2, norm="post", numerics="exact"),  # the root-free stand-in, exactly
           dict(N=12, M=4, d=4, H=2, L=2, numerics="mp:200", norm="post")]
    return pts + ([dict(N=32, M=8, d=4, numerics="float64")] if not quick else [])


@checker("two_heads.rebuttal_norm", evidence="independent", params=NORM_PARAMS, grid=_norm_grid,
         numerics=("exact", "fraction", "mp", "arb", "float64"), default_numerics="mp:200",
         growth_grid=size_grid("N", (8, 16, 32, 64), M=4, d=4, H=2, L=2, numerics="float64"))
def check_norm(ctx: CheckContext) -> Measurement:
    """The rebuttal on skip connections and layer norm: the simulation stays exact with them."""
    p = ctx.params
    exact_kind = backend_kind(ctx.numerics) in EXACT_KINDS
    ln_kind = p["ln"] if p["ln"] != "auto" else ("center" if exact_kind else "layernorm")
    if exact_kind and ln_kind == "layernorm":
        raise UsageError("--ln: layer norm needs a square root; use --numerics mp:BITS or --ln center (exact stand-in)")
    base = random_case(p["N"], p["d"], p["H"], p["L"], Full(), ctx.seed, layer_mlp="affine",
                       exact_kind=exact_kind, residual=True)
    rng = np.random.default_rng(ctx.seed + 1)
    frac = np.vectorize(lambda v: Fraction(int(v), 4), otypes=[object])

    def norm():
        if ln_kind == "center":
            return Compose((Center(), Grid(2)))
        return LayerNorm(frac(rng.integers(2, 6, p["d"])), frac(rng.integers(-2, 3, p["d"])))

    layers = []
    for layer in base.weights.layers:
        if p["norm"] == "pre":
            layers.append(LayerWeights(layer.heads, layer.psi, pre=norm()))
        else:
            layers.append(LayerWeights(layer.heads, Compose((layer.psi, norm())), pre=Identity()))
    case = Case(base.spec, Weights(tuple(layers)), base.X)
    b = p["M"]
    m_head = p["d"] // p["H"]
    spec = OracleSpec(p["M"] + 1, 1, 1, 2 * m_head + 2)
    derived = {"fused": int(p["scheme"] == "fused"), "b": b}
    m = measure_model(ctx, case, spec, lambda o, X: simulate(case.spec, case.weights, X, o, b=b, scheme=p["scheme"]),
                      derived, decode=block_decode(p, b))
    m.extra.update(norm=p["norm"], ln=ln_kind)
    return m
