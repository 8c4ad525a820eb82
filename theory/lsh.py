"""The LSH parameters of Theorem 3.4 / A.1 (anna.alg_1), Algorithm 1, and the families' sensitivity.

The proof of Theorem A.1 fixes its hidden constants (our reconstruction; docs/reconstructions.md,
"Hidden constants of Theorem A.1") as z(N), delta(N), ell(N) and an explicit union bound on eta.
Those formulas are written once, in paper_refs/anna.toml (the ``anna.alg_1`` claim's definitions
and its ``eta_proof`` / ``eta`` bounds, in rho and q2 = 1/p2 - 1); :func:`proof_parameters` reads
and evaluates them, so the z, ell and eta that decide a check are the ones the record prints.
The only formula of this module is rho = ln(1/p1)/ln(1/p2), the definition of the quality.

Sensitivity (p1 at distance r, p2 at distance c r) per family:

* random hyperplanes: the exact collision probability 1 - theta/pi with theta = 2 asin(u/2) for unit
  vectors at Euclidean distance u;
* cross-polytope (Andoni et al. 2015, the family ``attnsim.sim.anna.lsh`` draws: a Gaussian matrix,
  then the nearest of the 2 dim signed unit vectors): no closed form at a fixed dimension. For unit
  x, y the coordinates of (A x, A y) are independent pairs of standard normals with correlation
  <x, y> = 1 - u^2/2, so the collision probability is that of the arg-max-|.| code of two such
  correlated vectors. :func:`cross_polytope_sensitivity` draws :data:`MC_SAMPLES` pairs per distance
  from a fixed seed and takes one-sided Clopper-Pearson bounds at level 1 - :data:`MC_ALPHA`: the
  lower bound for p1 and the upper bound for p2, which can only raise z and ell and the proof's eta
  (each is monotone in p1 and p2 the safe way). The leading term of Andoni et al.'s Thm 1,
  dim^(-u^2/(4 - u^2)), is far off at the small dimensions run here (docs/anna_eta.md);
* Gaussian p-stable (Datar et al. 2004): its closed form, used by tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy.stats import beta

from attnsim.paper_refs import get
from attnsim.theory.formulas import parse, symbol

u, w = sp.symbols("u w", positive=True)

HYPERPLANE_COLLISION = 1 - 2 * sp.asin(u / 2) / sp.pi
"""Random hyperplanes, unit vectors at Euclidean distance u (exact)."""
PSTABLE_COLLISION = 1 - 2 * (1 - (1 + sp.erf(w / (u * sp.sqrt(2)))) / 2) \
    - 2 * u / (sp.sqrt(2 * sp.pi) * w) * (1 - sp.exp(-(w / u) ** 2 / 2))
"""Gaussian p-stable hash with width w at distance u (Datar et al. 2004)."""

PROOF_CLAIM = "anna.alg_1"
"""The claim whose definitions (z, delta, ell) and bounds (eta_proof, eta) hold the proof's formulas."""
MC_SAMPLES = 400_000
"""Pairs drawn per distance for the cross-polytope family's collision probability."""
MC_ALPHA = 1e-3
"""One-sided error of each Clopper-Pearson bound on a cross-polytope collision probability."""
MC_SEED = 250_909_001
"""Seed of those draws: the bounds are a property of the family, the same in every check."""
MC_DIGITS = 4
"""p1 and q2 = 1/p2 - 1 are rounded outwards (p1 down, q2 down) to this many decimals: short rationals, which
keep the exact evaluation of the claim's formulas fast; the rounding only moves p1 and p2 further to the safe side."""
MC_CHUNK = 50_000
_DIGITS = 50


@dataclass(frozen=True)
class Sensitivity:
    """(p1, p2) of a family at distances r and c r, the point estimates, and how they were obtained."""

    family: str
    p1: float
    p2: float
    p1_estimate: float
    p2_estimate: float
    how: str


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
def _formula(kind: str, name: str) -> sp.Expr:
    """A formula of :data:`PROOF_CLAIM`: a definition (``def``), a resource's ``bound`` or ``exact``."""
    claim = get(PROOF_CLAIM)
    if kind == "def":
        return parse(claim.definitions[name])
    return parse(getattr(claim.resources[name], kind))


def _value(expr: sp.Expr, values: dict[str, object]) -> sp.Float:
    out = sp.N(expr.xreplace({symbol(k): sp.sympify(v) for k, v in values.items()}), _DIGITS)
    if out.free_symbols:
        raise ValueError(f"{PROOF_CLAIM}: formula {expr} needs values for {sorted(map(str, out.free_symbols))}")
    return out


def _check_radii(radius: float, approx: float, strict: bool) -> None:
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    if not (0 < radius and (radius * approx < 2 if strict else radius * approx <= 2)):
        raise ValueError(f"r, c: need 0 < r and c*r {'<' if strict else '<='} 2 on the unit sphere, "
                         f"got r={radius}, c={approx}")


def hyperplane_probabilities(radius: float, approx: float) -> tuple[float, float]:
    """(p1, p2) of random hyperplanes for unit vectors with near radius r and far radius c r (exact)."""
    _check_radii(radius, approx, strict=False)
    pr = [float(sp.N(HYPERPLANE_COLLISION.subs(u, sp.nsimplify(d)), _DIGITS)) for d in (radius, radius * approx)]
    return pr[0], pr[1]


