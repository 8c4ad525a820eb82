"""The LSH parameters of Theorem 3.4 / A.1 (anna.alg_1), Algorithm 1, and the families' sensitivity.

The proof of Theorem A.1 fixes its hidden constants (our reconstruction; docs/reconstructions.md,
"Hidden constants of Theorem A.1") as z(N), delta(N), ell(N) and an explicit union bound on eta.
Those formulas are written once, in paper_refs/anna.toml (the ``anna.alg_1`` claim's definitions,
which the other claims inherit, and its ``eta`` bound, in rho and q2 = 1/p2 - 1); :func:`proof_parameters` reads
and evaluates them, so the z, ell and eta that decide a check are the ones the record prints.
The only formula of this module is rho = ln(1/p1)/ln(1/p2), the definition of the quality.

Sensitivity (p1 at distance r, p2 at distance c r) in closed form: random hyperplanes, whose collision
probability 1 - theta/pi (theta = 2 asin(u/2) for unit vectors at Euclidean distance u) is exact, and
the Gaussian p-stable family (Datar et al. 2004). The cross-polytope family has no closed form at a
fixed dimension; ``attnsim.verify.lsh_sensitivity`` bounds its p1 and p2 by Monte Carlo.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

import sympy as sp

from attnsim.paper_refs import get
from attnsim.theory.formulas import parse, symbol

u, w = sp.symbols("u w", positive=True)

HYPERPLANE_COLLISION = 1 - 2 * sp.asin(u / 2) / sp.pi
"""Random hyperplanes, unit vectors at Euclidean distance u (exact)."""
PSTABLE_COLLISION = 1 - 2 * (1 - (1 + sp.erf(w / (u * sp.sqrt(2)))) / 2) \
    - 2 * u / (sp.sqrt(2 * sp.pi) * w) * (1 - sp.exp(-(w / u) ** 2 / 2))
"""Gaussian p-stable hash with width w at distance u (Datar et al. 2004)."""

PROOF_CLAIM = "anna.alg_1"
"""The claim whose definitions (z, delta, ell, eta_union, ell_class) and ``eta`` bound hold the proof's formulas."""
_DIGITS = 50


@dataclass(frozen=True)
class LSHParameters:
    """The proof's choice for one (N, p1, p2, delta): rho, z, ell and the explicit eta bound."""

    N: int
    p1: float
    p2: float
    delta: float
    rho: float
    z: int
    ell: int
    eta_bound: float
    ell_asymptotic: float
    eta_asymptotic: float

    @property
    def hash_evaluations(self) -> int:
        """Hash evaluations of Algorithm 1 (the claim's ``hash_evaluations`` exact formula)."""
        return int(_value(_formula("exact", "hash_evaluations"), {"N": self.N, "ell": self.ell, "z": self.z}))


@lru_cache(maxsize=None)
def _formula(kind: str, name: str, claim_id: str = PROOF_CLAIM) -> sp.Expr:
    """A formula of ``claim_id`` (default :data:`PROOF_CLAIM`, whose definitions the others inherit): a definition
    (``def``), a resource's ``bound`` or ``exact``."""
    claim = get(claim_id)
    if kind == "def":
        return parse(claim.definitions[name])
    return parse(getattr(claim.resources[name], kind))


def _value(expr: sp.Expr, values: dict[str, object]) -> sp.Float:
    out = sp.N(expr.xreplace({symbol(k): sp.sympify(v) for k, v in values.items()}), _DIGITS)
    if out.free_symbols:
        raise ValueError(f"{PROOF_CLAIM}: formula {expr} needs values for {sorted(map(str, out.free_symbols))}")
    return out


def rho_limit() -> float:
    """The quality rho a family must stay below for Thm 3.4 (its proof in App. A): the proof claim's ``rho_limit``."""
    return float(_value(_formula("def", "rho_limit"), {}))


def check_radii(radius: float, approx: float, strict: bool) -> None:
    """ValueError unless c > 1 and 0 < r with c r inside the unit sphere's diameter 2 (``strict``: below it)."""
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    if not (0 < radius and (radius * approx < 2 if strict else radius * approx <= 2)):
        raise ValueError(f"r, c: need 0 < r and c*r {'<' if strict else '<='} 2 on the unit sphere, "
                         f"got r={radius}, c={approx}")


def hyperplane_probabilities(radius: float, approx: float) -> tuple[float, float]:
    """(p1, p2) of random hyperplanes for unit vectors with near radius r and far radius c r (exact)."""
    check_radii(radius, approx, strict=False)
    pr = [float(sp.N(HYPERPLANE_COLLISION.subs(u, sp.nsimplify(d)), _DIGITS)) for d in (radius, radius * approx)]
    return pr[0], pr[1]


def pstable_probabilities(radius: float, approx: float, width: float) -> tuple[float, float]:
    """(p1, p2) of the Gaussian p-stable family of width w at distances r and c r."""
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    if radius <= 0 or width <= 0:
        raise ValueError(f"r, w: must be positive, got r={radius}, w={width}")
    vals = [
        float(sp.N(PSTABLE_COLLISION.subs({u: sp.nsimplify(d), w: sp.nsimplify(width)}), _DIGITS))
        for d in (radius, radius * approx)
    ]
    return vals[0], vals[1]


