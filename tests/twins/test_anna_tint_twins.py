"""Every ANNA and TinT twin is caught by its claim's check, for a reason the unbroken run does not give."""

from __future__ import annotations

import pytest
from shared_once import shared_record

from attnsim.verify import tint_torch
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins

MODULES = tuple(f"attnsim.verify.twins.{m}"
                for m in ("anna", "anna_rebuttal", "tint", "tint_rebuttal", "tint_rows", "tint_size"))
CLAIMS = ("anna.alg_1", "anna.alg_2", "anna.thm_5_2", "anna.khop", "anna.lemma_d_2", "anna.prop_e_3",
          "anna.rebuttal_hash_tables", "anna.rebuttal_linear_memory")
TWINS = [t for t in all_twins() if t.breaks.__module__ in MODULES]


def _baseline(tmp_path_factory: pytest.TempPathFactory, claim: str, params: dict,
              numerics: str | None) -> tuple[str, frozenset[str]]:
    """The unbroken run's verdict and reasons, computed once per test run (tests/test_claims_evidence.py reads
    the same quick points)."""
    record = shared_record(tmp_path_factory, claim, params, numerics, 0)
    return record["verdict"], frozenset(record["reasons"])


@pytest.mark.parametrize("t", TWINS, ids=[f"{t.claim}:{t.name}" for t in TWINS])
def test_twin_is_caught_for_its_own_reason(t, tmp_path_factory):
    _, before = _baseline(tmp_path_factory, t.claim, dict(t.params), t.numerics)
    if tint_torch.MISSING in before:
        pytest.skip(f"the unbroken record is partial ({tint_torch.MISSING}): a twin cannot be told from it")
    result = run_twin(t)
    assert result.bites, result.reason
    if result.reason.startswith("refused:"):
        return
    new = [r for r in result.reason.split("; ") if r not in before]
    assert new, f"{t.claim}:{t.name} fails only for reasons the unbroken run gives too: {result.reason}"


def test_every_checked_claim_here_has_two_twins():
    from attnsim.verify.registry import all_checkers

    ours = [c for c in all_checkers() if c.startswith("tint.") or c in CLAIMS]
    by_claim: dict[str, set[str]] = {}
    for t in TWINS:
        by_claim.setdefault(t.claim, set()).add(t.name)
    short = {c: sorted(by_claim.get(c, ())) for c in ours if len(by_claim.get(c, ())) < 2}
    assert not short, f"claims with fewer than 2 twins: {short}"
