"""Broken twins of the approximate Two Heads checkers (Thm 4.1, Thm 4.2) and the lower bound."""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.sim.two_heads import average, converse
from attnsim.verify.claims import two_heads_approx as approx_checks
from attnsim.verify.twins.breaks import formula_off, ledger_entry, together, wrapped
from attnsim.verify.twins.two_heads_breaks import block_shift, drop_term
from attnsim.verify.twins.two_heads_exact import add


def estimator_halved() -> Any:
    """The vectorised average-case estimator returns half of every output row (a wrong normaliser)."""
    return wrapped(average.estimate, lambda f, *a, **k: (lambda Y, ld: (Y / 2, ld))(*f(*a, **k)))


def last_layer_zero(heads: int, layers: int) -> Any:
    """The estimator's last layer outputs zero rows, on both the oracle path and the vectorised path.

    A zero row is off by exactly 1 in relative error, so it is a success at eps >= 1 and a failure below:
    the check must run its multi-head, multi-layer case at eps < 1 to see it (Thm 4.1's promise is per row).
    The two paths stay equal, so only the success rate can catch it.
    """
    seen = [0]

    def estimate(f: Any, *a: Any, **k: Any) -> Any:
        Y, ld = f(*a, **k)
        last = seen[0] % (heads * layers) >= heads * (layers - 1)
        seen[0] += 1
        return (np.zeros_like(Y) if last else Y), ld

    def oracle_path(f: Any, *a: Any, **k: Any) -> Any:
        return np.zeros_like(np.asarray(f(*a, **k), dtype=float))

    return together(wrapped(average.estimate, estimate), wrapped(average.simulate_layers_average, oracle_path))


def weak_codes() -> Any:
    """The converse's codes are scaled by B/4 instead of B, so cross-instance attention leaks through."""
    return wrapped(converse.simulate, lambda f, inst, oracle, B: f(inst, oracle, B / 4))


# The identity permutation runs the claim's default (both minimum-M conditions hold) and must fail on the
# success rate; the others run a cheaper size where the conditions also hold (eps = 2 on the bounded input).
CHEAP = {"N": 4096, "M": 512, "eps": 2.0, "seeds": 40, "input": "bounded"}
# both conditions hold at eps < 1; 36 seeds are the fewest whose 36/36 successes establish the promised 0.9 (at 20
# the unbroken check fails too, so the twin's "catch" showed nothing)
_LAYERS = {"N": 8192, "M": 4096, "eps": 0.9, "seeds": 36, "H": 2, "L": 2}
add("two_heads.thm_4_1", "last_layer_zero", "2 heads x 2 layers: the estimator's last layer outputs zero rows "
    "(relative error 1, a success at eps >= 1)", lambda: last_layer_zero(2, 2), _LAYERS, kind="construction")
add("two_heads.thm_4_1", "estimator_halved", "the estimator returns half of every row (a wrong normaliser)",
    estimator_halved, CHEAP, kind="construction")
add("two_heads.thm_4_1", "identity_permutation", "tau is the identity: each query block averages its own keys",
    lambda: wrapped(approx_checks.taus, lambda f, N, seed, count: [np.arange(N) for _ in range(count)]),
    kind="construction")
add("two_heads.thm_4_1", "calls_formula_plus_one", "the exact count of calls is off by one",
    lambda: formula_off("calls"), CHEAP, kind="formula")
add("two_heads.thm_4_1", "ledger_drops_lookup", "the ledger drops the first permutation lookup",
    lambda: ledger_entry("lookup", 0), CHEAP, kind="ledger")

add("two_heads.thm_4_2", "weak_codes", "the codes are scaled by B/4, so other instances' keys leak in", weak_codes,
    kind="construction")
add("two_heads.thm_4_2", "ledger_drops_call", "the ledger drops the only oracle call",
    lambda: ledger_entry("oracle", 0), kind="ledger")
add("two_heads.thm_4_2", "small_products_formula_plus_one", "the exact count of small products is off by one",
    lambda: formula_off("small_products"), kind="formula")

_LB = {"input": "reduction", "N": 16, "M": 8, "d": 4, "seeds": 2}
add("two_heads.lower_bound", "block_boundary", "every block after the first starts one token late", block_shift,
    _LB, kind="construction")
add("two_heads.lower_bound", "eq1_term_dropped", "eq. (1) leaves out the last key block's term", drop_term, _LB,
    kind="construction")
