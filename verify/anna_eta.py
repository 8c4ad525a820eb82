"""eta-hat of Algorithm 1 against N: the sweep behind the report's eta table (Thm 3.4 / A.1).

Each row is one ``anna.alg_1`` check record at one N: the proof's z(N) and ell(N), the runs, how many
of them broke the ANNA definition, eta-hat with its 95% Clopper-Pearson interval, the proof's
explicit union bound at that N (the ``eta_proof`` bound of paper_refs, which decides the verdict) and
the paper's rate N^(3 rho - 1) without a constant. The cost of one run grows like ell N log N, so the
number of runs falls with N and the interval widens (docs/anna_eta.md).
"""

from __future__ import annotations

from typing import Any

from attnsim.verify.check import run_check

FULL = ((256, 40), (512, 20), (1024, 10), (2048, 5), (4096, 3))
QUICK = ((16, 10), (32, 10), (64, 5), (128, 5), (256, 3))


def eta_sweep(quick: bool, seed: int = 0, sizes: tuple[tuple[int, int], ...] | None = None) -> list[dict[str, Any]]:
    """One row per (N, runs) of ``sizes`` (default: :data:`QUICK` or :data:`FULL`)."""
    rows = []
    for n, runs in sizes or (QUICK if quick else FULL):
        r = run_check("anna.alg_1", {"N": n, "seeds": runs}, "exact", seed)
        e = r["extra"]
        eta_reasons = [x for x in r["reasons"] if x.startswith("eta:")]
        rows.append({"N": n, "runs": runs, "rho": e["rho"], "z": e["z"], "ell": e["ell"],
                     "violating_runs": e["violating_runs"], "eta_hat": e["eta_hat"], "eta_ci95": e["eta_ci95"],
                     "eta_proof": r["bounds"]["eta_proof"]["value"], "eta_paper_rate": r["bounds"]["eta"]["value"],
                     "eta_decision": "fail" if eta_reasons else "pass"})
    return rows
