"""Inputs for two_heads.thm_4_1 and two_heads.lower_bound: one where the theorem's assumptions can
hold, and two adversarial ones where they fail. Each is one head, one layer, from one seed.

* ``bounded`` — tokens x_j = [1, u_j] with u_j ∈ [-1/2, 1/2]^{d-1} on the grid (1/16)Z;
  W^Q = W^K = g·diag(0, 1, ..., 1) with g = 1/(2⌈√(d-1)⌉), so every score lies in [-1/16, 1/16]
  (C <= e^{1/16}); W^V = diag(1, 1/4, ..., 1/4), so every value has first coordinate 1 and the value
  sums do not cancel (D ≈ 0.93). At N = 4096, M = 512, d = 2 both minimum-M conditions hold for
  eps = 2 (see ``docs/two_heads_approx.md`` for why no eps below ≈ 1.8 can work at these sizes).
* ``needle`` — every query is h·e_0 with h = ⌈ln N⌉ + 6; one key (position j*, from the seed) is
  e_0 and all others are 0, so that key's weight e^h is e^6 times all the others together. Its value
  is +1 and every other value is -3: a block that misses the needle outputs -3 where the truth is
  ≈ +1 (relative error ≈ 4), so a fraction ≈ 1 - M/N of the rows fail. Scores are integers (exact
  numerics can run it).
* ``sqrtlog`` — tokens σ_j ∈ {±1}^d, W^Q = W^K = √(ln N / d)·I, W^V = I: scores ln N·<σ_i,σ_j>/d
  span [-ln N, ln N] — Alman–Song's hard regime (entries √log N in their 1/d convention;
  Alman & Song 2023, Lemma 4.7). Irrational weights: float64 and mp only.
* ``halves`` — tokens x_j = [1, +a] in the first half and [1, −a] in the second (a = 3/5, d = 2; more
  columns are zero); W^Q = W^K = diag(0, 1/4), W^V = I, so every score is ±a²/16 (C = e^{0.0225}) and
  the values (1, ±a) do not cancel (D ≈ 0.83). The true rows are ≈ (1, 0), so an estimator that
  averages the wrong keys — a query block's own half, say — is off by a ≈ 0.6 in relative terms:
  unlike ``bounded``, where every convex combination of values is within 1/8 of the truth, a wrong
  choice of keys fails here at any eps < 0.6. At N = 32768, M = 16384, eps = 0.45 both minimum-M
  conditions of Thm 4.1 hold.
* ``random`` — ``verify.cases.random_case`` (small grid values; the assumptions usually fail
  through D, since random values cancel).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterator, Mapping

import numpy as np

from attnsim.sim.masks import Full
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights
from attnsim.verify.cases import Case, random_case
from attnsim.verify.registry import UsageError

APPROX_INPUTS = ("random", "bounded", "needle", "sqrtlog", "halves")

LEAST_D = {"bounded": 2, "needle": 2, "halves": 2}
"""The fewest coordinates an input kind needs: a constant coordinate and one that varies (the needle's height, the
halves' sign)."""


def block_and_width(params: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """The relations of the checks that sample these inputs (Thm 4.1, the lower bound's adversarial inputs): the
    block of M sampled tokens lies within the N tokens, and a head of one layer has the d coordinates its input kind
    needs (:data:`LEAST_D`; H heads or L layers run the layered halves input, of a width of its own). The fuzz moves
    M down to N and d up to the least: drawn freely, 6 of 16 draws of a 20-second fuzz of Thm 4.1 broke one."""
    N, M, d, kind = (params.get(name) for name in ("N", "M", "d", "input"))
    if N is not None and M is not None and M > N:
        yield "M", f"the block size M={M} exceeds N={N}", N
    least = LEAST_D.get(kind)
    if least is not None and d is not None and d < least and params.get("H", 1) * params.get("L", 1) == 1:
        yield "d", f"the {kind} input needs d >= {least}, got {d}", least


HALVES_A = Fraction(3, 5)


def _frac(a: np.ndarray) -> np.ndarray:
    return np.vectorize(lambda x: x if isinstance(x, Fraction) else Fraction(x), otypes=[object])(a)


def _case(N: int, d: int, X: np.ndarray, WQ: np.ndarray, WK: np.ndarray, WV: np.ndarray) -> Case:
    spec = TransformerSpec(N, d, 1, 1, Full())
    return Case(spec, Weights((LayerWeights((HeadWeights(WQ, WK, WV),)),)), X)


def needle_position(N: int, seed: int) -> int:
    """The position of the needle key for this N and seed."""
    return int(np.random.default_rng([seed, 7]).integers(N))


def needle_failure_rate(N: int, M: int, seed: int, perms: list[np.ndarray]) -> float:
    """The per-row failure rate the needle input must show, averaged over the permutations ``perms``: under τ,
    query block i (rows iM .. min(N, (i+1)M) - 1) averages the keys τ(block i), so only the block holding the
    needle's position gets it right, and 1 - |that block| / N of the rows fail. With M dividing N every block
    has M rows (1 - M/N for every τ); otherwise the last block is shorter and the rate depends on τ."""
    needle = needle_position(N, seed)
    sizes = [min(M, N - int(np.flatnonzero(tau == needle)[0]) // M * M) for tau in perms]
    return float(np.mean([1 - size / N for size in sizes]))


def needle_height(N: int) -> int:
    """The needle's score, ⌈ln N⌉ + 6."""
    return math.ceil(math.log(N)) + 6


def bounded_case(N: int, d: int, seed: int) -> Case:
    """An input whose scores are bounded, so that Thm 4.1's constants C and D can hold."""
    if d < LEAST_D["bounded"]:
        raise UsageError(f"--d: the bounded input needs d >= {LEAST_D['bounded']} (a constant coordinate and a varying "
                         f"one), got {d}")
    rng = np.random.default_rng(seed)
    X = np.empty((N, d), dtype=object)
    X[:, 0] = Fraction(1)
    X[:, 1:] = _frac(rng.integers(-8, 9, size=(N, d - 1)).astype(object) * Fraction(1, 16))
    g = Fraction(1, 2 * math.isqrt(d - 2) + 2) if d > 2 else Fraction(1, 2)  # g <= 1/(2√(d-1))
    WQ = _frac(np.zeros((d, d), dtype=object))
    for i in range(1, d):
        WQ[i, i] = g
    WV = _frac(np.zeros((d, d), dtype=object))
    WV[0, 0] = Fraction(1)
    for i in range(1, d):
        WV[i, i] = Fraction(1, 4)
    return _case(N, d, X, WQ, WQ.copy(), WV)


def needle_case(N: int, d: int, seed: int) -> Case:
    """An input with one key far above the rest: sampling misses it and the estimate fails."""
    if d < LEAST_D["needle"]:
        raise UsageError(f"--d: the needle input needs d >= {LEAST_D['needle']}, got {d}")
    X = _frac(np.zeros((N, d), dtype=object))
    X[:, 0] = Fraction(1)
    X[needle_position(N, seed), 1] = Fraction(1)
    WQ, WK, WV = (_frac(np.zeros((d, d), dtype=object)) for _ in range(3))
    WQ[0, 0] = Fraction(needle_height(N))
    WK[1, 0] = Fraction(1)
    WV[0, 0], WV[1, 0] = Fraction(-3), Fraction(4)
    return _case(N, d, X, WQ, WK, WV)


def sqrtlog_case(N: int, d: int, seed: int) -> Case:
    """Random ±1 tokens with scores spanning [−ln N, ln N] (Alman & Song's hard regime)."""
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(N, d)).astype(object)
    g = math.sqrt(math.log(N) / d)
    W = np.eye(d, dtype=float) * g
    return _case(N, d, X, W.astype(object), W.copy().astype(object), np.eye(d).astype(object))


def halves_case(N: int, d: int, seed: int) -> Case:
    """Values (1, +a) on the first half of the positions and (1, −a) on the second; tiny scores."""
    if d < LEAST_D["halves"]:
        raise UsageError(f"--d: the halves input needs d >= {LEAST_D['halves']}, got {d}")
    X = _frac(np.zeros((N, d), dtype=object))
    X[:, 0] = Fraction(1)
    X[: N // 2, 1], X[N // 2:, 1] = HALVES_A, -HALVES_A
    WQ, WV = _frac(np.zeros((d, d), dtype=object)), _frac(np.zeros((d, d), dtype=object))
    WQ[1, 1] = Fraction(1, 4)
    for i in range(d):
        WV[i, i] = Fraction(1)
    return _case(N, d, X, WQ, WQ.copy(), WV)


def layered_halves_case(N: int, H: int, L: int) -> Case:
    """H heads of width 2, each reading its own copy of the ``halves`` columns, in L identical layers
    (ψ the identity): Thm 4.1 lifted to H heads and L layers as Cor 3.2 lifts Lemma 3.1."""
    one = halves_case(N, 2, 0)
    X = np.concatenate([one.X] * H, axis=1)
    head = one.weights.layers[0].heads[0]
    layers = tuple(LayerWeights(tuple(head for _ in range(H))) for _ in range(L))
    return Case(TransformerSpec(N, 2 * H, H, L, Full()), Weights(layers), X)


def approx_case(kind: str, N: int, d: int, seed: int) -> Case:
    """The input of kind ``kind`` (random, bounded, needle, sqrtlog or halves)."""
    if kind == "random":
        return random_case(N, d, 1, 1, Full(), seed, layer_mlp="identity", exact_kind=False)
    if kind == "bounded":
        return bounded_case(N, d, seed)
    if kind == "needle":
        return needle_case(N, d, seed)
    if kind == "sqrtlog":
        return sqrtlog_case(N, d, seed)
    if kind == "halves":
        return halves_case(N, d, seed)
    raise UsageError(f"--input: must be one of {', '.join(APPROX_INPUTS)}, got {kind!r}")


def qkv_float(case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, k, v of the single head in float64 (the vectorised path's input)."""
    X = case.X.astype(float)
    hw = case.weights.layers[0].heads[0]
    return X @ hw.WQ.astype(float), X @ hw.WK.astype(float), X @ hw.WV.astype(float)
