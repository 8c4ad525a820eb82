"""Each claim's proof status for the report: "output proved for every size", "call plan proved for
every size" or "checked at instances".

:func:`proof_results` runs ``attnsim prove`` once per code version and keeps the rows in
``OUT/.cache/prove-<version>.json``; :func:`proof_status` reads a claim's status off them. A claim's
output is "proved for every size" only when every obligation of its call plan is proved for every size
and its per-call identities and output identities (symbolic entries, every call shape) hold; with the
plan's rows alone it is "call plan proved for every size"; a row proved for each M up to a bound says
so instead; every other claim is checked at the instances its checker runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from attnsim.verify.prove.claims import CLAIMS

OUTPUT_PROVED = "output proved for every size"
PLAN_PROVED = "call plan proved for every size"
PROVED = OUTPUT_PROVED
CHECKED = "checked at instances"


_RUN_HERE: dict[tuple[str, bool], dict[str, list[dict[str, Any]]]] = {}
"""The rows this process computed, per (code version, quick): a report without a cache asks twice (the front
page's status column and the proofs section), and the proofs take seconds."""


def proof_results(out: Path | None, version: str, quick: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Rows of ``attnsim prove`` per claim, from ``out``'s cache when it holds this ``version``'s (else from this
    process's own run of this ``version``); ``quick``: only the paper's scheme and length convention
    (``run.quick_obligation``); both solvers either way."""
    path = None if out is None else Path(out) / ".cache" / f"prove-{version}{'-quick' if quick else ''}.json"
    if path is not None and path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") == version:
                return data["claims"]
        except (json.JSONDecodeError, KeyError, UnicodeDecodeError):
            pass
    from attnsim.verify.prove.run import quick_obligation, run

    by_claim = _RUN_HERE.get((version, quick))
    if by_claim is None:
        by_claim = {c: [] for c in CLAIMS}
        for row in run(CLAIMS, keep=quick_obligation if quick else None):
            by_claim[row.claim].append(row.as_dict())
        _RUN_HERE[(version, quick)] = by_claim
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"version": version, "claims": by_claim}), encoding="utf-8")
    return by_claim


def proof_status(claim_id: str, results: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """The claim's column in the report: :data:`OUTPUT_PROVED` (call plan for every size, per-call and
    output identities), :data:`PLAN_PROVED` (no output identity ran), a bounded or failed proof, or
    :data:`CHECKED`."""
    rows = results.get(claim_id) or []
    if claim_id not in CLAIMS or not rows:
        return CHECKED
    if any(r["status"] != "proved" for r in rows):
        bad = [r for r in rows if r["status"] != "proved"]
        what = sorted({r["obligation"].split("[")[0] for r in bad})
        return f"proof failed ({len(bad)} of {len(rows)} obligations not proved: {', '.join(what)}); {CHECKED}"
    plan = [r for r in rows if r["obligation"] != "output" and not r["obligation"].startswith("identity")]
    bounded = sorted({r["scope"] for r in plan if not r["scope"].startswith("every size")})
    if bounded:
        return f"call plan proved for {bounded[0]}"
    status = OUTPUT_PROVED if any(r["obligation"] == "output" for r in rows) else PLAN_PROVED
    return f"{status} {solvers(plan)}{scope_note(rows)}"


def scope_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """``; paper scheme and length only`` when no fused-scheme or strict-length row ran (the quick report)."""
    variants = {r.get("variant", "") for r in rows} - {"any", ""}
    if variants and not any("fused" in v or "strict" in v for v in variants):
        return "; paper scheme and length only"
    return ""


def solvers(plan: Sequence[Mapping[str, Any]]) -> str:
    """Which solvers proved the plan's rows: both, or z3 with how many of them cvc5 confirmed."""
    asked = [r for r in plan if r.get("cvc5") is not None]
    both = sum(r.get("cvc5") == "unsat" for r in plan)
    if not asked:
        return "(z3; cvc5 not run)"
    if both == len(plan):
        return "(z3 and cvc5)"
    return f"(z3; cvc5 confirms {both} of {len(plan)})"


def summary(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, str]:
    """Each claim's status."""
    return {c: proof_status(c, results) for c in results}
