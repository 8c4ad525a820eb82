"""No frozen growth: every free symbol of every containment (a resource with both an exact count and a
bound) is the claim's limit variable, a parameter the statement fixes (``stated`` in paper_refs), or
substituted as the function of the limit variable the proof gives (``[claims.extra.growth]``: relay depth
D of Thm 4.1, Lemma D.2's tree depth R, the proof's z, ell, radii ...). A symbol that is none of these is
a quantity frozen as a constant while the proof lets it grow: this test names it."""

from __future__ import annotations

import re

from attnsim.paper_refs import all_claims
from attnsim.theory.symbolic import analyse


def _free(claim, resource: str) -> set[str]:
    t = analyse(claim, resource)
    assert not t.verdict.startswith("error"), (claim.id, resource, t.verdict)
    return {s.name for e in (t.bound, t.exact) if e is not None for s in e.free_symbols}


def test_every_containment_symbol_is_the_limit_a_stated_parameter_or_substituted():
    frozen = {}
    for cid, claim in all_claims().items():
        allowed = {claim.limit, *claim.stated}
        for name, res in claim.resources.items():
            if res.exact and res.bound:
                extra = sorted(_free(claim, name) - allowed)
                if extra:
                    frozen[f"{cid}.{name}"] = extra
    assert not frozen, f"symbols neither N, stated nor substituted as a function of N: {frozen}"


def test_stated_parameters_appear_in_the_claims_formulas():
    for cid, claim in all_claims().items():
        text = " ".join([*(f for r in claim.resources.values() for f in (r.bound, r.exact) if f),
                         *claim.definitions.values(), *(str(v) for v in (claim.extra.get("growth") or {}).values())])
        names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        assert set(claim.stated) <= names, (cid, sorted(set(claim.stated) - names))
        assert claim.limit not in claim.stated, cid


def test_a_frozen_relay_depth_is_named():
    import dataclasses

    claim = all_claims()["anna.thm_4_1"]
    kept = {"eps1": claim.extra["growth"]["eps1"]}  # eps' > eps stays stated; P and D are no longer substituted
    frozen = dataclasses.replace(claim, extra={**claim.extra, "growth": kept})
    assert "P" in _free(frozen, "layers") - {frozen.limit, *frozen.stated}  # D = ceil(log_k P): P held fixed
