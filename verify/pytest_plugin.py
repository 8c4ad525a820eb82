"""attnsim's pytest plugin (entry point ``pytest11``, loaded by every pytest where attnsim is installed).

- Two hypothesis profiles, chosen as any profile is (``pytest --hypothesis-profile=attnsim-ci``, or
  ``settings.load_profile("attnsim-ci")`` in a conftest): ``attnsim-ci`` runs 100 examples per test and the same
  ones every run (derandomized: a CI run that passes today passes tomorrow, and 100 examples find a
  block-local construction every time, where 40 random ones missed it in one run of four); ``attnsim-deep`` runs
  2000 fresh examples per test, for a night's search.
- The fixture ``attnsim_check``: ``attnsim_check(simulate, case, M, calls=...)`` runs a construction
  ``simulate(spec, weights, X, oracle)`` on a fuzzed case against a small oracle of length M + 1, compares its
  output with attnsim's reference model with ``==`` (exact numerics), and holds the
  oracle calls its ledger counted against ``calls`` (a number, or a function of the number of blocks
  n = ceil(N / M)). An output that differs or a count over the bound fails the test with one line saying which.

docs/fuzzing.md shows a whole test file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("attnsim-ci", max_examples=100, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("attnsim-deep", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@dataclass(frozen=True, eq=False)
class CheckedRun:
    """What one checked run gave: the construction's output, the reference's and the oracle calls counted."""

    output: Any
    reference: Any
    calls: int


def check_construction(simulate: Callable[..., Any], case: Any, M: int, *, calls: int | Callable[[int], int] | None
                       = None, numerics: str = "exact", width: int | None = None
                       ) -> CheckedRun:
    """Run ``simulate(spec, weights, X, oracle)`` on ``case`` with an oracle of length M + 1 (one head, one layer,
    width ``width``, default 2m + 2) and check it against the reference model and the ledger."""
    from attnsim.sim.model import reference
    from attnsim.sim.numerics import get_numerics
    from attnsim.sim.oracle import Oracle, OracleSpec

    nm = get_numerics(numerics, 0)
    if not nm.exact:
        raise ValueError("attnsim_check compares with ==: numerics must be exact (exact, exact:D, fraction, "
                         f"symbolic); "
                         f"got {numerics!r}")
    oracle = Oracle(OracleSpec(M + 1, 1, 1, width if width is not None else 2 * case.spec.m + 2), nm)
    X = nm.array(case.X, "X")
    Y = simulate(case.spec, case.weights, X, oracle)
    ref = reference(case.spec, case.weights, X, nm)
    differ = [i for i in range(ref.shape[0]) if not (Y[i] == ref[i]).all()]
    assert not differ, f"output differs from the reference (exact numerics) in rows {differ[:8]} of {ref.shape[0]}"
    spent = int(oracle.ledger.total("oracle"))
    if calls is not None:
        n = -(-case.spec.N // M)
        allowed = calls(n) if callable(calls) else calls
        assert spent <= allowed, f"the ledger counted {spent} oracle calls, more than the {allowed} allowed (n = {n})"
    return CheckedRun(Y, ref, spent)


@pytest.fixture(scope="session")
def attnsim_check() -> Callable[..., CheckedRun]:
    """:func:`check_construction` (session-scoped, so that hypothesis's ``@given`` tests may take it)."""
    return check_construction