def proof_parameters(n: int, prob_near: float, prob_far: float, failure: float | None = None,
                     claim: str = PROOF_CLAIM) -> LSHParameters:
    """z, ell and eta as the proof of Theorem A.1 chooses them: :data:`PROOF_CLAIM`'s formulas at this N, or those
    of ``claim``, which inherits them and may choose its own ``far_odds`` (the 1/p2^z that z is sized for).

    ``failure`` is delta (default: the claim's delta(N)). Needs 0 < p2 < p1 < 1; the theorem itself also
    needs rho < 1/3, which is reported (``rho``) but not enforced so that tables for c <= sqrt 3 can
    still be printed.
    """
    if not (isinstance(n, int) and n >= 2):
        raise ValueError(f"N: must be an integer >= 2, got {n!r}")
    if not (0 < prob_far < prob_near < 1):
        raise ValueError(f"p1, p2: need 0 < p2 < p1 < 1, got p1={prob_near}, p2={prob_far}")
    P1, P2 = sp.Float(prob_near, _DIGITS), sp.Float(prob_far, _DIGITS)
    vals: dict[str, object] = {"N": n, "rho": sp.log(1 / P1) / sp.log(1 / P2), "q2": 1 / P2 - 1}
    d = _value(_formula("def", "delta", claim), vals) if failure is None else sp.Float(failure, _DIGITS)
    if not 0 < d < 1:
        raise ValueError(f"delta: must be in (0, 1), got {failure}")
    vals["delta"] = d
    vals["far_odds"] = _value(_formula("def", "far_odds", claim), vals)
    vals["z"] = int(_value(_formula("def", "z", claim), vals))
    vals["ell"] = int(_value(_formula("def", "ell", claim), vals))
    return LSHParameters(
        N=n, p1=float(prob_near), p2=float(prob_far), delta=float(d), rho=float(_value(vals["rho"], {})),
        z=vals["z"], ell=vals["ell"], eta_bound=float(_value(_formula("def", "eta_union", claim), vals)),
        ell_asymptotic=float(_value(_formula("def", "ell_class", claim), vals)),
        eta_asymptotic=float(_value(_formula("bound", "eta"), vals)),
    )


def ideal_parameters(n: int, approx: float, prob_far: float = 0.5, failure: float | None = None,
                     claim: str = PROOF_CLAIM) -> LSHParameters:
    """The proof's parameters for an ideal family with rho = 1/c^2 and a given p2 (so p1 = p2^rho).

    This is the reading of the paper's "rho = 1/c^2" tables (e.g. the rebuttal's c = 10, N = 16000):
    z still depends on p2, which the paper leaves open; 1/2 is the default.
    """
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    if not 0 < prob_far < 1:
        raise ValueError(f"p2: must be in (0, 1), got {prob_far}")
    prob_near = float(sp.N(sp.Float(prob_far, _DIGITS) ** (1 / sp.Float(approx, _DIGITS) ** 2), _DIGITS))
    return proof_parameters(n, prob_near, prob_far, failure, claim)



@lru_cache(maxsize=1)
def _pair_terms() -> tuple[Callable[[float, int, int], float], Callable[[float, int, int], float]]:
    """The proof's union bound (``eta_union``: far pairs over all tables + near pairs missing every table) cut into
    its two terms and divided by the N^2 pairs each counts: what one far pair with collision probability P adds,
    ell P^z, and one near pair, (1 - P^z)^ell (q2 = 1/P - 1, and rho = 1 so that p1^z = P^z), as functions of
    (P, ell, z)."""
    P, n, rho, q2, ell, z = (symbol(s) for s in ("P", "N", "rho", "q2", "ell", "z"))
    terms = sp.Add.make_args(sp.expand(_formula("def", "eta_union")))
    near = [t for t in terms if t.has(rho)]
    far = [t for t in terms if not t.has(rho)]
    if len(near) != 1 or len(far) != 1:
        raise ValueError(f"{PROOF_CLAIM}: eta_union is not one far term plus one near term: {terms}")
    per_pair = [sp.simplify((t[0] / n**2).subs({q2: 1 / P - 1, rho: 1})) for t in (far, near)]
    f, g = (sp.lambdify([P, ell, z], e, "math") for e in per_pair)
    return f, g


def pair_union_bound(ell: int, z: int, near: Iterable[float], far: Iterable[float]) -> float:
    """The proof's union bound on eta (Thm A.1, steps 1 and 3; paper_refs' ``eta_union``) over the actual pairs of
    one input: the sum over far pairs of ell P^z plus the sum over near pairs of (1 - P^z)^ell, each pair with its
    own collision probability P. With N^2 near pairs at p1 and N^2 far pairs at p2 it is ``eta_union`` itself."""
    f, g = _pair_terms()
    return math.fsum([f(p, ell, z) for p in far] + [g(p, ell, z) for p in near])
