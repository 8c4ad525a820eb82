"""Report section: the exact Two Heads plans proved for every size (``attnsim prove``).

Per claim of the paper: "output proved for every size" (every obligation of its call plan proved by
z3 and cvc5 for all N ≥ 1 and all M at or above the construction's minimum, and all window r and sinks s in
range, and its per-call and output identities holding), "call plan proved for every size" (the plan
only) or "checked at instances" (the checks of the report only); then, per proved claim, how many
obligations and how long they took, and the per-call identities proved with sympy.
See docs/proofs.md for the statements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnsim.verify.prove.identities import prove_all
from attnsim.verify.prove.status import proof_results, proof_status
from attnsim.verify.sweep import code_version


def proofs_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """Markdown: the proof status of every Two Heads claim in ``records``, the obligations, the identities."""
    results = proof_results(Path(out_dir) if out_dir is not None else None, code_version(), quick)
    claims = list(dict.fromkeys(r["claim"] for r in records if r["claim"].startswith("two_heads.")))
    claims += [c for c in results if c not in claims]
    lines = ["### Proved for every size", "",
             "Each exact construction's call plan (blocks, key ranges, offsets, pads, packing slots and stream "
             "columns, head columns, job lengths, where each call's result lands) is integer code in "
             "`sim/two_heads/plan.py` that the construction runs and z3 and cvc5 both prove for all N and M "
             "(`attnsim prove`, "
             "docs/proofs.md): coverage of every allowed (query, key) pair exactly once under each call's own mask, "
             "no pad or synthetic row counted as a key, call lengths within the oracle, counts of the enumeration "
             "the construction iterates equal to the exact formulas. The output identities run the real "
             "construction (layouts, weights, oracle, decoders, packing, combination, two layers with their ψ) "
             "on symbolic entries at sizes where every call shape occurs and compare it with the reference model "
             "as rational functions. "
             "A claim reads \"output proved for every size\" only when its plan, its per-call identities and its "
             "output identities all hold; \"call plan proved for every size\" when only the plan's rows ran.",
             *(["", "Quick report: this run proved the obligations of the paper's scheme and length convention (with "
                 "and without sinks), packing, head columns, the per-call identities and the output identities of "
                 "that variant, each plan query confirmed by z3 and cvc5; `attnsim prove two_heads` also proves "
                 "the fused scheme and the strict length convention."] if quick else []),
             "", "| claim | status | obligations | solver seconds (total, largest) |", "|---|---|---|---|"]
    for cid in claims:
        rows = results.get(cid) or []
        total = sum(r["seconds"] for r in rows)
        worst = max((r["seconds"] for r in rows), default=0.0)
        ok = sum(r["status"] == "proved" for r in rows)
        counts = f"{ok}/{len(rows)} proved" if rows else "—"
        times = f"{total:.1f}, {worst:.2f}" if rows else "—"
        lines.append(f"| `{cid}` | {proof_status(cid, results)} | {counts} | {times} |")
    lines += ["", "Per-call identities (sympy, symbolic A, B, u and e):", "", "| call shape | identity | proved |",
              "|---|---|---|"]
    lines += [f"| {i.name} | {i.shape} | {'yes' if i.proved else '**no**'} |" for i in prove_all()]
    return "\n".join(lines + [""])
