"""Each claim's proof status for the report: "proved for every size" or "checked at instances".

:func:`proof_results` runs ``attnsim prove`` once per code version and keeps the rows in
``OUT/.cache/prove-<version>.json``; :func:`proof_status` reads a claim's status off them. A claim
whose plan has obligations is "proved for every size" only when every one of its rows is proved for
every size (a row proved for each M up to a bound says so instead); every other claim is checked
at the instances its checker runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from attnsim.verify.prove.claims import CLAIMS

PROVED = "proved for every size"
CHECKED = "checked at instances"


def proof_results(out: Path | None, version: str, quick: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Rows of ``attnsim prove`` per claim, from ``out``'s cache when it holds this ``version``'s;
    ``quick``: only the paper's scheme and length convention (``run.quick_obligation``)."""
    path = None if out is None else Path(out) / ".cache" / f"prove-{version}{'-quick' if quick else ''}.json"
    if path is not None and path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") == version:
                return data["claims"]
        except (json.JSONDecodeError, KeyError, UnicodeDecodeError):
            pass
    from attnsim.verify.prove.run import quick_obligation, run

    by_claim: dict[str, list[dict[str, Any]]] = {c: [] for c in CLAIMS}
    for row in run(CLAIMS, keep=quick_obligation if quick else None):
        by_claim[row.claim].append(row.as_dict())
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"version": version, "claims": by_claim}), encoding="utf-8")
    return by_claim


def proof_status(claim_id: str, results: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """The claim's column in the report: :data:`PROVED`, a bounded proof, a failed proof, or :data:`CHECKED`."""
    rows = results.get(claim_id) or []
    if claim_id not in CLAIMS or not rows:
        return CHECKED
    if any(r["status"] != "proved" for r in rows):
        bad = sum(r["status"] != "proved" for r in rows)
        return f"proof failed ({bad} of {len(rows)} obligations not proved); {CHECKED}"
    bounded = sorted({r["scope"] for r in rows if not r["scope"].startswith("every size")})
    return PROVED if not bounded else f"proved for {bounded[0]}"
