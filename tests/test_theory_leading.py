"""theory.leading: limits by leading terms agree with sympy's limit, and say when they cannot tell."""

from __future__ import annotations

import pytest
import sympy as sp

from attnsim.theory import leading
from attnsim.theory.formulas import parse, symbol

N = symbol("N")


@pytest.mark.parametrize("formula", [
    "3*N**2*log(N)/(N**2*log(N) + N)",                  # x^p (log x)^q against a lower term
    "N**(3*rho)*log(N)/(N**(3*rho)*log(N) + 7)",        # a symbolic exponent of known sign
    "(2*log(N)**2 + log(N)*log(3*log(N)))/(eps1**2*log(N)**2 + log(N))",  # log log N below log N
    "log(N**eps*5)/log(N)",                             # log of c x^p: p log x
    "exp(rho*log(10))*exp(3*rho*log(N))/N**(3*rho)",    # exp(k log x) is x^k
    "N/(N**2 + 1)", "N**2/(N + 1)", "-N**2/(N + 1)",    # 0, oo, -oo
    "Abs(r - N)/N",                                     # Abs of a term of known sign
    "N*log(1 + 1/N)",                                   # log(1 + u) ~ u once u vanishes
    "N*log((N + 1)/N)",                                 # the same, the excess found by cancelling
    "N**(eps1/2)*log(1 + 784/(N**(eps1/2)*sqrt(s)))",   # Lemma C.2's formula: a symbolic rate
    "log(1 + 1/N)/log(1 + 2/N)",
])
def test_agrees_with_sympy(formula):
    expr = parse(formula)
    assert sp.simplify(leading.limit(expr, N)) == sp.simplify(sp.limit(expr, N, sp.oo))


@pytest.mark.parametrize("formula", [
    "N**eps/N**rho",              # the sign of eps - rho decides
    "(N + 1)/N - 1",              # the top terms cancel: the next term decides
    "log(N + 1) - log(N)",
    "(eps - rho)*N",              # an infinite limit of unknown sign
])
def test_unsupported_when_exponents_cannot_tell(formula):
    with pytest.raises(leading.Unsupported):
        leading.limit(parse(formula), N)


def test_unsupported_beyond_powers_logs_and_exp():
    with pytest.raises(leading.Unsupported):
        leading.limit(sp.sin(N) / N, N)


def test_unordered_terms_that_all_vanish_give_zero():
    expr = parse("(N**eps + N**(eps_gap/4))/(N**eps*N**eps_gap)")
    assert leading.limit(expr, N) == 0


def test_min_fails_as_sympy_does():
    expr = parse("Min(M, N)/N")
    with pytest.raises(NotImplementedError):
        sp.limit(expr, N, sp.oo)
    with pytest.raises(NotImplementedError):
        leading.limit(expr, N)