@lru_cache(maxsize=None)
def cross_polytope_collisions(dim: int, distance: float, samples: int = MC_SAMPLES) -> int:
    """How many of ``samples`` correlated pairs (module docstring) get the same cross-polytope code."""
    rng = np.random.default_rng([MC_SEED, dim, int(round(distance * 10**9))])
    corr = 1 - distance**2 / 2
    hits = 0
    for start in range(0, samples, MC_CHUNK):
        n = min(MC_CHUNK, samples - start)
        x = rng.standard_normal((n, dim))
        y = corr * x + math.sqrt(max(0.0, 1 - corr**2)) * rng.standard_normal((n, dim))
        hits += int(np.count_nonzero(_polytope_code(x) == _polytope_code(y)))
    return hits


def _polytope_code(x: np.ndarray) -> np.ndarray:
    i = np.argmax(np.abs(x), axis=1)
    return i + x.shape[1] * (x[np.arange(len(x)), i] < 0)


def clopper_pearson(hits: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds: Pr[p < lower] <= alpha and Pr[p > upper] <= alpha."""
    lo = 0.0 if hits == 0 else float(beta.ppf(alpha, hits, n - hits + 1))
    hi = 1.0 if hits == n else float(beta.ppf(1 - alpha, hits + 1, n - hits))
    return lo, hi


def cross_polytope_sensitivity(radius: float, approx: float, dim: int) -> Sensitivity:
    """(p1, p2) of the cross-polytope family in dimension ``dim``: Monte Carlo, bounded on the safe side."""
    _check_radii(radius, approx, strict=True)
    if dim < 2:
        raise ValueError(f"m: the cross-polytope family needs dimension >= 2, got {dim}")
    near, far = (cross_polytope_collisions(dim, float(d)) for d in (radius, radius * approx))
    p1 = math.floor(clopper_pearson(near, MC_SAMPLES, MC_ALPHA)[0] * 10**MC_DIGITS) / 10**MC_DIGITS
    q2 = math.floor((1 / clopper_pearson(far, MC_SAMPLES, MC_ALPHA)[1] - 1) * 10**MC_DIGITS) / 10**MC_DIGITS
    how = (f"Monte Carlo, {MC_SAMPLES} correlated Gaussian pairs per distance (seed {MC_SEED}); p1 = one-sided "
           f"{100 * (1 - MC_ALPHA):g}% Clopper-Pearson lower bound at r, p2 = upper bound at c r, both rounded "
           f"outwards to {MC_DIGITS} decimals of p1 and of q2 = 1/p2 - 1")
    p2 = 1 / (1 + q2)
    return Sensitivity("cross-polytope", p1, p2, near / MC_SAMPLES, far / MC_SAMPLES, how)


def cross_polytope_probabilities(radius: float, approx: float, dim: int) -> tuple[float, float]:
    """(p1, p2) of the cross-polytope family (:func:`cross_polytope_sensitivity`)."""
    s = cross_polytope_sensitivity(radius, approx, dim)
    return s.p1, s.p2


def sensitivity(family: str, radius: float, approx: float, dim: int) -> Sensitivity:
    """(p1, p2) of an angular family by its command-line name: ``hyperplane`` or ``cross-polytope``."""
    if family == "hyperplane":
        p1, p2 = hyperplane_probabilities(radius, approx)
        return Sensitivity(family, p1, p2, p1, p2, "exact: 1 - theta/pi, theta = 2 asin(u/2)")
    if family == "cross-polytope":
        return cross_polytope_sensitivity(radius, approx, dim)
    raise ValueError(f"lsh: must be 'hyperplane' or 'cross-polytope', got {family!r}")


def family_probabilities(family: str, radius: float, approx: float, dim: int) -> tuple[float, float]:
    """(p1, p2) of an angular family by its command-line name (:func:`sensitivity`)."""
    s = sensitivity(family, radius, approx, dim)
    return s.p1, s.p2


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


def proof_parameters(n: int, prob_near: float, prob_far: float, failure: float | None = None) -> LSHParameters:
    """z, ell and eta as the proof of Theorem A.1 chooses them: :data:`PROOF_CLAIM`'s formulas at this N.

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
    d = _value(_formula("def", "delta"), vals) if failure is None else sp.Float(failure, _DIGITS)
    if not 0 < d < 1:
        raise ValueError(f"delta: must be in (0, 1), got {failure}")
    vals["delta"] = d
    vals["z"] = int(_value(_formula("def", "z"), vals))
    vals["ell"] = int(_value(_formula("def", "ell"), vals))
    return LSHParameters(
        N=n, p1=float(prob_near), p2=float(prob_far), delta=float(d), rho=float(_value(vals["rho"], {})),
        z=vals["z"], ell=vals["ell"], eta_bound=float(_value(_formula("bound", "eta_proof"), vals)),
        ell_asymptotic=float(_value(_formula("def", "ell_class"), vals)),
        eta_asymptotic=float(_value(_formula("bound", "eta"), vals)),
    )


def ideal_parameters(n: int, approx: float, prob_far: float = 0.5, failure: float | None = None) -> LSHParameters:
    """The proof's parameters for an ideal family with rho = 1/c^2 and a given p2 (so p1 = p2^rho).

    This is the reading of the paper's "rho = 1/c^2" tables (e.g. the rebuttal's c = 10, N = 16000):
    z still depends on p2, which the paper leaves open; 1/2 is the default.
    """
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    if not 0 < prob_far < 1:
        raise ValueError(f"p2: must be in (0, 1), got {prob_far}")
    prob_near = float(sp.N(sp.Float(prob_far, _DIGITS) ** (1 / sp.Float(approx, _DIGITS) ** 2), _DIGITS))
    return proof_parameters(n, prob_near, prob_far, failure)
