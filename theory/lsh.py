"""Closed forms for the LSH parameters of Theorem 3.4 / A.1 (anna.alg_1), Algorithm 1.

The proof of Theorem A.1 fixes its hidden constants as follows (our reconstruction;
docs/reconstructions.md, "Hidden constants of Theorem A.1"):

* z   = ceil(log_{1/p2}(10 N^3))      -- a far pair collides in one table w.p. <= p2^z <= 0.1/N^3;
* p   = p1^z  ~ N^{-3 rho}             -- a near pair collides in one table w.p. >= p;
* ell = ceil(ln(N^2/delta) / p)        -- then N^2 (1 - p)^ell <= N^2 e^{-p ell} <= delta;
* eta <= ell N^2 p2^z + N^2 (1 - p)^ell (union bounds over tables and pairs), and with the
  default delta = min(N^{3 rho - 1}, 1/10) this is O(N^{3 rho} log N / N) when rho < 1/3 -- the
  paper writes O(1/N^{1-3rho}); for rho >= 1/3 the bound is vacuous and delta = 1/10.

rho = ln(1/p1)/ln(1/p2); the ideal (Andoni-Indyk) quality is rho = 1/c^2. Collision probabilities
of the families in ``attnsim.sim.anna.lsh`` are restated here symbolically (theory never
imports sim). For the cross-polytope family only the leading term of Andoni et al. 2015 (Thm 1:
ln(1/p(u)) = u^2/(4 - u^2) ln dim + O(ln ln dim) for unit vectors at distance u) is known in
closed form; we use p(u) = dim^(-u^2/(4 - u^2)), whose rho = (r^2/(4 - r^2)) / ((c r)^2/(4 - (c r)^2))
is the quality their analysis gives (about 1/c^2 for small r). Every function returns exact sympy
values or plain numbers evaluated with 50 digits.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

N, c, r, p1, p2, delta, rho, ell, z, m, w, u = sp.symbols("N c r p1 p2 delta rho ell z m w u", positive=True)

RHO = sp.log(1 / p1) / sp.log(1 / p2)
RHO_IDEAL = 1 / c**2
Z_PROOF = sp.ceiling(sp.log(10 * N**3) / sp.log(1 / p2))
ELL_PROOF = sp.ceiling(sp.log(N**2 / delta) / p1**z)
DELTA_DEFAULT = sp.Min(N ** (3 * rho - 1), sp.Rational(1, 10))
ETA_PROOF = ell * N**2 * p2**z + N**2 * (1 - p1**z) ** ell
ELL_ASYMPTOTIC = N ** (3 * rho) * sp.log(N)
ETA_ASYMPTOTIC = N ** (3 * rho - 1)
HASH_EVALUATIONS = 2 * N * ell * z
TIME_BOUND = m * N ** (1 + 3 * rho) * sp.log(N) / sp.log(1 / p2)

HYPERPLANE_COLLISION = 1 - 2 * sp.asin(u / 2) / sp.pi
"""Random hyperplanes, unit vectors at Euclidean distance u."""
CROSS_POLYTOPE_COLLISION = m ** (-u**2 / (4 - u**2))
"""Cross-polytope hash in dimension m, unit vectors at distance u < 2: the leading term (module docstring)."""
PSTABLE_COLLISION = 1 - 2 * (1 - (1 + sp.erf(w / (u * sp.sqrt(2)))) / 2) \
    - 2 * u / (sp.sqrt(2 * sp.pi) * w) * (1 - sp.exp(-(w / u) ** 2 / 2))
"""Gaussian p-stable hash with width w at distance u (Datar et al. 2004)."""

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
        """Hash evaluations of Algorithm 1: 2·N·ell·z (queries and keys, every table)."""
        return 2 * self.N * self.ell * self.z


def _num(expr: sp.Expr) -> sp.Float:
    return sp.N(expr, _DIGITS)


def hyperplane_probabilities(radius: float, approx: float) -> tuple[float, float]:
    """(p1, p2) of random hyperplanes for unit vectors with near radius r and far radius c r."""
    if not 0 < radius and radius * approx <= 2:
        raise ValueError(f"r, c: need 0 < r and c*r <= 2 on the unit sphere, got r={radius}, c={approx}")
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    pr = [float(_num(HYPERPLANE_COLLISION.subs(u, sp.nsimplify(d)))) for d in (radius, radius * approx)]
    return pr[0], pr[1]


def cross_polytope_probabilities(radius: float, approx: float, dim: int) -> tuple[float, float]:
    """(p1, p2) of the cross-polytope family in dimension ``dim`` at distances r and c r (leading term)."""
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    if not (0 < radius and radius * approx < 2):
        raise ValueError(f"r, c: need 0 < r and c*r < 2 on the unit sphere, got r={radius}, c={approx}")
    if dim < 2:
        raise ValueError(f"m: the cross-polytope family needs dimension >= 2, got {dim}")
    vals = [float(_num(CROSS_POLYTOPE_COLLISION.subs({u: sp.nsimplify(d), m: dim}))) for d in (radius, radius * approx)]
    return vals[0], vals[1]


def family_probabilities(family: str, radius: float, approx: float, dim: int) -> tuple[float, float]:
    """(p1, p2) of an angular family by its command-line name: ``hyperplane`` or ``cross-polytope``."""
    if family == "hyperplane":
        return hyperplane_probabilities(radius, approx)
    if family == "cross-polytope":
        return cross_polytope_probabilities(radius, approx, dim)
    raise ValueError(f"lsh: must be 'hyperplane' or 'cross-polytope', got {family!r}")


def pstable_probabilities(radius: float, approx: float, width: float) -> tuple[float, float]:
    """(p1, p2) of the Gaussian p-stable family of width w at distances r and c r."""
    if approx <= 1:
        raise ValueError(f"c: the approximation factor must be > 1, got {approx}")
    if radius <= 0 or width <= 0:
        raise ValueError(f"r, w: must be positive, got r={radius}, w={width}")
    vals = [
        float(_num(PSTABLE_COLLISION.subs({u: sp.nsimplify(d), w: sp.nsimplify(width)})))
        for d in (radius, radius * approx)
    ]
    return vals[0], vals[1]


def proof_parameters(n: int, prob_near: float, prob_far: float, failure: float | None = None) -> LSHParameters:
    """z, ell and eta as the proof of Theorem A.1 chooses them (module docstring).

    ``failure`` is delta (default min(N^{3 rho - 1}, 1/10)). Needs 0 < p2 < p1 < 1; the theorem itself also
    needs rho < 1/3, which is reported (``rho``) but not enforced so that tables for c <= sqrt 3 can
    still be printed.
    """
    if not (isinstance(n, int) and n >= 2):
        raise ValueError(f"N: must be an integer >= 2, got {n!r}")
    if not (0 < prob_far < prob_near < 1):
        raise ValueError(f"p1, p2: need 0 < p2 < p1 < 1, got p1={prob_near}, p2={prob_far}")
    P1, P2 = sp.Float(prob_near, _DIGITS), sp.Float(prob_far, _DIGITS)
    rho_v = _num(RHO.subs({p1: P1, p2: P2}))
    d = _num(DELTA_DEFAULT.subs({N: n, rho: rho_v})) if failure is None else sp.Float(failure, _DIGITS)
    if not 0 < d < 1:
        raise ValueError(f"delta: must be in (0, 1), got {failure}")
    z_v = int(_num(sp.log(10 * sp.Integer(n) ** 3) / sp.log(1 / P2)).__ceil__())
    ell_v = int(_num(sp.log(sp.Integer(n) ** 2 / d) / P1**z_v).__ceil__())
    eta_v = _num(ETA_PROOF.subs({ell: ell_v, N: n, p2: P2, p1: P1, z: z_v}))
    return LSHParameters(
        N=n, p1=float(prob_near), p2=float(prob_far), delta=float(d), rho=float(rho_v), z=z_v, ell=ell_v,
        eta_bound=float(eta_v),
        ell_asymptotic=float(_num(ELL_ASYMPTOTIC.subs({N: n, rho: rho_v}))),
        eta_asymptotic=float(_num(ETA_ASYMPTOTIC.subs({N: n, rho: rho_v}))),
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
    prob_near = float(_num(sp.Float(prob_far, _DIGITS) ** (1 / sp.Float(approx, _DIGITS) ** 2)))
    return proof_parameters(n, prob_near, prob_far, failure)
