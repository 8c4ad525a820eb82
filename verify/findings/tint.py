"""The finding of tint that a run computes: the step the authors' code gives the MLP output bias, read from a
``tint.sgd_step`` record under the authors' convention (its ``convention_effects_float64``: each of the code's
choices switched on alone, docs/tint_reconciliation.md)."""

from __future__ import annotations

from typing import Any, Sequence

from attnsim.verify.findings import Finding, finder, record_for

CLAIM = "tint.sgd_step"
PARAMS = {"convention": "authors", "approximations": False}


@finder("tint")
def bias_step(records: Sequence[dict[str, Any]]) -> list[Finding]:
    """How many times the paper's SGD step b_proj takes when each of the four output-bias shares gets the full
    step, and whether TinT still equals the reference taken the same way."""
    r = record_for(records, CLAIM, PARAMS, "float64")
    effect = ((r.get("extra") or {}).get("convention_effects_float64") or {}).get("bias_full_step")
    if not effect:
        return [Finding("tint", f"the authors' bias step was not measured ({'; '.join(r.get('reasons') or [])})",
                        CLAIM, (r,))]
    low, high = (f"{effect['bproj_step_ratio'][k]:.3f}" for k in ("least", "largest"))
    text = (f"the authors' code gives each of the four MLP output-bias shares the full step: b_proj moves "
            f"{low if low == high else f'{low} to {high}'} times the paper's SGD step (case "
            f"{r['params']['case']}, float64); the final logits move by {effect['logits']:.3g}; TinT "
            f"{'still equals' if effect['equals_reference'] else 'no longer equals'} the reference taken the same "
            "way (attnsim's default takes the paper's step)")
    return [Finding("tint", text, CLAIM, (r,))]
